package seqcheck.jgroups;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.View;

/**
 * The JGroups harness: one JVM drives N members, each a real JGroups protocol instance, through
 * commands read as JSON lines on standard input, and answers each with one JSON line on standard
 * output. A run is a pure function of its commands: no network, no threads of the harness, the
 * timer and the clock virtual (``Clock``), every packet captured when sent (``Capture``) and
 * delivered, copied or dropped only when a command says so.
 *
 * Commands (``op``): hello; cpu (the JVM's CPU time); reset (protocol, members, views: each member's
 * first view, empty for a joiner, props: the protocol's properties by field name); send (m, dst,
 * payload hex; dst -1: a multicast; oob: true flags it Message.Flag.OOB, UNICAST3 and UNICAST4 only); deliver / copy (id of a captured packet; copy delivers a copy
 * and keeps the packet; discard: ids forgotten with it), batch (ids of packets of one channel, handed up
 * in this order as one MessageBatch; discard as for deliver), drop (ids); timer (m, kind, peer); view (m,
 * members); join (m: the coordinator, joiner, members: the view that admits it, see ``Gms``); merge
 * (m, members: a merge view, MERGE_DIGEST first); stop (m: leaves or crashes, takes no more
 * packets); remove (m, peer: the receiver-removal hook); state (m); advance (ms); quit.
 * Every answer has "packets" (captured during the command: id, src, dst, msg in the spec's
 * vocabulary; a multicast is one packet per destination copy, ``Member.captured``) and "delivered"
 * (m, src, payload); "state" of member m when the command asks for it ("state": true) or is
 * ``state``; "error" (one line) when the command failed.
 *
 * Threads: the harness is single-threaded except for application threads whose send can block
 * (``AppThreads``: NAKACK4's senders); while one runs, the harness waits for it to finish or block,
 * so a command's effects are still a function of the command.
 */
public final class Harness {
    final Clock clock = new Clock();
    private final List<Member> members = new ArrayList<>();
    private final Map<Address, Integer> indices = new HashMap<>();
    private final Map<Long, long[]> packetEnds = new HashMap<>();   // id -> {src, dst}
    private final Map<Long, Object> packetBytes = new HashMap<>();  // id -> wire bytes, or a Gms.JoinResponse
    private final Map<List<Address>, View> views = new HashMap<>();  // a view per membership (``viewOf``)
    final AppThreads threads = new AppThreads(this);
    final Gms gms = new Gms(this);
    private long nextId = 1;
    private ProtocolModel model;
    private List<Object> packets = new ArrayList<>();
    private List<Object> deliveries = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        silenceLogging();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        Harness harness = new Harness();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank())
                continue;
            Map<String, Object> answer = harness.answer(line);
            out.println(Json.write(answer));
            out.flush();
            if (answer.containsKey("bye"))
                return;
        }
    }

    private static void silenceLogging() {
        java.util.logging.LogManager.getLogManager().reset();
        java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.OFF);
    }

    Map<String, Object> answer(String line) {
        synchronized (this) {
            packets = new ArrayList<>();
            deliveries = new ArrayList<>();
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        try {
            Object parsed = Json.parse(line);
            if (!(parsed instanceof Map))
                throw new IllegalArgumentException("command line: expected a JSON object");
            @SuppressWarnings("unchecked") Map<String, Object> command = (Map<String, Object>) parsed;
            run(command, answer);
            if (model != null)
                for (Member m : members)
                    model.settled(m);
            if (Boolean.TRUE.equals(command.get("state")) && !answer.containsKey("state"))
                answer.put("state", model.state(member((int) Json.integer(command, "m"))));
        } catch (Throwable t) {
            answer.clear();
            answer.put("error", oneLine(t));
        }
        synchronized (this) {  // application threads add to these (``AppThreads``)
            answer.put("packets", packets);
            answer.put("delivered", deliveries);
        }
        return answer;
    }

    private void run(Map<String, Object> command, Map<String, Object> answer) throws Exception {
        String op = Json.text(command, "op");
        switch (op) {
            case "hello":
                answer.put("jgroups", Jg.version());
                answer.put("protocols", Models.available());
                break;
            case "cpu": {  // this JVM's CPU time, all threads (compilers and GC included)
                java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
                long nanos = os instanceof com.sun.management.OperatingSystemMXBean
                    ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() : -1;
                answer.put("cpu_ns", nanos);
                break;
            }
            case "reset":
                reset(command);
                break;
            case "send":
                // dont_loopback: this send alone is flagged DONT_LOOPBACK (NAKACK2's per-send choice; a
                // UNICAST3/UNICAST4 send to itself)
                member(command, "m").dontLoopbackNext = Boolean.TRUE.equals(command.get("dont_loopback"));
                if (Boolean.TRUE.equals(command.get("oob")))
                    model.sendOob(member(command, "m"), index(command, "dst"), Hex.parse(Json.text(command, "payload")));
                else
                    model.send(member(command, "m"), index(command, "dst"), Hex.parse(Json.text(command, "payload")));
                break;
            case "deliver":
            case "copy": {
                long id = Json.integer(command, "id");
                long[] ends = packetEnds.get(id);
                if (ends == null)
                    throw new IllegalArgumentException(op + ": no packet " + id + " in flight");
                Object data = packetBytes.get(id);
                if (op.equals("deliver"))
                    forget(id);
                if (command.get("discard") != null)
                    for (Object other : Json.list(command, "discard"))
                        forget((Long) other);
                Member to = member((int) ends[1]);
                if (to.stopped)
                    break;  // its socket is closed
                if (data instanceof Gms.JoinResponse)
                    gms.receive(to, (Gms.JoinResponse) data);
                else
                    model.up(to, Jg.deserialize((byte[]) data));
                break;
            }
            case "batch": {  // packets of one channel, in this order, handed up as one MessageBatch
                List<Message> msgs = new ArrayList<>();
                long[] channel = null;
                for (Object id : Json.list(command, "ids")) {
                    long[] ends = id instanceof Long ? packetEnds.get((Long) id) : null;
                    if (ends == null || !(packetBytes.get((Long) id) instanceof byte[]))
                        throw new IllegalArgumentException("batch: no packet " + id + " in flight");
                    if (channel != null && (channel[0] != ends[0] || channel[1] != ends[1]))
                        throw new IllegalArgumentException("batch: packet " + id + " is of another channel");
                    channel = ends;
                    msgs.add(Jg.deserialize((byte[]) packetBytes.get((Long) id)));
                }
                if (channel == null)
                    throw new IllegalArgumentException("batch: no packets");
                for (Object id : Json.list(command, "ids"))
                    forget((Long) id);
                if (command.get("discard") != null)
                    for (Object other : Json.list(command, "discard"))
                        forget((Long) other);
                Member to = member((int) channel[1]);
                if (!to.stopped)
                    model.upBatch(to, member((int) channel[0]), msgs);
                break;
            }
            case "drop":
                for (Object id : Json.list(command, "ids")) {
                    if (!(id instanceof Long) || packetEnds.get((Long) id) == null)
                        throw new IllegalArgumentException("drop: no packet " + id + " in flight");
                    forget((Long) id);
                }
                break;
            case "timer": {
                // peer: a member (a timer of one connection), or a number the model reads (NAKACK4's
                // ``send``: the seqno of the thread to let go); -1: none
                Object peer = command.get("peer");
                long raw = peer == null ? -1 : (Long) peer;
                Address address = raw < 0 || raw >= members.size() ? null : member((int) raw).address;
                model.timer(member(command, "m"), Json.text(command, "kind"), address, raw);
                break;
            }
            case "view":
                member(command, "m").installView(members(command));
                break;
            case "join":
                gms.join(member(command, "m"), member(command, "joiner"), members(command));
                break;
            case "merge":
                gms.merge(member(command, "m"), members(command));
                break;
            case "stop":
                member(command, "m").stopped = true;
                break;
            case "remove":
                model.removeReceiver(member(command, "m"), member(command, "peer").address);
                break;
            case "state":
                answer.put("state", model.state(member(command, "m")));
                break;
            case "advance":
                clock.advance(Json.integer(command, "ms") * 1_000_000L);
                break;
            case "quit":
                answer.put("bye", true);
                break;
            default:
                throw new IllegalArgumentException("unknown command " + op);
        }
    }

    private void reset(Map<String, Object> command) throws Exception {
        if (model != null)
            model.end();
        threads.reset();
        model = Models.get(Json.text(command, "protocol"));
        members.clear();
        views.clear();
        indices.clear();
        packetEnds.clear();
        packetBytes.clear();
        clock.scheduled.clear();
        int n = (int) Json.integer(command, "members");
        @SuppressWarnings("unchecked") Map<String, Object> props =
            command.get("props") instanceof Map ? (Map<String, Object>) command.get("props") : new HashMap<>();
        for (int i = 0; i < n; i++) {
            Member m = new Member(this, i, model.stack(props));
            members.add(m);
            indices.put(m.address, i);
        }
        List<Object> views = Json.list(command, "views");
        for (int i = 0; i < n; i++) {
            members.get(i).start();
            List<Integer> view = new ArrayList<>();
            for (Object m : (List<?>) views.get(i))
                view.add((int) (long) (Long) m);
            if (view.contains(i))  // a joiner has no view until its JoinResponse
                gms.found(members.get(i), view);
        }
        packets.clear();
        deliveries.clear();
    }

    private void forget(long id) {
        packetEnds.remove(id);
        packetBytes.remove(id);
    }

    Member member(int index) {
        if (index < 0 || index >= members.size())
            throw new IllegalArgumentException("no member " + index);
        return members.get(index);
    }

    private Member member(Map<String, Object> command, String key) {
        return member(index(command, key));
    }

    private List<Integer> members(Map<String, Object> command) {
        List<Integer> view = new ArrayList<>();
        for (Object m : Json.list(command, "members"))
            view.add((int) (long) (Long) m);
        return view;
    }

    ProtocolModel model() {
        return model;
    }

    /** The view of ``addresses``: the same membership is always the same view (its id numbered in order
     *  of first use), as the specs identify a view by its members. */
    View viewOf(List<Address> addresses) {
        return views.computeIfAbsent(new ArrayList<>(addresses), a -> Jg.view(a, views.size() + 1));
    }

    /** The members (indices) of the view whose id is ``viewId`` (one the harness made), or null. */
    List<Integer> viewMembers(Object viewId) {
        for (Map.Entry<List<Address>, View> e : views.entrySet())
            if (e.getValue().getViewId().equals(viewId)) {
                List<Integer> out = new ArrayList<>();
                for (Address a : e.getKey())
                    out.add(indexOf(a));
                return out;
            }
        return null;
    }

    int size() {
        return members.size();
    }

    private int index(Map<String, Object> command, String key) {
        return (int) Json.integer(command, key);
    }

    int indexOf(Address address) {
        Integer found = indices.get(address);
        return found == null ? -1 : found;
    }

    synchronized void capture(int src, int dst, byte[] data) {
        long id = nextId++;
        packetEnds.put(id, new long[]{src, dst});
        packetBytes.put(id, data);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", id);
        out.put("src", src);
        out.put("dst", dst);
        out.put("msg", model.describe(member(src), Jg.deserialize(data)));
        packets.add(out);
    }

    /** A packet of the harness's GMS (a JoinResponse): kept as it is, read by ``describe``. */
    synchronized void captureGms(int src, int dst, Gms.JoinResponse response) {
        long id = nextId++;
        packetEnds.put(id, new long[]{src, dst});
        packetBytes.put(id, response);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", id);
        out.put("src", src);
        out.put("dst", dst);
        out.put("msg", response.describe());
        packets.add(out);
    }

    synchronized void delivery(Map<String, Object> delivered) {
        deliveries.add(delivered);
    }

    private static String oneLine(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root)
            root = root.getCause();
        String where = "";
        for (StackTraceElement e : root.getStackTrace()) {
            where = " at " + e.getClassName() + "." + e.getMethodName() + ":" + e.getLineNumber();
            break;
        }
        String text = root.getClass().getSimpleName() + ": " + root.getMessage() + where;
        if (System.getenv("SEQCHECK_HARNESS_TRACE") != null) {
            StringWriter trace = new StringWriter();
            t.printStackTrace(new PrintWriter(trace));
            System.err.println(trace);
        }
        return text.replace('\n', ' ');
    }
}

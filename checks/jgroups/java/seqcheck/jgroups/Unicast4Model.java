package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;

/**
 * UNICAST4 (ReliableUnicast over FixedBuffer, 5.4.0 on; reached by reflection, so that one source
 * compiles against every release) as the harness drives it. Messages read as ``spec/unicast4.py``'s
 * (UnicastHeader, as UNICAST3's). The state is the spec's node: send entries (conn_id, state, the
 * window's low and the slots above it up to high, watermark, last timestamp, the seqno counter, the
 * sends blocked on it), receive entries (conn_id, state, hd, the DATA held above it, ACK pending,
 * the ACK counter), last_sync_sent, xmit_task_map, the timestamper, last_conn_id, the view, and
 * msg_cache. Timers as ``Unicast3Model``'s, plus ``send#S`` (the thread blocked with seqno S goes
 * on) and the blocked kinds ``idle_blocked`` / ``close_blocked`` (the same methods).
 *
 * Sends run on a thread each (``SendGate``): a send on a full window blocks in ``FixedBuffer.add``
 * and stays blocked until the schedule fires its ``send#S``, or its window is closed (the thread's
 * add fails; the harness lets such threads finish after every command).
 * OOB (spec/unicast4.py decision 10): ``sendOob`` flags the message Message.Flag.OOB (on its thread,
 * as any send); a send entry lists the seqnos of its OOB messages, stored or held by a blocked thread
 * (``oob``); a receive window's slot holding DUMMY_OOB_MSG reads as {"type": "OOB_PLACEHOLDER"}, as
 * ``Unicast3Model``'s. Batches go up through ``ProtocolModel.upBatch`` (ReliableUnicast.up(MessageBatch)).
 */
final class Unicast4Model implements ProtocolModel {
    static final long FAR = 1L << 40;  // ms: never, in a run
    private final List<SendGate.Sender> senders = new ArrayList<>();
    private final java.util.Set<SendGate.Sender> oobSenders = new java.util.HashSet<>();
    private final java.util.Set<SendGate.Sender> dontLoopbackSenders = new java.util.HashSet<>();
    private boolean flagDontBlock;

    public Protocol create(Map<String, Object> props) {
        Class<?> type = Reflect.type("org.jgroups.protocols.UNICAST4");
        if (type == null)
            throw new IllegalArgumentException("UNICAST4 is not in JGroups " + Jg.version() + " (it is from 5.4.0 on)");
        Protocol prot = (Protocol) Reflect.create(type);
        for (String timeout : new String[]{"conn_expiry_timeout", "conn_close_timeout", "sync_min_interval"})
            Reflect.setProperty(prot, timeout, FAR);
        for (Map.Entry<String, Object> p : props.entrySet()) {
            if (p.getKey().equals("dont_block")) {
                flagDontBlock = Boolean.TRUE.equals(p.getValue());
            } else if (p.getKey().equals("first_conn_id")) {
                Reflect.set(prot, (short) (long) (Long) p.getValue(), "last_conn_id");
            } else if (!Reflect.setProperty(prot, p.getKey(), p.getValue())) {
                throw new IllegalArgumentException("props: UNICAST4 has no property " + p.getKey());
            }
        }
        return prot;
    }

    public Map<String, Object> describe(Member member, Message msg) {
        return new Unicast3Model().describe(member, msg);
    }

    // -- sends on threads ---------------------------------------------------------------------
    @Override
    public void send(Member member, int dst, byte[] payload) {
        send(member, dst, payload, false);
    }

    @Override
    public void sendOob(Member member, int dst, byte[] payload) {
        send(member, dst, payload, true);
    }

    private void send(Member member, int dst, byte[] payload, boolean oob) {
        Message msg = Jg.dataMessage(member.harness.member(dst).address, member.address, payload);
        if (flagDontBlock)
            dontBlock(msg);
        if (oob)
            msg.setFlag(Message.Flag.OOB);
        boolean dontLoopback = member.dontLoopbackNext;
        member.dontLoopbackNext = false;
        if (dontLoopback)
            Jg.setTransientFlag(msg, "DONT_LOOPBACK");
        SendGate.Sender sender = new SendGate.Sender(dst, payload);
        if (oob)
            oobSenders.add(sender);
        if (dontLoopback)
            dontLoopbackSenders.add(sender);
        sender.thread = new Thread(() -> {
            try {
                Jg.down(member.protocol, msg);
            } catch (Throwable t) {
                sender.failure = t;
            }
        }, "seqcheck-send-" + member.index + "-" + dst);
        sender.thread.setDaemon(true);
        sender.thread.start();
        settle(member, sender);
        installGates(member);
    }

    /** Flags ``msg`` DONT_BLOCK (a transient flag in 5.x, found by name so that every release compiles). */
    private static void dontBlock(Message msg) {
        for (String name : new String[]{"org.jgroups.Message$TransientFlag", "org.jgroups.Message$Flag"}) {
            Class<?> type = Reflect.type(name);
            if (type == null || !type.isEnum())
                continue;
            for (Object constant : type.getEnumConstants()) {
                if (!constant.toString().equals("DONT_BLOCK"))
                    continue;
                for (java.lang.reflect.Method m : msg.getClass().getMethods()) {
                    Class<?>[] params = m.getParameterTypes();
                    if (!m.getName().equals("setFlag") || params.length != 1)
                        continue;
                    try {
                        if (params[0] == type) {
                            m.invoke(msg, constant);
                            return;
                        }
                        if (params[0].isArray() && params[0].getComponentType() == type) {
                            Object array = java.lang.reflect.Array.newInstance(type, 1);
                            java.lang.reflect.Array.set(array, 0, constant);
                            m.invoke(msg, array);
                            return;
                        }
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException("DONT_BLOCK: " + e, e);
                    }
                }
            }
        }
        throw new IllegalStateException("DONT_BLOCK: no such message flag in JGroups " + Jg.version());
    }

    private void settle(Member member, SendGate.Sender sender) {
        SendGate gate = SendGate.settle(sender, windows(member));
        if (sender.failure != null)
            throw new IllegalStateException("application send of member " + member.index + ": " + sender.failure,
                                            sender.failure);
        if (gate == null) {
            senders.remove(sender);
            oobSenders.remove(sender);
            dontLoopbackSenders.remove(sender);
            return;
        }
        sender.gate = gate;
        if (sender.seqno < 0) {  // it just took its seqno: the entry's counter is one past it
            Object entry = sendEntry(member, member.harness.member(sender.dst).address);
            sender.seqno = ((Number) Reflect.call(Reflect.get(entry, "seqno"), "get")).longValue() - 1;
            senders.add(sender);
            senderOwners.put(sender, member);
        }
    }

    private final Map<SendGate.Sender, Member> senderOwners = new LinkedHashMap<>();

    /** The send and receive windows of ``member``, each with its gate in place. */
    @SuppressWarnings("unchecked")
    private List<Object> windows(Member member) {
        List<Object> out = new ArrayList<>();
        for (String table : new String[]{"send_table", "recv_table"})
            for (Object entry : ((Map<Address, Object>) Reflect.get(member.protocol, table)).values())
                out.add(Reflect.get(entry, "buf"));
        return out;
    }

    private void installGates(Member member) {
        for (Object window : windows(member))
            SendGate.install(window);
    }

    @SuppressWarnings("unchecked")
    private Object sendEntry(Member member, Address peer) {
        return ((Map<Address, Object>) Reflect.get(member.protocol, "send_table")).get(peer);
    }

    /** After every command: the threads blocked on a closed window fail (their only outcome). */
    @Override
    public void settled(Member member) {
        installGates(member);
        for (SendGate.Sender s : new ArrayList<>(senders)) {
            if (senderOwners.get(s) != member || s.gate == null)
                continue;
            if (!Boolean.TRUE.equals(Reflect.get(s.gate.window, "open"))) {
                s.gate.release(s.thread);
                settle(member, s);
            }
        }
    }

    private void release(Member member, long seqno, Address peer) {
        for (SendGate.Sender s : senders) {
            if (senderOwners.get(s) == member && s.seqno == seqno && member.harness.member(s.dst).address.equals(peer)) {
                s.gate.release(s.thread);
                settle(member, s);
                return;
            }
        }
        throw new IllegalArgumentException("timer send: member " + member.index + " has no send blocked with #" + seqno);
    }

    @Override
    public void end() {
        for (SendGate.Sender s : new ArrayList<>(senders)) {
            if (s.gate != null && s.thread.isAlive()) {
                Reflect.call(s.gate.window, "open", false);
                s.gate.release(s.thread);
                try {
                    s.thread.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        senders.clear();
        senderOwners.clear();
        oobSenders.clear();
        dontLoopbackSenders.clear();
    }

    // -- state ----------------------------------------------------------------------------------
    @SuppressWarnings("unchecked")
    public Map<String, Object> state(Member member) {
        Protocol prot = member.protocol;
        Harness h = member.harness;
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> view = new ArrayList<>();
        for (Address a : (Collection<Address>) Reflect.get(prot, "members"))
            view.add(h.indexOf(a));
        out.put("members", view);
        Map<String, Object> send = new TreeMap<>();
        for (Map.Entry<Address, Object> e : ((Map<Address, Object>) Reflect.get(prot, "send_table")).entrySet())
            send.put(String.valueOf(h.indexOf(e.getKey())), sendEntry(member, h.indexOf(e.getKey()), e.getValue()));
        out.put("send", send);
        Map<String, Object> recv = new TreeMap<>();
        for (Map.Entry<Address, Object> e : ((Map<Address, Object>) Reflect.get(prot, "recv_table")).entrySet())
            recv.put(String.valueOf(h.indexOf(e.getKey())), recvEntry(member, e.getValue()));
        out.put("recv", recv);
        List<Object> syncs = new ArrayList<>();
        for (Address a : ((Map<Address, Object>) Reflect.get(Reflect.get(prot, "last_sync_sent"), "map")).keySet())
            syncs.add(h.indexOf(a));
        out.put("sync_sent", syncs);
        Map<String, Object> xmit = new TreeMap<>();
        for (Map.Entry<Address, Long> e : ((Map<Address, Long>) Reflect.get(prot, "xmit_task_map")).entrySet())
            xmit.put(String.valueOf(h.indexOf(e.getKey())), e.getValue());
        out.put("xmit_last", xmit);
        out.put("timestamper", ((Number) Reflect.call(Reflect.get(prot, "timestamper"), "get")).longValue());
        out.put("next_conn_id", ((Number) Reflect.get(prot, "last_conn_id")).intValue());
        Map<String, Object> cached = new TreeMap<>();
        for (Map.Entry<Address, Collection<Message>> e
             : ((Map<Address, Collection<Message>>) Reflect.get(Reflect.get(prot, "msg_cache"), "map")).entrySet()) {
            List<Object> msgs = new ArrayList<>();
            for (Message m : e.getValue())
                msgs.add(describe(member, m));
            cached.put(String.valueOf(h.indexOf(e.getKey())), msgs);
        }
        out.put("cached", cached);
        return out;
    }

    private Map<String, Object> sendEntry(Member member, int peer, Object entry) {
        Map<String, Object> out = new LinkedHashMap<>();
        Object win = Reflect.get(entry, "buf");
        out.put("conn_id", ((Number) Reflect.get(entry, "conn_id")).intValue());
        out.put("state", Reflect.get(entry, "state").toString());
        long low = ((Number) Reflect.get(win, "low")).longValue(), high = ((Number) Reflect.get(win, "high")).longValue();
        out.put("acked", low);
        List<Object> unacked = new ArrayList<>();
        List<Object> oob = new ArrayList<>();
        List<Object> dontLoopback = new ArrayList<>();  // the window for itself (spec decisions 12, 13)
        List<Object> oobDelivered = new ArrayList<>();
        boolean self = peer == member.index;
        for (long s = low + 1; s <= high; s++) {
            Message m = (Message) Reflect.call(win, "get", s);
            unacked.add(m == null ? null : Hex.of(Jg.payload(m)));
            if (m != null && m.isFlagSet(Message.Flag.OOB))
                oob.add(s);
            if (m != null && self && Jg.dontLoopback(m))
                dontLoopback.add(s);
            if (m != null && self && Jg.transientFlag(m, "OOB_DELIVERED"))
                oobDelivered.add(s);
        }
        out.put("unacked", unacked);
        long[] mark = (long[]) Reflect.get(entry, "watermark");
        out.put("watermark", List.of(mark[0], mark[1]));
        out.put("last_ts", ((Number) Reflect.get(entry, "last_timestamp")).longValue());
        out.put("seqno", ((Number) Reflect.call(Reflect.get(entry, "seqno"), "get")).longValue() - 1);
        List<Object> blocked = new ArrayList<>();
        for (SendGate.Sender s : senders)
            if (senderOwners.get(s) == member && s.dst == peer && s.gate != null && s.gate.window == win
                && s.thread.isAlive()) {
                blocked.add(List.of(s.seqno, Hex.of(s.payload)));
                if (oobSenders.contains(s))
                    oob.add(s.seqno);
                if (self && dontLoopbackSenders.contains(s))
                    dontLoopback.add(s.seqno);
            }
        out.put("blocked", blocked);
        out.put("oob", oob);
        out.put("dont_loopback", dontLoopback);
        out.put("oob_delivered", oobDelivered);
        out.put("acks_counted", ((Number) Reflect.call(Reflect.get(entry, "acks_sent"), "get")).longValue());
        return out;
    }

    private Map<String, Object> recvEntry(Member member, Object entry) {
        Map<String, Object> out = new LinkedHashMap<>();
        Object win = Reflect.get(entry, "buf");
        out.put("conn_id", ((Number) Reflect.get(entry, "conn_id")).intValue());
        out.put("state", Reflect.get(entry, "state").toString());
        long hd = ((Number) Reflect.get(win, "hd")).longValue(), high = ((Number) Reflect.get(win, "high")).longValue();
        out.put("delivered", hd);
        List<Object> buffered = new ArrayList<>();
        for (long s = hd + 1; s <= high; s++) {
            Message m = (Message) Reflect.call(win, "get", s);
            if (m != null && Unicast3Model.header(member.protocol, m) == null && m.isFlagSet(Message.Flag.OOB)) {
                Map<String, Object> placeholder = new LinkedHashMap<>();
                placeholder.put("type", "OOB_PLACEHOLDER");  // DUMMY_OOB_MSG: delivered on receipt
                buffered.add(placeholder);
            } else
                buffered.add(m == null ? null : describe(member, m));
        }
        out.put("buffered", buffered);
        out.put("ack_pending", Reflect.call(Reflect.get(entry, "send_ack"), "get"));
        out.put("acks_counted", ((Number) Reflect.call(Reflect.get(entry, "acks_sent"), "get")).longValue());
        return out;
    }

    // -- timers ---------------------------------------------------------------------------------
    public void timer(Member member, String kind, Address peer) {
        Protocol prot = member.protocol;
        if (kind.startsWith("send#")) {
            release(member, Long.parseLong(kind.substring(5)), peer);
            return;
        }
        switch (kind) {
            case "xmit": {
                Runnable task = member.harness.clock.task(prot, "RetransmitTask");
                if (task == null)
                    throw new IllegalStateException("UNICAST4 has no retransmit task scheduled");
                task.run();
                break;
            }
            case "idle_send": case "idle_blocked": Reflect.call(prot, "closeSendConnection", peer); break;
            case "idle_recv": Reflect.call(prot, "closeReceiveConnection", peer); break;
            case "close_send": case "close_blocked": Reflect.call(prot, "removeSendConnection", peer); break;
            case "close_recv": Reflect.call(prot, "removeReceiveConnection", peer); break;
            case "sync_expired": Reflect.call(Reflect.get(prot, "last_sync_sent"), "remove", peer); break;
            default: throw new IllegalArgumentException("timer: UNICAST4 has no timer " + kind);
        }
    }

    public void removeReceiver(Member member, Address peer) {
        Reflect.call(member.protocol, "removeReceiveConnection", peer);
    }
}

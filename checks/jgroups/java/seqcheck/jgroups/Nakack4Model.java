package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;

/**
 * NAKACK4 (ReliableMulticast over FixedBuffer, 5.4.x and master) as the harness drives it.
 * Messages read as ``spec/nakack4.py``'s (``NakackModel.describe``; ACK is NAKACK4's own). The state
 * is the spec's ``Node``: the view, the seqno counter, every FixedBuffer (low, hd, high, the messages
 * kept and buffered), each entry's ACK counter and pending flag, the AckTable and its minimum,
 * is_server, the become_server_queue, xmit_task_map, LastSeqnoResender's skip flag, the application
 * thread holding a seqno (``AppThreads``) and each window's deliverer (its ``adders`` counter).
 * Timers: ``xmit`` runs the RetransmitTask; ``become_server`` is GMS's BECOME_SERVER; ``send`` lets
 * the application thread holding that seqno go on (``AppThreads``); ``deliver_fault`` arms the
 * next batch of a sender's messages to throw (``DeliverFault``).
 */
final class Nakack4Model extends NakackModel {
    private final DeliverFault faults = new DeliverFault();

    Nakack4Model() {
        super("org.jgroups.protocols.NAKACK4");
    }

    @Override
    protected void describeOther(Map<String, Object> out, int type, long seqno) {
        if (type == 5) {
            out.put("type", "ACK");
            out.put("seqno", seqno);
        } else {
            out.put("type", "UNKNOWN-" + type);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public Map<String, Object> state(Member member) {
        Protocol prot = member.protocol;
        Map<String, Object> out = commonState(member);
        Map<String, Object> counted = new TreeMap<>(), pending = new TreeMap<>(), deliverer = new TreeMap<>();
        for (Map.Entry<Address, Object> e : ((Map<Address, Object>) Reflect.get(prot, "xmit_table")).entrySet()) {
            String key = String.valueOf(member.harness.indexOf(e.getKey()));
            Object entry = e.getValue();
            counted.put(key, ((Number) Reflect.call(Reflect.get(entry, "num_acks_sent"), "get")).intValue());
            pending.put(key, Reflect.call(Reflect.get(entry, "send_ack"), "get"));
            Object win = Reflect.call(entry, "buf");
            int adders = ((Number) Reflect.call(Reflect.call(win, "getAdders"), "get")).intValue();
            deliverer.put(key, faults.armed(member, win) ? "ARMED" : adders != 0 ? "STUCK"
                               : faults.stranded(member, win) ? "STRANDED" : "READY");
        }
        out.put("acks_counted", counted);
        out.put("ack_pending", pending);
        out.put("deliverer", deliverer);
        Object table = Reflect.get(prot, "ack_table");
        Map<String, Object> acks = new TreeMap<>();
        for (Map.Entry<Address, Long> e : ((Map<Address, Long>) Reflect.get(table, "acks")).entrySet())
            acks.put(String.valueOf(member.harness.indexOf(e.getKey())), e.getValue());
        out.put("ack_table", acks);
        out.put("ack_min", ((Number) Reflect.call(table, "min")).longValue());
        List<Object> sending = new ArrayList<>();
        AppThreads.Sender sender = member.harness.threads.of(member);
        if (sender != null) {
            Object hdr = Jg.header(prot, sender.msg);
            sending.add(List.of(hdr == null ? -1L : ((Number) Reflect.get(hdr, "seqno")).longValue(),
                                Hex.of(Jg.payload(sender.msg)), sender.msg.isFlagSet(Message.Flag.OOB)));
        }
        out.put("sending", sending);
        List<Object> oobDelivered = new ArrayList<>();  // own OOB messages above hd already delivered
        Object own = windowOf(member, member.address);
        if (own != null) {
            long hd = ((Number) Reflect.call(own, "highestDelivered")).longValue();
            long high = ((Number) Reflect.call(own, "high")).longValue();
            for (long s = hd + 1; s <= high; s++) {
                Message m = (Message) Reflect.call(own, "get", s);
                if (m != null && m.isFlagSet(Message.Flag.OOB) && Jg.transientFlag(m, "OOB_DELIVERED"))
                    oobDelivered.add(s);
            }
        }
        out.put("oob_delivered", oobDelivered);
        List<Object> receiving = new ArrayList<>();  // receiving threads blocked on a full window
        for (AppThreads.Sender r : member.harness.threads.receivers)
            if (r.member == member && r.alive())
                receiving.add(describe(member, r.msg));
        out.put("receiving", receiving);
        return out;
    }

    @Override
    protected Map<String, Object> window(Member member, Address sender, Object win) {
        Map<String, Object> out = new LinkedHashMap<>();
        long low = ((Number) Reflect.call(win, "low")).longValue();
        long hd = ((Number) Reflect.call(win, "highestDelivered")).longValue();
        long high = ((Number) Reflect.call(win, "high")).longValue();
        out.put("low", low);
        out.put("hd", hd);
        out.put("high", high);
        out.put("kept", messages(member, win, low + 1, hd));
        out.put("buffered", messages(member, win, hd + 1, high));
        return out;
    }

    private List<Object> messages(Member member, Object win, long from, long to) {
        List<Object> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            Message m = (Message) Reflect.call(win, "get", s);
            out.add(m == null ? null : describe(member, m));
        }
        return out;
    }

    @Override
    public void timer(Member member, String kind, Address peer, long arg) {
        switch (kind) {
            case "send":
                releaseSender(member, arg);
                break;
            case "deliver_fault":
                faults.arm(this, member, peer);
                break;
            case "become_server":
                faults.replay(member, (Iterable<?>) Reflect.get(member.protocol, "become_server_queue"));
                super.timer(member, kind, peer, arg);
                break;
            default:
                super.timer(member, kind, peer, arg);
        }
    }

    /** ``Timer(SEND, seqno)``: the application thread holding ``seqno`` goes on, if its window has room
     *  (else it stays blocked, as JGroups' FixedBuffer.block keeps it). */
    private void releaseSender(Member member, long seqno) {
        AppThreads.Sender sender = member.harness.threads.of(member);
        Object hdr = sender == null ? null : Jg.header(member.protocol, sender.msg);
        if (hdr == null || ((Number) Reflect.get(hdr, "seqno")).longValue() != seqno)
            throw new IllegalStateException("send: no application thread of member " + member.index + " holds #" + seqno);
        Object win = ownWindow(member);
        if (win != null && sender.lock == Reflect.call(win, "lock") && sendTakesLockFirst(member)
            && seqno - ((Number) Reflect.call(win, "low")).longValue() > ((Number) Reflect.call(win, "capacity")).intValue())
            return;  // blocked on a full window: nothing signalled it
        member.harness.threads.release(sender);
    }

    /** A message comes up. One beyond the capacity of a receive window makes JGroups' receiving thread
     *  wait in FixedBuffer.add (every release: ``Buffer.add(seqno, msg)`` blocks when full), so the
     *  delivery runs on a thread of its own (``AppThreads.receive``); a thread that blocked is
     *  reported in the state (``receiving``). */
    @Override
    public void up(Member member, Message msg) {
        Runnable deliver = () -> faults.run(this, member, msg, () -> Jg.up(member.protocol, msg));
        Object win = beyondWindow(member, msg);
        if (win == null) {
            deliver.run();
            return;
        }
        ReentrantLock lock = (ReentrantLock) Reflect.call(win, "lock");
        member.harness.threads.receive(member, msg, lock, () -> ((Number) Reflect.call(win, "numBlockings")).longValue(),
                                       deliver);
    }

    /** A batch comes up (the harness's ``batch``): as ``up``, on a thread of its own when one of its
     *  messages is beyond the capacity of its receive window (5.4.x's FixedBuffer.add blocks there too). */
    @Override
    public void upBatch(Member member, Member sender, java.util.List<Message> msgs) {
        Runnable deliver = () -> faults.run(this, member, msgs.get(0),
                                            () -> Jg.upBatch(member.protocol, member.address, sender.address, msgs));
        Object win = null;
        for (Message msg : msgs)
            if (win == null)
                win = beyondWindow(member, msg);
        if (win == null) {
            deliver.run();
            return;
        }
        Object full = win;
        ReentrantLock lock = (ReentrantLock) Reflect.call(full, "lock");
        member.harness.threads.receive(member, msgs.get(0), lock,
                                       () -> ((Number) Reflect.call(full, "numBlockings")).longValue(), deliver);
    }

    /** The receive window ``msg`` (a MSG or XMIT_RSP from another member, at a server) would be added to
     *  beyond its capacity, or null. */
    private Object beyondWindow(Member member, Message msg) {
        Address sender = deliveringSender(member, msg);
        Object win = sender == null || sender.equals(member.address) ? null : windowOf(member, sender);
        if (win == null || !Boolean.TRUE.equals(Reflect.get(member.protocol, "is_server")))
            return null;
        long seqno = ((Number) Reflect.get(Jg.header(member.protocol, msg), "seqno")).longValue();
        long low = ((Number) Reflect.call(win, "low")).longValue();
        return seqno - low > ((Number) Reflect.call(win, "capacity")).intValue() ? win : null;
    }

    @Override
    public void closeWindowOf(AppThreads.Sender receiver) {
        for (Object win : windows(receiver.member).values())
            if (Reflect.call(win, "lock") == receiver.lock)
                Reflect.call(win, "open", Boolean.FALSE);
    }

    @Override
    public void execute(Member member, Runnable task) {
        faults.execute(this, member, task);
    }

    // -- application threads (AppThreads) ---------------------------------------------------------------
    private static Object ownWindow(Member member) {
        @SuppressWarnings("unchecked") Map<Address, Object> table = (Map<Address, Object>) Reflect.get(member.protocol, "xmit_table");
        Object entry = table.get(member.address);
        return entry == null ? null : Reflect.call(entry, "buf");
    }

    @Override
    public ReentrantLock sendLock(Member member) {
        Object win = ownWindow(member);
        return win == null ? null : (ReentrantLock) Reflect.call(win, "lock");
    }

    /** send_atomically takes the window's lock before the seqno from 5.4.6 on (commit 370770ab9); before,
     *  it took the seqno first, like a send without it. */
    @Override
    public boolean sendTakesLockFirst(Member member) {
        int[] v = Jg.numbers();
        boolean fixed = v[0] > 5 || (v[0] == 5 && (v[1] > 4 || (v[1] == 4 && v[2] >= 6)));
        return fixed && (Boolean) Reflect.get(member.protocol, "send_atomically");
    }

    @Override
    public long blockings(Member member) {
        Object win = ownWindow(member);
        return win == null ? 0 : ((Number) Reflect.call(win, "numBlockings")).longValue();
    }

    @Override
    public void closeSendWindow(Member member) {
        Object win = ownWindow(member);
        if (win != null)
            Reflect.call(win, "open", Boolean.FALSE);
    }

    @Override
    protected Collection<String> properties() {
        return List.of("capacity", "ack_threshold", "send_atomically", "become_server_queue_size", "use_mcast_xmit");
    }
}

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
import org.jgroups.util.Table;

/**
 * UNICAST2 as the harness drives it (3.2.x to 3.6.x). Messages read as the spec's (``spec/unicast2.py``):
 * DATA(seqno, conn_id, first, payload), XMIT_REQ(seqnos), SEND_FIRST_SEQNO(seqno), STABLE(hd = the header's
 * seqno, hr = its high_seqno, conn_id), ACK(seqno, conn_id) (3.2.6 on). UNICAST2 has no timestamps: the
 * binding reads ts 0. The state is what the spec's node holds: send entries (conn_id, the table's low, hd
 * and hr, the payloads it stores above low, ack_received where the release has it, the next seqno),
 * receive entries (conn_id, hd, the messages held above it, last_highest and num_stable_msgs of the
 * stable task), xmit_task_map (3.3 on), last_conn_id and the view. Timers: ``xmit`` and ``stable`` run the
 * protocol's own scheduled RetransmitTask and StableTask (the futures it keeps in ``xmit_task`` and
 * ``stable_task_future``); ``idle_send`` and ``idle_recv`` run what the ConnectionReaper
 * (reapIdleConnections) does to one expired entry: removeSendConnection, removeReceiveConnection.
 * Time is the schedule's: every timeout is set far away (``create``), so nothing expires by the real clock
 * (the reaper ages entries by System.currentTimeMillis).
 */
final class Unicast2Model implements ProtocolModel {
    static final long FAR = 1L << 40;  // ms: never, in a run

    public Protocol create(Map<String, Object> props) {
        Protocol prot = (Protocol) Reflect.create(Reflect.type("org.jgroups.protocols.UNICAST2"));
        // Time is the schedule's: the tasks run only when fired, the reaper's and the AgeOutCache's
        // timeouts are never reached, and the byte-triggered STABLE (max_bytes) never fires
        // (the spec leaves it out: its decision 7).
        for (String timeout : new String[]{"xmit_interval", "stable_interval", "conn_expiry_timeout",
                                           "max_retransmit_time", "max_bytes"})
            Reflect.setProperty(prot, timeout, FAR);
        for (Map.Entry<String, Object> p : props.entrySet())
            if (!Reflect.setProperty(prot, p.getKey(), p.getValue()))
                throw new IllegalArgumentException("props: UNICAST2 has no property " + p.getKey());
        return prot;
    }

    public Map<String, Object> describe(Member member, Message msg) {
        Map<String, Object> out = new LinkedHashMap<>();
        Object hdr = Unicast3Model.header(member.protocol, msg);
        if (hdr == null) {
            out.put("type", "OTHER");
            return out;
        }
        int type = ((Number) Reflect.get(hdr, "type")).intValue();
        long seqno = ((Number) Reflect.get(hdr, "seqno")).longValue();
        int conn = ((Number) Reflect.get(hdr, "conn_id")).intValue();
        switch (type) {
            case 0:
                out.put("type", "DATA");
                out.put("seqno", seqno);
                out.put("conn_id", conn);
                out.put("first", Reflect.get(hdr, "first"));
                out.put("payload", Hex.of(Jg.payload(msg)));
                break;
            case 1: {
                out.put("type", "XMIT_REQ");
                List<Object> seqnos = new ArrayList<>();
                Object list = Jg.object(msg, Reflect.type("org.jgroups.util.SeqnoList"));
                for (Object s : (Iterable<?>) list)
                    seqnos.add(s);
                out.put("seqnos", seqnos);
                break;
            }
            case 2:
                out.put("type", "SEND_FIRST_SEQNO");
                out.put("seqno", seqno);
                break;
            case 3:
                out.put("type", "STABLE");
                out.put("hd", seqno);
                out.put("hr", ((Number) Reflect.get(hdr, "high_seqno")).longValue());
                out.put("conn_id", conn);
                break;
            case 4:
                out.put("type", "ACK");
                out.put("seqno", seqno);
                out.put("conn_id", conn);
                break;
            default:
                out.put("type", "UNKNOWN-" + type);
        }
        return out;
    }

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
            send.put(String.valueOf(h.indexOf(e.getKey())), sendEntry(e.getValue()));
        out.put("send", send);
        Map<String, Object> recv = new TreeMap<>();
        for (Map.Entry<Address, Object> e : ((Map<Address, Object>) Reflect.get(prot, "recv_table")).entrySet())
            recv.put(String.valueOf(h.indexOf(e.getKey())), recvEntry(member, e.getValue()));
        out.put("recv", recv);
        Map<String, Object> xmit = new TreeMap<>();
        Object map = Reflect.getOr(prot, null, "xmit_task_map");  // 3.3 on (JGRP-1539)
        if (map != null)
            for (Map.Entry<Address, Long> e : ((Map<Address, Long>) map).entrySet())
                xmit.put(String.valueOf(h.indexOf(e.getKey())), e.getValue());
        out.put("xmit_last", xmit);
        out.put("next_conn_id", ((Number) Reflect.get(prot, "last_conn_id")).intValue());
        return out;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> sendEntry(Object entry) {
        Map<String, Object> out = new LinkedHashMap<>();
        Table<Message> win = (Table<Message>) Reflect.get(entry, "sent_msgs");
        out.put("conn_id", ((Number) Reflect.get(entry, "send_conn_id")).intValue());
        long low = win.getLow(), hr = win.getHighestReceived();
        out.put("low", low);
        out.put("hd", win.getHighestDelivered());
        out.put("hr", hr);
        List<Object> stored = new ArrayList<>();
        for (long s = low + 1; s <= hr; s++) {
            Message m = win.get(s);
            stored.add(m == null ? null : Hex.of(Jg.payload(m)));
        }
        out.put("stored", stored);
        Object ack = Reflect.getOr(entry, null, "ack_received");  // 3.2.6 on (JGRP-1563)
        if (ack != null)
            out.put("ack_received", ack);
        out.put("next_seqno", ((Number) Reflect.call(Reflect.get(entry, "sent_msgs_seqno"), "get")).longValue());
        return out;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> recvEntry(Member member, Object entry) {
        Map<String, Object> out = new LinkedHashMap<>();
        Table<Message> win = (Table<Message>) Reflect.get(entry, "received_msgs");
        out.put("conn_id", ((Number) Reflect.get(entry, "recv_conn_id")).intValue());
        long hd = win.getHighestDelivered(), hr = win.getHighestReceived();
        out.put("delivered", hd);
        List<Object> buffered = new ArrayList<>();
        for (long s = hd + 1; s <= hr; s++) {
            Message m = win.get(s);
            buffered.add(m == null ? null : describe(member, m));
        }
        out.put("buffered", buffered);
        out.put("last_highest", ((Number) Reflect.get(entry, "last_highest")).longValue());
        out.put("num_stable_msgs", ((Number) Reflect.get(entry, "num_stable_msgs")).intValue());
        return out;
    }

    public void timer(Member member, String kind, Address peer) {
        Protocol prot = member.protocol;
        switch (kind) {
            case "xmit": scheduled(prot, "xmit_task", "retransmit").run(); break;
            case "stable": scheduled(prot, "stable_task_future", "stable").run(); break;
            case "idle_send": reaping(prot); Reflect.call(prot, "removeSendConnection", peer); break;
            case "idle_recv": reaping(prot); Reflect.call(prot, "removeReceiveConnection", peer); break;
            default: throw new IllegalArgumentException("timer: UNICAST2 has no timer " + kind);
        }
    }

    /** The task behind the future the protocol keeps in ``field`` (scheduled on the harness's timer). */
    private static Runnable scheduled(Protocol prot, String field, String what) {
        Object future = Reflect.getOr(prot, null, field);
        if (!(future instanceof Jg.Pending) || ((Jg.Pending) future).isCancelled())
            throw new IllegalStateException("UNICAST2 has no " + what + " task scheduled");
        return ((Jg.Pending) future).task;
    }

    /** The reaper's timers exist only where it runs (conn_expiry_timeout > 0). */
    private static void reaping(Protocol prot) {
        if (((Number) Reflect.get(prot, "conn_expiry_timeout")).longValue() <= 0)
            throw new IllegalStateException("UNICAST2 has no connection reaper (conn_expiry_timeout is 0)");
    }

    public void removeReceiver(Member member, Address peer) {
        Reflect.call(member.protocol, "removeReceiveConnection", peer);
    }
}

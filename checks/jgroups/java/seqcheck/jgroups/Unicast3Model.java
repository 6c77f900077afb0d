package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jgroups.Address;
import org.jgroups.Header;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;
import org.jgroups.util.Table;

/**
 * UNICAST3 as the harness drives it (3.4.8 to master). Messages read as the spec's (``spec/unicast3.py``):
 * DATA(seqno, conn_id, first, payload, oob: Message.Flag.OOB), ACK(seqno, conn_id, ts), SEND_FIRST_SEQNO(ts), XMIT_REQ(seqnos),
 * CLOSE(conn_id); a release without timestamps (3.4.x) reads ts 0. The state is what the spec's node
 * holds: send and receive entries (conn_id, state, HA/HS or delivered/received, the messages stored,
 * watermark, last timestamp, ACK pending), last_sync_sent, xmit_task_map, the timestamper, the next
 * conn_id, the view, and msg_cache (5.2 on). Timers: the spec's ``xmit`` runs the protocol's own
 * RetransmitTask; the idle and close timers run the methods closeIdleConnections and
 * removeExpiredConnections call for one entry (closeSendConnection, closeReceiveConnection,
 * removeSendConnection, removeReceiveConnection), ``sync_expired`` removes the peer from
 * last_sync_sent (time is the harness's: every timeout is set far away, see ``create``).
 * OOB: ``sendOob`` flags the application's message Message.Flag.OOB; a send entry lists the seqnos
 * of its OOB messages (``oob``); a receive window's slot holding DUMMY_OOB_MSG (an OOB message
 * delivered on receipt, its placeholder until the drain removes it) reads as {"type": "OOB_PLACEHOLDER"}.
 */
final class Unicast3Model implements ProtocolModel {
    static final long FAR = 1L << 40;  // ms: never, in a run

    public Protocol create(Map<String, Object> props) {
        Protocol prot = (Protocol) Reflect.create(Reflect.type("org.jgroups.protocols.UNICAST3"));
        // Time is the schedule's: no timeout may expire by the real clock (3.4.x ages entries by it).
        for (String timeout : new String[]{"conn_expiry_timeout", "conn_close_timeout", "sync_min_interval"})
            Reflect.setProperty(prot, timeout, FAR);
        for (Map.Entry<String, Object> p : props.entrySet())
            if (!Reflect.setProperty(prot, p.getKey(), p.getValue()))
                throw new IllegalArgumentException("props: UNICAST3 has no property " + p.getKey());
        return prot;
    }

    public void sendOob(Member member, int dst, byte[] payload) {
        member.send(dst, payload, true);
    }

    static Object header(Protocol prot, Message msg) {
        short id = (Short) Reflect.get(prot, "id");
        return Reflect.call(msg, "getHeader", id);
    }

    public Map<String, Object> describe(Member member, Message msg) {
        Map<String, Object> out = new LinkedHashMap<>();
        Object hdr = header(member.protocol, msg);
        if (hdr == null) {
            out.put("type", "OTHER");
            return out;
        }
        int type = ((Number) Reflect.get(hdr, "type")).intValue();
        long seqno = ((Number) Reflect.get(hdr, "seqno")).longValue();
        int conn = ((Number) Reflect.get(hdr, "conn_id")).intValue();
        long ts = ((Number) Reflect.getOr(hdr, 0, "timestamp")).longValue();
        switch (type) {
            case 0:
                out.put("type", "DATA");
                out.put("seqno", seqno);
                out.put("conn_id", conn);
                out.put("first", Reflect.get(hdr, "first"));
                out.put("payload", Hex.of(Jg.payload(msg)));
                out.put("oob", msg.isFlagSet(Message.Flag.OOB));
                break;
            case 1:
                out.put("type", "ACK");
                out.put("seqno", seqno);
                out.put("conn_id", conn);
                out.put("ts", ts);
                break;
            case 2:
                out.put("type", "SEND_FIRST_SEQNO");
                out.put("ts", ts);
                break;
            case 3: {
                out.put("type", "XMIT_REQ");
                List<Object> seqnos = new ArrayList<>();
                Object list = Jg.object(msg, Reflect.type("org.jgroups.util.SeqnoList"));
                for (Object s : (Iterable<?>) list)
                    seqnos.add(s);
                out.put("seqnos", seqnos);
                break;
            }
            case 4:
                out.put("type", "CLOSE");
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
            send.put(String.valueOf(h.indexOf(e.getKey())), sendEntry(member, e.getValue(), h.indexOf(e.getKey()) == member.index));
        out.put("send", send);
        Map<String, Object> recv = new TreeMap<>();
        for (Map.Entry<Address, Object> e : ((Map<Address, Object>) Reflect.get(prot, "recv_table")).entrySet())
            recv.put(String.valueOf(h.indexOf(e.getKey())), recvEntry(member, e.getValue()));
        out.put("recv", recv);
        List<Object> syncs = new ArrayList<>();
        Object lastSync = Reflect.getOr(prot, null, "last_sync_sent");
        if (lastSync != null)
            for (Address a : ((Map<Address, Object>) Reflect.get(lastSync, "map")).keySet())
                syncs.add(h.indexOf(a));
        out.put("sync_sent", syncs);
        Map<String, Object> xmit = new TreeMap<>();
        for (Map.Entry<Address, Long> e : ((Map<Address, Long>) Reflect.get(prot, "xmit_task_map")).entrySet())
            xmit.put(String.valueOf(h.indexOf(e.getKey())), e.getValue());
        out.put("xmit_last", xmit);
        Object stamper = Reflect.getOr(prot, null, "timestamper");
        out.put("timestamper", stamper == null ? 0 : ((Number) Reflect.call(stamper, "get")).longValue());
        out.put("next_conn_id", ((Number) Reflect.get(prot, "last_conn_id")).intValue());
        Object cache = Reflect.getOr(prot, null, "msg_cache");
        if (cache != null) {
            Map<String, Object> cached = new TreeMap<>();
            for (Map.Entry<Address, Collection<Message>> e : ((Map<Address, Collection<Message>>) Reflect.get(cache, "map")).entrySet()) {
                List<Object> msgs = new ArrayList<>();
                for (Message m : e.getValue())
                    msgs.add(describe(member, m));
                cached.put(String.valueOf(h.indexOf(e.getKey())), msgs);
            }
            out.put("cached", cached);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> sendEntry(Member member, Object entry, boolean self) {
        Map<String, Object> out = new LinkedHashMap<>();
        Table<Message> win = (Table<Message>) Reflect.get(entry, "msgs", "sent_msgs");
        out.put("conn_id", ((Number) Reflect.get(entry, "conn_id")).intValue());
        out.put("state", Reflect.get(entry, "state").toString());
        long hd = win.getHighestDelivered(), hr = win.getHighestReceived();
        out.put("acked", hd);
        List<Object> unacked = new ArrayList<>();
        List<Object> oob = new ArrayList<>();
        List<Object> dontLoopback = new ArrayList<>();  // the window for itself (spec decision 27)
        for (long s = hd + 1; s <= hr; s++) {
            Message m = win.get(s);
            unacked.add(m == null ? null : Hex.of(Jg.payload(m)));
            if (m != null && m.isFlagSet(Message.Flag.OOB))
                oob.add(s);
            if (m != null && self && Jg.dontLoopback(m))
                dontLoopback.add(s);
        }
        out.put("unacked", unacked);
        out.put("oob", oob);
        out.put("dont_loopback", dontLoopback);
        long[] mark = (long[]) Reflect.get(entry, "watermark");
        List<Object> watermark = new ArrayList<>();
        watermark.add(mark[0]);
        watermark.add(mark[1]);
        out.put("watermark", watermark);
        out.put("last_ts", ((Number) Reflect.getOr(entry, 0, "last_timestamp")).longValue());
        out.put("next_seqno", ((Number) Reflect.call(Reflect.get(entry, "sent_msgs_seqno"), "get")).longValue());
        return out;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> recvEntry(Member member, Object entry) {
        Map<String, Object> out = new LinkedHashMap<>();
        Table<Message> win = (Table<Message>) Reflect.get(entry, "msgs", "received_msgs");
        out.put("conn_id", ((Number) Reflect.get(entry, "conn_id")).intValue());
        out.put("state", Reflect.get(entry, "state").toString());
        long hd = win.getHighestDelivered(), hr = win.getHighestReceived();
        out.put("delivered", hd);
        List<Object> buffered = new ArrayList<>();
        for (long s = hd + 1; s <= hr; s++) {
            Message m = win.get(s);
            if (m != null && header(member.protocol, m) == null && m.isFlagSet(Message.Flag.OOB)) {
                Map<String, Object> placeholder = new LinkedHashMap<>();
                placeholder.put("type", "OOB_PLACEHOLDER");  // DUMMY_OOB_MSG: delivered on receipt
                buffered.add(placeholder);
            } else
                buffered.add(m == null ? null : describe(member, m));
        }
        out.put("buffered", buffered);
        Object ack = Reflect.get(entry, "send_ack");
        out.put("ack_pending", ack instanceof Boolean ? ack : Reflect.call(ack, "get"));
        return out;
    }

    public void timer(Member member, String kind, Address peer) {
        Protocol prot = member.protocol;
        switch (kind) {
            case "xmit": {
                Runnable task = member.harness.clock.task(prot, "RetransmitTask");
                if (task == null)
                    throw new IllegalStateException("UNICAST3 has no retransmit task scheduled");
                task.run();
                break;
            }
            case "idle_send": Reflect.call(prot, "closeSendConnection", peer); break;
            case "idle_recv": Reflect.call(prot, "closeReceiveConnection", peer); break;
            case "close_send": Reflect.call(prot, "removeSendConnection", peer); break;
            case "close_recv": Reflect.call(prot, "removeReceiveConnection", peer); break;
            case "sync_expired": {
                Object lastSync = Reflect.getOr(prot, null, "last_sync_sent");
                if (lastSync != null)
                    Reflect.call(lastSync, "remove", peer);
                break;
            }
            default: throw new IllegalArgumentException("timer: UNICAST3 has no timer " + kind);
        }
    }

    public void removeReceiver(Member member, Address peer) {
        Reflect.call(member.protocol, "removeReceiveConnection", peer);
    }
}

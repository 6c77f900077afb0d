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
 * What NAKACK2 and NAKACK4 share in the harness: the protocol made from its class with the
 * properties the spec's ``Config`` names, their header (NakAckHeader2 / NakAckHeader: MSG, XMIT_REQ,
 * XMIT_RSP, HIGHEST_SEQNO) read as the spec's messages, the state both specs' nodes hold (the view,
 * the seqno counter, the windows, is_server, the become_server_queue, xmit_task_map), the timers
 * ``xmit`` (the protocol's own RetransmitTask) and ``become_server`` (``Gms``), and a multicast's
 * destinations: the members of the sender's view as the protocol holds it (``members``), one copy
 * each, which is what a transport's multicast reaches in a group whose views agree (the world's
 * rule 2: a multicast is one packet per member of the sender's view).
 *
 * OOB (``sendOob``): the message flagged Message.Flag.OOB; MSG and XMIT_RSP read their flag
 * (``oob``), and a window slot holding DUMMY_OOB_MSG (no header, the OOB flag) reads as
 * {"type": "OOB_PLACEHOLDER"}.
 *
 * Every retransmission timeout is far away (``FAR``): the RetransmitTask runs only when the schedule
 * fires ``xmit``.
 */
abstract class NakackModel implements ProtocolModel {
    static final long FAR = 1L << 40;  // ms: never, in a run
    private final String className;

    NakackModel(String className) {
        this.className = className;
    }

    /** The spec's settings the harness passes on, by JGroups' field name. */
    protected abstract Collection<String> properties();

    /** Transient flags the application sets on its multicasts (props "dont_block", "dont_loopback"). */
    protected final List<String> applicationFlags = new ArrayList<>();

    public Protocol create(Map<String, Object> props) {
        Protocol prot = (Protocol) Reflect.create(Reflect.type(className));
        Reflect.setProperty(prot, "xmit_interval", FAR);
        Reflect.setProperty(prot, "log_not_found_msgs", Boolean.FALSE);
        applicationFlags.clear();
        for (Map.Entry<String, Object> p : props.entrySet()) {
            if (p.getKey().equals("dont_block") || p.getKey().equals("dont_loopback")) {
                if (Boolean.TRUE.equals(p.getValue()))
                    applicationFlags.add(p.getKey().toUpperCase());
                continue;
            }
            if (!properties().contains(p.getKey()) || !Reflect.setProperty(prot, p.getKey(), p.getValue()))
                throw new IllegalArgumentException("props: " + prot.getClass().getSimpleName() + " has no property "
                                                   + p.getKey() + " the harness sets (it sets " + properties() + ")");
        }
        return prot;
    }

    /** An OOB multicast (the model's [oob] table): the application's message flagged Message.Flag.OOB. */
    @Override
    public void sendOob(Member member, int dst, byte[] payload) {
        member.send(dst, payload, true);
    }

    @Override
    public Message application(Member member, Message msg) {
        for (String flag : applicationFlags)
            Jg.setTransientFlag(msg, flag);
        return msg;
    }

    // -- messages ---------------------------------------------------------------------------------------
    public Map<String, Object> describe(Member member, Message msg) {
        Map<String, Object> out = new LinkedHashMap<>();
        Object hdr = Jg.header(member.protocol, msg);
        if (hdr == null) {  // DUMMY_OOB_MSG (a window slot of an OOB message delivered on receipt) has none
            out.put("type", msg.isFlagSet(Message.Flag.OOB) ? "OOB_PLACEHOLDER" : "OTHER");
            return out;
        }
        int type = ((Number) Reflect.get(hdr, "type")).intValue();
        long seqno = ((Number) Reflect.get(hdr, "seqno")).longValue();
        switch (type) {
            case 1:
                out.put("type", "MSG");
                out.put("seqno", seqno);
                out.put("payload", Hex.of(Jg.payload(msg)));
                out.put("oob", msg.isFlagSet(Message.Flag.OOB));
                break;
            case 2: {
                out.put("type", "XMIT_REQ");
                out.put("sender", member.harness.indexOf((Address) Reflect.get(hdr, "sender")));
                List<Object> seqnos = new ArrayList<>();
                for (Object s : (Iterable<?>) Jg.object(msg, Reflect.type("org.jgroups.util.SeqnoList")))
                    seqnos.add(s);
                out.put("seqnos", seqnos);
                break;
            }
            case 3:
                out.put("type", "XMIT_RSP");
                out.put("sender", member.harness.indexOf(msg.getSrc()));
                out.put("seqno", seqno);
                out.put("payload", Hex.of(Jg.payload(msg)));
                out.put("oob", msg.isFlagSet(Message.Flag.OOB));
                break;
            case 4:
                out.put("type", "HIGHEST_SEQNO");
                out.put("seqno", seqno);
                break;
            default:
                describeOther(out, type, seqno);
        }
        return out;
    }

    protected abstract void describeOther(Map<String, Object> out, int type, long seqno);

    // -- state --------------------------------------------------------------------------------------------
    /** The view, the counter, the windows, is_server, BECOME_SERVER pending, the queue, xmit_task_map. */
    @SuppressWarnings("unchecked")
    protected Map<String, Object> commonState(Member member) {
        Protocol prot = member.protocol;
        Harness h = member.harness;
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> view = new ArrayList<>();
        for (Address a : (Collection<Address>) Reflect.get(prot, "members"))
            view.add(h.indexOf(a));
        out.put("members", view);
        out.put("seqno", ((Number) Reflect.call(Reflect.get(prot, "seqno"), "get")).longValue());
        Map<String, Object> windows = new TreeMap<>();
        for (Map.Entry<Address, Object> e : windows(member).entrySet())
            windows.put(String.valueOf(h.indexOf(e.getKey())), window(member, e.getKey(), e.getValue()));
        out.put("windows", windows);
        out.put("is_server", Reflect.get(prot, "is_server"));
        out.put("become_server_pending", member.becomeServerPending);
        List<Object> queue = new ArrayList<>();
        Object queued = Reflect.get(prot, "become_server_queue");
        for (Object m : (Iterable<?>) queued) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("src", h.indexOf(((Message) m).getSrc()));
            item.put("msg", describe(member, (Message) m));
            queue.add(item);
        }
        out.put("queue", queue);
        Map<String, Object> xmit = new TreeMap<>();
        Object records = Reflect.getOr(prot, null, "xmit_task_map");  // JGRP-1539's (absent before 3.3)
        if (records != null)
            for (Map.Entry<Address, Long> e : ((Map<Address, Long>) records).entrySet())
                xmit.put(String.valueOf(h.indexOf(e.getKey())), e.getValue());
        out.put("xmit_last", xmit);
        Object resender = Reflect.getOr(prot, null, "last_seqno_resender");
        Object skip = resender == null ? null : Reflect.getOr(resender, null, "skip_next_send");
        out.put("skip_next_resend", skip == null ? Boolean.FALSE : Reflect.call(skip, "get"));
        return out;
    }

    /** Each window of the member's table (sender -> its Table or Buffer). */
    @SuppressWarnings("unchecked")
    protected Map<Address, Object> windows(Member member) {
        Map<Address, Object> out = new LinkedHashMap<>();
        for (Map.Entry<Address, Object> e : ((Map<Address, Object>) Reflect.get(member.protocol, "xmit_table")).entrySet()) {
            Object value = e.getValue();
            out.put(e.getKey(), Reflect.has(value, "buf") ? Reflect.call(value, "buf") : value);
        }
        return out;
    }

    protected abstract Map<String, Object> window(Member member, Address sender, Object win);

    /** The window of ``sender`` at ``member`` (its Table or Buffer), or null. */
    Object windowOf(Member member, Address sender) {
        return windows(member).get(sender);
    }

    /** The sender whose window ``msg`` is delivered into when it comes up (a MSG or an XMIT_RSP), or null. */
    Address deliveringSender(Member member, Message msg) {
        Object hdr = Jg.header(member.protocol, msg);
        if (hdr == null)
            return null;
        int type = ((Number) Reflect.get(hdr, "type")).intValue();
        return type == 1 || type == 3 ? msg.getSrc() : null;
    }

    // -- timers, membership ----------------------------------------------------------------------------------
    public void timer(Member member, String kind, Address peer) {
        timer(member, kind, peer, -1);
    }

    public void timer(Member member, String kind, Address peer, long arg) {
        switch (kind) {
            case "xmit": {
                Runnable task = member.harness.clock.task(member.protocol, "RetransmitTask");
                if (task == null)
                    throw new IllegalStateException(member.protocol.getClass().getSimpleName()
                                                    + " has no retransmit task scheduled");
                task.run();
                break;
            }
            case "become_server":
                member.harness.gms.becomeServer(member);
                break;
            default:
                throw new IllegalArgumentException("timer: " + member.protocol.getClass().getSimpleName()
                                                   + " has no timer " + kind);
        }
    }

    public void removeReceiver(Member member, Address peer) {
        throw new IllegalArgumentException("remove: the multicast protocols have no receiver-removal hook");
    }

    @SuppressWarnings("unchecked")
    @Override
    public List<Address> multicastTargets(Member member) {
        return new ArrayList<>((Collection<Address>) Reflect.get(member.protocol, "members"));
    }
}

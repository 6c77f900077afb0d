package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.stack.Protocol;
import org.jgroups.util.Digest;

/**
 * NAKACK2 (with STABLE above it, as in a channel's stack) as the harness drives it. Messages read as
 * ``spec/nakack2.py``'s: NAKACK's four (``NakackModel``), and STABLE's gossip (a vote: the voter's view
 * and digest) and STABILITY (the view and the merged digest); a view id reads as the view's members
 * (the harness numbers one view per membership). The state is the spec's ``Node``: NAKACK2's view,
 * counter, Tables (low, hd, the messages kept to hd, the messages and gaps to hr), is_server, the
 * become_server_queue, xmit_task_map, stable_xmit_map, LastSeqnoResender's record; and STABLE's round
 * (the votes received, the merged digest, suspended). Timers: ``xmit``, ``become_server``, and
 * ``stable``: one run of STABLE's StableTask (the gossip). STABLE counts no bytes (max_bytes 0: the
 * spec's gossip is its timer alone).
 *
 * With retransmission off (the spec's xmit_interval <= 0) the harness sets xmit_interval 0, which
 * JGroups accepted from JGRP-2675 (5.2.13) to 5.4.3 and refuses from 5.4.4 on (init throws: the
 * reset fails in one line). STABLE joins the stack where its gossip goes to the coordinator with a
 * view id (3.4 on); 3.2.5's STABLE multicasts its gossip to everybody, a protocol the spec does not
 * describe: there NAKACK2 runs alone and the ``stable`` timer is refused.
 */
final class Nakack2Model extends NakackModel {
    private static final Class<?> STABLE = Reflect.type("org.jgroups.protocols.pbcast.STABLE");
    private static final Class<?> STABLE_HEADER = Reflect.type("org.jgroups.protocols.pbcast.STABLE$StableHeader");

    Nakack2Model() {
        super("org.jgroups.protocols.pbcast.NAKACK2");
    }

    static boolean stableAsSpecified() {
        return STABLE_HEADER != null && Reflect.field(STABLE_HEADER, "view_id") != null;
    }

    @Override
    protected Collection<String> properties() {
        return List.of("xmit_interval", "use_mcast_xmit", "resend_last_seqno", "resend_last_seqno_max_times",
                       "become_server_queue_size");
    }

    @Override
    public Protocol create(Map<String, Object> props) {
        Map<String, Object> own = new LinkedHashMap<>(props);
        Object interval = own.remove("xmit_interval");
        // LastSeqnoResender came with JGRP-1904 (3.5): before, a model may only ask for it off
        Object resend = own.get("resend_last_seqno");
        Object plain = Reflect.create(Reflect.type("org.jgroups.protocols.pbcast.NAKACK2"));
        if (Reflect.field(plain.getClass(), "resend_last_seqno") == null) {
            if (Boolean.TRUE.equals(resend))
                throw new IllegalArgumentException("props: resend_last_seqno: " + Jg.version() + "'s NAKACK2 has no "
                                                   + "LastSeqnoResender (JGRP-1904, 3.5)");
            own.remove("resend_last_seqno");
            own.remove("resend_last_seqno_max_times");
        }
        Protocol prot = super.create(own);
        if (interval != null && ((Number) interval).longValue() <= 0)
            Reflect.setProperty(prot, "xmit_interval", 0L);
        return prot;
    }

    @Override
    public Protocol[] stack(Map<String, Object> props) {
        Protocol nakack = create(props);
        if (!stableAsSpecified())
            return new Protocol[]{nakack};
        Protocol stable = (Protocol) Reflect.create(STABLE);
        Reflect.setProperty(stable, "max_bytes", 0L);
        return new Protocol[]{nakack, stable};
    }

    private static Protocol stable(Member member) {
        return member.stack.length > 1 ? member.stack[1] : null;
    }

    // -- messages ---------------------------------------------------------------------------------------
    @Override
    public Map<String, Object> describe(Member member, Message msg) {
        Protocol stable = stable(member);
        Object hdr = stable == null ? null : Jg.header(stable, msg);
        if (hdr == null)
            return super.describe(member, msg);
        Map<String, Object> out = new LinkedHashMap<>();
        int type = ((Number) Reflect.get(hdr, "type")).intValue();
        out.put("type", type == 1 ? "STABLE_VOTE" : type == 2 ? "STABILITY" : "STABLE-" + type);
        out.put("view", member.harness.viewMembers(Reflect.get(hdr, "view_id")));
        out.put("digest", digest(member.harness, stableDigest(stable, msg)));
        out.put("n", member.harness.size());  // the group's size: the spec's digest has an entry per member
        return out;
    }

    /** The digest of a STABLE message as STABLE reads it: before 5.0 its own ``readDigest`` (the
     *  Digest's Streamable form, Util.streamableToBuffer, already in 3.4 where other payloads are
     *  still Java-serialised objects), from 5.0 the message's object. */
    private static Digest stableDigest(Protocol stable, Message msg) {
        if (Jg.V5 || !Reflect.hasMethod(stable, "readDigest", 3))
            return (Digest) Jg.object(msg, Digest.class);
        return (Digest) Reflect.call(stable, "readDigest", Reflect.call(msg, "getRawBuffer"),
                                     Reflect.call(msg, "getOffset"), Reflect.call(msg, "getLength"));
    }

    @Override
    protected void describeOther(Map<String, Object> out, int type, long seqno) {
        out.put("type", "UNKNOWN-" + type);
    }

    /** A digest as member index -> [hd, hr] (an entry STABLE has not set yet, -1, is left out). */
    static Map<String, Object> digest(Harness h, Digest digest) {
        Map<String, Object> out = new TreeMap<>();
        if (digest == null)
            return out;
        for (Object entry : (Iterable<?>) digest) {
            Address member = (Address) Reflect.call(entry, Reflect.hasMethod(entry, "getMember", 0) ? "getMember" : "member");
            long[] seqnos = digest.get(member);
            if (seqnos != null && seqnos[0] >= 0)
                out.put(String.valueOf(h.indexOf(member)), List.of(seqnos[0], seqnos[1]));
        }
        return out;
    }

    // -- state --------------------------------------------------------------------------------------------
    @Override
    @SuppressWarnings("unchecked")
    public Map<String, Object> state(Member member) {
        Protocol prot = member.protocol;
        Harness h = member.harness;
        Map<String, Object> out = commonState(member);
        Map<String, Object> stableXmit = new TreeMap<>();
        Object map = Reflect.getOr(prot, null, "stable_xmit_map");
        if (map != null)
            for (Map.Entry<Address, Long> e : ((Map<Address, Long>) map).entrySet())
                stableXmit.put(String.valueOf(h.indexOf(e.getKey())), e.getValue());
        out.put("stable_xmit", stableXmit);
        Object resender = Reflect.getOr(prot, null, "last_seqno_resender");
        out.put("last_seqno_resent", resender == null ? 0L : ((Number) Reflect.get(resender, "last_seqno_resent")).longValue());
        out.put("num_resends", resender == null ? 0 : ((Number) Reflect.get(resender, "num_resends")).intValue());
        Object skip = resender == null ? null : Reflect.getOr(resender, null, "skip_next_resend", "skip_next_send");
        out.put("skip_next_resend", skip == null ? Boolean.FALSE : Reflect.call(skip, "get"));
        Protocol stable = stable(member);
        List<Object> votes = new ArrayList<>();
        Map<String, Object> merged = new TreeMap<>();
        boolean suspended = false;
        if (stable != null) {
            View view = (View) Reflect.getOr(stable, null, "view");
            Object bits = Reflect.getOr(stable, null, "votes");
            if (view != null && bits != null) {
                List<Address> mbrs = view.getMembers();
                for (int rank = 0; rank < mbrs.size(); rank++)
                    if ((Boolean) Reflect.call(bits, "get", rank))
                        votes.add(h.indexOf(mbrs.get(rank)));
            }
            Object digest = Reflect.getOr(stable, null, "digest");
            if (digest != null)
                merged = digest(h, (Digest) digest);
            suspended = (Boolean) Reflect.get(stable, "suspended");
        }
        out.put("votes", votes);
        out.put("merged", merged);
        out.put("stable_suspended", suspended);
        List<Object> flagged = new ArrayList<>();  // own messages still stored that are DONT_LOOPBACK
        Object own = windows(member).get(member.address);
        if (own != null) {
            long low = ((Number) Reflect.call(own, "getLow")).longValue();
            long hr = ((Number) Reflect.call(own, "getHighestReceived")).longValue();
            for (long s = low + 1; s <= hr; s++) {
                Message m = (Message) Reflect.call(own, "get", s);
                if (m != null && Jg.dontLoopback(m))
                    flagged.add(s);
            }
        }
        out.put("dont_loopback", flagged);
        return out;
    }

    @Override
    protected Map<String, Object> window(Member member, Address sender, Object table) {
        Map<String, Object> out = new LinkedHashMap<>();
        long low = ((Number) Reflect.call(table, "getLow")).longValue();
        long hd = ((Number) Reflect.call(table, "getHighestDelivered")).longValue();
        long hr = ((Number) Reflect.call(table, "getHighestReceived")).longValue();
        out.put("low", low);
        out.put("hd", hd);
        out.put("high", hr);
        out.put("kept", messages(member, table, low + 1, hd));
        out.put("buffered", messages(member, table, hd + 1, hr));
        return out;
    }

    private List<Object> messages(Member member, Object table, long from, long to) {
        List<Object> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            Message m = (Message) Reflect.call(table, "get", s);
            out.add(m == null ? null : describe(member, m));
        }
        return out;
    }

    // -- timers ---------------------------------------------------------------------------------------------
    @Override
    public void timer(Member member, String kind, Address peer, long arg) {
        if (!kind.equals("stable")) {
            super.timer(member, kind, peer, arg);
            return;
        }
        Protocol stable = stable(member);
        if (stable == null)
            throw new IllegalArgumentException("timer stable: " + Jg.version() + "'s STABLE multicasts its gossip to "
                                               + "every member, which the spec does not describe: not in the harness");
        Runnable task = member.harness.clock.task(stable, "StableTask");
        if (task == null)
            throw new IllegalStateException("STABLE has no gossip task scheduled");
        task.run();
    }
}

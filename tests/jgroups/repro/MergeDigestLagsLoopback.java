import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.MergeView;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.ViewId;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.protocols.pbcast.NakAckHeader2;
import org.jgroups.protocols.pbcast.STABLE;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.jgroups.util.Digest;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.MockTransport;
import org.jgroups.util.MutableDigest;
import org.jgroups.util.Util;

/**
 * NAKACK2 + STABLE: a merge digest read while a sender's own loopback copy is still in flight resets a
 * member's window for that sender below a message the member delivered, and a STABLE round that
 * member voted for before the partition lets the sender purge that message: the member waits for it
 * for ever (its XMIT_REQ finds nothing).
 *
 * The merge digest names each member at its own window's (hd, hr): Merger asks every member of each
 * subgroup for GET_DIGEST(itself) and merges the answers. A sender's own hd moves only when its own
 * loopback copy comes up, so a digest read before that says hd 0 for a message every other member
 * has.
 * Schedule (A, B, C in view [A,B,C]; A multicasts #1):
 *  1. B and C deliver #1; A's own loopback copy is still in flight;
 *  2. B and C vote in STABLE's round (their digests name A at hd 1) to the coordinator A;
 *  3. C installs [C] (its window for A goes), then the merge view [A,B,C]: MERGE_DIGEST with every
 *     member at its own (hd, hr) (A at 0: the loopback has not come back), then the view: C's
 *     window for A starts at 0 and waits for #1;
 *  4. A's loopback copy arrives (A delivers #1); A's STABLE gossip completes the round of the old
 *     view (B's and C's votes are in): STABILITY, A purges #1;
 *  5. retransmit rounds: A's HIGHEST_SEQNO makes C ask for #1 (XMIT_REQ), which A no longer has.
 * Unit-test style: NAKACK2 and STABLE over MockTransport with a protocol below them that keeps what
 * goes down; the test delivers it, plays GMS and Merger, runs STABLE's gossip (gc()) and the
 * retransmit task (triggerXmit()) by hand.
 *
 * Run: javac -cp jgroups.jar MergeDigestLagsLoopback.java && java -cp jgroups.jar:. MergeDigestLagsLoopback
 * seqcheck: models/nakack2/merge-digest-lags-loopback.toml (purge_covered).
 */
public class MergeDigestLagsLoopback {
    static final short NAK = ClassConfigurator.getProtocolId(NAKACK2.class);
    static final List<Object[]> NET = new ArrayList<>();  // {from, msg, view of the sender}
    static final Map<Address, Member> MEMBERS = new HashMap<>();

    static final class Wire extends Protocol {
        View view;

        public Object down(Event evt) {
            if (evt.getType() == Event.VIEW_CHANGE)
                view = evt.getArg();
            return null;
        }

        public Object down(Message msg) {
            if (msg.getSrc() == null)
                msg.setSrc(local_addr);
            synchronized (NET) {
                NET.add(new Object[]{local_addr, msg, view});
            }
            return null;
        }
    }

    static final class App extends Protocol {
        final List<Message> delivered = new ArrayList<>();
        public Object up(Message msg) {
            delivered.add(msg);
            return null;
        }
        public void up(MessageBatch batch) {
            for (Message m : batch)
                delivered.add(m);
        }
    }

    static final class Member {
        final Address addr;
        final NAKACK2 nak = new NAKACK2();
        final STABLE stable = new STABLE();
        final App app = new App();
        final Wire wire = new Wire();

        Member(String name) throws Exception {
            addr = Util.createRandomAddress(name);
            nak.setXmitInterval(1_000_000);  // the test runs the retransmit task (triggerXmit)
            stable.setMaxBytes(0);
            MockTransport tp = new MockTransport();
            ProtocolStack stack = new ProtocolStack();
            stack.addProtocols(tp, wire, nak, stable, app);
            for (Protocol p : List.of(tp, wire, nak, stable, app)) {
                p.setProtocolStack(stack);
                p.init();
            }
            for (Protocol p = app; p != null; p = p.getDownProtocol())
                p.setAddress(addr);
            nak.start();
        }

        void digestAndView(Digest digest, View v) {  // what GMS.installView does
            if (digest != null)
                stable.down(new Event(v instanceof MergeView ? Event.MERGE_DIGEST : Event.SET_DIGEST, digest));
            stable.down(new Event(Event.VIEW_CHANGE, v));
        }

        long[] window(Address sender) {
            Digest d = (Digest) nak.down(new Event(Event.GET_DIGEST, sender));
            return d == null ? null : d.get(sender);
        }
    }

    static int type(Message msg) {
        NakAckHeader2 hdr = msg.getHeader(NAK);
        return hdr == null ? -1 : hdr.getType();
    }

    static List<Object[]> take(Predicate<Object[]> which) {
        List<Object[]> out = new ArrayList<>();
        synchronized (NET) {
            for (int i = 0; i < NET.size(); )
                if (which.test(NET.get(i)))
                    out.add(NET.remove(i));
                else
                    i++;
        }
        return out;
    }

    static void deliver(Object[] p, Address only) {
        Message msg = (Message) p[1];
        View view = (View) p[2];
        boolean dontLoopback = msg.isFlagSet(Message.TransientFlag.DONT_LOOPBACK);
        for (Member m : MEMBERS.values()) {
            boolean to = msg.getDest() == null ? view.containsMember(m.addr) && !(dontLoopback && m.addr.equals(p[0]))
                                               : msg.getDest().equals(m.addr);
            if (to && (only == null || only.equals(m.addr)))
                m.wire.up(msg.copy(true, true));
        }
    }

    public static void main(String[] args) throws Exception {
        Member a = new Member("A"), b = new Member("B"), c = new Member("C");
        for (Member m : List.of(a, b, c))
            MEMBERS.put(m.addr, m);
        View v1 = View.create(a.addr, 1, a.addr, b.addr, c.addr);
        MutableDigest initial = new MutableDigest(v1.getMembersRaw());
        for (Member m : List.of(a, b, c))
            initial.set(m.addr, 0, 0);
        for (Member m : List.of(a, b, c))
            m.digestAndView(initial, v1);

        // 1. A multicasts #1; B and C deliver it; A's own copy waits
        a.nak.down(new BytesMessage(null, "a1".getBytes()));
        Object[] a1 = take(p -> p[0].equals(a.addr) && type((Message) p[1]) == 1).get(0);
        deliver(a1, b.addr);
        deliver(a1, c.addr);
        // 2. B and C vote (to the coordinator A)
        b.stable.gc();
        c.stable.gc();
        for (Object[] p : take(p -> true))
            deliver(p, null);
        // 3. C installs [C], then the merge view [A,B,C]: every member's own entry, as Merger collects them
        c.digestAndView(null, View.create(c.addr, 2, c.addr));
        MutableDigest merge = new MutableDigest(v1.getMembersRaw());
        for (Member m : List.of(a, b, c)) {
            long[] own = m.window(m.addr);
            merge.set(m.addr, own[0], own[1]);
        }
        List<View> subgroups = List.of(View.create(a.addr, 1, a.addr, b.addr), View.create(c.addr, 2, c.addr));
        MergeView mergeView = new MergeView(new ViewId(a.addr, 3), v1.getMembers(), subgroups);
        c.digestAndView(merge, mergeView);
        long aInMergeDigest = merge.get(a.addr)[0];
        // 4. A's own copy of #1 arrives; A's gossip completes the round of [A,B,C]: STABILITY, A purges #1
        deliver(a1, a.addr);
        a.stable.gc();
        for (Object[] p : take(p -> true))
            deliver(p, null);
        // 5. retransmit rounds
        for (int round = 0; round < 10; round++) {
            for (Member m : List.of(a, b, c))
                m.nak.triggerXmit();
            for (Object[] p : take(p -> true))
                deliver(p, null);
        }
        long aLow = a.nak.getWindow(a.addr).getLow();
        long[] cForA = c.window(a.addr);
        System.out.printf("merge digest: A at hd %d; A purged its window to #%d; C's window for A: hd %d, hr %d%n",
                          aInMergeDigest, aLow, cForA[0], cForA[1]);
        if (aInMergeDigest == 0 && aLow == 1 && cForA[0] == 0) {
            System.out.println("REPRODUCED: C's window for A was reset below #1 (delivered by C before the merge), "
                               + "A purged #1 on the old view's STABLE round: C can never deliver from A again");
            System.exit(0);
        }
        System.out.println("NOT REPRODUCED");
        System.exit(1);
    }
}

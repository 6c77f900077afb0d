import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.NAKACK4;
import org.jgroups.protocols.NakAckHeader;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.jgroups.util.Digest;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.MockTransport;
import org.jgroups.util.MutableDigest;
import org.jgroups.util.Util;

/**
 * NAKACK4: a member other than the coordinator purges, on ACKs, a message the join digest says the
 * joiner still needs, because nothing suspends purging during a join (NAKACK4 ignores STABLE, whose
 * SUSPEND_STABLE protects NAKACK2). The joiner's window for that sender then waits for ever for a
 * message that exists nowhere. On 5.4.x, once the sender is `capacity` messages further, the
 * joiner's receiving thread also blocks for ever in FixedBuffer.add (a receive window's add blocked
 * when full until JGRP-2906, fixed in 5.5.0).
 *
 * Schedule (A and B founders, C joins through A, capacity 4, ack_threshold 1):
 *  1. B multicasts #1; B's loopback copy comes back (B acks itself); the copy to A is still in flight.
 *  2. C joins: A's GMS takes the join digest (B at hd 0: A has not received #1 yet), installs the
 *     view [A,B,C] locally, multicasts it, and sends C the JoinRsp (SET_DIGEST, view, BECOME_SERVER),
 *     as CoordGmsImpl and GMS.castViewChangeAndSendJoinRsps do.
 *  3. B's #1 reaches A: A delivers it and acks (threshold 1). A's ACK reaches B before A's view
 *     message (an ACK is OOB): B's AckTable {A: 1, B: 1} -> B purges #1.
 *  4. A's view reaches B: B installs [A,B,C], its AckTable adds C at 0.
 *  5. B multicasts #2..#5. C's window for B starts at 0 (the digest): #1 is missing, C asks B for it
 *     (XMIT_REQ) and B has purged it: C never delivers anything of B's. #5 is beyond C's window
 *     (5 - 0 > 4): the thread delivering it to C blocks in FixedBuffer.add.
 * Unit-test style: each member is NAKACK4 over MockTransport with a protocol below it that keeps
 * what goes down; the test delivers it (a multicast to every member of the sender's view) and plays
 * GMS; the retransmit tasks run by hand (triggerXmit).
 *
 * Run: javac -cp jgroups.jar JoinPurgeRace.java && java -cp jgroups.jar:. JoinPurgeRace
 * seqcheck: models/nakack4/join-purge-race.toml (purge_covered) and the lockstep difference
 * jgrp2906-receive-add-blocks (checks/jgroups/nakack4.py).
 */
public class JoinPurgeRace {
    static final short NAK = ClassConfigurator.getProtocolId(NAKACK4.class);
    static final List<Object[]> NET = new ArrayList<>();  // {from, msg, view of the sender}

    static final class Wire extends Protocol {
        View view;  // the sender's view: where its multicasts go (as a transport's members)

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
        final NAKACK4 nak;
        final App app = new App();
        final Wire wire = new Wire();

        Member(String name) throws Exception {
            addr = Util.createRandomAddress(name);
            nak = new NAKACK4().capacity(4).ackThreshold(1);
            nak.setXmitInterval(0);
            MockTransport tp = new MockTransport();
            ProtocolStack stack = new ProtocolStack();
            stack.addProtocols(tp, wire, nak, app);
            for (Protocol p : List.of(tp, wire, nak, app)) {
                p.setProtocolStack(stack);
                p.init();
            }
            for (Protocol p = app; p != null; p = p.getDownProtocol())
                p.setAddress(addr);
            nak.start();
        }

        void view(View v) {
            nak.down(new Event(Event.VIEW_CHANGE, v));
        }
    }

    static final Map<Address, Member> MEMBERS = new HashMap<>();

    static int type(Message msg) {
        NakAckHeader hdr = msg.getHeader(NAK);
        return hdr == null ? -1 : hdr.getType();
    }

    /** Takes the packets in flight that ``which`` selects (the others stay). */
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
        for (Member m : MEMBERS.values()) {
            boolean to = msg.getDest() == null ? view.containsMember(m.addr) : msg.getDest().equals(m.addr);
            if (to && (only == null || only.equals(m.addr)))
                m.wire.up(msg.copy(true, true));
        }
    }

    public static void main(String[] args) throws Exception {
        Member a = new Member("A"), b = new Member("B"), c = new Member("C");
        for (Member m : List.of(a, b, c))
            MEMBERS.put(m.addr, m);
        View v1 = View.create(a.addr, 1, a.addr, b.addr), v2 = View.create(a.addr, 2, a.addr, b.addr, c.addr);
        a.view(v1);
        b.view(v1);

        // 1. B multicasts #1; only its loopback copy comes back (B acks itself); the copy to A waits
        b.nak.down(new BytesMessage(null, "b1".getBytes()));
        Object[] b1 = take(p -> p[0].equals(b.addr) && type((Message) p[1]) == 1).get(0);
        deliver(b1, b.addr);
        for (Object[] p : take(p -> p[0].equals(b.addr)))  // B's ACK to itself
            deliver(p, null);

        // 2. C joins through A (CoordGmsImpl: GET_DIGEST, the joiner at (0,0); install locally; multicast
        //    the view; JoinRsp to C)
        Digest digest = (Digest) a.nak.down(new Event(Event.GET_DIGEST));
        MutableDigest join = new MutableDigest(v2.getMembersRaw()).set(digest).set(c.addr, 0, 0);
        a.view(v2);
        a.nak.down(new BytesMessage(null, "VIEW v2".getBytes()));  // GMS's view message, through NAKACK4
        c.nak.down(new Event(Event.SET_DIGEST, join));             // C's JoinRsp
        c.view(v2);
        c.nak.down(new Event(Event.BECOME_SERVER));
        long bInDigest = join.get(b.addr)[0];

        // 3. B's #1 reaches A; A's ACK reaches B (before A's view message)
        deliver(b1, a.addr);
        for (Object[] p : take(p -> p[0].equals(a.addr) && type((Message) p[1]) == 5))
            deliver(p, null);
        // 4. A's view message reaches B and C: B installs v2
        for (Object[] p : take(p -> p[0].equals(a.addr)))
            deliver(p, null);
        b.view(v2);

        // 5. B multicasts #2..#4 to A, B, C; everything is delivered; the retransmit tasks run
        for (int i = 2; i <= 4; i++)
            b.nak.down(new BytesMessage(null, ("b" + i).getBytes()));
        for (int round = 0; round < 10; round++) {
            for (Object[] p : take(p -> true))
                deliver(p, null);
            for (Member m : List.of(a, b, c))
                m.nak.triggerXmit();
        }
        for (Object[] p : take(p -> true))
            deliver(p, null);
        int cGotFromB = 0;
        for (Message m : c.app.delivered)
            if (m.getSrc().equals(b.addr))
                cGotFromB++;
        System.out.printf("join digest: B at hd %d; C delivered %d of B's 4 messages (A delivered %d)%n",
                          bInDigest, cGotFromB, countFrom(a, b.addr));

        // ... and #5: beyond C's window for B (low 0, capacity 4): the receiving thread blocks
        b.nak.down(new BytesMessage(null, "b5".getBytes()));
        List<Object[]> b5 = take(p -> p[0].equals(b.addr) && type((Message) p[1]) == 1);
        Thread receiver = new Thread(() -> {
            for (Object[] p : b5)
                deliver(p, c.addr);
        }, "C-receiving-B5");
        receiver.setDaemon(true);
        receiver.start();
        receiver.join(2_000);
        System.out.printf("C's thread receiving B's #5: %s%n", receiver.isAlive() ? "BLOCKED in " + where(receiver) : "returned");
        if (bInDigest == 0 && cGotFromB == 0 && countFrom(a, b.addr) == 4) {
            System.out.println("REPRODUCED: B purged #1 before it installed C's view; C never delivers B's messages"
                               + (receiver.isAlive() ? ", and C's receiving thread blocks for ever on B's #5 (JGRP-2906, "
                                                       + "fixed in 5.5.0)" : ""));
            System.exit(0);
        }
        System.out.println("NOT REPRODUCED");
        System.exit(1);
    }

    static int countFrom(Member receiver, Address sender) {
        int n = 0;
        for (Message m : receiver.app.delivered)
            if (m.getSrc().equals(sender))
                n++;
        return n;
    }

    static String where(Thread t) {
        for (StackTraceElement e : t.getStackTrace())
            if (e.getClassName().startsWith("org.jgroups"))
                return e.getClassName().substring(e.getClassName().lastIndexOf('.') + 1) + "." + e.getMethodName();
        return t.getState().toString();
    }
}

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
 * NAKACK4: with a capacity below 8 and ack_threshold unset (capacity/4 = 0 or 1), a joiner whose join
 * digest already covers a sender's unacknowledged messages never acknowledges them, and the sender
 * blocks for ever.
 *
 * The joiner's window for the sender starts at the digest's hd, so it has nothing of the sender's to
 * deliver; the sender's AckTable holds the joiner at 0 from the view on; HIGHEST_SEQNO finds the
 * joiner's high up to date (no XMIT_REQ) and counts towards its ACK, but with a threshold of 0 or 1
 * the count always answers "send now", which ReliableMulticast.handleHighestSeqno ignores, so no
 * ACK is ever sent. The sender here is B, not the coordinator, so GMS's own view multicast (A's,
 * through NAKACK4, as castViewChangeAndSendJoinRsps sends it) gives C nothing of B's to acknowledge.
 *
 * Schedule (A and B founders, C joins through A, capacity 1):
 *  1. B multicasts #1; A and B deliver it; B acks itself; A's ACK to B is still in flight.
 *  2. C joins: A takes the join digest (B at hd 1), installs [A,B,C], multicasts the view, sends C the
 *     JoinRsp (SET_DIGEST, view, BECOME_SERVER); B installs the view (its AckTable: C at 0).
 *  3. A's ACK reaches B: B's AckTable {A: 1, B: 1, C: 0}, minimum 0: #1 stays; B's next multicast
 *     blocks (capacity 1), and no number of retransmit runs releases it.
 * The control run sets C's ack_threshold to 2: C's count of B's HIGHEST_SEQNO sets its pending flag,
 * C's retransmit task acks, and B is released.
 * Unit-test style: NAKACK4 over MockTransport with a protocol below it that keeps what goes down; the
 * test delivers it and plays GMS; the retransmit tasks run by hand (triggerXmit).
 *
 * Run: javac -cp jgroups.jar JoinThresholdZero.java && java -cp jgroups.jar:. JoinThresholdZero
 * seqcheck: models/nakack4/join-threshold-0.toml (senders_released).
 */
public class JoinThresholdZero {
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

        Member(String name, int capacity, int ackThreshold) throws Exception {
            addr = Util.createRandomAddress(name);
            nak = new NAKACK4().capacity(capacity).ackThreshold(ackThreshold);
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

    static boolean run(int joinerThreshold) throws Exception {
        NET.clear();
        MEMBERS.clear();
        Member a = new Member("A", 1, 0), b = new Member("B", 1, 0), c = new Member("C", 1, joinerThreshold);
        for (Member m : List.of(a, b, c))
            MEMBERS.put(m.addr, m);
        View v1 = View.create(a.addr, 1, a.addr, b.addr), v2 = View.create(a.addr, 2, a.addr, b.addr, c.addr);
        a.view(v1);
        b.view(v1);

        // 1. B multicasts #1; A and B deliver it; B's ACK to itself arrives, A's ACK to B waits
        b.nak.down(new BytesMessage(null, "b1".getBytes()));
        for (Object[] p : take(p -> p[0].equals(b.addr)))
            deliver(p, null);
        for (Object[] p : take(p -> p[0].equals(b.addr)))  // B's ACK to itself
            deliver(p, null);
        List<Object[]> ackFromA = take(p -> p[0].equals(a.addr) && type((Message) p[1]) == 5);

        // 2. C joins through A; B installs the view when A's view message reaches it
        Digest digest = (Digest) a.nak.down(new Event(Event.GET_DIGEST));
        MutableDigest join = new MutableDigest(v2.getMembersRaw()).set(digest).set(c.addr, 0, 0);
        a.view(v2);
        a.nak.down(new BytesMessage(null, "VIEW v2".getBytes()));  // GMS's view message, through NAKACK4
        c.nak.down(new Event(Event.SET_DIGEST, join));
        c.view(v2);
        c.nak.down(new Event(Event.BECOME_SERVER));
        for (Object[] p : take(p -> p[0].equals(a.addr)))
            deliver(p, null);
        b.view(v2);

        // 3. A's ACK reaches B; B multicasts #2 on a thread of its own (capacity 1: it waits for #1's ACKs)
        for (Object[] p : ackFromA)
            deliver(p, null);
        Thread sender = new Thread(() -> b.nak.down(new BytesMessage(null, "b2".getBytes())), "B-sender");
        sender.setDaemon(true);
        sender.start();
        for (int round = 0; round < 30 && sender.isAlive(); round++) {
            for (Member m : List.of(a, b, c))
                m.nak.triggerXmit();
            for (Object[] p : take(p -> true))
                deliver(p, null);
            sender.join(20);
        }
        sender.join(joinerThreshold >= 2 ? 30_000 : 1_000);  // the control run's thread is released: let it finish
        System.out.printf("C's ack_threshold %d: join digest B at hd %d; B's second multicast is %s%n", joinerThreshold,
                          join.get(b.addr)[0], sender.isAlive() ? "STILL BLOCKED after 30 retransmit rounds" : "sent");
        return sender.isAlive() && join.get(b.addr)[0] == 1;
    }

    public static void main(String[] args) throws Exception {
        boolean stuck = run(0), controlStuck = run(2);
        if (stuck && !controlStuck) {
            System.out.println("REPRODUCED: the joiner never acknowledges what its digest covers (ack_threshold 0): "
                               + "the sender blocks for ever");
            System.exit(0);
        }
        System.out.println("NOT REPRODUCED (stuck=" + stuck + ", control stuck=" + controlStuck + ")");
        System.exit(1);
    }
}

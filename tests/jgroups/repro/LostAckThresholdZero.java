import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
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
import org.jgroups.util.MessageBatch;
import org.jgroups.util.MockTransport;
import org.jgroups.util.Util;

/**
 * NAKACK4: with a capacity below 8 and ack_threshold unset (capacity/4 = 0 or 1), a lost ACK is never
 * sent again, and the sender blocks for ever although every member delivered its message.
 *
 * Every delivery then hits the threshold and sends its ACK at once, so the "ACK pending" flag is
 * never set; the HIGHEST_SEQNO the sender repeats counts towards the ACK (JGRP-2874), but
 * ReliableMulticast.handleHighestSeqno ignores the "send now" that needToSendAck answers. Unit-test
 * style (as NAKACK_RetransmissionTest): each member is NAKACK4 over MockTransport, with a protocol
 * below NAKACK4 that keeps what goes down; the test delivers it (one copy per member of the view,
 * as a transport multicasts), loses B's first ACK, and runs the retransmit tasks by hand
 * (triggerXmit; xmit_interval 0: no task of its own).
 *
 * Run: javac -cp jgroups.jar LostAckThresholdZero.java && java -cp jgroups.jar:. LostAckThresholdZero
 * Exit 0 and "REPRODUCED" when the sender stays blocked; the control run (ack_threshold 2) must
 * release it. seqcheck: models/nakack4/lost-ack-threshold-0.toml (lost-ack-threshold-2.toml passes).
 */
public class LostAckThresholdZero {
    static final short NAK = ClassConfigurator.getProtocolId(NAKACK4.class);
    static final List<Object[]> NET = new ArrayList<>();  // {from, msg}: what went down, in order

    static final class Wire extends Protocol {  // below NAKACK4: keeps what goes down
        public Object down(Event evt) {
            return null;  // views and the like stop here: the transport is a mock
        }

        public Object down(Message msg) {
            if (msg.getSrc() == null)
                msg.setSrc(local_addr);
            synchronized (NET) {
                NET.add(new Object[]{local_addr, msg});
            }
            return null;
        }
    }

    static final class App extends Protocol {  // above NAKACK4: counts deliveries
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
            nak.setXmitInterval(0);  // the test runs the retransmit task (triggerXmit)
            MockTransport tp = new MockTransport();
            ProtocolStack stack = new ProtocolStack();
            stack.addProtocols(tp, wire, nak, app);  // connects them, bottom first
            for (Protocol p : List.of(tp, wire, nak, app)) {
                p.setProtocolStack(stack);
                p.init();
            }
            for (Protocol p = app; p != null; p = p.getDownProtocol())
                p.setAddress(addr);
            nak.start();
        }
    }

    static boolean isAck(Message msg) {
        NakAckHeader hdr = msg.getHeader(NAK);
        return hdr != null && hdr.getType() == 5;  // NakAckHeader.ACK
    }

    /** Delivers everything in flight (a multicast to every member of the view), dropping what ``lose`` takes. */
    static void deliverAll(View view, List<Member> members, Predicate<Object[]> lose) {
        while (true) {
            List<Object[]> batch;
            synchronized (NET) {
                if (NET.isEmpty())
                    return;
                batch = new ArrayList<>(NET);
                NET.clear();
            }
            for (Object[] p : batch) {
                if (lose.test(p))
                    continue;
                Message msg = (Message) p[1];
                for (Member m : members)
                    if (msg.getDest() == null ? view.containsMember(m.addr) : msg.getDest().equals(m.addr))
                        m.wire.up(msg.copy(true, true));
            }
        }
    }

    /** One run: A multicasts two messages (capacity 1: the second blocks until every member acked the
     *  first), B's first ACK is lost, then ``rounds`` runs of every retransmit task, all delivered.
     *  Returns whether A's second send is still blocked. */
    static boolean run(int ackThreshold, int rounds) throws Exception {
        NET.clear();
        Member a = new Member("A", 1, ackThreshold), b = new Member("B", 1, ackThreshold);
        List<Member> all = List.of(a, b);
        View view = View.create(a.addr, 1, a.addr, b.addr);
        for (Member m : all)
            m.nak.down(new Event(Event.VIEW_CHANGE, view));
        Thread sender = new Thread(() -> {
            a.nak.down(new BytesMessage(null, "m1".getBytes()));
            a.nak.down(new BytesMessage(null, "m2".getBytes()));  // blocks: the window holds one message
        }, "A-sender");
        sender.setDaemon(true);
        sender.start();
        long deadline = System.currentTimeMillis() + 10_000;
        while (a.nak.getNumBlockings() == 0 && System.currentTimeMillis() < deadline)
            Thread.sleep(5);
        boolean[] lost = {false};
        deliverAll(view, all, p -> {  // the network loses B's first ACK to A
            if (!lost[0] && p[0].equals(b.addr) && isAck((Message) p[1])) {
                lost[0] = true;
                return true;
            }
            return false;
        });
        for (int i = 0; i < rounds && sender.isAlive(); i++) {
            for (Member m : all)
                m.nak.triggerXmit();
            deliverAll(view, all, p -> false);
            sender.join(20);
        }
        sender.join(ackThreshold >= 2 ? 30_000 : 1_000);  // the control run's thread is released: let it finish
        deliverAll(view, all, p -> false);
        System.out.printf("ack_threshold %d: B delivered %d message(s) of A; after %d retransmit rounds A's second send is %s%n",
                          ackThreshold, b.app.delivered.size(), rounds, sender.isAlive() ? "STILL BLOCKED" : "done");
        return sender.isAlive() && b.app.delivered.size() == 1 && lost[0];
    }

    public static void main(String[] args) throws Exception {
        boolean stuck = run(0, 50);        // capacity 1: ack_threshold defaults to capacity/4 = 0
        boolean controlStuck = run(2, 50); // the same with ack_threshold 2: the pending flag resends the ACK
        if (stuck && !controlStuck) {
            System.out.println("REPRODUCED: a lost ACK is never resent with ack_threshold 0; the sender blocks for ever");
            System.exit(0);
        }
        System.out.println("NOT REPRODUCED (stuck=" + stuck + ", control stuck=" + controlStuck + ")");
        System.exit(1);
    }
}

import java.util.ArrayList;
import java.util.List;

import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.protocols.NAKACK4;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.jgroups.util.Buffer;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.MockTransport;
import org.jgroups.util.Util;

/**
 * NAKACK4: with ack_threshold 0 or 1 (the default capacity/4 for a capacity below 8), an OOB message's
 * only ACK carries the highest delivered seqno from *before* the message was removed, and nothing
 * acknowledges it again: with capacity 1 the sender's window keeps the OOB message for good, and the
 * next send blocks for ever. No message is lost, duplicated or reordered.
 *
 * Why: ReliableMulticast.handleMessage passes an OOB message up through deliver(), which counts it
 * towards the ACK (needToSendAck(entry, 1)) and, at a threshold <= 1, sends ACK(win.highestDelivered())
 * at once, before removeAndDeliver walks hd over the DUMMY_OOB_MSG placeholder; that removal's batch is
 * empty (the placeholder is filtered out), so it sends no ACK, and since every count reaches the
 * threshold the "ack pending" flag that triggerXmit would act on is never set. HIGHEST_SEQNO counts
 * towards the ACK too (JGRP-2874) but handleHighestSeqno ignores needToSendAck's answer. With
 * ack_threshold 2 the OOB delivery sets the pending flag and the retransmit task sends ACK(hd) after
 * the removal: the sender is released.
 *
 * Schedule: members A and B, one view; A multicasts capacity+1 messages, the capacity-th OOB (with
 * capacity 1: #1 OOB, #2 regular), on a thread of its own (the last send blocks: the window holds
 * capacity messages); every copy is delivered, A's loopback copies included, then 50 rounds of every
 * member's retransmit task (triggerXmit; xmit_interval 0: no task of its own), all delivered. With a
 * larger capacity the next message's ACK covers a single OOB message; the sender stalls when OOB
 * messages fill its window and reach B last first (each ACKed at B with hd 0, the removal of the
 * last one, #1, walking hd over all of them with an empty batch): the "reordered" runs.
 * The verdict reads state the test drives itself (A's send window and B's deliveries after the
 * rounds), never a timing: the only waits are for the sender thread to block, and, in the controls,
 * for it to finish once its window has room (60 s limits, never reached when JGroups is right).
 *
 * Runs: capacity 1 with ack_threshold unset (capacity/4 = 0), capacity 1 with ack_threshold 1 (the
 * seqcheck model), capacity 4 (threshold 1) reordered: stuck; controls: capacity 1 with ack_threshold
 * 2, and capacity 8 with ack_threshold unset (capacity/4 = 2), plain and reordered: every message
 * delivered, A's window purged.
 * Unit-test style (as NAKACK_RetransmissionTest): NAKACK4 over MockTransport with a protocol below it
 * that keeps what goes down; the test delivers it (a multicast: one copy per member of the view).
 *
 * Run: javac -cp jgroups.jar OobAckThresholdOne.java && java -cp jgroups.jar:. OobAckThresholdOne
 * Exit 0 and "REPRODUCED" when the three runs are stuck and the three controls deliver; else exit 1.
 * seqcheck: models/nakack4/oob-ack-threshold-1.toml (eventually_delivered, 5 steps);
 * models/nakack4/oob-ack-threshold-2.toml passes.
 */
public class OobAckThresholdOne {
    static final List<Object[]> NET = new ArrayList<>();  // {from, msg}: what went down, in order
    static final int ROUNDS = 50;
    static final long LIMIT_MS = 60_000;  // a generous limit for a thread to block or finish

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

    static final class App extends Protocol {  // above NAKACK4: keeps what is delivered
        final List<Message> delivered = new ArrayList<>();

        public synchronized Object up(Message msg) {
            delivered.add(msg);
            return null;
        }

        public synchronized void up(MessageBatch batch) {
            for (Message m : batch)
                delivered.add(m);
        }

        synchronized int count() {
            return delivered.size();
        }
    }

    static final class Member {
        final Address addr;
        final NAKACK4 nak;
        final App app = new App();
        final Wire wire = new Wire();

        Member(String name, int capacity, int ackThreshold) throws Exception {
            addr = Util.createRandomAddress(name);
            nak = new NAKACK4().capacity(capacity);
            if (ackThreshold > 0)
                nak.ackThreshold(ackThreshold);  // else init() sets capacity/4
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

    /** Delivers everything in flight (a multicast to every member of the view, the sender included)
     *  until nothing is left: the network loses nothing. */
    static void deliverAll(View view, List<Member> members) {
        while (true) {
            List<Object[]> batch;
            synchronized (NET) {
                if (NET.isEmpty())
                    return;
                batch = new ArrayList<>(NET);
                NET.clear();
            }
            for (Object[] p : batch) {
                Message msg = (Message) p[1];
                for (Member m : members)
                    if (msg.getDest() == null ? view.containsMember(m.addr) : msg.getDest().equals(m.addr))
                        m.wire.up(msg.copy(true, true));
            }
        }
    }

    static boolean waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + LIMIT_MS * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline)
                return false;
            Thread.sleep(2);
        }
        return true;
    }

    /** One run; returns true when A's window still holds the OOB message after the rounds (stuck),
     *  false when every message was delivered (released). Anything else throws. */
    static boolean stuck(int capacity, int ackThreshold, boolean reordered) throws Exception {
        NET.clear();
        Member a = new Member("A", capacity, ackThreshold), b = new Member("B", capacity, ackThreshold);
        List<Member> all = List.of(a, b);
        View view = View.create(a.addr, 1, a.addr, b.addr);
        for (Member m : all)
            m.nak.down(new Event(Event.VIEW_CHANGE, view));
        int total = capacity + 1;
        Thread sender = new Thread(() -> {
            for (int i = 1; i <= total; i++) {
                Message msg = new BytesMessage(null, ("a" + i).getBytes());
                if (i == capacity || (reordered && i < capacity))
                    msg.setFlag(Message.Flag.OOB);
                a.nak.down(msg);  // the last one blocks: the window holds `capacity` messages
            }
        }, "A-sender");
        sender.setDaemon(true);
        sender.start();
        if (!waitFor(() -> a.nak.getNumBlockings() > 0))
            throw new IllegalStateException("A's last send never blocked");
        if (reordered) {  // the network delivers the window's messages last first
            synchronized (NET) {
                java.util.Collections.reverse(NET);
            }
        }
        deliverAll(view, all);
        Buffer<Message> own = a.nak.getBuf(a.addr);
        int rounds = 0;
        while (rounds < ROUNDS && own.low() < capacity) {
            for (Member m : all)
                m.nak.triggerXmit();
            deliverAll(view, all);
            rounds++;
        }
        boolean kept = own.low() < capacity;
        if (!kept) {  // the window has room: A's last send goes out, and everything is delivered
            if (!waitFor(() -> !sender.isAlive()))
                throw new IllegalStateException("A's window has room but its last send stays blocked");
            deliverAll(view, all);
            for (int i = 0; i < 3; i++) {
                for (Member m : all)
                    m.nak.triggerXmit();
                deliverAll(view, all);
            }
        }
        System.out.printf("capacity %d, ack_threshold %d%s: after %d retransmit round(s) B delivered %d of %d; "
                          + "A's send window low=%d high=%d; A's last send %s%n  ack table:%s%n",
                          capacity, a.nak.ackThreshold(), reordered ? ", all OOB, last first" : "", rounds, b.app.count(), total, own.low(), own.high(),
                          sender.isAlive() ? "STILL BLOCKED" : "done", a.nak.printAckTable().replace("\n", " "));
        if (kept && (b.app.count() != capacity || !sender.isAlive() || own.high() != capacity))
            throw new IllegalStateException("stuck, but not as described");
        if (!kept && (b.app.count() != total || a.app.count() != total))
            throw new IllegalStateException("released, but not everything was delivered");
        return kept;
    }

    public static void main(String[] args) throws Exception {
        boolean defaultThreshold = stuck(1, 0, false);  // capacity 1: ack_threshold defaults to capacity/4 = 0
        boolean thresholdOne = stuck(1, 1, false);      // the seqcheck model: capacity 1, ack_threshold 1
        boolean capacityFour = stuck(4, 0, true);       // capacity 4 (threshold 1): four OOB messages, reordered
        boolean controlTwo = stuck(1, 2, false);        // ack_threshold 2: the pending flag sends ACK(hd) later
        boolean controlEight = stuck(8, 0, false);      // capacity 8: ack_threshold defaults to 2
        boolean controlEightAll = stuck(8, 0, true);    // ... also with eight OOB messages, reordered
        if (defaultThreshold && thresholdOne && capacityFour && !controlTwo && !controlEight && !controlEightAll) {
            System.out.println("REPRODUCED: at ack_threshold <= 1 nothing acknowledges an OOB message after its "
                               + "removal; with capacity 1 (or OOB messages filling a window of 4, reordered) the "
                               + "sender's window keeps it and the next send blocks for ever");
            System.exit(0);
        }
        System.out.printf("NOT REPRODUCED (stuck: threshold 0 %b, threshold 1 %b, capacity 4 %b; controls stuck: "
                          + "threshold 2 %b, capacity 8 %b and %b)%n", defaultThreshold, thresholdOne, capacityFour,
                          controlTwo, controlEight, controlEightAll);
        System.exit(1);
    }
}

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Lock;
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
import org.jgroups.util.Buffer;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.MockTransport;
import org.jgroups.util.MutableDigest;
import org.jgroups.util.Util;

/**
 * NAKACK4 with send_atomically (as fixed by 370770ab9, 5.4.6): once a sender blocks, multicasts still
 * leave out of seqno order. The window's lock is released while a thread waits in FixedBuffer.add;
 * when the ACKs purge the window, a thread that enters send before the woken one gets the lock back
 * takes the next seqno, finds room and sends it first. The receivers then ask for the woken thread's
 * message, which was never lost (a needless XMIT_REQ: bandwidth only).
 *
 * Schedule (A and B, capacity 2, ack_threshold 2): A multicasts #1 and #2 (delivered everywhere, the
 * ACKs held back); a thread of A's takes #3 and blocks (the window is full); the ACKs arrive while
 * the test holds the window's lock (the purge signals the blocked thread, which now waits for the
 * lock); the test releases the lock and at once multicasts itself (a second application thread): a
 * ReentrantLock is not fair, so the new thread can take the lock before the woken one. When it does,
 * #4 goes down before #3, and B, which gets #4 first, asks for #3 on its second retransmit run
 * although #3 is only behind. A race on real threads: the run is tried up to 200 times.
 * Unit-test style: NAKACK4 over MockTransport with a protocol below it that keeps what goes down.
 *
 * Run: javac -cp jgroups.jar SendAtomicallyOvertaken.java && java -cp jgroups.jar:. SendAtomicallyOvertaken
 * seqcheck: models/nakack4/send-atomically-blocked-overtaken.toml (no_spurious_xmit_req).
 */
public class SendAtomicallyOvertaken {
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
            nak = new NAKACK4().capacity(2).ackThreshold(2);
            nak.sendAtomically(true);
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

    /** One try: true if #4 went down before #3 and B then asked for #3 before it arrived. */
    static boolean attempt() throws Exception {
        NET.clear();
        MEMBERS.clear();
        Member a = new Member("A"), b = new Member("B");
        for (Member m : List.of(a, b))
            MEMBERS.put(m.addr, m);
        View v = View.create(a.addr, 1, a.addr, b.addr);
        a.view(v);
        b.view(v);
        a.nak.down(new BytesMessage(null, "a1".getBytes()));
        a.nak.down(new BytesMessage(null, "a2".getBytes()));
        for (Object[] p : take(p -> true))
            deliver(p, null);
        List<Object[]> acks = take(p -> type((Message) p[1]) == 5);  // held back
        Thread third = new Thread(() -> a.nak.down(new BytesMessage(null, "a3".getBytes())), "A-sender-3");
        third.setDaemon(true);
        third.start();
        long deadline = System.currentTimeMillis() + 5_000;
        while (a.nak.getNumBlockings() == 0 && System.currentTimeMillis() < deadline)
            Thread.sleep(1);
        Buffer<Message> own = a.nak.getBuf(a.addr);
        Lock lock = own.lock();
        lock.lock();
        try {
            for (Object[] p : acks)  // the purge signals the blocked thread: it now waits for the lock
                deliver(p, null);
        } finally {
            lock.unlock();
        }
        a.nak.down(new BytesMessage(null, "a4".getBytes()));  // a second application thread enters send
        third.join(5_000);
        List<Long> order = new ArrayList<>();
        List<Object[]> data = take(p -> p[0].equals(a.addr) && type((Message) p[1]) == 1);
        for (Object[] p : data)
            order.add(((NakAckHeader) ((Message) p[1]).getHeader(NAK)).getSeqno());
        if (!order.equals(List.of(4L, 3L)))
            return false;
        deliver(data.get(0), b.addr);  // #4 reaches B; #3 is still on its way
        take(p -> true);
        b.nak.triggerXmit();
        boolean asked = false;
        b.nak.triggerXmit();
        for (Object[] p : take(p -> p[0].equals(b.addr) && type((Message) p[1]) == 2))
            asked = true;
        if (asked)
            System.out.println("A sent #4 before #3; B asked for #3 (XMIT_REQ) while #3 was still on its way");
        return asked;
    }

    public static void main(String[] args) throws Exception {
        int seen = 0, tries = 0;
        while (tries < 200 && seen == 0) {
            tries++;
            if (attempt())
                seen++;
        }
        if (seen > 0) {
            System.out.println("REPRODUCED after " + tries + " tries: send_atomically sends out of seqno order once "
                               + "a sender blocked; a receiver asks for a message that was never lost");
            System.exit(0);
        }
        System.out.println("NOT REPRODUCED in " + tries + " tries (the woken thread always got the lock first)");
        System.exit(1);
    }
}

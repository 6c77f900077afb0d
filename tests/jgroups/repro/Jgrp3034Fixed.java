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
 * NAKACK4 after JGRP-3034's fix (master): an exception while the deliverer builds a batch no longer
 * leaves ``adders`` set, but the message that came with it stays in the window, undelivered, until
 * another message from that sender (or a duplicate) runs removeAndDeliver again. If it was the
 * sender's last message, nothing ever does: HIGHEST_SEQNO finds the receiver's high up to date and
 * asks for nothing, and no gap calls for an XMIT_REQ. (On 5.4.x, before the fix, the deliverer stays
 * set and nothing of that sender is delivered again: JGRP-3034 itself.)
 *
 * The exception: JGroups builds the batch in removeAndDeliver from getTransport().getClusterNameAscii();
 * the test detaches B's stack from its transport for the one up-call of A's #3, so getTransport()
 * returns null and building the batch throws, the code path JGRP-3034's fix wraps (adders.set(0)).
 * Schedule: A multicasts #1..#3 (capacity 4); B receives #1 and #2; B's batch for #3 throws; then
 * 30 rounds of every retransmit task, everything delivered. The control run lets A multicast #4,
 * which delivers the stranded #3.
 * Unit-test style: NAKACK4 over MockTransport with a protocol below it that keeps what goes down.
 *
 * Run: javac -cp jgroups.jar Jgrp3034Fixed.java && java -cp jgroups.jar:. Jgrp3034Fixed
 * seqcheck: models/nakack4/jgrp3034-fixed.toml (eventually_delivered); the proposed complete fix is
 * variant fix:deliver-stranded (models/nakack4/jgrp3034-deliver-stranded.toml).
 */
public class Jgrp3034Fixed {
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

    static int run(boolean sendAnother) throws Exception {
        NET.clear();
        MEMBERS.clear();
        Member a = new Member("A"), b = new Member("B");
        for (Member m : List.of(a, b))
            MEMBERS.put(m.addr, m);
        View v = View.create(a.addr, 1, a.addr, b.addr);
        a.view(v);
        b.view(v);
        for (int i = 1; i <= 3; i++)
            a.nak.down(new BytesMessage(null, ("a" + i).getBytes()));
        List<Object[]> sent = take(p -> p[0].equals(a.addr));
        deliver(sent.get(0), null);
        deliver(sent.get(1), null);
        deliver(sent.get(2), a.addr);
        Protocol transport = b.wire.getDownProtocol();
        b.wire.setDownProtocol(null);  // building B's next batch throws (getTransport() == null)
        try {
            deliver(sent.get(2), b.addr);
        } catch (RuntimeException expected) {
            System.out.println("B's batch for A's #3 threw " + expected.getClass().getSimpleName());
        } finally {
            b.wire.setDownProtocol(transport);
        }
        if (sendAnother)
            a.nak.down(new BytesMessage(null, "a4".getBytes()));
        for (int round = 0; round < 30; round++) {
            for (Object[] p : take(p -> true))
                deliver(p, null);
            for (Member m : List.of(a, b))
                m.nak.triggerXmit();
        }
        for (Object[] p : take(p -> true))
            deliver(p, null);
        int got = 0;
        for (Message m : b.app.delivered)
            if (m.getSrc().equals(a.addr))
                got++;
        System.out.printf("%s: B delivered %d of A's %d messages after 30 retransmit rounds%n",
                          sendAnother ? "A sends #4" : "A sends nothing more", got, sendAnother ? 4 : 3);
        return got;
    }

    public static void main(String[] args) throws Exception {
        int stranded = run(false), control = run(true);
        if (stranded == 2 && control == 4) {
            System.out.println("REPRODUCED: after the failed batch, A's last message #3 is never delivered at B "
                               + "(only a later message from A delivers it)");
            System.exit(0);
        }
        if (stranded == 2 && control == 2) {
            System.out.println("REPRODUCED (JGRP-3034 itself, before its fix): B delivers nothing of A's again");
            System.exit(0);
        }
        System.out.println("NOT REPRODUCED (" + stranded + ", " + control + ")");
        System.exit(1);
    }
}

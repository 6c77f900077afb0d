package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.protocols.TP;
import org.jgroups.stack.Protocol;

/**
 * One member: a stack of real JGroups protocol instances (``stack[0]``, the protocol under test, at
 * the bottom; e.g. STABLE above NAKACK2) between ``Capture`` (below) and ``Top`` (above), on a
 * transport that is never started (``Jg.transport``), with its address. Events and application
 * messages go down from the top of the stack, messages come up at the bottom, as in a channel.
 * A stopped member (a leave or a crash) takes no more packets: the harness discards them.
 */
final class Member {
    final int index;
    final Address address;
    final Harness harness;
    final Protocol protocol;
    final Protocol[] stack;
    final Capture capture;
    final Top top;
    final TP transport;
    boolean stopped;
    volatile boolean retired;  // of a run the harness has reset: whatever its threads still send is ignored
    boolean joined;  // has installed a view (a founder at reset, a joiner on its JoinRsp)
    boolean becomeServerPending;  // a joiner between its JoinRsp and BECOME_SERVER

    Member(Harness harness, int index, Protocol[] stack) {
        this.harness = harness;
        this.index = index;
        this.address = Jg.address(index);
        this.stack = stack;
        this.protocol = stack[0];
        this.capture = new Capture(this);
        this.top = new Top(this);
        this.transport = Jg.transport(harness.clock, task -> harness.model().execute(this, task));
        for (int i = 0; i < stack.length; i++) {
            stack[i].setDownProtocol(i == 0 ? capture : stack[i - 1]);
            stack[i].setUpProtocol(i == stack.length - 1 ? top : stack[i + 1]);
        }
        top.setDownProtocol(upper());
        capture.setUpProtocol(protocol);
        capture.setDownProtocol(transport);
        transport.setUpProtocol(capture);
        List<Protocol> all = new ArrayList<>(List.of(stack));
        all.add(capture);
        all.add(top);
        all.add(transport);
        Object protocolStack = Reflect.create(org.jgroups.stack.ProtocolStack.class);  // empty: finds nothing
        for (Protocol p : all) {
            if (Reflect.field(p.getClass(), "local_addr") != null)
                Reflect.set(p, address, "local_addr");
            if (Reflect.field(p.getClass(), "stack") != null && Reflect.getOr(p, null, "stack") == null)
                Reflect.set(p, protocolStack, "stack");
        }
    }

    /** The top of the modelled stack: application messages and GMS's events go down from here. */
    Protocol upper() {
        return stack[stack.length - 1];
    }

    void start() throws Exception {
        for (Protocol p : stack)
            p.init();
        for (Protocol p : stack)
            p.start();
    }

    void installView(List<Integer> members) {
        List<Address> addresses = new ArrayList<>();
        for (int m : members)
            addresses.add(harness.member(m).address);
        Jg.installView(upper(), harness.viewOf(addresses));
        joined = true;
    }

    void send(int dst, byte[] payload) {
        send(dst, payload, false);
    }

    /** The next application send is flagged DONT_LOOPBACK (the harness's send command sets it). */
    boolean dontLoopbackNext;

    /** An application message to ``dst`` (-1: a multicast), flagged OOB if ``oob``. */
    void send(int dst, byte[] payload, boolean oob) {
        Address to = dst < 0 ? null : harness.member(dst).address;
        Message msg = harness.model().application(this, Jg.dataMessage(to, address, payload));
        if (oob)
            msg.setFlag(Message.Flag.OOB);
        if (dontLoopbackNext)
            Jg.setTransientFlag(msg, "DONT_LOOPBACK");
        dontLoopbackNext = false;
        if (harness.threads.blocking(this))
            harness.threads.send(this, msg);
        else
            Jg.down(upper(), msg);
    }

    /** Something the protocol sent down: serialized (the source set as a transport sets it), then kept;
     *  a multicast as one packet per destination copy (the model's ``multicastTargets``). A unicast to
     *  itself flagged DONT_LOOPBACK goes nowhere: a transport never loops it back (5.x's
     *  BaseBundler.loopbackUnlessDontLoopbackIsSet, 3.6's TP.send), nor a resend of it. */
    void captured(Message msg) {
        if (retired)
            return;
        if (msg.getSrc() == null)
            Reflect.call(msg, "setSrc", address);
        Address dest = msg.getDest();
        byte[] data = Jg.serialize(msg);
        if (dest != null) {
            if (dest.equals(address) && Jg.dontLoopback(msg))
                return;
            harness.capture(index, harness.indexOf(dest), data);
            return;
        }
        List<Address> targets = harness.model().multicastTargets(this);
        if (targets == null) {
            harness.capture(index, -1, data);
            return;
        }
        for (Address to : targets)
            if (!to.equals(address) || !Jg.dontLoopback(msg))
                harness.capture(index, harness.indexOf(to), data);
    }

    void delivered(Message msg) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("m", index);
        out.put("src", harness.indexOf(msg.getSrc()));
        out.put("payload", Hex.of(Jg.payload(msg)));
        harness.delivery(out);
    }
}

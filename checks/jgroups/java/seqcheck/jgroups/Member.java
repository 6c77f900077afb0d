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
 * One member: a real JGroups protocol instance between ``Capture`` (below) and ``Top`` (above), on
 * a transport that is never started (``Jg.transport``), with its address and view counter.
 */
final class Member {
    final int index;
    final Address address;
    final Harness harness;
    final Protocol protocol;
    final Capture capture;
    final Top top;
    final TP transport;
    private long viewId;

    Member(Harness harness, int index, Protocol protocol) {
        this.harness = harness;
        this.index = index;
        this.address = Jg.address(index);
        this.protocol = protocol;
        this.capture = new Capture(this);
        this.top = new Top(this);
        this.transport = Jg.transport(harness.clock);
        protocol.setUpProtocol(top);
        protocol.setDownProtocol(capture);
        top.setDownProtocol(protocol);
        capture.setUpProtocol(protocol);
        capture.setDownProtocol(transport);
        transport.setUpProtocol(capture);
        for (Protocol p : new Protocol[]{protocol, capture, top, transport})
            if (Reflect.field(p.getClass(), "local_addr") != null)
                Reflect.set(p, address, "local_addr");
    }

    void start() throws Exception {
        protocol.init();
        protocol.start();
    }

    void installView(List<Integer> members) {
        List<Address> addresses = new ArrayList<>();
        for (int m : members)
            addresses.add(harness.member(m).address);
        Jg.installView(protocol, Jg.view(addresses, ++viewId));
    }

    void send(int dst, byte[] payload) {
        Jg.down(protocol, Jg.dataMessage(harness.member(dst).address, address, payload));
    }

    /** Something the protocol sent down: serialized (the source set as a transport sets it), then kept. */
    void captured(Message msg) {
        if (msg.getSrc() == null)
            Reflect.call(msg, "setSrc", address);
        Address dest = msg.getDest();
        harness.capture(index, dest == null ? -1 : harness.indexOf(dest), Jg.serialize(msg));
    }

    void delivered(Message msg) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("m", index);
        out.put("src", harness.indexOf(msg.getSrc()));
        out.put("payload", Hex.of(Jg.payload(msg)));
        harness.delivery(out);
    }
}

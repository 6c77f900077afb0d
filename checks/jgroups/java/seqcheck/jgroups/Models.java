package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.List;

/** The protocols the harness can drive, by seqcheck's names, where the release has the class. */
final class Models {
    private Models() {}

    static List<String> available() {
        List<String> out = new ArrayList<>();
        if (Reflect.type("org.jgroups.protocols.UNICAST3") != null)
            out.add("unicast3");
        if (Reflect.type("org.jgroups.protocols.UNICAST2") != null)
            out.add("unicast2");
        if (Reflect.type("org.jgroups.protocols.UNICAST4") != null)
            out.add("unicast4");
        if (Reflect.type("org.jgroups.protocols.pbcast.NAKACK2") != null)
            out.add("nakack2");
        if (Reflect.type("org.jgroups.protocols.NAKACK4") != null)
            out.add("nakack4");
        return out;
    }

    static ProtocolModel get(String name) {
        if (!available().contains(name))
            throw new IllegalArgumentException("protocol " + name + ": not in this JGroups release (" + Jg.version()
                                               + " has " + available() + ")");
        switch (name) {
            case "unicast3": return new Unicast3Model();
            case "unicast2": return new Unicast2Model();
            case "unicast4": return new Unicast4Model();
            case "nakack4": return new Nakack4Model();
            case "nakack2": return new Nakack2Model();
            default: throw new IllegalArgumentException("protocol " + name + ": the harness has no model of it yet");
        }
    }
}

package seqcheck.jgroups;

import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;

/**
 * The bottom of a member's stack: everything the protocol sends down is captured (serialized, as a
 * transport would, and handed to the harness as a packet); nothing goes further down. No threads,
 * no network. ``down(Message)`` is JGroups 5's path and ``down(Event)`` with ``Event.MSG`` 3's.
 */
public class Capture extends Protocol {
    private final Member member;

    Capture(Member member) {
        this.member = member;
    }

    @Override
    public Object down(Event evt) {
        if (Jg.isMessageEvent(evt))
            member.captured((Message) evt.getArg());
        return null;
    }

    public Object down(Message msg) {
        member.captured(msg);
        return null;
    }
}

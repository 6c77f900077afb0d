package seqcheck.jgroups;

import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;

/**
 * The top of a member's stack: records every message delivered to the application, in order
 * (JGroups 5: ``up(Message)``, batches arrive one message at a time through ``Protocol.up(MessageBatch)``;
 * JGroups 3: ``up(Event)`` with ``Event.MSG``).
 */
public class Top extends Protocol {
    private final Member member;

    Top(Member member) {
        this.member = member;
    }

    @Override
    public Object up(Event evt) {
        if (Jg.isMessageEvent(evt))
            member.delivered((Message) evt.getArg());
        return null;
    }

    public Object up(Message msg) {
        member.delivered(msg);
        return null;
    }

    /** ``Protocol.up(MessageBatch)`` passes up only the messages ``accept`` takes: all of them, here. */
    protected boolean accept(Message msg) {
        return true;
    }
}

package seqcheck.jgroups;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;

/**
 * JGRP-3034's fault, injected into NAKACK4 (the spec's ``Timer(DELIVER_FAULT, sender)``): the next
 * batch the deliverer of ``sender``'s window builds throws before anything is removed. JGroups builds
 * the batch in ``removeAndDeliver`` from ``getTransport().getClusterNameAscii()`` (the cluster name of
 * a single message's batch); the harness makes that one call fail by cutting the member's stack
 * below the protocol for the duration of the one up-call that runs removeAndDeliver for ``sender``
 * (``getTransport()`` then finds no transport: a NullPointerException where the batch is built, the
 * exception JGRP-3034 is about). The calls that run it: a MSG or XMIT_RSP from ``sender`` coming up
 * while the member is a server, and the same replayed from the become_server_queue on BECOME_SERVER
 * (the harness knows which message each replayed task carries: ``replaying``).
 *
 * What the spec calls the deliverer's state is read from JGroups: ``adders`` != 0 is STUCK (5.4.12:
 * the exception left it set); after the fix (master) ``adders`` is 0 and the messages the failed batch
 * would have delivered wait in the window until the next removeAndDeliver for ``sender``: STRANDED,
 * which the harness records (the window that failed) and forgets when that call has run.
 */
final class DeliverFault {
    private final Map<Member, Set<Object>> armed = new HashMap<>();  // windows whose next batch throws
    private final Map<Member, Set<Object>> stranded = new HashMap<>();  // windows a failed batch left
    private final Map<Member, Deque<Message>> replaying = new HashMap<>();

    void arm(NakackModel model, Member member, Address sender) {
        Object window = sender == null ? null : model.windowOf(member, sender);
        if (window == null || sender.equals(member.address))
            throw new IllegalArgumentException("deliver_fault: member " + member.index + " has no window of another member's for it");
        armed.computeIfAbsent(member, m -> new HashSet<>()).add(window);
    }

    /** Is a fault armed for ``window`` (a window replaced or dropped since has a fresh deliverer)? */
    boolean armed(Member member, Object window) {
        return armed.getOrDefault(member, Set.of()).contains(window);
    }

    boolean stranded(Member member, Object window) {
        return stranded.getOrDefault(member, Set.of()).contains(window);
    }

    /** The messages the next BECOME_SERVER replays, in the queue's order (one task each). */
    void replay(Member member, Iterable<?> queue) {
        Deque<Message> order = new ArrayDeque<>();
        for (Object m : queue)
            order.add((Message) m);
        replaying.put(member, order);
    }

    /** A task of the transport's pool: a replayed message, if BECOME_SERVER is replaying. */
    void execute(NakackModel model, Member member, Runnable task) {
        Deque<Message> order = replaying.get(member);
        Message msg = order == null ? null : order.poll();
        run(model, member, msg, task);
    }

    /** ``msg`` goes up at ``member`` (``task`` does it), failing the batch if a fault is armed for it. */
    void run(NakackModel model, Member member, Message msg, Runnable task) {
        Address sender = msg == null ? null : model.deliveringSender(member, msg);
        Object window = sender == null ? null : model.windowOf(member, sender);
        boolean runsDeliverer = window != null && Boolean.TRUE.equals(Reflect.get(member.protocol, "is_server"))
            && ((Number) Reflect.call(Reflect.call(window, "getAdders"), "get")).intValue() == 0;
        if (!runsDeliverer || !armed(member, window)) {
            task.run();
            if (runsDeliverer)
                stranded.getOrDefault(member, new HashSet<>()).remove(window);
            return;
        }
        armed.get(member).remove(window);
        Protocol below = member.capture.getDownProtocol();
        member.capture.setDownProtocol(null);
        try {
            task.run();
        } catch (NullPointerException expected) {
            // the batch could not be built: JGroups' receiver thread would log it and go on
        } finally {
            member.capture.setDownProtocol(below);
        }
        if (((Number) Reflect.call(Reflect.call(window, "getAdders"), "get")).intValue() == 0)
            stranded.computeIfAbsent(member, m -> new HashSet<>()).add(window);
    }
}

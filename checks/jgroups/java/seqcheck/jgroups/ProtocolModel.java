package seqcheck.jgroups;

import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;

/**
 * One protocol as the harness drives it: how an instance is made and configured, how its
 * messages read in seqcheck's vocabulary (the spec's message types and fields), what of its state
 * the spec's node maps to, and which of its methods a named timer of the spec runs.
 */
interface ProtocolModel {
    /** A new, configured (not yet started) instance. */
    Protocol create(Map<String, Object> props);

    /** ``msg`` (as read back from the wire) in the spec's vocabulary: a map with "type" and fields. */
    Map<String, Object> describe(Member member, Message msg);

    /** The protocol state the spec's node maps to. */
    Map<String, Object> state(Member member);

    /** Runs the part of the protocol that the spec's timer ``kind`` (for ``peer``, or null) stands for. */
    void timer(Member member, String kind, Address peer);

    /** Runs the timer ``kind`` with a number (NAKACK4's ``send``: the seqno of the thread to let go). */
    default void timer(Member member, String kind, Address peer, long arg) {
        timer(member, kind, peer);
    }

    /** An application message as the application sends it (flags the model's settings ask for). */
    default Message application(Member member, Message msg) {
        return msg;
    }

    /** Passes a delivered packet's message up into ``member``'s protocol. */
    default void up(Member member, Message msg) {
        Jg.up(member.protocol, msg);
    }

    /** Passes delivered packets' messages (of one channel, from ``sender``) up as one MessageBatch. */
    default void upBatch(Member member, Member sender, java.util.List<Message> msgs) {
        Jg.upBatch(member.protocol, member.address, sender.address, msgs);
    }

    /** Runs a task the protocol hands to the transport's thread pool (at once, on this thread). */
    default void execute(Member member, Runnable task) {
        task.run();
    }

    /** The receiver-removal test hook (removeReceiveConnection in the unicast protocols). */
    void removeReceiver(Member member, Address peer);

    /** The member's stack, bottom first: the protocol under test and any above it (STABLE over NAKACK2). */
    default Protocol[] stack(Map<String, Object> props) {
        return new Protocol[]{create(props)};
    }

    /** Where a multicast ``member`` sends goes (one copy each, itself included unless DONT_LOOPBACK):
     *  null for a protocol that never multicasts (the packet is then kept with destination -1). */
    default List<Address> multicastTargets(Member member) {
        return null;
    }

    /** The lock an application thread of ``member`` can block under (``AppThreads``), or null: its
     *  sends never block and run on the harness's thread. */
    default ReentrantLock sendLock(Member member) {
        return null;
    }

    /** Does an application send take ``sendLock`` before it takes its seqno (NAKACK4's send_atomically)? */
    default boolean sendTakesLockFirst(Member member) {
        return true;
    }

    /** How many times a sender of ``member`` has blocked so far (grows when a thread blocks). */
    default long blockings(Member member) {
        return 0;
    }

    /** Lets every blocked sender of ``member`` go (the end of a run): its window refuses them. */
    default void closeSendWindow(Member member) {
    }

    /** An application send; a model whose sends can block runs it on a thread of its own and returns
     *  once the thread has returned or blocked (``SendGate``). Default: on the harness's thread. */
    default void send(Member member, int dst, byte[] payload) {
        member.send(dst, payload);
    }

    /** An application send flagged Message.Flag.OOB (delivered by the receiver on receipt); only a
     *  model that says so takes one. */
    default void sendOob(Member member, int dst, byte[] payload) {
        throw new IllegalArgumentException("send: oob is not supported by this protocol's harness model");
    }

    /** After every command, for every member: a model with threads lets those with one outcome finish. */
    default void settled(Member member) {
    }

    /** The end of a run (before a reset): a model with threads ends them. */
    default void end() {
    }

    /** Lets a blocked receiving thread go (the end of a run): the window it waits on refuses it. */
    default void closeWindowOf(AppThreads.Sender receiver) {
    }
}

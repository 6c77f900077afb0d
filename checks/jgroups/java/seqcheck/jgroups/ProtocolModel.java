package seqcheck.jgroups;

import java.util.Map;

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

    /** The receiver-removal test hook (removeReceiveConnection in the unicast protocols). */
    void removeReceiver(Member member, Address peer);

    /** An application send; a model whose sends can block runs it on a thread of its own and returns
     *  once the thread has returned or blocked (``SendGate``). Default: on the harness's thread. */
    default void send(Member member, int dst, byte[] payload) {
        member.send(dst, payload);
    }

    /** After every command, for every member: a model with threads lets those with one outcome finish. */
    default void settled(Member member) {
    }

    /** The end of a run (before a reset): a model with threads ends them. */
    default void end() {
    }
}

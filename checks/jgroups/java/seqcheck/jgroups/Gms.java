package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.util.Digest;

/**
 * The harness's stand-in for GMS: what GMS does to the multicast protocols below it when a member
 * joins or a merge view is installed, as ``CoordGmsImpl``, ``ClientGmsImpl`` and ``GMS.installView``
 * do it (5.4.12.Final; the same events in 3.x):
 *
 * - join (at the coordinator): SUSPEND_STABLE; GET_DIGEST; the join digest holds every member of the
 *   new view at what the coordinator's digest says, the joiner at (0, 0) (a member the digest lacks
 *   means no JoinRsp, as in GMS); the coordinator installs the new view; RESUME_STABLE; the
 *   JoinRsp (view and digest) is a packet to the joiner like any other (it may be lost, duplicated
 *   or delayed, as the world models it);
 * - the JoinRsp at the joiner: ignored once it has joined; else SET_DIGEST, then the view, then
 *   BECOME_SERVER is pending until the schedule fires it (``becomeServer``: GMS sends it at once
 *   after the view; the spec lets anything happen in between, a superset of JGroups' orders);
 * - merge: MERGE_DIGEST with each member of the merge view at its own window's (hd, hr) as its own
 *   protocol reports it now (GET_DIGEST for itself), then the view.
 *
 * Every event goes down from the top of the member's stack, so STABLE sees what it sees under GMS.
 */
final class Gms {
    private final Harness harness;

    Gms(Harness harness) {
        this.harness = harness;
    }

    /** A JoinRsp in flight: the view to install and the join digest (member index -> {hd, hr}). */
    static final class JoinResponse {
        final List<Integer> view;
        final Map<Integer, long[]> digest;
        final int size;

        JoinResponse(List<Integer> view, Map<Integer, long[]> digest, int size) {
            this.view = view;
            this.digest = digest;
            this.size = size;
        }

        Map<String, Object> describe() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("type", "JOIN_RSP");
            out.put("view", new ArrayList<Object>(view));
            Map<String, Object> entries = new TreeMap<>();
            for (Map.Entry<Integer, long[]> e : digest.entrySet())
                entries.put(String.valueOf(e.getKey()), List.of(e.getValue()[0], e.getValue()[1]));
            out.put("digest", entries);
            out.put("n", size);  // the group's size: the spec's digest has an entry per member
            return out;
        }
    }

    /** A founder of the group: the digest every founder holds once the group formed (each founder at
     *  (0, 0): nothing sent yet), then the first view. 3.x creates windows from digests alone (5.x
     *  also from views, where the digest changes nothing). */
    void found(Member member, List<Integer> view) {
        if (harness.model().multicastTargets(member) != null) {
            Map<Address, long[]> map = new HashMap<>();
            for (int m : view)
                map.put(harness.member(m).address, new long[]{0, 0});
            member.upper().down(Jg.event(Event.SET_DIGEST, new Digest(map)));
        }
        member.installView(view);
    }

    void join(Member coordinator, Member joiner, List<Integer> view) {
        if (!view.contains(joiner.index) || !view.contains(coordinator.index))
            throw new IllegalArgumentException("join: the view must hold the coordinator and the joiner");
        coordinator.upper().down(Jg.event(Event.SUSPEND_STABLE, 60_000L));
        Digest digest = digest(coordinator, null);
        Map<Integer, long[]> entries = new HashMap<>();
        boolean complete = true;
        for (int m : view) {
            long[] seqnos = m == joiner.index ? new long[]{0, 0} : digest.get(harness.member(m).address);
            if (seqnos == null)
                complete = false;
            else
                entries.put(m, new long[]{seqnos[0], seqnos[1]});
        }
        coordinator.installView(view);
        coordinator.upper().down(Jg.event(Event.RESUME_STABLE, null));
        if (complete)  // GMS drops the JoinRsp when the digest misses a member of the view
            harness.captureGms(coordinator.index, joiner.index, new JoinResponse(view, entries, harness.size()));
    }

    void receive(Member joiner, JoinResponse response) {
        if (joiner.joined)
            return;  // GMS takes one JoinRsp; a later one finds the member joined
        Map<Address, long[]> map = new HashMap<>();
        for (Map.Entry<Integer, long[]> e : response.digest.entrySet())
            map.put(harness.member(e.getKey()).address, e.getValue().clone());
        joiner.upper().down(Jg.event(Event.SET_DIGEST, new Digest(map)));
        joiner.installView(response.view);
        joiner.becomeServerPending = true;
    }

    void becomeServer(Member member) {
        if (!member.becomeServerPending)
            throw new IllegalStateException("BECOME_SERVER: member " + member.index + " has no JoinRsp to finish");
        member.becomeServerPending = false;
        member.upper().down(Jg.event(Event.BECOME_SERVER, null));
    }

    void merge(Member member, List<Integer> view) {
        Map<Address, long[]> map = new HashMap<>();
        for (int s : view) {
            Member sender = harness.member(s);
            Digest own = digest(sender, sender.address);
            long[] seqnos = own == null ? null : own.get(sender.address);
            if (seqnos != null)
                map.put(sender.address, new long[]{seqnos[0], seqnos[1]});
        }
        member.upper().down(Jg.event(Event.MERGE_DIGEST, new Digest(map)));
        member.installView(view);
    }

    /** GET_DIGEST at ``member`` (for ``of`` alone, or every window when null). */
    static Digest digest(Member member, Address of) {
        return (Digest) member.upper().down(Jg.event(Event.GET_DIGEST, of));
    }
}

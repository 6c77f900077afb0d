"""STABLE as NAKACK2 sees it: the gossip round, the coordinator's merge, STABILITY, and
NAKACK2.stable(digest) (the STABLE-triggered XMIT_REQ of JGRP-2678 and the purge).

This module mirrors ``spec/nakack2_stable.py`` function for function over the engine's mutable
``Member``. Digests are dicts member -> (hd, hr) here and tuples of (member, hd, hr) in
``address_key`` order on the wire.
"""

from __future__ import annotations

from impl.nakack2.codec import Digest, StabilityMsg, StableMsg, XmitReqMsg, address_key
from impl.nakack2.state import NO_ENTRY, Member, P


def wire_digest(digest: dict[P, tuple[int, int]]) -> Digest:
    """A digest in its wire form: (member, hd, hr) in ``address_key`` order."""
    return tuple((p, hd, hr) for p, (hd, hr) in sorted(digest.items(), key=lambda e: address_key(e[0])))


def stable_task(m: Member[P]) -> None:
    """Spec ``stable_task``: the member's digest for the members of its view goes to the
    coordinator (merged at once at the coordinator itself; variant ``stable_vote_to_self``, before
    5.1.6: sent to itself); nothing while suspended, nor while the digest lacks a member of the view."""
    if m.stable_suspended or not m.members:
        return
    full = m.digest()
    if any(p not in full for p in m.members):
        return
    digest = {p: full[p] for p in m.members}
    m.stats.stable_votes_sent += 1
    if m.coordinator == m.me and not m.variant.stable_vote_to_self:
        on_vote(m, m.me, StableMsg(m.view, wire_digest(digest)))
    else:
        m.emit(m.coordinator, StableMsg(m.view, wire_digest(digest)))


def on_vote(m: Member[P], src: P, msg: StableMsg) -> None:
    """Spec ``on_vote``: merged (min hd, max hr) if this member coordinates the voter's view, STABLE
    is not suspended and the voter is a member that has not voted this round. Once every member
    voted: a new round, STABILITY to every other member of the view (variant
    ``stable_vote_to_self``, before 5.1.6: to itself too, a copy it ignores), then the digest
    passed down to the own NAKACK2 at once."""
    if (not m.members or m.coordinator != m.me or msg.view != m.view or m.stable_suspended
            or src not in m.members or src in m.votes):
        m.stats.votes_ignored += 1
        return
    merged = m.merged
    for p, hd, hr in msg.digest:
        if p not in m.members:  # hostile input only: an honest vote names members only
            continue
        old = merged.get(p)
        merged[p] = (hd, hr) if old is None else (min(old[0], hd), max(old[1], hr))
    m.votes.add(src)
    if len(m.votes) != len(m.members):
        return
    digest = dict(merged)
    m.reset_round()
    stability = StabilityMsg(m.view, wire_digest(digest))
    m.stats.stability_sent += 1
    for member in m.view:
        if member != m.me or m.variant.stable_vote_to_self:
            m.emit(member, stability)
    stable(m, digest)


def on_stability(m: Member[P], src: P, msg: StabilityMsg) -> None:
    """Spec ``on_stability``: ignored while suspended, when it is the member's own, or when it
    names another view; otherwise a new round and the digest passed down to NAKACK2. Hardening
    (hostile input only): ignored unless it comes from the coordinator of that view, the only
    member that sends one (the same view has the same coordinator, so no honest one is lost)."""
    if not m.members or m.stable_suspended or src == m.me or msg.view != m.view or src != m.coordinator:
        m.stats.stability_ignored += 1
        return
    m.reset_round()
    stable(m, {p: (hd, hr) for p, hd, hr in msg.digest})


def stable(m: Member[P], digest: dict[P, tuple[int, int]]) -> None:
    """Spec ``stable`` (NAKACK2.stable(digest)), per sender P the digest names and this member has
    a window for, in ``address_key`` order: with retransmission on, XMIT_REQ(previous digest's hr)
    to P if that is above the local hr (variant ``stable_xmit_current_hr``: this digest's hr, and
    nothing remembered), then this digest's hr remembered; then P's window purged to the digest's
    hd, clamped to the local hd (only the own window keeps delivered messages, so only it can lose
    any)."""
    cfg = m.config
    for sender, (hd, hr) in sorted(digest.items(), key=lambda e: address_key(e[0])):
        local_hr = m.window_hr(sender)
        if local_hr is None:
            continue
        if cfg.retransmission:
            wanted = hr if m.variant.stable_xmit_current_hr else m.stable_xmit.get(sender, NO_ENTRY)
            if wanted != NO_ENTRY and wanted > local_hr:
                m.emit(sender, XmitReqMsg((wanted,)))
            if not m.variant.stable_xmit_current_hr:  # no stable_xmit_map before JGRP-2678's fix
                m.stable_xmit[sender] = hr
        if sender == m.me and m.own is not None:
            m.stats.stable_purged += m.own.purge(hd)
        # a receive window has low == hd: a non-forced purge clamped to hd drops nothing


def forget(m: Member[P], member: P) -> None:
    """Spec ``forget``: a member left the view: drop what STABLE remembered of it."""
    m.stable_xmit.pop(member, None)

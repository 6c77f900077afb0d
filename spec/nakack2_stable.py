"""STABLE as NAKACK2 sees it: the gossip round that decides what every member may purge.

``spec/nakack2.py`` (the protocol's documentation, decisions 9-13) explains the round; this module
holds its handlers: the gossip task of a member (its digest to the coordinator), the coordinator's
merge of the votes (min hd, max hr per sender) and its STABILITY multicast once every member of
its view voted, and NAKACK2's ``stable(digest)`` at every member: the STABLE-triggered
retransmission request (JGRP-2678) and the purge.
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Effect, Send
from spec.nakack2_state import (
    NO_ENTRY,
    Config,
    Digest,
    Node,
    Stability,
    StablePurged,
    StableVote,
    Step,
    XmitReq,
    digest_of,
    purge,
    set_at,
)


def stable_task(cfg: Config, node: Node) -> Step:
    """One run of STABLE's gossip: the member's digest for the members of its view goes to the
    coordinator; the coordinator merges its own vote at once (``sendStableMessage``: "don't send a
    STABLE message to self when coord", 5.1.6 on; variant ``stable_vote_to_self``: before, the vote
    is a packet to itself like any member's). Nothing is sent while suspended, nor while the digest
    lacks a member of the view (JGroups: "could not find matching digest")."""
    digest = tuple(entry if member in node.members else None
                   for member, entry in enumerate(digest_of(node)))
    if node.stable_suspended or any(digest[member] is None for member in node.members):
        return Step(node, ())
    if node.coordinator == node.me and not cfg.variant.stable_vote_to_self:
        return on_vote(cfg, node, node.me, StableVote(node.view, digest))
    return Step(node, (Send(node.coordinator, StableVote(node.view, digest)),))


def reset_round(node: Node) -> Node:
    """resetDigest: a new round, no vote merged yet."""
    return replace(node, votes=frozenset(), merged=(None,) * len(node.merged))


def on_vote(cfg: Config, node: Node, src: int, msg: StableVote) -> Step:
    """A STABLE vote at the coordinator: ignored unless this member coordinates the voter's view
    (same view), STABLE is not suspended and the voter has not voted this round. The vote is
    merged (min hd, max hr per sender). Once every member of the view voted, a new round starts,
    STABILITY with the merged digest goes to every other member of the view, and the
    coordinator passes the digest down to its own NAKACK2 at once. Variant ``stable_vote_to_self``
    (before 5.1.6, the same commit 605ea5b3e): STABILITY is a multicast without DONT_LOOPBACK, so
    the coordinator gets a copy too, which it ignores (``on_stability``: its own)."""
    if (not node.members or node.coordinator != node.me or msg.view != node.view or node.stable_suspended
            or src not in node.members or src in node.votes):
        return Step(node, ())
    merged = tuple(_merge(old, new) for old, new in zip(node.merged, msg.digest))
    node = replace(node, votes=node.votes | {src}, merged=merged)
    if node.votes != node.members:
        return Step(node, ())
    stability = Stability(node.view, merged)
    sent = tuple(Send(member, stability) for member in node.view
                 if member != node.me or cfg.variant.stable_vote_to_self)
    step = stable(cfg, reset_round(node), merged)
    return Step(step.node, sent + step.effects)


def _merge(old: tuple[int, int] | None, new: tuple[int, int] | None) -> tuple[int, int] | None:
    if new is None:
        return old
    if old is None:
        return new
    return min(old[0], new[0]), max(old[1], new[1])


def on_stability(cfg: Config, node: Node, src: int, msg: Stability) -> Step:
    """STABILITY: ignored while suspended, when it is the member's own, or when it names another
    view; otherwise the member starts a new round and passes the digest down to NAKACK2."""
    if not node.members or node.stable_suspended or src == node.me or msg.view != node.view:
        return Step(node, ())
    return stable(cfg, reset_round(node), msg.digest)


def stable(cfg: Config, node: Node, digest: Digest) -> Step:
    """NAKACK2.stable(digest), for every sender P the digest names and this member has a window for:

    1. with retransmission on, if the previous digest's hr for P (stable_xmit_map) is above this
       member's hr for P, XMIT_REQ(that hr) to P; then remember this digest's hr (JGRP-2678: a
       message the last round already saw as received somewhere is asked for, one still in flight
       is not). Variant ``stable_xmit_current_hr``: ask for this digest's hr at once and remember
       nothing (JGroups had no stable_xmit_map before that fix; 5.2.12's state has none);
    2. purge P's window up to the digest's hd, clamped to the local hd (non-forced)."""
    effects: list[Effect | StablePurged] = []
    stable_xmit = list(node.stable_xmit)
    windows = list(node.windows)
    for sender, entry in enumerate(digest):
        window = windows[sender]
        if entry is None or window is None:
            continue
        hd, hr = entry
        if cfg.retransmission:
            wanted = hr if cfg.variant.stable_xmit_current_hr else stable_xmit[sender]
            if wanted != NO_ENTRY and wanted > window.highest_received:
                effects.append(Send(sender, XmitReq(sender, (wanted,))))
            if not cfg.variant.stable_xmit_current_hr:  # stable_xmit_map came with JGRP-2678's fix
                stable_xmit[sender] = hr
        purged = purge(window, hd)
        if purged.low > window.low:
            effects.append(StablePurged(sender, purged.low))
        windows[sender] = purged
    own = windows[node.me]
    flagged = node.dont_loopback if own is None else frozenset(s for s in node.dont_loopback if s > own.low)
    return Step(replace(node, windows=tuple(windows), stable_xmit=tuple(stable_xmit), dont_loopback=flagged),
                tuple(effects))


def forget(node: Node, member: int) -> Node:
    """A member left the view: drop what STABLE remembered of it (stable_xmit_map)."""
    return replace(node, stable_xmit=set_at(node.stable_xmit, member, NO_ENTRY))

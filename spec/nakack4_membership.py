"""NAKACK4's membership handlers (``spec/nakack4.py`` decisions 10-12 and 15): a view change, the
coordinator's admission of a joiner and the joiner's JoinRsp (SET_DIGEST, then the view), the merge's
digest, and DISCONNECT. ``spec/nakack4.py`` re-exports them; its docstring is their documentation.
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Effect, Send, WindowCreated, WindowRemoved
from spec.nakack2_state import Digest, JoinRsp, set_at
from spec.nakack4_state import (
    NO_ENTRY,
    READY,
    Config,
    Node,
    SendDropped,
    Step,
    digest_of,
    new_window,
    purge_to_min,
    table_min,
)

Effects = list[Effect]


def on_view(cfg: Config, node: Node, members: frozenset[int]) -> Step:
    """VIEW_CHANGE (decision 10): windows of non-members dropped (never the own), a window at 0 for
    each new member, the AckTable adjusted and the own window purged if its minimum rose."""
    effects: Effects = []
    windows, counted, pending = list(node.windows), list(node.acks_counted), list(node.ack_pending)
    xmit_last, table, deliverer = list(node.xmit_last), list(node.ack_table), list(node.deliverer)
    for peer in range(cfg.members):
        if peer in members:
            if windows[peer] is None:
                windows[peer] = new_window(0)
                counted[peer], pending[peer], deliverer[peer] = 0, False, READY
                effects.append(WindowCreated(peer, 0, 0))
            if table[peer] == NO_ENTRY:
                table[peer] = 0
            continue
        table[peer] = NO_ENTRY
        if peer != node.me:
            if windows[peer] is not None:
                windows[peer] = None
                counted[peer], pending[peer], deliverer[peer] = 0, False, READY
                effects.append(WindowRemoved(peer))
            xmit_last[peer] = 0
    node = replace(node, members=members, windows=tuple(windows), acks_counted=tuple(counted),
                   ack_pending=tuple(pending), xmit_last=tuple(xmit_last), ack_table=tuple(table), is_server=True,
                   deliverer=tuple(deliverer))
    new_min = table_min(node.ack_table, node.ack_min)
    if cfg.variant.view_change_no_purge:
        return Step(replace(node, ack_min=new_min), tuple(effects))
    step = purge_to_min(node, new_min)
    return Step(step.node, (*effects, *step.effects))


def on_join(cfg: Config, node: Node, joiner: int, view: frozenset[int]) -> Step:
    """The coordinator's GMS admits ``joiner`` into ``view``: JoinRsp with the view and GET_DIGEST
    (the joiner at (0, 0)) goes to the joiner (decision 11)."""
    digest = set_at(digest_of(node), joiner, (0, 0))
    return Step(node, (Send(joiner, JoinRsp(tuple(sorted(view)), digest)),))


def on_join_rsp(cfg: Config, node: Node, msg: JoinRsp) -> Step:
    """JoinRsp at the joiner: SET_DIGEST, then VIEW_CHANGE; BECOME_SERVER is now pending. Ignored
    once the member has its own window (a duplicate or late JoinRsp)."""
    if node.windows[node.me] is not None:
        return Step(node, ())
    node, created = set_digest(node, msg.digest)
    step = on_view(cfg, node, frozenset(msg.view))
    return Step(replace(step.node, become_server_pending=True), (*created, *step.effects))


def set_digest(node: Node, digest: Digest) -> tuple[Node, list[Effect]]:
    """SET_DIGEST: a window at hd for every sender the digest names and this member has no window
    for; existing windows are never touched or removed."""
    effects: list[Effect] = []
    windows = list(node.windows)
    for sender, entry in enumerate(digest):
        if entry is not None and windows[sender] is None:
            windows[sender] = new_window(entry[0])
            effects.append(WindowCreated(sender, 0, entry[0]))
    return replace(node, windows=tuple(windows)), effects


def on_merge_digest(cfg: Config, node: Node, digest: Digest) -> Step:
    """MERGE_DIGEST (decision 15; ReliableMulticast.setDigest with merge): keep the own window and
    every window at or above the digest's hd; replace the others by a window at that hd, with a
    fresh ack counter and deliverer (a new Entry)."""
    effects: list[Effect] = []
    windows, counted = list(node.windows), list(node.acks_counted)
    pending, deliverer = list(node.ack_pending), list(node.deliverer)
    for sender, entry in enumerate(digest):
        window = windows[sender]
        if entry is None or sender == node.me or (window is not None and window.delivered >= entry[0]):
            continue
        if window is not None:
            effects.append(WindowRemoved(sender))
        windows[sender] = new_window(entry[0])
        counted[sender], pending[sender], deliverer[sender] = 0, False, READY
        effects.append(WindowCreated(sender, 0, entry[0]))
    node = replace(node, windows=tuple(windows), acks_counted=tuple(counted), ack_pending=tuple(pending),
                   deliverer=tuple(deliverer))
    return Step(node, tuple(effects))


def on_disconnect(cfg: Config, node: Node) -> Step:
    """DISCONNECT (decision 12): the own window closes, every thread still holding a seqno fails
    (its message dropped, the seqno spent), the counter returns to 0 and the table is cleared."""
    dropped = tuple(SendDropped(seqno, payload) for seqno, payload in node.sending)
    removed = tuple(WindowRemoved(p) for p, w in enumerate(node.windows) if w is not None and p != node.me)
    n = cfg.members
    node = replace(node, seqno=0, windows=(None,) * n, sending=(), members=frozenset(),
                   ack_table=(NO_ENTRY,) * n, acks_counted=(0,) * n, ack_pending=(False,) * n, is_server=False,
                   deliverer=(READY,) * n, oob_sending=frozenset(), oob_delivered=frozenset())
    return Step(node, (*dropped, *removed))

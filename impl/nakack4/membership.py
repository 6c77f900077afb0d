"""Membership as NAKACK4 sees it: views (with the AckTable's adjustment and purge), the join
(both ends), SET_DIGEST, MERGE_DIGEST and DISCONNECT.

This module mirrors the membership handlers of ``spec/nakack4.py`` (``on_view``, ``on_join``,
``_on_join_rsp``, ``set_digest``, ``on_merge_digest``, ``on_disconnect``) over the engine's
mutable ``Member``. One departure, for hostile input only: a digest's entry for the member itself
creates its own window at its counter, never elsewhere (the coordinator names a joiner at (0, 0),
where a joiner's counter is), and a JOIN_RSP naming addresses of another kind is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.nakack4.acks import purge_to_min, table_min
from impl.nakack4.codec import JoinRspMsg, address_key
from impl.nakack4.sending import fail_held
from impl.nakack4.state import Entry, Member, P


def on_view(m: Member[P], members: Iterable[P]) -> None:
    """Spec ``on_view``: windows of non-members dropped (never the own), a window at 0 for each new
    member, the AckTable adjusted (members kept, joiners at 0, the others removed) and the own
    window purged if its minimum rose (JGRP-2853/2854), server from now on, retransmission
    records of non-members forgotten."""
    view = frozenset(members)
    cfg = m.config
    peers = view | m.entries.keys() | m.ack_table.keys() | m.xmit_last.keys()
    for peer in sorted(peers, key=address_key):
        if peer in view:
            if peer not in m.entries:
                m.entries[peer] = Entry(cfg, 0)
            m.ack_table.setdefault(peer, 0)
            continue
        m.ack_table.pop(peer, None)
        if peer != m.me:
            m.drop_entry(peer)
            m.xmit_last.pop(peer, None)
    m.set_members(view)
    m.is_server = True
    new_min = table_min(m)
    if m.variant.view_change_no_purge:
        m.ack_min = new_min
    else:
        purge_to_min(m, new_min)


def answer_join(m: Member[P], joiner: P, view: Iterable[P]) -> None:
    """Spec ``on_join`` at the coordinator: JOIN_RSP with ``view`` and GET_DIGEST (the joiner at
    (0, 0)) to the joiner."""
    digest = m.digest()
    digest[joiner] = (0, 0)
    entries = tuple((p, hd, high) for p, (hd, high) in sorted(digest.items(), key=lambda e: address_key(e[0])))
    m.emit(joiner, JoinRspMsg(tuple(sorted(set(view), key=address_key)), entries))


def on_join_rsp(m: Member[P], msg: JoinRspMsg) -> None:
    """Spec ``_on_join_rsp``: SET_DIGEST, then VIEW_CHANGE; BECOME_SERVER is now pending. Ignored
    once the member has its own window (a duplicate or late JOIN_RSP)."""
    kind = type(m.me)
    if m.own is not None or any(type(p) is not kind for p in (*msg.view, *(e[0] for e in msg.digest))):
        m.stats.join_rsp_ignored += 1
        return
    set_digest(m, {p: (hd, hr) for p, hd, hr in msg.digest})
    on_view(m, msg.view)
    m.become_server_pending = True


def set_digest(m: Member[P], digest: dict[P, tuple[int, int]]) -> None:
    """Spec ``set_digest``: a window at hd for every sender the digest names and this member has no
    window for; existing windows are never touched or removed."""
    for sender, (hd, _high) in sorted(digest.items(), key=lambda e: address_key(e[0])):
        if sender not in m.entries:
            m.entries[sender] = Entry(m.config, m.seqno if sender == m.me else hd)


def merge_digest(m: Member[P], digest: dict[P, tuple[int, int]]) -> None:
    """Spec ``on_merge_digest``: keep the own window and every window at or above the digest's hd;
    replace the others by a window at that hd with a fresh Entry (ack counter, deliverer)."""
    for sender, (hd, _high) in sorted(digest.items(), key=lambda e: address_key(e[0])):
        entry = m.entries.get(sender)
        if sender == m.me or (entry is not None and entry.window.hd >= hd):
            continue
        m.set_entry(sender, Entry(m.config, hd))


def disconnect(m: Member[P]) -> None:
    """Spec ``on_disconnect``: the own window closes, every held send fails (dropped, its seqno
    spent), the counter returns to 0, the windows and the AckTable are cleared."""
    own = m.own
    if own is not None:
        own.window.close()
    fail_held(m)
    m.oob_delivered.clear()
    m.seqno = 0
    for peer in list(m.entries):
        m.drop_entry(peer)
    m.set_members(frozenset())
    m.ack_table = {}
    m.is_server = False

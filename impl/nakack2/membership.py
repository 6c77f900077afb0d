"""Membership as NAKACK2 sees it: views, the join (both ends), SET_DIGEST and MERGE_DIGEST.

This module mirrors the membership handlers of ``spec/nakack2.py`` (``on_view``, ``on_join``,
``_on_join_rsp``, ``set_digest``, ``on_merge_digest``) over the engine's mutable ``Member``.
One departure, for hostile input only: a digest's entry for the member itself never moves its
own window away from its counter (the coordinator always names a joiner at (0, 0); any other
value would break the own window's seqno discipline and make the member unable to multicast).
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.nakack2.codec import JoinRspMsg, address_key
from impl.nakack2.stable import forget, wire_digest
from impl.nakack2.state import Member, OwnWindow, P, RecvEntry


def on_view(m: Member[P], members: Iterable[P]) -> None:
    """Spec ``on_view``: windows of non-members dropped (never the own), a window at 0 for each new
    member, server from now on, retransmission records of non-members forgotten; STABLE starts a
    new round and resumes if the coordinator had suspended it for a join."""
    view = frozenset(members)
    cfg = m.config
    peers = view | m.recv.keys() | m.xmit_last.keys() | m.stable_xmit.keys()
    for peer in sorted(peers, key=address_key):
        if peer in view:
            if peer == m.me:
                if m.own is None:
                    m.own = OwnWindow(m.seqno, cfg)
            elif peer not in m.recv:
                m.recv[peer] = RecvEntry(0, cfg)
        elif peer != m.me:
            entry = m.recv.pop(peer, None)
            if entry is not None:
                m.held.release(entry)
            m.xmit_last.pop(peer, None)
            forget(m, peer)
    m.set_members(view)
    m.is_server = True
    m.stable_suspended = False
    m.reset_round()


def answer_join(m: Member[P], joiner: P, view: Iterable[P]) -> None:
    """Spec ``on_join`` at the coordinator: STABLE suspended (a new round), and JOIN_RSP with
    ``view`` and GET_DIGEST (the joiner at (0, 0)) sent to the joiner."""
    digest = m.digest()
    digest[joiner] = (0, 0)
    m.stable_suspended = True
    m.reset_round()
    m.emit(joiner, JoinRspMsg(tuple(sorted(set(view), key=address_key)), wire_digest(digest)))


def on_join_rsp(m: Member[P], msg: JoinRspMsg) -> None:
    """Spec ``_on_join_rsp``: SET_DIGEST, then VIEW_CHANGE; BECOME_SERVER is now pending. Ignored
    once the member has its own window (a duplicate or late JOIN_RSP), and (hostile input) when
    it names an address of another type than the member's own."""
    kind = type(m.me)
    if m.own is not None or any(type(p) is not kind for p in (*msg.view, *(e[0] for e in msg.digest))):
        m.stats.join_rsp_ignored += 1  # late, duplicate, or naming addresses of another kind than ours
        return
    set_digest(m, {p: (hd, hr) for p, hd, hr in msg.digest})
    on_view(m, msg.view)
    m.become_server_pending = True


def set_digest(m: Member[P], digest: dict[P, tuple[int, int]]) -> None:
    """Spec ``set_digest``: a window at hd for every sender the digest names and this member has no
    window for; existing windows are never touched or removed."""
    cfg = m.config
    for sender, (hd, _hr) in sorted(digest.items(), key=lambda e: address_key(e[0])):
        if sender == m.me:
            if m.own is None:
                m.own = OwnWindow(m.seqno, cfg)  # see the module docstring
        elif sender not in m.recv:
            m.recv[sender] = RecvEntry(hd, cfg)


def merge_digest(m: Member[P], digest: dict[P, tuple[int, int]]) -> None:
    """Spec ``on_merge_digest``: keep the own window and every window at or above the digest's hd;
    replace the others by a window at that hd."""
    cfg = m.config
    for sender, (hd, _hr) in sorted(digest.items(), key=lambda e: address_key(e[0])):
        if sender == m.me:
            continue
        entry = m.recv.get(sender)
        if entry is not None and entry.window.hd >= hd:
            continue
        if entry is not None:
            m.held.release(entry)
        m.recv[sender] = RecvEntry(hd, cfg)

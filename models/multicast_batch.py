"""Batches in the multicast world (``models/multicast_world.py`` rule 11): which batches the network
may hand a member, and the world after one.

This module owns ``[faults] max_batch`` for the multicast protocols (NAKACK2, NAKACK4): with
``max_batch = N`` (N >= 2; 0, the default, is off) the network may also hand a member 2 to N of the
packets in flight on one channel as one input, ``DeliverBatch`` (``models/world.py``'s action), which
the adapter passes to the spec's ``on_batch`` (``stimulus`` is the world's input for it). The packets of a batch
are those the adapter's ``bundle`` puts in one batch, as JGroups' transport hands them up: its
bundler puts the messages for one destination in one bundle (the multicasts of a sender: MSG, a
re-multicast MSG, HIGHEST_SEQNO; its unicasts to the member: XMIT_REQ, XMIT_RSP, NAKACK4's ACK), and
the receiver splits a bundle into its OOB batch and its regular one (``TP.handleMessageBatch``;
XMIT_REQ, HIGHEST_SEQNO and ACK are sent OOB, MSG and XMIT_RSP are not). So a batch holds MSGs, or
XMIT_RSPs, or HIGHEST_SEQNOs, or XMIT_REQs and ACKs: never a control message with a MSG (a bundle's
OOB batch goes up first: the engines' ``received_batch`` of a whole bundle does the same). A sender's
bundler queues what it sends close together, so any of them in flight at once may share a bundle.
Messages that are not the protocol's (STABLE's, GMS's) are never batched. A batch's messages are in
the network's order; every order of a subset leaves the same world (the specs add a batch's MSGs in
one go and handle its control messages one by one, and the sends of one step are a set in the
network), so one order per subset is all the states. A batch delivery consumes its packets and is
progress; none is offered to a stopped member (its socket is closed: single deliveries discard).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from itertools import combinations
from typing import TYPE_CHECKING, Any

from models.world import DeliverBatch, Packet

if TYPE_CHECKING:
    from models.multicast_world import McastEnv, MulticastWorld


def batches(world: MulticastWorld, net_id: int) -> tuple[DeliverBatch, ...]:
    """Every batch network ``net_id`` may deliver, channel by channel and mode by mode (memoised)."""
    memo: dict[int, tuple[DeliverBatch, ...]] = world.batch_memo
    found = memo.get(net_id)
    if found is None:
        groups: dict[tuple[int, int, Hashable], list[Packet]] = {}
        for p in world.net_table.values[net_id]:
            mode = world.adapter.bundle(p.msg)
            if mode is not None:
                groups.setdefault((p.src, p.dst, mode), []).append(p)
        found = memo[net_id] = tuple(DeliverBatch(c) for group in groups.values()
                                     for size in range(2, world.bounds.max_batch + 1)
                                     for c in combinations(group, size))
    return found


def stimulus(batch: DeliverBatch) -> tuple[Any, ...]:
    """The handler input of a batch delivery: ``("batch", src, its packets in order)``: packets, not
    messages, since messages of different types may be equal tuples (``Ack(1) == HighestSeqno(1)``)
    and the world memoises handler results on the input."""
    return "batch", batch.packets[0].src, batch.packets


def batch_successors(world: MulticastWorld, state: tuple[int, ...], env: McastEnv,
                     keep: Callable[[Hashable], bool], stopped: Callable[[McastEnv, int], bool],
                     step: Callable[..., Iterator[tuple[Any, tuple[int, ...]]]], consume: Callable[..., int]
                     ) -> Iterator[tuple[Any, tuple[int, ...]]]:
    """The batch deliveries of ``state`` and the world after each (nothing when batches are off):
    ``consume(net, packet, ())`` is the world's network after a packet leaves it, ``step`` the world's
    ``_after`` (its one step, here from the state with the batch's packets consumed)."""
    if not world.bounds.max_batch:
        return
    n = world.n
    for batch in batches(world, state[n]):
        dst = batch.packets[0].dst
        if stopped(env, dst) or not keep(batch):
            continue
        net_id = state[n]
        for p in batch.packets:
            net_id = consume(net_id, p, ())
        after_env = env
        if world.bounds.track_young and any(p in env.young for p in batch.packets):
            after_env = env._replace(young=env.young - set(batch.packets))  # rule 9: consumed copies leave
        consumed = state[:n] + (net_id, world.env_table(after_env), state[n + 2])
        handled = list(step(consumed, dst, batch, stimulus(batch), None, after_env))
        yield from handled if handled else [(batch, consumed)]

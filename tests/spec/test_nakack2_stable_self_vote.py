"""NAKACK2's STABLE before 5.1.6 (variant ``stable_vote_to_self``): the coordinator's own vote is a
packet to itself, merged when it arrives, instead of at once.

Invariants tested: as shipped the coordinator's gossip run merges its vote and sends nothing; with the
variant it sends the vote to itself and the vote, received, is merged as a vote from itself.
"""

from __future__ import annotations

from dataclasses import replace

from spec import nakack2 as n2
from spec.effects import Send
from spec.nakack2_stable import stable_task


def coordinator(cfg: n2.Config) -> n2.Node:
    node = n2.initial_node(0, cfg, frozenset({0, 1}))
    assert node.coordinator == 0
    return node


def test_as_shipped_the_coordinator_merges_its_vote_at_once() -> None:
    cfg = n2.Config(members=2)
    after, effects = stable_task(cfg, coordinator(cfg))
    assert effects == () and after.votes == {0}


def test_before_5_1_6_the_vote_is_a_packet_to_itself() -> None:
    cfg = n2.Config(members=2, variant=replace(n2.Variant(), stable_vote_to_self=True))
    node = coordinator(cfg)
    after, effects = stable_task(cfg, node)
    assert after.votes == frozenset() and len(effects) == 1
    sent = effects[0]
    assert isinstance(sent, Send) and sent.dst == 0 and isinstance(sent.msg, n2.StableVote)
    merged, _ = n2.on_receive(cfg, after, 0, sent.msg)
    assert merged.votes == {0}

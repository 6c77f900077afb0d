"""The strictness of the specs' timestamp comparison (issue 19, item 7).

JGroups' ``updateLastTimestamp`` accepts the first timestamp a send entry sees and afterwards only
a strictly newer one. Invariant tested, for UNICAST3 (ACK and SEND_FIRST_SEQNO, which share one
``last_ts``) and UNICAST2 under ``fix_timestamps`` (STABLE and SEND_FIRST_SEQNO): a message whose
timestamp equals the last accepted one is ignored whole (no purge, no resend, ``last_ts`` kept), an
older one too, a greater one is acted on and recorded, and the first one is accepted whatever it
is. A spec whose comparison were ``>=`` (or ``>`` against a stale ``last_ts``) fails here; the
model checks do not tell the two apart on the shipped models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from spec import unicast2 as u2
from spec import unicast3 as u3

A, B = 0, 1
BOTH = frozenset({A, B})
LAST = 5  # the last timestamp A accepted from B


def _u3_sender(last_ts: int) -> tuple[u3.Config, u3.Node]:
    """UNICAST3: A has sent #1..#3 to B (nothing acked); its entry's last_ts is ``last_ts``."""
    cfg = u3.Config(members=2)
    node = u3.initial_node(A, cfg, BOTH)
    for payload in (1, 2, 3):
        node = u3.on_send(cfg, node, B, payload).node
    entry = node.send[B]
    assert entry is not None
    return cfg, replace(node, send=(None, replace(entry, last_ts=last_ts)))


def _u2_sender(last_ts: int) -> tuple[u2.Config, u2.Node]:
    """UNICAST2 with fix_timestamps: as ``_u3_sender``, and the first message acknowledged."""
    cfg = u2.Config(members=2, variant=u2.Variant(fix_timestamps=True))
    node = u2.initial_node(A, cfg, BOTH)
    for payload in (1, 2, 3):
        node = u2.on_send(cfg, node, B, payload).node
    entry = node.send[B]
    assert entry is not None
    return cfg, replace(node, send=(None, replace(entry, last_ts=last_ts, ack_received=True)))


def _last_ts(node: u3.Node | u2.Node) -> int:
    entry = node.send[B]
    assert entry is not None
    return entry.last_ts


U3_MESSAGES: dict[str, Callable[[int], u3.Msg]] = {"ACK": lambda ts: u3.Ack(2, 0, ts),
                                                   "SEND_FIRST_SEQNO": lambda ts: u3.SendFirstSeqno(ts)}
U2_MESSAGES: dict[str, Callable[[int], u2.Msg]] = {"STABLE": lambda ts: u2.Stable(2, 2, 0, ts),
                                                   "SEND_FIRST_SEQNO": lambda ts: u2.SendFirstSeqno(3, ts)}


@pytest.mark.parametrize("kind", sorted(U3_MESSAGES))
@pytest.mark.parametrize("ts", [LAST - 1, LAST])
def test_unicast3_ignores_an_equal_or_older_timestamp(kind: str, ts: int) -> None:
    cfg, node = _u3_sender(LAST)
    step = u3.on_receive(cfg, node, B, U3_MESSAGES[kind](ts))
    assert step.effects == () and step.node == node


@pytest.mark.parametrize("kind", sorted(U3_MESSAGES))
@pytest.mark.parametrize("last", [0, LAST])  # 0: none accepted yet, so any timestamp is the first
def test_unicast3_acts_on_a_greater_or_first_timestamp(kind: str, last: int) -> None:
    cfg, node = _u3_sender(last)
    step = u3.on_receive(cfg, node, B, U3_MESSAGES[kind](LAST + 1 if last else 1))
    assert _last_ts(step.node) == (LAST + 1 if last else 1)
    if kind == "ACK":
        assert step.effects == (u3.Purged(B, 0, 2),)
    else:
        assert step.effects == (u3.Send(B, u3.Data(1, 0, True, 1)),)


@pytest.mark.parametrize("kind", sorted(U2_MESSAGES))
@pytest.mark.parametrize("ts", [LAST - 1, LAST])
def test_unicast2_fix_timestamps_ignores_an_equal_or_older_timestamp(kind: str, ts: int) -> None:
    cfg, node = _u2_sender(LAST)
    step = u2.on_receive(cfg, node, B, U2_MESSAGES[kind](ts))
    assert step.effects == () and step.node == node


@pytest.mark.parametrize("kind", sorted(U2_MESSAGES))
@pytest.mark.parametrize("last", [0, LAST])
def test_unicast2_fix_timestamps_acts_on_a_greater_or_first_timestamp(kind: str, last: int) -> None:
    cfg, node = _u2_sender(last)
    step = u2.on_receive(cfg, node, B, U2_MESSAGES[kind](LAST + 1 if last else 1))
    assert _last_ts(step.node) == (LAST + 1 if last else 1)
    assert step.effects  # purged and resent (STABLE) or resent (SEND_FIRST_SEQNO)
    if kind == "STABLE":
        assert step.effects == (u2.Purged(B, 0, 2), u2.Send(B, u2.Data(3, 0, False, 3)))
    else:
        assert step.effects[0] == u2.Send(B, u2.Data(1, 0, True, 1))


def test_unicast2_without_the_fix_ignores_timestamps() -> None:
    """As shipped UNICAST2 carries no timestamps (0 on the wire): every STABLE is acted on."""
    cfg = u2.Config(members=2)
    node = u2.initial_node(A, cfg, BOTH)
    for payload in (1, 2):
        node = u2.on_send(cfg, node, B, payload).node
    resend = u2.Send(B, u2.Data(2, 0, False, 2))
    for expected in ((u2.Purged(B, 0, 1), resend), (resend,)):  # the second, with the same ts 0, too
        step = u2.on_receive(cfg, node, B, u2.Stable(1, 1, 0, 0))
        assert step.effects == expected
        node = step.node
    assert _last_ts(node) == 0

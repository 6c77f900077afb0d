"""Hypothesis properties of NAKACK2's window (spec/nakack2_state.py, digest 1.0.1 and P1/P2):
whatever the order and duplication of arrivals, a window delivers in seqno order, without a gap
and without a duplicate, exactly the run above its offset that has arrived; the own window
delivers its member's messages once each; purge never passes hd; ``get`` and ``missing`` agree
with what arrived.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spec import nakack2 as nk
from spec.effects import Deliver

ARRIVALS = st.lists(st.integers(1, 12), max_size=40)  # seqnos, in arrival order, with repeats


def _receiver(offset: int) -> nk.Node:
    """Member 1 of a two-member group, its window for member 0 created at ``offset``."""
    node = nk.initial_node(1, nk.Config(2), frozenset({0, 1}))
    return nk.with_window(node, 0, nk.new_window(offset))


@given(st.integers(0, 4), ARRIVALS)
def test_a_window_delivers_the_arrived_run_above_its_offset_in_order_once(offset: int, arrivals: list[int]) -> None:
    node = _receiver(offset)
    delivered: list[int] = []
    for seqno in arrivals:
        window = node.windows[0]
        assert window is not None
        window, payloads = nk.add_and_deliver(window, nk.Data(seqno, seqno))
        node = nk.with_window(node, 0, window)
        delivered += payloads
        assert nk.window_order(node) and nk.slots_hold_their_seqnos(node)
    arrived = set(arrivals)
    run_end = offset
    while run_end + 1 in arrived:
        run_end += 1
    assert delivered == list(range(offset + 1, run_end + 1))
    window = node.windows[0]
    assert window is not None and window.delivered == run_end == window.low
    above = {s for s in arrived if s > run_end}
    assert window.highest_received == max(above, default=run_end)
    assert set(window.missing()) == set(range(run_end + 1, window.highest_received + 1)) - above
    assert nk.held_undelivered(node, 0) == len(above)
    assert all(window.get(s) == (nk.Data(s, s) if s in above else None) for s in range(0, 14))


@given(st.lists(st.sampled_from(["send", "loopback"]), max_size=30), st.data())
def test_the_own_window_delivers_each_own_message_once_in_order(steps: list[str], data: st.DataObject) -> None:
    """Sends and loopback copies (any of those sent, any number of times) interleaved: the member
    delivers its own messages in order, each once; a loopback after the last send delivers all."""
    cfg = nk.Config(2)
    node = nk.initial_node(0, cfg, frozenset({0, 1}))
    delivered: list[int] = []
    for step in steps:
        if step == "send":
            node = nk.on_send(cfg, node, node.seqno + 1).node
        elif node.seqno:
            seqno = data.draw(st.integers(1, node.seqno))
            result = nk.on_receive(cfg, node, 0, nk.Data(seqno, seqno))
            node = result.node
            delivered += [e.payload for e in result.effects if isinstance(e, Deliver)]
        assert nk.window_order(node) and nk.seqno_discipline(node)
        assert delivered == list(range(1, len(delivered) + 1))
    if node.seqno:
        result = nk.on_receive(cfg, node, 0, nk.Data(node.seqno, node.seqno))
        delivered += [e.payload for e in result.effects if isinstance(e, Deliver)]
    assert delivered == list(range(1, node.seqno + 1))


@given(st.integers(0, 8), st.integers(0, 8), st.integers(-2, 12))
def test_purge_never_passes_hd_and_keeps_the_rest(sent: int, looped: int, upto: int) -> None:
    """The own window after ``sent`` multicasts of which the first ``looped`` came back: a purge
    moves low to min(upto, hd) if that is higher, and every message above low stays retrievable."""
    cfg = nk.Config(2)
    node = nk.initial_node(0, cfg, frozenset({0, 1}))
    for payload in range(1, sent + 1):
        node = nk.on_send(cfg, node, payload).node
        if payload <= looped:
            node = nk.on_receive(cfg, node, 0, nk.Data(payload, payload)).node
    window = node.windows[0]
    assert window is not None
    purged = nk.purge(window, upto)
    assert purged.low == max(window.low, min(upto, window.delivered))
    assert purged.delivered == window.delivered and purged.highest_received == sent
    for seqno in range(0, sent + 2):
        expected = nk.Data(seqno, seqno) if purged.low < seqno <= sent else None
        assert purged.get(seqno) == expected
    assert nk.window_order(nk.with_window(node, 0, purged))

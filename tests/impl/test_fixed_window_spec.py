"""The spec's window (spec/nakack4_state.py: a FixedBuffer as a value) and the production ring
(impl/fixed_window.py) agree: random sends with blocking, loopback deliveries, receives with
drops beyond capacity and duplicates, and ACK purges give the same low, hd, high, stored messages
and block/drop decisions, for both window edges. What the future NAKACK4 engine stores is then
what the spec says it stores."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from impl.fixed_window import AddStatus, FixedBuffer
from spec import nakack4 as nk


def same(window: nk.Window, buf: FixedBuffer[nk.Data]) -> None:
    assert (window.low, window.delivered, window.high) == (buf.low, buf.hd, buf.high)
    stored = {s: window.get(s) for s in range(window.low + 1, window.high + 1) if window.get(s) is not None}
    assert stored == {s: buf.get(s) for s in buf.seqnos()}
    buf.check_invariants()


@settings(max_examples=300, deadline=None)
@given(capacity=st.integers(1, 5), seed_edge=st.booleans(),
       ops=st.lists(st.tuples(st.sampled_from(["send", "loopback", "purge"]), st.integers(0, 6)), max_size=40))
def test_the_own_window_agrees_with_the_ring(capacity: int, seed_edge: bool, ops: list[tuple[str, int]]) -> None:
    """A sender: sends block when the spec says there is no room; loopback delivers without
    nulling; purges clamp to hd."""
    cfg = nk.Config(2, capacity=capacity, variant=nk.Variant(seed_edge=seed_edge))
    window, buf = nk.new_window(0), FixedBuffer[nk.Data](capacity, 0, seed_edge=seed_edge)
    seqno = 0
    for op, arg in ops:
        if op == "send":
            data = nk.Data(seqno + 1, seqno + 1)
            status = buf.add(data.seqno, data, block=True)
            assert (status is AddStatus.WOULD_BLOCK) == nk.beyond(cfg, window, data.seqno)
            if status is AddStatus.ADDED:
                window, seqno = nk.store(window, data), data.seqno
        elif op == "loopback":
            window, payloads = nk.deliver_own(window)
            assert payloads == [d.payload for d in buf.remove_many(nullify=False)]
        else:
            target = window.low + arg
            purged = nk.purge(window, target)
            assert (purged.low > window.low) == buf.purge(target)
            window = purged
        same(window, buf)


@settings(max_examples=300, deadline=None)
@given(capacity=st.integers(1, 5), seed_edge=st.booleans(), seqnos=st.lists(st.integers(1, 14), max_size=40))
def test_a_receive_window_agrees_with_the_ring(capacity: int, seed_edge: bool, seqnos: list[int]) -> None:
    """A receiver: messages beyond capacity are dropped, duplicates and purged seqnos rejected,
    delivery nulls (low follows hd)."""
    cfg = nk.Config(2, capacity=capacity, variant=nk.Variant(seed_edge=seed_edge))
    window, buf = nk.new_window(0), FixedBuffer[nk.Data](capacity, 0, seed_edge=seed_edge)
    for s in seqnos:
        data = nk.Data(s, s)
        window, payloads = nk.add_and_deliver(cfg, window, data)
        buf.add(s, data)
        assert payloads == [d.payload for d in buf.remove_many(nullify=True)]
        same(window, buf)

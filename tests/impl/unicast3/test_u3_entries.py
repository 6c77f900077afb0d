"""Entries, the life-cycle table, wrap-around counters, and the sans-IO rule for the package."""

from __future__ import annotations

import ast
import pathlib

import pytest

import impl.unicast3
from impl.unicast3 import ConnState, LocalProtocolError, Unicast3Engine, spec_payload
from impl.unicast3.codec import AckMsg, encode
from impl.unicast3.entries import TRANSITIONS, Event, RecvEntry, Role, Timestamper, next_conn_id, ts_newer
from impl.window import Table
from spec import unicast3 as u3


def test_states_match_the_spec() -> None:
    assert (ConnState.OPEN, ConnState.CLOSING) == (u3.OPEN, u3.CLOSING)
    assert [s.name for s in ConnState] == list(u3.STATE_NAMES)


def test_lifecycle_table_is_digest_1_2_e() -> None:
    open_, closing = ConnState.OPEN, ConnState.CLOSING
    for role in Role:
        assert TRANSITIONS[(role, open_)][Event.VIEW_LEFT] is closing
        assert TRANSITIONS[(role, open_)][Event.IDLE] is closing
        assert TRANSITIONS[(role, closing)][Event.ACTIVITY] is open_
        assert TRANSITIONS[(role, closing)][Event.VIEW_MEMBER] is open_
        assert TRANSITIONS[(role, closing)][Event.EXPIRED] is None  # removed
        assert Event.EXPIRED not in TRANSITIONS[(role, open_)]  # only CLOSING entries expire
        assert Event.IDLE not in TRANSITIONS[(role, closing)]
    assert Event.CLOSE_MSG not in TRANSITIONS[(Role.SEND, open_)]  # CLOSE acts on receivers only


def test_state_changes_reset_the_age_and_illegal_events_raise() -> None:
    entry = RecvEntry(3, Table(0), now=0)
    assert not entry.fire(Event.VIEW_MEMBER, now=50) and entry.touched == 0  # no change: age kept
    assert not entry.fire(Event.IDLE, now=100) and entry.touched == 100
    with pytest.raises(LocalProtocolError, match=r"recv entry .conn_id 3. in state CLOSING on IDLE"):
        entry.fire(Event.IDLE, now=200)
    entry.touch(now=300)
    assert entry.state is ConnState.OPEN and entry.touched == 300
    assert entry.fire(Event.CLOSE_MSG, now=400)


def test_timestamps_wrap_inside_31_bits_skipping_zero() -> None:
    ts = Timestamper(last=2**31 - 2)
    assert [ts.next(), ts.next(), ts.next()] == [2**31 - 1, 1, 2]


@pytest.mark.parametrize(
    ("ts", "last", "newer"),
    [(2, 1, True), (1, 1, False), (1, 2, False), (1, 2**31 - 1, True), (2**31 - 1, 1, False), (2**30 + 5, 5, False)],
)
def test_serial_number_comparison(ts: int, last: int, newer: bool) -> None:
    assert ts_newer(ts, last) is newer


def test_sender_accepts_acks_across_the_timestamp_wrap() -> None:
    a: Unicast3Engine[str] = Unicast3Engine(members=["A", "B"], now=0)
    for n in range(1, 4):
        a.send("B", spec_payload(n), now=0)
    a.received("B", encode(AckMsg(1, 0, 2**31 - 1)), now=0)
    a.received("B", encode(AckMsg(2, 0, 1)), now=0)  # after the wrap: newer
    a.received("B", encode(AckMsg(3, 0, 2**31 - 2)), now=0)  # before it: stale
    send = dict(a.snapshot(now=0).send)["B"]
    assert (send.acked, send.last_ts, a.stats.stale_timestamps) == (2, 1, 1)


def test_conn_ids_wrap_after_32767() -> None:
    assert next_conn_id(0) == 1 and next_conn_id(32_766) == 32_767 and next_conn_id(32_767) == 0


def test_the_package_is_sans_io() -> None:
    """No sockets, threads, clocks, randomness or asyncio under impl/unicast3 (guide I1)."""
    forbidden = {"socket", "threading", "time", "random", "asyncio", "os", "secrets", "datetime", "select"}
    for path in pathlib.Path(impl.unicast3.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module.split(".")[0]]
            assert not forbidden & set(names), f"{path.name} imports {names}"
        assert len(path.read_text().splitlines()) < 600, path.name

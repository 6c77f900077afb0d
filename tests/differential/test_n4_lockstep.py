"""The lockstep harness (checks/conform/differential.py) on the NAKACK4 engine: agreement on random
walks of the multicast world (joins, leaves, losses, duplicates, drops below the protocol, blocked
senders), with every setting that changes behaviour and every variant flag, on every shipped
model, and proof that it catches defects planted in the engine.

Invariant tested: on every seeded random walk, after every step the engine of the member that acted
emitted the spec's datagrams byte for byte (in order, to the same destinations), delivered the
same payloads and has the spec's abstract state (held sends and AckTable included); every
member's state is compared after every step; and (as shipped) every safety property of the model
holds. Each planted defect (a monkeypatched engine function) must be reported as a divergence
within a bounded number of walks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.nakack4 import membership, receive, tasks
from impl.nakack4.codec import McastMsg, NakXmitReqMsg, XmitReqMsg
from impl.nakack4.state import Member
from models.modelfile import Model, load
from spec.nakack4 import Variant

FUZZ = MODELS_DIR / "fuzz" / "nakack4-lockstep.toml"
WALKS, STEPS = 40, 300


def walk_all(model: Model, walks: int = WALKS, *, check_properties: bool = True) -> int:
    steps = 0
    for seed in range(walks):
        result = random_walk(model, seed, STEPS, check_properties=check_properties)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    return steps


def with_config(tmp_path: Path, lines: str, name: str = "variant.toml") -> Model:
    text = FUZZ.read_text().replace("[config]\ncapacity = 2\nsend_atomically = true\nsender_threads = 1\n",
                                    f"[config]\n{lines}\n")
    assert text != FUZZ.read_text()
    path = tmp_path / name
    path.write_text(text)
    return load(path)


def test_engine_agrees_with_spec_on_random_walks() -> None:
    assert walk_all(load(FUZZ)) > WALKS * 100  # the walks are long: timers are always enabled


OOB = MODELS_DIR / "fuzz" / "nakack4-lockstep-oob.toml"


def test_engine_agrees_with_spec_on_the_oob_world() -> None:
    """Some multicasts OOB (decision 18): delivered on receipt and counted towards the ACK then."""
    assert walk_all(load(OOB), 20) > 20 * 100


def oob_threads_model(tmp_path: Path) -> Model:
    """The OOB world with two application threads each (send_atomically off)."""
    text = OOB.read_text().replace("[config]\ncapacity = 2\nsend_atomically = true\nsender_threads = 1\n",
                                   "[config]\ncapacity = 2\nsender_threads = 2\n")
    assert text != OOB.read_text()
    path = tmp_path / "threads.toml"
    path.write_text(text)
    return load(path)


def test_engine_agrees_on_oob_with_two_threads(tmp_path: Path) -> None:
    """An own OOB message added above a gap of the own window is delivered by its loopback while hd
    stays below (OOB_DELIVERED above hd); a thread's held send keeps its flag."""
    walk_all(oob_threads_model(tmp_path), 15, check_properties=False)


@pytest.mark.parametrize("settings", [
    "capacity = 2\nsender_threads = 2",  # send_atomically off (JGroups' default): threads interleave
    "capacity = 2\nsend_atomically = true\nsender_threads = 2",  # blocked threads overtaken
    "capacity = 1\nsend_atomically = true\nuse_mcast_xmit = false",  # XMIT_RSP instead of a re-multicast
    "capacity = 8\nack_threshold = 3\nsend_atomically = true",  # pending ACKs flushed by the task
    "capacity = 3\nsend_atomically = true\nbecome_server_queue_size = 1",  # the queue fills and drops
    "capacity = 2\nsend_atomically = true\ndont_loopback = true",  # JGRP-2829's self-ack
    "capacity = 2\nsend_atomically = true\ndont_block = true",
    "capacity = 4\nsend_atomically = true\ndeliver_exceptions = true",  # JGRP-3034's fault
])
def test_engine_agrees_with_every_setting(settings: str, tmp_path: Path) -> None:
    walk_all(with_config(tmp_path, settings), 15, check_properties=False)


# The setting that makes each flag matter (the flag alone where none is needed).
FLAG_SETTINGS = {
    "lock_after_seqno": "send_atomically = true\nsender_threads = 2",
    "drop_dont_block": "send_atomically = true\ndont_block = true",
    "no_dont_loopback_self_ack": "send_atomically = true\ndont_loopback = true",
    "deliverer_stuck": "send_atomically = true\ndeliver_exceptions = true",
    "fix_deliver_stranded": "send_atomically = true\ndeliver_exceptions = true",
}


@pytest.mark.parametrize("flag", [f.name for f in fields(Variant)])
def test_engine_agrees_with_every_variant(flag: str, tmp_path: Path) -> None:
    extra = FLAG_SETTINGS.get(flag, "send_atomically = true")
    model = with_config(tmp_path, f"capacity = 2\nbecome_server_queue_size = 2\n{extra}")
    path = tmp_path / "flag.toml"
    path.write_text(model.path.read_text().replace('protocol = "nakack4"\n',
                                                   f'protocol = "nakack4"\nvariant = ["{flag}"]\n'))
    flagged = load(path)
    assert getattr(flagged.world.cfg.variant, flag) is True
    walk_all(flagged, 15, check_properties=False)  # a defect flag may break a property: the spec's verdict


@pytest.mark.parametrize("model", sorted(p.name for p in (MODELS_DIR / "nakack4").glob("*.toml")))
def test_engine_agrees_on_every_shipped_model(model: str) -> None:
    walk_all(load(MODELS_DIR / "nakack4" / model), 8, check_properties=False)


# -- planted defects --------------------------------------------------------------------------------
ORIGINAL_RETRANSMIT, ORIGINAL_ON_ACK, ORIGINAL_MERGE = tasks.retransmit, receive.on_ack, membership.merge_digest


def ack_one_delivery_late(m: Member[Any], sender: Any, count: int) -> bool:
    entry = m.entries[sender]
    total = entry.counted + count
    if total > m.config.threshold:  # the threshold's edge off by one (> instead of >=)
        entry.counted = 0
        return True
    entry.counted, entry.pending = total, True
    return False


def resend_after_an_application_send(m: Member[Any]) -> None:
    m.skip_next_resend = False
    ORIGINAL_RETRANSMIT(m)


def ack_from_anybody(m: Member[Any], src: Any, seqno: int) -> None:
    m.ack_table.setdefault(src, -1)  # JGRP-2904 brought back: a departed member's ACK re-creates its entry
    ORIGINAL_ON_ACK(m, src, seqno)


def view_without_purge(m: Member[Any], new_min: int) -> None:
    m.ack_min = new_min  # JGRP-2853/2854 brought back: the view adjusts the table, nothing is purged


def request_every_gap(m: Member[Any], peer: Any, missing: list[int]) -> None:
    if missing:
        m.xmit_last[peer] = missing[-1]
        m.emit(peer, NakXmitReqMsg(peer, XmitReqMsg(tuple(missing))))
    else:
        m.xmit_last.pop(peer, None)


def merge_digest_at_high(m: Member[Any], digest: dict[Any, tuple[int, int]]) -> None:
    ORIGINAL_MERGE(m, {p: (high, high) for p, (_hd, high) in digest.items()})


ORIGINAL_ON_DATA, ORIGINAL_DELIVER_ONE = receive.on_data, receive._deliver_one


def oob_added_in_order(m: Member[Any], sender: Any, msg: Any) -> None:
    ORIGINAL_ON_DATA(m, sender, McastMsg(msg.seqno, msg.payload))  # the OOB flag ignored on receipt


def oob_delivery_not_counted(m: Member[Any], sender: Any, entry: Any, msg: Any) -> None:
    m.deliver_all(sender, [msg])  # deliver() without its count towards the ACK


def own_oob_loopback_delivers_again(m: Member[Any], sender: Any, msg: Any) -> None:
    if sender == m.me and msg.oob and m.own is not None and msg.seqno > m.own.window.hd:
        m.oob_delivered.discard(msg.seqno)  # OOB_DELIVERED forgotten
    ORIGINAL_ON_DATA(m, sender, msg)


DEFECTS: dict[str, tuple[object, str, Callable[..., object], str]] = {
    "an ACK one delivery past the threshold": (receive, "count_acks", ack_one_delivery_late, "threshold"),
    "HIGHEST_SEQNO right after an application send": (tasks, "retransmit", resend_after_an_application_send, "fuzz"),
    "ACKs from departed members count (JGRP-2904)": (receive, "on_ack", ack_from_anybody, "fuzz"),
    "a view change does not purge (JGRP-2853)": (membership, "purge_to_min", view_without_purge, "fuzz"),
    "XMIT_REQ for every gap, not the previous batch": (tasks, "_request_previous_batch", request_every_gap, "fuzz"),
    "a merge digest read at high, not hd": (membership, "merge_digest", merge_digest_at_high, "merge"),
    "an OOB message added as a regular one": (receive, "on_data", oob_added_in_order, "oob"),
    "an OOB delivery not counted towards the ACK": (receive, "_deliver_one", oob_delivery_not_counted, "oob"),
    "an own OOB loopback delivered again above hd": (receive, "on_data", own_oob_loopback_delivers_again,
                                                     "oob-threads"),
}


@pytest.fixture(params=sorted(DEFECTS))
def planted(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Model]:
    owner, name, defect, where = DEFECTS[request.param]
    monkeypatch.setattr(owner, name, defect)
    if where == "threshold":
        yield with_config(tmp_path, "capacity = 8\nack_threshold = 2\nsend_atomically = true")
    elif where == "merge":
        yield merge_model(tmp_path)
    elif where == "oob":
        yield load(OOB)
    elif where == "oob-threads":
        yield oob_threads_model(tmp_path)
    else:
        yield load(FUZZ)


def merge_model(tmp_path: Path) -> Model:
    """Two members that each multicast, then install [A, B] again as a merge view."""
    path = tmp_path / "merge.toml"
    path.write_text('protocol = "nakack4"\nmembers = ["A", "B"]\nmerges = ["A", "B"]\n\n[sends]\nA = 2\nB = 2\n\n'
                    '[faults]\nloss = 2\nmax_in_flight = 3\n\n[config]\ncapacity = 4\nsend_atomically = true\n\n'
                    '[[views]]\nmember = "A"\nview = ["A", "B"]\n\n[[views]]\nmember = "B"\nview = ["A", "B"]\n\n'
                    '[check]\nproperties = ["no_duplicate"]\nexpect = "pass"\n')
    return load(path)


def test_harness_catches_planted_defect(planted: Model) -> None:
    for seed in range(60):
        result = random_walk(planted, seed, STEPS, check_properties=False)
        if result.divergence is not None:
            assert "differ" in str(result.divergence)
            return
    pytest.fail("no walk diverged")

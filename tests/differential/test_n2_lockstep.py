"""The lockstep harness (checks/conform/differential.py) on the NAKACK2 engine: agreement on random
walks of the multicast world (joins, leaves, losses, duplicates, drops below the protocol), with
every setting that changes behaviour and every variant flag, and proof that it catches defects
planted in the engine.

Invariant tested: on every seeded random walk, after every step the engine of the member that acted
emitted the spec's datagrams byte for byte (in order, to the same destinations), delivered the
same payloads and has the spec's abstract state; every member's state is compared after every
step; and (as shipped) every safety property of the model holds. Each planted defect (a
monkeypatched engine function) must be reported as a divergence within a bounded number of walks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.nakack2 import membership, receive, stable, tasks
from impl.nakack2.codec import McastMsg, XmitReqMsg
from impl.nakack2.state import Member
from models.modelfile import Model, load
from spec.nakack2 import Variant

FUZZ = MODELS_DIR / "fuzz" / "nakack2-lockstep.toml"
WALKS, STEPS = 40, 300


def walk_all(model: Model, walks: int = WALKS, *, check_properties: bool = True) -> int:
    steps = 0
    for seed in range(walks):
        result = random_walk(model, seed, STEPS, check_properties=check_properties)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    return steps


def with_config(tmp_path: Path, lines: str, name: str = "variant.toml") -> Model:
    text = FUZZ.read_text().replace("[config]\nxmit_interval = 1\n", f"[config]\n{lines}\n")
    assert text != FUZZ.read_text()
    path = tmp_path / name
    path.write_text(text)
    return load(path)


def test_engine_agrees_with_spec_on_random_walks() -> None:
    assert walk_all(load(FUZZ)) > WALKS * 100  # the walks are long: timers are always enabled


@pytest.mark.parametrize("name", ["nakack2-lockstep-dont-loopback", "nakack2-lockstep-dont-loopback-mixed",
                                  "nakack2-lockstep-oob"])
def test_engine_agrees_with_spec_on_the_flag_worlds(name: str) -> None:
    """Every multicast, or some, DONT_LOOPBACK (decision 15), some OOB (decision 17), with every safety
    property of the model."""
    assert walk_all(load(MODELS_DIR / "fuzz" / f"{name}.toml"), 20) > 20 * 100


@pytest.mark.parametrize("settings", [
    "xmit_interval = 1\nuse_mcast_xmit = false",  # XMIT_RSP instead of a re-multicast
    "xmit_interval = 0",  # seed 004: no retransmission, the queue unbounded
    "xmit_interval = 1\nresend_last_seqno_max_times = 3",
    "xmit_interval = 1\nresend_last_seqno = false",
    "xmit_interval = 1\nbecome_server_queue_size = 1",  # the queue fills and drops
    "xmit_interval = 1\ndont_loopback = true",  # decision 15: no own copy, the own hd moves at the send
    "xmit_interval = 1\ndont_loopback = true\nuse_mcast_xmit = false",
])
def test_engine_agrees_with_every_setting(settings: str, tmp_path: Path) -> None:
    walk_all(with_config(tmp_path, settings), 15, check_properties=False)


@pytest.mark.parametrize("flag", [f.name for f in fields(Variant)])
def test_engine_agrees_with_every_variant(flag: str, tmp_path: Path) -> None:
    model = with_config(tmp_path, "xmit_interval = 1\nbecome_server_queue_size = 1")
    path = tmp_path / "flag.toml"
    path.write_text(model.path.read_text().replace('protocol = "nakack2"\n',
                                                   f'protocol = "nakack2"\nvariant = ["{flag}"]\n'))
    flagged = load(path)
    assert getattr(flagged.world.cfg.variant, flag) is True
    walk_all(flagged, 15, check_properties=False)  # a defect flag may break a property: the spec's verdict


@pytest.mark.parametrize("model", sorted(p.name for p in (MODELS_DIR / "nakack2").glob("*.toml")))
def test_engine_agrees_on_every_shipped_model(model: str) -> None:
    walk_all(load(MODELS_DIR / "nakack2" / model), 8, check_properties=False)


# -- planted defects --------------------------------------------------------------------------------
ORIGINAL_RESEND, ORIGINAL_STABLE, ORIGINAL_QUEUE = tasks.resend_last_seqno, stable.stable, receive.queue


def resend_after_an_application_send(m: Member[Any]) -> None:
    m.skip_next_resend = False
    ORIGINAL_RESEND(m)


def purge_one_past_the_digest(m: Member[Any], digest: dict[Any, tuple[int, int]]) -> None:
    ORIGINAL_STABLE(m, {p: (hd + 1, hr + 1) if p == m.me else (hd, hr) for p, (hd, hr) in digest.items()})


def request_every_gap(m: Member[Any], make_request: Callable[[tuple[int, ...]], Any], *,
                      stale_asks_all: bool = False) -> None:
    for peer in sorted(m.recv):
        missing = m.recv[peer].window.missing(m.config.max_xmit_req_size)
        if missing:
            m.emit(peer, XmitReqMsg(tuple(missing)))


def queue_evicting_the_oldest(m: Member[Any], src: Any, msg: Any) -> None:
    bound = m.config.queue_bound()
    if bound is not None and len(m.queue) >= bound:
        _, _, size = m.queue.popleft()
        m.queue_bytes -= size
    ORIGINAL_QUEUE(m, src, msg)


def forget_nothing(m: Member[Any], member: Any) -> None:
    pass  # STABLE's record of a departed member's hr survives the view change


ORIGINAL_MERGE = membership.merge_digest


def merge_digest_at_hr(m: Member[Any], digest: dict[Any, tuple[int, int]]) -> None:
    ORIGINAL_MERGE(m, {p: (hr, hr) for p, (_hd, hr) in digest.items()})  # windows start past what is delivered


ORIGINAL_XMIT_REQ, ORIGINAL_ON_DATA = receive.on_xmit_req, receive.on_data


def re_multicast_to_self(m: Member[Any], src: Any, msg: Any) -> None:
    if m.own is None:
        ORIGINAL_XMIT_REQ(m, src, msg)
        return
    flagged, m.own.dont_loopback = m.own.dont_loopback, set()  # the stored originals' transient flag forgotten
    try:
        ORIGINAL_XMIT_REQ(m, src, msg)
    finally:
        m.own.dont_loopback = flagged


def deliver_own_dont_loopback_too(m: Member[Any], sender: Any, msg: Any) -> None:
    if sender != m.me or m.own is None:
        ORIGINAL_ON_DATA(m, sender, msg)
        return
    flagged, m.own.dont_loopback = m.own.dont_loopback, set()  # removeAndDeliver without its filter
    try:
        ORIGINAL_ON_DATA(m, sender, msg)
    finally:
        m.own.dont_loopback = flagged


ORIGINAL_OOB_DATA, ORIGINAL_ENCODE_MCAST = receive._on_oob_data, receive.encode_mcast


def oob_added_in_order(m: Member[Any], sender: Any, msg: Any) -> None:
    ORIGINAL_ON_DATA(m, sender, McastMsg(msg.seqno, msg.payload))  # the OOB flag ignored on receipt


def retransmission_without_the_oob_flag(seqno: int, payload: bytes, limits: Any, oob: bool = False) -> bytes:
    return ORIGINAL_ENCODE_MCAST(seqno, payload, limits)  # sendXmitRsp's re-multicast loses the flag


def own_oob_loopback_delivers_again(m: Member[Any], sender: Any, msg: Any) -> None:
    if sender == m.me and msg.oob and m.own is not None and msg.seqno <= m.own.hd:
        stored = m.own.get(msg.seqno)
        if stored is not None and msg.seqno not in m.own.dont_loopback:
            m.deliver_all(sender, [stored])  # OOB_DELIVERED forgotten
    ORIGINAL_ON_DATA(m, sender, msg)


DEFECTS: dict[str, tuple[object, str, Callable[..., object], str]] = {
    "HIGHEST_SEQNO right after an application send": (tasks, "resend_last_seqno", resend_after_an_application_send,
                                                       "fuzz"),
    "STABLE purges the own window one past the digest": (stable, "stable", purge_one_past_the_digest, "fuzz"),
    "XMIT_REQ for every gap, not the previous batch (JGRP-1539)": (tasks, "common_request_missing",
                                                                   request_every_gap, "fuzz"),
    "a full become_server_queue evicts the oldest": (receive, "queue", queue_evicting_the_oldest, "queue"),
    "a departed member's STABLE record kept": (membership, "forget", forget_nothing, "fuzz"),
    "a merge digest read at hr, not hd": (membership, "merge_digest", merge_digest_at_hr, "merge"),
    "a DONT_LOOPBACK message re-multicast to its sender too": (receive, "on_xmit_req", re_multicast_to_self,
                                                               "dont_loopback"),
    "removeAndDeliver without its DONT_LOOPBACK filter": (receive, "on_data", deliver_own_dont_loopback_too,
                                                          "mixed"),
    "an OOB message added as a regular one": (receive, "_on_oob_data", oob_added_in_order, "oob"),
    "a re-multicast without the OOB flag": (receive, "encode_mcast", retransmission_without_the_oob_flag, "oob"),
    "an own OOB loopback delivered again": (receive, "on_data", own_oob_loopback_delivers_again, "oob"),
}


@pytest.fixture(params=sorted(DEFECTS))
def planted(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Model]:
    owner, name, defect, where = DEFECTS[request.param]
    monkeypatch.setattr(owner, name, defect)
    if where == "merge":
        yield load(MODELS_DIR / "nakack2" / "merge-digest-lags-loopback.toml")
    elif where == "oob":
        yield load(MODELS_DIR / "fuzz" / "nakack2-lockstep-oob.toml")
    elif where == "mixed":
        yield load(MODELS_DIR / "nakack2" / "dont-loopback-mixed.toml")
    elif where == "dont_loopback":
        yield with_config(tmp_path, "xmit_interval = 1\ndont_loopback = true")
    elif where == "queue":
        yield with_config(tmp_path, "xmit_interval = 1\nbecome_server_queue_size = 1")
    else:
        yield load(FUZZ)


def test_harness_catches_planted_defect(planted: Model) -> None:
    for seed in range(60):
        result = random_walk(planted, seed, STEPS, check_properties=False)
        if result.divergence is not None:
            assert "differ" in str(result.divergence)
            return
    pytest.fail("no walk diverged")

"""The lockstep harness (checks/conform/differential.py) on the UNICAST2 engine: agreement on random walks,
as shipped and with every variant flag, and proof that it catches defects planted in the engine.

Invariant tested: on every seeded random walk of the fuzz model, after every step the engines
emitted the spec's datagrams byte for byte, delivered the same payloads and have the spec's
abstract state; and (as shipped and with the fix flags) every safety property the model checks
holds. Each planted defect (a monkeypatched engine function) must be reported as a divergence
within a bounded number of walks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.unicast2 import receive, tasks
from impl.unicast2.codec import AckMsg, DataMsg, SendFirstSeqnoMsg, StableMsg, decode
from impl.unicast2.state import Member
from models.modelfile import Model, load
from spec.unicast2 import Variant

FUZZ = MODELS_DIR / "fuzz" / "unicast2-lockstep.toml"
WALKS, STEPS = 60, 300
VARIANT_WALKS = 25
DEFECT_FLAGS = {"no_conn_ids", "conn_id_first_only"}  # they break in_order: the spec's own verdict


@pytest.fixture(scope="module")
def model() -> Model:
    return load(FUZZ)


def walk_all(model: Model, seeds: Iterable[int], *, check_properties: bool = True) -> int:
    steps = 0
    for seed in seeds:
        result = random_walk(model, seed, STEPS, check_properties=check_properties)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    return steps


def test_engine_agrees_with_spec_on_random_walks(model: Model) -> None:
    assert model.protocol == "unicast2"
    assert walk_all(model, range(WALKS)) > 2_000  # the walks really walked


@pytest.mark.parametrize("flag", sorted(Variant.__dataclass_fields__))
def test_engine_agrees_with_spec_with_every_variant(flag: str, tmp_path: Path) -> None:
    path = tmp_path / f"unicast2-lockstep-{flag}.toml"
    text = FUZZ.read_text().replace('protocol = "unicast2"\n', f'protocol = "unicast2"\nvariant = ["{flag}"]\n')
    path.write_text(text)
    variant_model = load(path)
    assert variant_model.variant == (flag,)
    assert walk_all(variant_model, range(VARIANT_WALKS), check_properties=flag not in DEFECT_FLAGS) > 1_000


def first_divergence(model: Model, walks: int = WALKS) -> tuple[int, str]:
    for seed in range(walks):
        result = random_walk(model, seed, STEPS)
        if result.divergence is not None:
            assert result.trace is not None and result.trace.seed == seed
            return seed, str(result.divergence)
    raise AssertionError(f"no divergence in {walks} walks: the harness missed the planted defect")


# -- planted defects ------------------------------------------------------------------------------
ORIGINAL_ON_DATA = receive.on_data


def purge_one_past_hd(m: Member[int], src: int, msg: StableMsg) -> None:
    entry = m.send.get(src)
    if entry is None or msg.conn_id != entry.conn_id or not m.accept_timestamp(entry, msg.timestamp):
        return
    upto = min(msg.hd + 1, entry.highest_sent)
    if upto > entry.acked:
        entry.window.purge(upto, force=True)
    receive._resend_above(m, src, entry, msg.hr)


def answer_without_first_flag(m: Member[int], src: int, msg: SendFirstSeqnoMsg) -> None:
    entry = m.send.get(src)
    if entry is None or not m.accept_timestamp(entry, msg.timestamp) or entry.acked == entry.highest_sent:
        return
    for seqno in range(entry.acked + 1, min(msg.seqno, entry.highest_sent) + 1):
        m.emit_data(src, entry, seqno, first=False)


def no_ack_for_a_duplicate_first(m: Member[int], src: int, msg: DataMsg, *, now: int) -> None:
    entry = m.recv.get(src)
    duplicate = msg.first and entry is not None and entry.conn_id == msg.conn_id and (
        msg.seqno <= entry.delivered or entry.window.get(msg.seqno) is not None)
    ORIGINAL_ON_DATA(m, src, msg, now=now)
    if duplicate and m.outbox and isinstance(decode(m.outbox[-1][1]), AckMsg):  # some variants send none
        m.outbox.pop()


ORIGINAL_INSTALL_VIEW = tasks.install_view


def keep_xmit_last_on_view(m: Member[int], members: Iterable[int]) -> None:
    saved = dict(m.xmit_last)
    ORIGINAL_INSTALL_VIEW(m, members)
    m.xmit_last = saved


def stable_of_any_connection(m: Member[int], src: int, msg: StableMsg) -> None:
    entry = m.send.get(src)
    if entry is not None:
        ORIGINAL_ON_STABLE(m, src, StableMsg(msg.hd, msg.hr, entry.conn_id, msg.timestamp))


ORIGINAL_ON_STABLE = receive.on_stable


def first_resend_unmarked(m: Member[int]) -> None:
    receive_first = {peer: e.ack_received for peer, e in m.send.items()}
    for e in m.send.values():
        e.ack_received = True  # the original skips the first-message resend ...
    ORIGINAL_RETRANSMIT(m)
    for peer, e in m.send.items():
        e.ack_received = receive_first[peer]
        if not e.ack_received and e.highest_sent > e.acked:  # ... which is done here, unmarked
            m.emit_data(peer, e, e.acked + 1, first=e.acked == 0)


ORIGINAL_RETRANSMIT = tasks.retransmit


def stable_without_cap(m: Member[int]) -> None:
    for peer in sorted(m.recv):
        entry = m.recv[peer]
        entry.last_highest, entry.stable_count = entry.window.hr, 1
        m.send_stable(peer, entry)


DEFECTS: dict[str, tuple[object, str, Callable[..., object]]] = {
    "STABLE purges one past hd": (receive, "on_stable", purge_one_past_hd),
    "SEND_FIRST_SEQNO answer without the first flag": (receive, "on_send_first_seqno", answer_without_first_flag),
    "no ACK for a duplicate first DATA": (receive, "on_data", no_ack_for_a_duplicate_first),
    "xmit_last not reset on a view change": (tasks, "install_view", keep_xmit_last_on_view),
    "STABLE of another connection accepted": (receive, "on_stable", stable_of_any_connection),
    "first-message resend not marked first after a purge": (tasks, "retransmit", first_resend_unmarked),
    "stable task ignores max_stable_msgs": (tasks, "stable", stable_without_cap),
}


@pytest.fixture(params=sorted(DEFECTS))
def planted(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    owner, name, defect = DEFECTS[request.param]
    monkeypatch.setattr(owner, name, defect)
    yield request.param


def test_harness_catches_planted_defect(model: Model, planted: str) -> None:
    _seed, report = first_divergence(model)
    assert "differ" in report, report


def test_divergence_trace_names_its_seed_and_replays_on_the_spec(model: Model, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from checks.explore.system import replay

    monkeypatch.setattr(receive, "on_stable", purge_one_past_hd)
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        if result.trace is not None:
            break
    assert result.trace is not None and result.trace.kind == "divergence"
    assert result.divergence is not None and "STABLE" in result.divergence.action
    saved = result.trace.save(tmp_path / "divergence.json")
    assert saved.exists()
    assert len(replay(model.world, result.trace.actions)) == len(result.trace.actions)

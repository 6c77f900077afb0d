"""Rule 6 of models/world.py: an entry removed by conn_close_timeout (or the receiver hook) goes
only while none of its connection's packets is in flight, on the receive side and the send side;
``[faults] stale_packets = true`` lifts it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.modelfile import load
from models.world import AppSend, DeliverPacket, FireTimer, InstallView, World
from spec import unicast3 as u3

MODEL = """description = "A sends one message, then leaves B out of its view"
protocol = "unicast3"
members = ["A", "B"]
[sends]
"A->B" = 1
[faults]
stale_packets = {stale}
[[views]]
member = "A"
view = ["A"]
[check]
expect = "pass"
"""


def world_of(tmp_path: Path, *, stale: bool) -> World:
    path = tmp_path / "rule6.toml"
    path.write_text(MODEL.format(stale=str(stale).lower()))
    return load(path).world


def take(world: World, state: Any, wanted: type) -> Any:
    for action, after in world.successors(state):
        if isinstance(action, wanted):
            return after
    raise AssertionError(f"no {wanted.__name__} enabled")


def close_send_enabled(world: World, state: Any) -> bool:
    return any(isinstance(a, FireTimer) and a.timer.kind == u3.CLOSE_SEND for a, _ in world.successors(state))


def test_a_closing_send_entry_stays_while_its_data_is_in_flight(tmp_path: Path) -> None:
    world = world_of(tmp_path, stale=False)
    state = take(world, take(world, world.init_states()[0], AppSend), InstallView)
    assert world.view(state).nodes[0].send[1].state == u3.CLOSING
    assert world.view(state).network, "the DATA is in flight"
    assert not close_send_enabled(world, state)
    delivered = take(world, state, DeliverPacket)  # B receives it; nothing of the connection is left in flight
    assert not world.view(delivered).network
    assert close_send_enabled(world, delivered)


def test_stale_packets_lifts_it(tmp_path: Path) -> None:
    world = world_of(tmp_path, stale=True)
    state = take(world, take(world, world.init_states()[0], AppSend), InstallView)
    assert world.view(state).network
    assert close_send_enabled(world, state)

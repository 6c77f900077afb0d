"""Window geometry for the lockstep harness: the engines run with tiny ``impl.window.Table`` rows.

The lockstep models send a few messages per pair, so under the production geometry (1024 or 2048
slots per row, scans of 8192 seqnos) every window lives in the first slots of its first row: row
boundaries, row growth from one initial row, freeing and discarding rows, and scans cut at a row's
end are never reached (issue 19, item 5). ``Geometry`` names a geometry the spec cannot tell apart
from the production one, and ``engines_with`` is an engine factory for the harness
(``checks/conform/differential.py``'s ``engines_for``) that runs every engine under it.

What the spec cannot tell apart: any ``msgs_per_row`` >= 1 and ``initial_rows`` >= 1 (storage only);
a retransmit scan limit (``max_xmit_req_size``, ``max_xmit_scan``) no smaller than the most messages
any pair of the model may send, since a gap then always lies within the scanned range (the spec
scans the whole window). ``scan = None`` takes that bound from the model; a smaller one diverges
(by design: the spec has no scan limit), so ``Geometry`` refuses it in ``engines_with``.

Seqnos near 2**31 or 2**63 are the other half of item 5: ``checks/conform/offsets.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from checks.conform.differential import EngineFactory
from checks.conform.engines import WorldEngines, binding
from models.world import World


@dataclass(frozen=True)
class Geometry:
    """Table geometry for every window of every engine (``scan``: the retransmit scan limit, None =
    the model's most messages per pair)."""

    msgs_per_row: int = 1
    initial_rows: int = 1
    scan: int | None = None

    def __post_init__(self) -> None:
        for name in ("msgs_per_row", "initial_rows"):
            if getattr(self, name) < 1:
                raise ValueError(f"geometry {name}: expected >= 1, got {getattr(self, name)}")
        if self.scan is not None and self.scan < 1:
            raise ValueError(f"geometry scan: expected >= 1 or None, got {self.scan}")

    def __str__(self) -> str:
        scan = "model" if self.scan is None else self.scan
        return f"rows of {self.msgs_per_row}, {self.initial_rows} initial, scan {scan}"

    def scan_for(self, world: World) -> int:
        """The scan limit for ``world``: ``scan``, or the most messages any pair may send (at least 1);
        a ``scan`` below that is refused (the spec scans whole windows, so the run would diverge)."""
        needed = max(max(world.bounds.sends, default=0), 1)
        if self.scan is None:
            return needed
        if self.scan < needed:
            raise ValueError(f"geometry scan: expected >= {needed} (the model's most messages per pair; "
                             f"the spec scans whole windows), got {self.scan}")
        return self.scan

    def apply(self, config: Any, scan: int) -> Any:
        """``config`` (an engine ``Config``) with this geometry and the scan limit ``scan``."""
        return replace(config, xmit_table_msgs_per_row=self.msgs_per_row, xmit_table_num_rows=self.initial_rows,
                       max_xmit_req_size=scan, max_xmit_scan=scan)


TINY = (Geometry(1), Geometry(2), Geometry(3), Geometry(4), Geometry(2, 3))
"""The geometries the harness tests walk under (3 slots become 4: ``Table`` rounds up to a power of two)."""


def engines_with(geometry: Geometry) -> EngineFactory:
    """An engine factory for the harness: the protocol's engines, each configured as the harness
    configures it (``engine_config``) but with ``geometry``'s windows."""
    made: dict[tuple[type[WorldEngines], int], type[WorldEngines]] = {}  # (engines, scan) -> subclass

    def factory(world: World) -> WorldEngines:
        base, scan = binding(world.adapter.name).world_engines, geometry.scan_for(world)
        cls = made.get((base, scan))
        if cls is None:
            def engine_config(spec_cfg: Any, _base: type[WorldEngines] = base) -> Any:
                return geometry.apply(_base.engine_config(spec_cfg), scan)
            cls = made[base, scan] = type(f"{base.__name__}With{geometry.msgs_per_row}SlotRows", (base,),
                                          {"engine_config": staticmethod(engine_config)})
        return cls.for_world(world)

    return factory


one_slot_rows = engines_with(Geometry(1))
"""Rows of one slot (every seqno a row boundary); a fuzz job takes it as
``FuzzOptions(engines="checks.conform.geometry:one_slot_rows")``."""
two_slot_rows = engines_with(Geometry(2))
"""Rows of two slots, as ``one_slot_rows``."""

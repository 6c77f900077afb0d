"""Window geometry for the lockstep harness: the engines run with tiny ``impl.window.Table`` rows.

The lockstep models send a few messages per pair, so under the production geometry (1024 or 2048
slots per row, scans of 8192 seqnos) every window lives in the first slots of its first row: row
boundaries, row growth from one initial row, freeing and discarding rows, and scans cut at a row's
end are never reached (issue 19, item 5). ``Geometry`` names a geometry the spec cannot tell apart
from the production one, and ``engines_with`` is an engine factory for the harness
(``checks/conform/differential.py``'s ``engines_for``) that runs every engine under it.

What the spec cannot tell apart: any ``msgs_per_row`` >= 1 and ``initial_rows`` >= 1 (storage only);
a per-window scan limit (``max_xmit_req_size``) no smaller than the most messages one window of the
model may hold, and a per-run limit over all of a member's windows (``max_xmit_scan``) no smaller
than the most all of them may hold together, since every gap then lies within the scanned range
(the spec scans every whole window on every run). ``scan = None`` takes the first bound from the
model; a smaller one diverges (by design: the spec has no scan limit), so ``engines_with`` refuses
it. Both worlds: the point-to-point one (UNICAST2, UNICAST3) and the multicast one (NAKACK2).

Seqnos near 2**31 or 2**63 are the other half of item 5: ``checks/conform/offsets.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from checks.conform.differential import EngineFactory
from checks.conform.engines import WorldEngines, binding

GEOMETRY_FIELDS = ("xmit_table_msgs_per_row", "xmit_table_num_rows", "max_xmit_req_size", "max_xmit_scan")


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

    def scan_for(self, world: Any) -> tuple[int, int]:
        """(max_xmit_req_size, max_xmit_scan) for ``world``: the scan of one window (``scan``, or the
        most messages one window may hold) and of one retransmit run over all of a member's windows
        (the most messages all of one member's windows may hold together); a ``scan`` below the
        first is refused (the spec scans whole windows, so the run would diverge)."""
        per_window, per_member = window_bounds(world)
        if self.scan is not None and self.scan < per_window:
            raise ValueError(f"geometry scan: expected >= {per_window} (the model's most messages per window; "
                             f"the spec scans whole windows), got {self.scan}")
        scan = per_window if self.scan is None else self.scan
        return scan, max(scan, per_member)

    def apply(self, config: Any, scans: tuple[int, int]) -> Any:
        """``config`` (an engine ``Config``) with this geometry and the scan limits ``scans``; a
        ValueError (one line) for an engine without ``impl.window.Table`` rows (NAKACK4's ring)."""
        if not all(hasattr(config, name) for name in GEOMETRY_FIELDS):
            raise ValueError(f"geometry: the engine's {type(config).__module__}.Config has no window rows "
                             f"({', '.join(GEOMETRY_FIELDS)})")
        return replace(config, xmit_table_msgs_per_row=self.msgs_per_row, xmit_table_num_rows=self.initial_rows,
                       max_xmit_req_size=scans[0], max_xmit_scan=scans[1])


def window_bounds(world: Any) -> tuple[int, int]:
    """(most messages one window may hold, most all windows of one member may hold), from the
    model's sends: per pair ``src * n + dst`` in the point-to-point world, per sender in the
    multicast world (every member keeps a window for every sender)."""
    sends, n = tuple(world.bounds.sends), world.n
    if len(sends) == n * n:
        per_member = max((sum(sends[src * n + dst] for src in range(n)) for dst in range(n)), default=0)
    else:
        per_member = sum(sends)
    return max(max(sends, default=0), 1), max(per_member, 1)


TINY = (Geometry(1), Geometry(2), Geometry(3), Geometry(4), Geometry(2, 3))
"""The geometries the harness tests walk under (3 slots become 4: ``Table`` rounds up to a power of two)."""


def engines_with(geometry: Geometry) -> EngineFactory:
    """An engine factory for the harness: the protocol's engines, each configured as the harness
    configures it (``engine_config``) but with ``geometry``'s windows."""
    made: dict[tuple[type[WorldEngines], tuple[int, int]], type[WorldEngines]] = {}  # (engines, scans) -> subclass

    def factory(world: Any) -> WorldEngines:
        base, scans = binding(world.adapter.name).world_engines, geometry.scan_for(world)
        cls = made.get((base, scans))
        if cls is None:
            def engine_config(spec_cfg: Any, _base: type[WorldEngines] = base) -> Any:
                return geometry.apply(_base.engine_config(spec_cfg), scans)
            cls = made[base, scans] = type(f"{base.__name__}With{geometry.msgs_per_row}SlotRows", (base,),
                                          {"engine_config": staticmethod(engine_config)})
        return cls.for_world(world)

    return factory


one_slot_rows = engines_with(Geometry(1))
"""Rows of one slot (every seqno a row boundary); a fuzz job takes it as
``FuzzOptions(engines="checks.conform.geometry:one_slot_rows")``."""
two_slot_rows = engines_with(Geometry(2))
"""Rows of two slots, as ``one_slot_rows``."""

"""The known differences between a spec and JGroups, each with its reason and where it lives on
both sides: the only divergences ``seqcheck conform`` counts as explained.

A ``Difference`` belongs to one protocol (its binding lists it: ``JGroupsBinding.differences``) and
to a range of releases, names the spec's line and JGroups' line, and has a ``matches`` predicate
over the divergence and the run it happened in (which can read the world state, the path and the
harness). Nothing else is explained: a divergence that matches no entry is a defect of the spec,
of the harness, or of JGroups (``seqcheck conform`` exits 1 and writes its trace).

Kinds (``kind``): ``abstraction`` (the spec deliberately abstracts something JGroups does, e.g.
time), ``decision`` (a documented decision of the spec, different from what JGroups does),
``jgroups-finding`` (JGroups does something the spec argues is wrong; it has a reproduction).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checks.jgroups.lockstep import Divergence


@dataclass(frozen=True)
class Difference:
    name: str
    protocol: str
    kind: str  # abstraction | decision | jgroups-finding
    releases: str  # which releases, in words (e.g. "5.2.12 and later")
    reason: str
    spec_line: str  # e.g. "spec/unicast3.py: decision 7, _on_data"
    jgroups_line: str  # e.g. "UNICAST3.java (5.4.12.Final) handleDataReceived: msg_cache.add"
    matches: Callable[[Divergence, Any], bool]

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "protocol": self.protocol, "kind": self.kind, "releases": self.releases,
                "reason": self.reason, "spec": self.spec_line, "jgroups": self.jgroups_line}


def explain(divergence: Divergence, run: Any) -> Difference | None:
    """The entry of the run's binding that ``divergence`` matches, if any."""
    for difference in run.binding.differences:
        if difference.matches(divergence, run):
            return difference
    return None

"""What the JGroups lockstep needs of each protocol: how the harness's messages and state read as
the spec's values, which JGroups method a spec timer names, and which of the spec's variant flags
stand for each release (a release before a fix *is* the spec with that fix's defect flag).

A binding is registered by protocol name (``BINDINGS``); ``binding(name)`` finds it. The harness
side of each protocol is ``java/seqcheck/jgroups/<Protocol>Model.java``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checks.jgroups.explained import Difference
from checks.jgroups.locate import JGroupsUnavailable, Release


@dataclass(frozen=True)
class ReleaseProfile:
    """The spec's flags standing for a range of releases (``since`` inclusive, ``until`` exclusive)."""

    since: tuple[int, int, int]
    until: tuple[int, int, int] | None
    flags: tuple[str, ...]
    why: str


def no_props(cfg: Any) -> dict[str, Any]:
    """A protocol whose spec config sets none of JGroups' properties."""
    return {}


def runs_anything(cfg: Any, release: Release) -> None:
    """A protocol whose every spec config the harness can run on every release it has a profile for."""


@dataclass(frozen=True)
class JGroupsBinding:
    protocol: str  # the spec's name (models/registry.py)
    harness_name: str  # the harness's name (java: Models.get)
    message: Callable[[dict[str, Any]], Any]  # harness message -> spec message
    node: Callable[[dict[str, Any], int, int], Any]  # (state, member, members) -> spec node
    timer: Callable[[Any], tuple[str, int | None]]  # spec timer -> (harness timer kind, peer or None)
    profiles: tuple[ReleaseProfile, ...]
    differences: tuple[Difference, ...] = ()  # the known differences (``explained.py``)
    props: Callable[[Any], dict[str, Any]] = no_props  # spec config -> the protocol's properties (reset)
    # flags that stand for a configuration, not a release's code (UNICAST4's zero_conn_timeouts,
    # JGRP-2929): a model's flag among them is kept when the release's flags replace its variant
    settings_flags: frozenset[str] = frozenset()
    # (spec config, release): JGroupsUnavailable (one line) for a setting the harness or the release cannot run
    check: Callable[[Any, Release], None] = runs_anything
    # a world's own actions -> one harness command (the multicast world: ``mcast_lockstep.drive``)
    drive: Callable[[Any, Any, Any, int | None], dict[str, Any]] | None = None

    def flags_for(self, release: Release) -> tuple[str, ...]:
        """The spec's variant flags that make it the protocol of ``release``."""
        for profile in self.profiles:
            if profile.since <= release.numbers and (profile.until is None or release.numbers < profile.until):
                return profile.flags
        known = ", ".join(f"{'.'.join(map(str, p.since))} to before {'.'.join(map(str, p.until))}" if p.until
                          else f"{'.'.join(map(str, p.since))} on" for p in self.profiles)
        raise JGroupsUnavailable(f"--jgroups {release.version}: {self.protocol} is not in that release, or no "
                                 f"release profile says which spec it is (the spec stands for {known})")


BUILT_IN = {"unicast3": "checks.jgroups.unicast3:BINDING", "unicast2": "checks.jgroups.unicast2:BINDING",
            "unicast4": "checks.jgroups.unicast4:BINDING",
            "nakack4": "checks.jgroups.nakack4:BINDING", "nakack2": "checks.jgroups.nakack2:BINDING"}


def binding(protocol: str) -> JGroupsBinding:
    """The JGroups binding of ``protocol`` (its module imported by name, as the engine registry does)."""
    if protocol not in BUILT_IN:
        raise JGroupsUnavailable(f"protocol {protocol}: the JGroups harness has no binding for it "
                                 f"(it has {', '.join(sorted(BUILT_IN))})")
    module, _, name = BUILT_IN[protocol].partition(":")
    found: JGroupsBinding = getattr(importlib.import_module(module), name)
    return found

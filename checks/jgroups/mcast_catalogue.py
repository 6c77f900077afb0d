"""The multicast bug catalogue on real JGroups: each bug's model counterexample run on the release
that had the bug and on the one that fixed it, and the model's property judged on what JGroups did
(``replay.replay_on_jgroups``); and seqcheck's own NAKACK2/NAKACK4 findings, run the same way on the
releases they are about. (``catalogue.py`` holds the point-to-point bugs, whose traces replay as the
checker makes them; the multicast ones need rule 1.)

Rules
-----
1. The schedule. A release runs as the spec with its profile's flags (``bindings``); the model's
   counterexample is made by the checker with the model's own variant *added to* those flags, so
   that it speaks the release's vocabulary (5.4.5 takes a seqno before the window's lock, so a send
   there is two steps; 5.4.12's send_atomically is one) while it keeps the bug the model is about.
   On the release with the fix that flag is not the release's: the schedule is followed as far as
   JGroups can follow it, with the spec as the fixed release in lockstep.
2. The verdict: the release with the bug *reproduces* it when JGroups' run violates the property
   the model expects to be violated; the release with the fix is *clean* when JGroups' run violates
   no property of the model (on the steps it could follow, and, for liveness, on the fair
   fault-free continuation). A divergence between the spec and JGroups on either run is reported
   with whether the table of known differences explains it.
3. Nothing here reads ./traces: counterexamples are made in a folder of the caller's (a temporary one
   by default).
4. A finding whose model needs a configuration the releases refuse (NAKACK2 without retransmission:
   5.4.4 on require xmit_interval > 0) names a ``replay_model``: the same world with the setting the
   release accepts; the counterexample's schedule is then followed in that world, so the mechanism is
   compared step by step, and the verdict says whether JGroups, configured as it must be, recovers.

``python -m checks.jgroups.mcast_catalogue [NAME ...]`` prints the table (JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from checks.check import check_model
from checks.jgroups.bindings import binding
from checks.jgroups.harness import Harness, HarnessError
from checks.jgroups.locate import JGroupsUnavailable, release
from checks.jgroups.replay import JGroupsReplay, replay_on_jgroups
from models.modelfile import load

MODELS = Path(__file__).resolve().parents[2] / "models"


@dataclass(frozen=True)
class Entry:
    name: str  # the JIRA, or the finding's model name
    model: str  # relative to models/
    releases: tuple[str, ...]  # (with the bug, with the fix) for a JIRA; the releases a finding is run on
    kind: str  # "bug" or "finding"
    note: str = ""
    replay_model: str | None = None  # replay the counterexample in this model's world instead (rule 4)
    caveat: str = ""  # what limits the verdict (printed with it)


CATALOGUE = (
    Entry("JGRP-2874", "nakack4/jgrp2874.toml", ("5.4.5", "5.4.12"), "bug",
          "a lost ACK is never resent (HIGHEST_SEQNO did not count towards the ACK)"),
    Entry("JGRP-2904", "nakack4/jgrp2904.toml", ("5.4.5", "5.4.12"), "bug",
          "a departed member's late ACK re-creates its AckTable entry"),
    Entry("JGRP-2904 (blocked)", "nakack4/jgrp2904-blocked.toml", ("5.4.5", "5.4.12"), "bug",
          "... and the sender blocks for good"),
    Entry("JGRP-2873", "nakack4/jgrp2873.toml", ("5.4.5", "5.4.12"), "bug",
          "a DONT_BLOCK send on a full window is dropped, its seqno spent"),
    Entry("JGRP-3034", "nakack4/jgrp3034.toml", ("5.4.12", "master"), "bug",
          "an exception building a batch leaves the deliverer set: no delivery from that sender again"),
    Entry("JGRP-2675", "nakack2/jgrp2675.toml", ("5.2.12", "5.4.12"), "bug",
          "without retransmission the bounded become_server_queue drops a message for good",
          caveat="an emulation on 5.2.12, which has no xmit_interval=0 mode (its retransmit task would be "
                 "rescheduled without pause: the harness never runs it); the mode and its fix lived in "
                 "5.2.13-5.4.3, not in the jar folder; 5.4.4 on refuse xmit_interval=0"),
    Entry("JGRP-2678", "nakack2/jgrp2678.toml", ("5.2.12", "5.4.12"), "bug",
          "STABILITY asks for the current digest's hr, still in flight"),
    Entry("JGRP-1539", "nakack2/jgrp1539.toml", ("3.2.5", "3.4.8"), "bug",
          "every retransmit run asks for every gap, also a message on its way"),
    Entry("lost-ack-threshold-0", "nakack4/lost-ack-threshold-0.toml", ("5.4.12", "master"), "finding"),
    Entry("join-threshold-0", "nakack4/join-threshold-0.toml", ("5.4.12", "master"), "finding"),
    Entry("join-purge-race", "nakack4/join-purge-race.toml", ("5.4.12", "master"), "finding"),
    Entry("jgrp3034-fixed", "nakack4/jgrp3034-fixed.toml", ("master",), "finding"),
    Entry("join-digest-lags-loopback", "nakack2/join-digest-lags-loopback.toml", ("5.4.12", "master"), "finding",
          "5.4.4 on refuses xmit_interval=0: the schedule is replayed with retransmission on",
          replay_model="nakack2/join-digest-lags-loopback-xmit.toml"),
    Entry("merge-digest-lags-loopback", "nakack2/merge-digest-lags-loopback.toml", ("5.4.12", "master"), "finding"),
    Entry("oob-ack-threshold-1", "nakack4/oob-ack-threshold-1.toml", ("5.4.12", "master"), "finding",
          "an OOB message's ACK carries the hd from before the removal; at a threshold <= 1 nothing acks it again"),
)


@dataclass
class Run:
    version: str
    expected: str  # the property the model expects violated
    replay: JGroupsReplay | None = None
    error: str | None = None  # the schedule could not be made or run (one line)

    @property
    def violated(self) -> bool:
        return self.replay is not None and self.replay.violated == self.expected

    @property
    def clean(self) -> bool:
        return self.replay is not None and self.replay.violated is None and self.error is None and (
            self.replay.divergence is None or self.replay.explained is not None)

    def as_json(self) -> dict[str, Any]:
        return {"jgroups": self.version, "expected": self.expected, "violated": self.violated, "clean": self.clean,
                "error": self.error, "replay": None if self.replay is None else self.replay.as_json()}


def model_flags(model: Any) -> tuple[str, ...]:
    """The variant flags the model's world runs with (aliases resolved)."""
    variant = model.world.cfg.variant
    return tuple(f.name for f in fields(variant) if getattr(variant, f.name))


def run_on(entry: Entry, version: str, harness: Harness, folder: Path) -> Run:
    """Rule 1 and 2 for one release."""
    path = MODELS / entry.model
    model = load(path)
    expected = model.expect.removeprefix("violation:")
    out = Run(version, expected)
    try:
        flags = binding(model.protocol).flags_for(release(version))
        adjusted = load(path, variant=tuple(dict.fromkeys(model_flags(model) + flags)))
        outcome = check_model(adjusted, trace_dir=folder / version)
    except (JGroupsUnavailable, ValueError) as error:
        out.error = str(error)
        return out
    if outcome.trace_path is None:
        out.error = f"the model as {version} has no counterexample (verdict {outcome.verdict})"
        return out
    replay_path = MODELS / entry.replay_model if entry.replay_model else path
    try:
        out.replay = replay_on_jgroups(Path(outcome.trace_path), str(replay_path), None, harness)
    except (HarnessError, JGroupsUnavailable) as error:  # the release refuses the model's setting
        out.error = str(error)
    return out


def run_entry(entry: Entry, harness_for: Callable[[str], Harness], folder: Path) -> list[Run]:
    return [run_on(entry, version, harness_for(version), folder) for version in entry.releases]


def verdict(entry: Entry, runs: Sequence[Run]) -> str:
    """``reproduced / clean`` for a bug; ``confirmed on ...`` or not for a finding."""
    if entry.kind == "bug":
        before, after = runs
        fixed = "clean" if after.clean else f"refuses the model ({after.error})" if after.error else "NOT clean"
        return (f"{'reproduced' if before.violated else 'NOT reproduced'} on {before.version}; "
                f"{fixed} on {after.version}" + (f" [{entry.caveat}]" if entry.caveat else ""))
    shown = [r.version for r in runs if r.violated]
    if entry.replay_model and not shown:
        followed = [r.version for r in runs if r.clean]
        return (f"followed in {entry.replay_model} on {', '.join(followed)}: JGroups recovers "
                f"(the model's property holds there)")
    refused = [f"{r.version} refuses the model ({r.error})" for r in runs if r.error]
    return "; ".join([f"violated on {', '.join(shown)}" if shown else "not violated on JGroups", *refused])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.jgroups.mcast_catalogue",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="entries to run (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    entries = [e for e in CATALOGUE if not args.names or e.name in args.names]
    unknown = set(args.names) - {e.name for e in CATALOGUE}
    if unknown:
        print(f"unknown entries: {', '.join(sorted(unknown))} (known: {', '.join(e.name for e in CATALOGUE)})",
              file=sys.stderr)
        return 2
    harnesses: dict[str, Harness] = {}

    def harness_for(version: str) -> Harness:
        if version not in harnesses:
            harnesses[version] = Harness(release(version))
        return harnesses[version]

    try:
        with tempfile.TemporaryDirectory() as tmp:
            for entry in entries:
                runs = run_entry(entry, harness_for, Path(tmp))
                if args.json:
                    print(json.dumps({"name": entry.name, "model": entry.model, "kind": entry.kind,
                                      "verdict": verdict(entry, runs), "runs": [r.as_json() for r in runs]}))
                else:
                    print(f"{entry.name:28} {entry.model:42} {verdict(entry, runs)}")
    except JGroupsUnavailable as error:
        print(str(error), file=sys.stderr)
        return 2
    finally:
        for harness in harnesses.values():
            harness.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

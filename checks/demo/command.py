"""``seqcheck demo PROTOCOL --members N``: N endpoints in separate processes on loopback, through a
fault-injecting link, each sending a stream, with live counts and a final verdict.

This module owns the demo's orchestration: it binds a socket per member and runs the ``Link``
(``impl/runtime/link.py``) in this process, starts one process per member
(``checks/demo/member.py``, handed its socket as a file descriptor), prints their counts while
they run (sent, delivered, retransmitted: data datagrams sent beyond one per message and copy,
redundant: data datagrams received that delivered nothing new, i.e. the duplicates and
retransmissions the engine suppressed, and throughput), switches partitions on and off at the
times given (installing the views each side sees, for the unicast protocols), tells every member
to stop once every member has its stream out and all its messages in, and ends with the verdict:
every message delivered exactly once and in order per sender, at every member it was meant for.

Exit status: 0 for that verdict, 1 for any other (a member that saw a duplicate, a gap or a
foreign message, or a run stopped by ``--timeout``, which only stops a hung demo), 2 for a usage
error, as one line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from checks.demo.children import Child
from impl.runtime import Delay, Faults, Link
from impl.runtime.drivers import PROTOCOLS


class DemoUsageError(Exception):
    """A mistake in what the user asked for; one line, exit status 2."""


USAGE_ERRORS = (DemoUsageError,)


@dataclass(frozen=True)
class Cut:
    """A partition from ``start`` for ``length`` seconds: ``groups`` (both directions blocked
    between them) or one direction ``one_way`` = (src, dst)."""

    start: float
    length: float
    groups: tuple[tuple[int, ...], ...] = ()
    one_way: tuple[int, int] | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("protocol", help=f"one of {', '.join(PROTOCOLS)}")
    parser.add_argument("--members", type=int, default=3, help="members, each a process (default 3)")
    parser.add_argument("--messages", type=int, default=10_000, help="messages each member sends (default 10000)")
    parser.add_argument("--size", type=int, default=64, help="payload bytes (default 64, at least 12)")
    parser.add_argument("--loss", type=float, default=0.0, help="probability the link drops a datagram")
    parser.add_argument("--duplicate", type=float, default=0.0, help="probability of a second copy")
    parser.add_argument("--reorder", type=float, default=0.0, help="probability a copy is held back (delay)")
    parser.add_argument("--delay", default="uniform:1-10",
                        help="held-back delay: uniform:LOW-HIGH or exp:MEAN[-CAP] ms")
    parser.add_argument("--seed", type=int, help="the link's seed (default: random, printed)")
    parser.add_argument("--partition", action="append", default=[], metavar="A,B|C@START+LENGTH",
                        help="cut the members into groups from START for LENGTH seconds (repeatable); the unicast "
                             "protocols also install each side's view, and the whole view again at the heal")
    parser.add_argument("--one-way", action="append", default=[], metavar="A>C@START+LENGTH",
                        help="drop everything from A to C (not back) from START for LENGTH seconds (repeatable)")
    parser.add_argument("--log-dir", type=Path, help="write each member's event log there (seqcheck validate)")
    parser.add_argument("--timeout", type=float, default=600.0, help="stop a hung demo after this many seconds")
    parser.add_argument("--json", action="store_true", help="no live line; one JSON object at the end")


def _member(name: str, n: int) -> int:
    name = name.strip()
    if len(name) == 1 and name.isalpha() and ord(name.upper()) - ord("A") < n:
        return ord(name.upper()) - ord("A")
    if name.isdigit() and int(name) < n:
        return int(name)
    raise DemoUsageError(f"member {name!r}: expected A..{chr(ord('A') + n - 1)} or 0..{n - 1}")


def _when(text: str, option: str) -> tuple[str, float, float]:
    try:
        what, _, times = text.partition("@")
        start, _, length = times.partition("+")
        return what, float(start), float(length)
    except ValueError:
        raise DemoUsageError(f"{option} {text!r}: expected ...@START+LENGTH (seconds)") from None


def cuts(args: argparse.Namespace) -> list[Cut]:
    out = []
    for text in args.partition:
        what, start, length = _when(text, "--partition")
        groups = tuple(tuple(_member(m, args.members) for m in g.split(",") if m.strip()) for g in what.split("|"))
        if len(groups) < 2:
            raise DemoUsageError(f"--partition {text!r}: expected at least two groups split by |")
        out.append(Cut(start, length, groups=groups))
    for text in args.one_way:
        what, start, length = _when(text, "--one-way")
        src, _, dst = what.partition(">")
        out.append(Cut(start, length, one_way=(_member(src, args.members), _member(dst, args.members))))
    return out


def check_args(args: argparse.Namespace) -> Faults:
    if args.protocol not in PROTOCOLS:
        raise DemoUsageError(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {args.protocol!r}")
    if not 2 <= args.members <= 26:
        raise DemoUsageError(f"--members: expected 2 to 26, got {args.members}")
    if args.messages < 1 or args.size < 12 or args.size > 60_000:
        raise DemoUsageError("--messages: expected >= 1; --size: expected 12 to 60000 bytes")
    try:
        return Faults(loss=args.loss, duplicate=args.duplicate, reorder=args.reorder, delay=Delay.parse(args.delay))
    except ValueError as error:
        raise DemoUsageError(str(error)) from None


@dataclass
class Member:
    me: int
    child: Child
    last: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    final: dict[str, Any] | None = None
    exit: int | None = None


@dataclass(frozen=True)
class Took:
    """The run's wall seconds (the primary figure: a real network run) and this process's CPU
    seconds (the link and the coordination); the members report their own CPU seconds."""

    seconds: float
    cpu_seconds: float


def command(args: argparse.Namespace) -> int:
    faults = check_args(args)
    plan = cuts(args)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    if args.log_dir is not None:
        try:
            args.log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DemoUsageError(f"--log-dir: cannot make {args.log_dir}: {error.strerror or error}") from None
    result = asyncio.run(_demo(args, faults, plan, seed))
    if args.json:
        print(json.dumps(result))
    else:
        _verdict(result, sys.stdout)
    return 0 if result["ok"] else 1


async def _demo(args: argparse.Namespace, faults: Faults, plan: list[Cut], seed: int) -> dict[str, Any]:
    n = args.members
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
        sock.set_inheritable(True)
    link = Link({i: sock.getsockname() for i, sock in enumerate(socks)}, faults=faults, seed=seed)
    fronts = link.open()
    members = []
    for i, sock in enumerate(socks):
        config = {"me": i, "members": n, "messages": args.messages, "protocol": args.protocol, "size": args.size,
                  "fd": sock.fileno(), "directory": {str(m): list(a) for m, a in fronts.items()},
                  "log": None if args.log_dir is None else str(args.log_dir / f"member-{i}.jsonl")}
        members.append(Member(i, await Child.start("checks.demo.member", [json.dumps(config)], [sock.fileno()])))
    for sock in socks:
        sock.close()  # the children hold them now
    started, cpu = time.monotonic(), time.process_time()
    live = _Live(sys.stderr if not args.json else None, args, seed, faults)
    readers = [asyncio.create_task(_read(m, live)) for m in members]
    schedule = asyncio.create_task(_cuts(plan, link, members, n, args.protocol, live))
    timed_out = False
    try:
        await asyncio.wait_for(_until_done(members), args.timeout)
    except TimeoutError:
        timed_out = True
    schedule.cancel()
    link.heal()
    for m in members:
        m.child.tell({"stop": True})
    await asyncio.wait(readers, timeout=30)
    for m in members:
        m.exit = await m.child.finish(5.0)
    link.close()
    live.end()
    took = Took(time.monotonic() - started, time.process_time() - cpu)
    return _result(args, members, link, seed, faults, took, timed_out)


async def _read(member: Member, live: _Live) -> None:
    while True:
        report = await member.child.read()
        if report is None:
            return
        member.last = report
        if report.get("kind") == "done":
            member.done = True
        if report.get("kind") == "final":
            member.final = report
        live.update(member.me, report)


async def _until_done(members: list[Member]) -> None:
    while not all(m.done for m in members):
        if any(m.child.exit_code not in (None, 0) for m in members):
            return
        await asyncio.sleep(0.05)


async def _cuts(plan: list[Cut], link: Link, members: list[Member], n: int, protocol: str, live: _Live) -> None:
    """Switch the partitions at their times (seconds after the start)."""
    events: list[tuple[float, bool, Cut]] = sorted([(c.start, True, c) for c in plan] +
                                                    [(c.start + c.length, False, c) for c in plan],
                                                    key=lambda e: (e[0], e[1]))
    started = time.monotonic()
    views = not protocol.startswith("nakack")
    for at, on, cut in events:
        await asyncio.sleep(max(0.0, started + at - time.monotonic()))
        if cut.one_way is not None:
            (link.block if on else link.unblock)(*cut.one_way)
            live.note(f"{'one-way cut' if on else 'healed'} {_name(cut.one_way[0])}>{_name(cut.one_way[1])}")
            continue
        if on:
            link.partition(*cut.groups)
        else:
            link.heal()
        live.note(("partition " + "|".join(",".join(map(_name, g)) for g in cut.groups)) if on else "healed")
        if views:
            for m in members:
                side = next((g for g in cut.groups if m.me in g), (m.me,)) if on else tuple(range(n))
                m.child.tell({"view": list(side)})


def _name(member: int) -> str:
    return chr(ord("A") + member)


class _Live:
    """The live line: counts summed over the members, rewritten in place on a terminal."""

    def __init__(self, out: TextIO | None, args: argparse.Namespace, seed: int, faults: Faults) -> None:
        self.out, self.reports = out, {}  # type: ignore[var-annotated]
        self.started, self.cpu = time.monotonic(), time.process_time()
        self.last_print = 0.0
        self.terminal = out is not None and out.isatty()
        self.copies = args.members - 1
        self.multicast = args.protocol.startswith("nakack")
        if out is not None:
            print(f"seqcheck demo {args.protocol}: {args.members} members x {args.messages:,} messages, "
                  f"link seed {seed} (loss {faults.loss:g}, duplicate {faults.duplicate:g}, reorder {faults.reorder:g} "
                  f"delay {faults.delay})", file=out)

    def update(self, me: int, report: dict[str, Any]) -> None:
        self.reports[me] = report
        now = time.monotonic()
        if self.out is None or now - self.last_print < (0.25 if self.terminal else 2.0):
            return
        self.last_print = now
        line = self.line(now)
        print(f"\r{line}\033[K" if self.terminal else line, end="" if self.terminal else "\n", file=self.out,
              flush=True)

    def clock(self, now: float) -> str:
        """Seconds since the start, with the CPU seconds of this process and of the members (as
        they last reported) beside them."""
        cpu = time.process_time() - self.cpu + sum(r.get("cpu_seconds", 0.0) for r in self.reports.values())
        return f"{now - self.started:6.1f}s (CPU {cpu:.1f} s)"

    def line(self, now: float) -> str:
        total = _totals(list(self.reports.values()), self.copies, self.multicast)
        rate = total["delivered"] / max(now - self.started, 1e-9)
        return (f"{self.clock(now)} sent {total['sent']:,} delivered {total['delivered']:,} "
                f"retransmitted {total['retransmitted']:,} redundant {total['redundant']:,} "
                f"({rate:,.0f} deliveries/s)")

    def note(self, text: str) -> None:
        if self.out is not None:
            clock = self.clock(time.monotonic())
            print(f"{chr(13) if self.terminal else ''}{clock} {text}\033[K" if self.terminal else f"{clock} {text}",
                  file=self.out, flush=True)

    def end(self) -> None:
        if self.out is not None and self.terminal:
            print(file=self.out)


def _totals(reports: list[dict[str, Any]], copies: int, multicast: bool) -> dict[str, int]:
    sent = sum(r.get("sent", 0) for r in reports)
    delivered = sum(r.get("delivered", 0) for r in reports)
    data_out = sum(r.get("data_out", 0) for r in reports)
    data_in = sum(r.get("data_in", 0) for r in reports)
    own = sent if multicast else 0  # own copies are delivered without a datagram
    retransmitted = max(0, data_out - sent * (copies if multicast else 1))
    return {"sent": sent, "delivered": delivered, "retransmitted": retransmitted,
            "redundant": max(0, data_in - (delivered - own))}


def _result(args: argparse.Namespace, members: list[Member], link: Link, seed: int, faults: Faults, took: Took,
            timed_out: bool) -> dict[str, Any]:
    finals = [m.final or m.last for m in members]
    per_member = [{"member": _name(m.me), "ok": bool(f.get("ok")), "delivered": f.get("delivered", 0),
                   "duplicates": f.get("duplicates", 0), "out_of_order": f.get("out_of_order", 0),
                   "foreign": f.get("foreign", 0), "complete": bool(f.get("complete")),
                   "cpu_seconds": f.get("cpu_seconds", 0.0), "exit": m.exit} for m, f in zip(members, finals)]
    seconds, members_cpu = took.seconds, sum(p["cpu_seconds"] for p in per_member)
    totals = _totals(finals, args.members - 1, args.protocol.startswith("nakack"))
    ok = not timed_out and all(p["ok"] and p["exit"] == 0 for p in per_member)
    return {"protocol": args.protocol, "members": args.members, "messages": args.messages, "seed": seed,
            "faults": {"loss": faults.loss, "duplicate": faults.duplicate, "reorder": faults.reorder,
                       "delay": str(faults.delay)},
            "seconds": round(seconds, 3), "cpu_seconds": round(took.cpu_seconds + members_cpu, 3),
            "link_cpu_seconds": round(took.cpu_seconds, 3), "members_cpu_seconds": round(members_cpu, 3),
            "deliveries_per_s": round(totals["delivered"] / max(seconds, 1e-9)),
            **totals, "link": vars(link.stats), "per_member": per_member, "timed_out": timed_out, "ok": ok,
            "logs": None if args.log_dir is None else str(args.log_dir)}


def _verdict(result: dict[str, Any], out: TextIO) -> None:
    link = result["link"]
    print(f"link: {link['received']:,} datagrams, {link['lost']:,} lost, {link['duplicated']:,} duplicated, "
          f"{link['delayed']:,} delayed, {link['blocked']:,} blocked by partitions", file=out)
    for p in result["per_member"]:
        state = "ok" if p["ok"] else ("incomplete" if not p["complete"] else "WRONG")
        print(f"  {p['member']}: {p['delivered']:,} delivered, {p['duplicates']} duplicates, "
              f"{p['out_of_order']} out of order, {p['foreign']} foreign: {state}", file=out)
    print(f"{result['seconds']:.1f} s (CPU {result['cpu_seconds']:.1f} s: members {result['members_cpu_seconds']:.1f}, "
          f"link {result['link_cpu_seconds']:.1f}), {result['deliveries_per_s']:,} deliveries/s, "
          f"{result['retransmitted']:,} retransmitted, {result['redundant']:,} redundant", file=out)
    if result["timed_out"]:
        print(f"verdict: stopped by --timeout after {result['seconds']:.0f} s (not every message arrived)", file=out)
    elif result["ok"]:
        print(f"verdict: every message delivered exactly once, in order per sender, at every member "
              f"({result['protocol']}, seed {result['seed']})", file=out)
    else:
        print("verdict: FAILED (see the members above)", file=out)
    if result["logs"]:
        print(f"event logs: {result['logs']}/member-*.jsonl  (seqcheck validate {result['logs']}/member-*.jsonl)",
              file=out)

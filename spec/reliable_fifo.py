"""The abstract "what" of reliable unicast: one FIFO channel per (sender, receiver) pair.

Rules
-----
1. This is the service UNICAST2/3 promise, stated without any protocol machinery. A concrete run is
   correct when every delivery it makes is a step this abstract channel allows.
2. The sender's application messages are numbered 1, 2, 3, ... per pair (payload n is the n-th
   message the sender's application sent to that receiver).
3. The receiver's deliveries are grouped into *incarnations*: one per life of its receive window for
   the sender. Within an incarnation, deliveries form a contiguous, increasing, duplicate-free run
   of sent payloads. A new incarnation may start anywhere (messages of an earlier incarnation may be
   missing after a sender-side reset, or repeated after a receiver-side reset: digest P1, P2).
4. OOB (UNICAST3's out-of-band flag): the sender's application may flag a message OOB (``send``
   with ``oob``). An OOB message may be delivered before earlier payloads (JGroups delivers it on
   receipt); the others stay in order relative to each other: a non-OOB delivery is the successor
   of the previous in-order position, skipping only OOB payloads already delivered in the same
   incarnation (JGroups' drain passes over their placeholders). No payload, OOB or not, is
   delivered twice within an incarnation. With no OOB sends the channel is exactly the FIFO one.
4a. DONT_LOOPBACK (NAKACK2/NAKACK4 multicasts, UNICAST3/UNICAST4 unicasts to oneself): on the
   channel from a member to itself, a message flagged DONT_LOOPBACK (``send`` with
   ``dont_loopback``) must never be delivered (``no_self_delivery``) and need not arrive; the
   member's other own deliveries may pass over it (as over a delivered OOB payload). The flag is
   per channel: the other members' channels get a multicast as any.
5. Liveness ("what eventually"): every sent payload is delivered at least once, unless the sender
   discarded it after the grace period the protocol promises (UNICAST3: conn_close_timeout of
   CLOSING, digest P11). Those payloads are *excused*.

The protocol models map onto this channel through three observations: a delivery, the start of a
new receive-window incarnation, and a legitimate discard. ``Channel`` records the abstract state
plus a bit per violated clause, so a violation is visible in the state where it happens (a history
variable, in TLA+ terms).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# Violated clauses, one bit each.
DUPLICATE = 1  # a payload delivered twice within one incarnation
OUT_OF_ORDER = 2  # a delivery that is not the successor of the previous one in its incarnation
NOT_SENT = 4  # a delivery of a payload that was never sent
SELF_DELIVERED = 8  # a DONT_LOOPBACK payload delivered to its own sender (rule 4a)


@dataclass(frozen=True, slots=True)
class Channel:
    """Abstract state of one (sender, receiver) pair."""

    sent: int = 0  # payloads 1..sent have been sent
    delivered: int = 0  # bit n-1 set: payload n delivered at least once (any incarnation)
    excused: int = 0  # bit n-1 set: payload n discarded by the sender after its grace period
    run_first: int = 0  # first payload delivered in the current incarnation; 0 = none yet
    run_last: int = 0  # last payload delivered in the current incarnation
    violations: int = 0  # DUPLICATE | OUT_OF_ORDER | NOT_SENT bits
    oob: int = 0  # bit n-1 set: payload n was sent OOB (rule 4)
    early: int = 0  # bit n-1 set: payload n > run_last delivered (OOB) in the current incarnation
    dont_loopback: int = 0  # bit n-1 set: payload n is DONT_LOOPBACK on this (self) channel (rule 4a)

    def all_delivered(self) -> bool:
        """Every sent payload delivered at least once, or excused (DONT_LOOPBACK ones need not be)."""
        everything = (1 << self.sent) - 1
        return (self.delivered | self.excused | self.dont_loopback) & everything == everything


def send(channel: Channel, oob: bool = False, dont_loopback: bool = False) -> Channel:
    """The sender's application sends the next payload (number ``sent + 1``), flagged OOB or not;
    ``dont_loopback``: it is DONT_LOOPBACK and this is the channel to the sender itself (rule 4a)."""
    if oob or dont_loopback:
        bit = 1 << channel.sent
        return replace(channel, sent=channel.sent + 1, oob=channel.oob | (bit if oob else 0),
                       dont_loopback=channel.dont_loopback | (bit if dont_loopback else 0))
    return replace(channel, sent=channel.sent + 1)


def deliver(channel: Channel, payload: int) -> Channel:
    """The receiver delivers ``payload``; record which clause, if any, this breaks."""
    if channel.oob or channel.early or channel.dont_loopback:
        return _deliver_oob(channel, payload)
    violations = channel.violations
    if not 1 <= payload <= channel.sent:
        violations |= NOT_SENT
    if channel.run_first and channel.run_first <= payload <= channel.run_last:
        violations |= DUPLICATE
    elif channel.run_first and payload != channel.run_last + 1:
        violations |= OUT_OF_ORDER
    return Channel(
        channel.sent,
        channel.delivered | (1 << (payload - 1)) if payload >= 1 else channel.delivered,
        channel.excused,
        channel.run_first or payload,
        max(payload, channel.run_last),
        violations,
    )


def _deliver_oob(channel: Channel, payload: int) -> Channel:
    """``deliver`` on a channel with OOB sends (rule 4). ``early`` holds the payloads above
    ``run_last`` already delivered in this incarnation (OOB ones); ``run_last`` moves over them as
    soon as the run reaches them. Before the incarnation's first non-OOB delivery ``run_first`` is
    0 and the run starts at the lowest payload delivered so far."""
    violations, early = channel.violations, channel.early
    bit = 1 << (payload - 1) if payload >= 1 else 0
    oob = bool(channel.oob & bit)
    if not 1 <= payload <= channel.sent:
        violations |= NOT_SENT
    if channel.dont_loopback & bit:
        violations |= SELF_DELIVERED
    run_first, run_last = channel.run_first, channel.run_last
    if (run_first and run_first <= payload <= run_last) or early & bit:
        violations |= DUPLICATE
    elif run_first and payload < run_first:
        violations |= OUT_OF_ORDER  # below the incarnation's start: never in its window
    elif not oob:
        start = run_last + 1 if run_first else min(payload, _lowest(early) or payload)
        skipped = ((1 << (payload - 1)) - 1) & ~((1 << (start - 1)) - 1) if payload > start else 0
        if skipped & ~(early | channel.dont_loopback):
            violations |= OUT_OF_ORDER  # a payload between was neither delivered, OOB-delivered nor DONT_LOOPBACK
        run_first = run_first or start
        run_last = max(payload, run_last)
    early |= bit
    if run_first:
        early &= ~((1 << run_last) - 1)  # what the run has passed
        while early & (1 << run_last):
            early &= ~(1 << run_last)
            run_last += 1
    return Channel(channel.sent, channel.delivered | bit, channel.excused, run_first, run_last, violations,
                   channel.oob, early, channel.dont_loopback)


def _lowest(bits: int) -> int:
    """The lowest payload whose bit is set in ``bits`` (0: none)."""
    return (bits & -bits).bit_length()


def new_incarnation(channel: Channel) -> Channel:
    """The receiver's window for the sender was created or removed: a new run starts."""
    if channel.run_first == 0 and channel.early == 0:
        return channel
    return replace(channel, run_first=0, run_last=0, early=0)


def excuse(channel: Channel, payloads: tuple[int, ...]) -> Channel:
    """The sender discarded ``payloads`` after the grace period: they need not arrive."""
    mask = 0
    for payload in payloads:
        mask |= 1 << (payload - 1)
    return replace(channel, excused=channel.excused | mask)


# Named predicates over one channel; the models lift them to every pair.
def no_duplicate(channel: Channel) -> bool:
    """Within one incarnation, no payload is delivered twice."""
    return not channel.violations & DUPLICATE


def in_order(channel: Channel) -> bool:
    """Within one incarnation, each delivery is the successor of the previous one (FIFO, no gap);
    OOB messages are exempt: one may be delivered ahead, and the run passes over it (``reliable_fifo`` rule 4)."""
    return not channel.violations & OUT_OF_ORDER


def delivered_was_sent(channel: Channel) -> bool:
    """Nothing is delivered that the sender did not send."""
    return not channel.violations & NOT_SENT


def no_self_delivery(channel: Channel) -> bool:
    """No DONT_LOOPBACK message is ever delivered to the member that sent it (``reliable_fifo``
    rule 4a; the other members deliver a DONT_LOOPBACK multicast as any other message)."""
    return not channel.violations & SELF_DELIVERED

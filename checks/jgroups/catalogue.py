"""The bug catalogue on real JGroups: each historical defect's model, the release that had the bug
and the one that fixed it. ``tests/jgroups/test_bug_catalogue.py`` checks every entry: the model's
counterexample, replayed on the buggy release (``seqcheck replay TRACE --jgroups BUGGY``), violates
the model's property on what JGroups did; on the fixed release it violates nothing. The table in
docs/jgroups.md is this list.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    jira: str
    model: str  # under models/
    buggy: str  # a release that has the bug (--jgroups name)
    fixed: str  # a release that has the fix
    note: str = ""


CATALOGUE: tuple[Bug, ...] = (
    Bug("JGRP-1873", "unicast3/jgrp1873-jgroups-3.4.toml", "3.4.8", "3.6.20",
        "UNICAST3: an ACK delayed across a receiver reset purges what the new window needs; 3.6.20's timestamps "
        "refuse it"),
    Bug("JGRP-1874", "unicast3/jgrp1874-jgroups-3.4.toml", "3.4.8", "3.6.20",
        "UNICAST3: one SEND_FIRST_SEQNO per non-first message; 3.6.20 sends one per sync_min_interval"),
    Bug("JGRP-2573", "unicast3/jgrp2573-stale-record.toml", "3.6.20", "5.4.12",
        "UNICAST3: a previous-batch record below hd filters nothing (SeqnoList, 3.6.0 to 5.1.x): a gap is asked "
        "for one run early"),
    Bug("JGRP-2573 (UNICAST2)", "unicast2/jgrp2573-stale-record.toml", "3.6.20", "3.4.8",
        "UNICAST2: the same regression of 3.6.0, never fixed in UNICAST2: the release without it is the one before"),
    Bug("JGRP-1539", "unicast2/jgrp1539-xmit-all-gaps.toml", "3.2.5", "3.4.8",
        "UNICAST2: every retransmit run asks for every gap, one first seen on this run too"),
    Bug("JGRP-1563", "unicast2/jgrp1563-no-first-ack.toml", "3.2.5", "3.4.8",
        "UNICAST2: a lost first message is never delivered (no ACK of a first message, no first-message resend)"),
)

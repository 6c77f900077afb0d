"""Model files (models/modelfile.py) and how ``seqcheck check`` reports a bad one.

Contract under test (modelfile.py docstring, cli.py docstring): every mistake in a model file is one
``ModelError`` line ``<file>: <key>: expected ...`` (file-level problems, an unreadable or non-TOML
file, are ``<file>: ...``), and ``seqcheck check BADFILE`` exits with code 2 after printing exactly
that line, prefixed ``seqcheck: ``, on stderr, and nothing on stdout (every file is validated before
anything runs).

Each case writes a small model to ``tmp_path``; the valid base model is ``jgrp1578-fixed`` in
miniature (A sends one message to B over a lossy network: a couple of hundred states).

Tests marked ``xfail(strict=True, reason="BUG: ...")`` state the right behaviour for a defect that is
not fixed yet; they fail as XPASS once it is.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from checks import cpu_limit
from checks.cli import main
from models.modelfile import Model, ModelError, load, load_all, split_reference
from models.properties import property_names
from models.protocols.unicast3 import UNICAST3
from models.world_factory import world_adapters
from spec import unicast3 as u3

VARIANT_ALIASES = UNICAST3.variant_aliases

TOP = 'description = "a test model"\nprotocol = "unicast3"\nmembers = ["A", "B"]'
SENDS = '"A->B" = 1'
FAULTS = "loss = 1"
CHECK = 'expect = "pass"'


def model_text(*, top: str = TOP, sends: str | None = SENDS, faults: str | None = FAULTS, views: str = "",
               timers: str | None = None, check: str | None = CHECK) -> str:
    """A model file: ``top`` holds the top-level keys; a section given as None is left out."""
    parts = [top]
    for name, body in (("sends", sends), ("faults", faults), ("timers", timers)):
        if body is not None:
            parts.append(f"[{name}]\n{body}")
    if views:
        parts.append(views)
    if check is not None:
        parts.append(f"[check]\n{check}")
    return "\n\n".join(parts) + "\n"


def write(tmp_path: Path, text: str, name: str = "model.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_check(path: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), *extra, str(path)]


def assert_one_cli_error(capsys: pytest.CaptureFixture[str], code: int, message: str) -> None:
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err == f"seqcheck: {message}\n"


# ---------------------------------------------------------------- the valid base


def test_base_model_loads(tmp_path: Path) -> None:
    model = load(write(tmp_path, model_text()))
    assert isinstance(model, Model)
    assert model.protocol == "unicast3"
    assert model.members == ("A", "B")
    assert model.variant == ()
    assert model.expect == "pass"
    assert model.properties == tuple(property_names(world_adapters()["unicast3"]))
    assert model.pinned_states is None
    assert model.world.member_names == ("A", "B")
    assert model.world.bounds.sends == (0, 1, 0, 0)


def test_oob_sends_load_as_src_dst_number(tmp_path: Path) -> None:
    """``[oob]`` names send numbers per pair; the world flags exactly those sends."""
    model = load(write(tmp_path, model_text(sends='"A->B" = 3\n"B->A" = 1', views='[oob]\n"A->B" = [3, 1]')))
    world = model.world
    assert world.bounds.oob == frozenset({(0, 1, 1), (0, 1, 3)})
    assert world.send_stimulus(0, 1, 1) == ("send", 1, 1, "oob")
    assert world.send_stimulus(0, 1, 2) == ("send", 1, 2)
    assert world.send_stimulus(1, 0, 1) == ("send", 0, 1)


def test_base_model_checks_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, model_text())
    assert main(run_check(path, tmp_path)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    rows = [line for line in out.splitlines() if line.startswith(str(path))]
    assert len(rows) == 1
    assert rows[0].endswith("  ok")


# ---------------------------------------------------------------- one line per mistake
# (case id, model text, key named in the message, a fragment of what was expected)

MISTAKES: list[tuple[str, str, str, str]] = [
    # top level
    ("unknown-top-key", model_text(top=TOP + '\ncolour = "red"'), "colour",
     "one of check, config, description, dont_loopback, faults, members, oob, protocol, sends, timers, variant, views"),
    ("description-not-string", model_text(top=TOP.replace('"a test model"', "3")), "description", "a string"),
    # protocol
    ("protocol-missing", model_text(top='members = ["A", "B"]'), "protocol",
     "one of nakack2, nakack4, unicast2, unicast3, unicast4, got None"),
    ("protocol-unknown", model_text(top=TOP.replace('"unicast3"', '"unicast5"')), "protocol",
     "one of nakack2, nakack4, unicast2, unicast3, unicast4, got 'unicast5'"),
    ("protocol-not-string", model_text(top=TOP.replace('"unicast3"', "3")), "protocol",
     "one of nakack2, nakack4, unicast2, unicast3, unicast4, got 3"),
    # members
    ("members-missing", model_text(top='protocol = "unicast3"'), "members", "a list of 2 to 4 distinct member names"),
    ("members-too-few", model_text(top='protocol = "unicast3"\nmembers = ["A"]'), "members",
     "a list of 2 to 4 distinct member names"),
    ("members-too-many", model_text(top='protocol = "unicast3"\nmembers = ["A", "B", "C", "D", "E"]'), "members",
     "a list of 2 to 4 distinct member names"),
    ("members-duplicate", model_text(top='protocol = "unicast3"\nmembers = ["A", "A"]'), "members",
     "a list of 2 to 4 distinct member names"),
    ("members-not-strings", model_text(top='protocol = "unicast3"\nmembers = [1, 2]'), "members",
     "a list of 2 to 4 distinct member names"),
    ("members-empty-name", model_text(top='protocol = "unicast3"\nmembers = ["A", ""]'), "members",
     "a list of 2 to 4 distinct member names"),
    ("members-not-list", model_text(top='protocol = "unicast3"\nmembers = "AB"'), "members",
     "a list of 2 to 4 distinct member names"),
    # variant
    ("variant-unknown", model_text(top=TOP + '\nvariant = ["no_such_bug"]'), "variant", "got 'no_such_bug'"),
    ("variant-unknown-jira", model_text(top=TOP + '\nvariant = ["JGRP-9999"]'), "variant", "got 'JGRP-9999'"),
    ("variant-not-list", model_text(top=TOP + "\nvariant = 3"), "variant", "a list of variant names"),
    ("variant-not-string", model_text(top=TOP + "\nvariant = [1]"), "variant", "got 1"),
    # sends
    # oob: which sends the application flags OOB (UNICAST3)
    ("oob-not-table", model_text(top=TOP + "\noob = 3"), "oob", "a table"),
    ("oob-key-syntax", model_text(views='[oob]\n"A-B" = [1]'), "oob.A-B", 'a key of the form "A->B"'),
    ("oob-unknown-member", model_text(views='[oob]\n"A->C" = [1]'), "oob.A->C", "a member name (A, B), got 'C'"),
    ("oob-beyond-sends", model_text(views='[oob]\n"A->B" = [2]'), "oob.A->B",
     "a list of distinct send numbers from 1 to 1 (sends.A->B), got [2]"),
    ("oob-pair-without-sends", model_text(views='[oob]\n"B->A" = [1]'), "oob.B->A",
     "a list of distinct send numbers from 1 to 0 (sends.B->A), got [1]"),
    ("oob-not-list", model_text(views='[oob]\n"A->B" = 1'), "oob.A->B", "a list of distinct send numbers"),
    ("oob-repeated", model_text(sends='"A->B" = 2', views='[oob]\n"A->B" = [1, 1]'), "oob.A->B",
     "a list of distinct send numbers from 1 to 2"),
    ("oob-boolean", model_text(views='[oob]\n"A->B" = [true]'), "oob.A->B", "a list of distinct send numbers"),
    ("oob-zero", model_text(views='[oob]\n"A->B" = [0]'), "oob.A->B", "a list of distinct send numbers"),
    ("oob-unicast2", model_text(top=TOP.replace('"unicast3"', '"unicast2"'), views='[oob]\n"A->B" = [1]'), "oob",
     "no [oob] table: protocol unicast2 has no OOB flag"),
    ("sends-key-syntax", model_text(sends='"A-B" = 1'), "sends.A-B", 'a key of the form "A->B"'),
    ("sends-unknown-member", model_text(sends='"A->C" = 1'), "sends.A->C", "a member name (A, B), got 'C'"),
    ("sends-unknown-source", model_text(sends='"Z->B" = 1'), "sends.Z->B", "a member name (A, B), got 'Z'"),
    ("sends-self", model_text(top=TOP.replace('"unicast3"', '"unicast2"'), sends='"A->A" = 1'), "sends.A->A",
     "two different members (protocol unicast2 has no messages to self here; UNICAST3 and UNICAST4 have)"),
    ("sends-negative", model_text(sends='"A->B" = -1'), "sends.A->B", "a whole number >= 0, got -1"),
    ("sends-fraction", model_text(sends='"A->B" = 1.5'), "sends.A->B", "a whole number >= 0, got 1.5"),
    ("sends-bool", model_text(sends='"A->B" = true'), "sends.A->B", "a whole number >= 0, got True"),
    ("sends-not-table", model_text(top=TOP + "\nsends = 3", sends=None), "sends", "a table"),
    # faults
    ("faults-negative-loss", model_text(faults="loss = -1"), "faults.loss", "a whole number >= 0, got -1"),
    ("faults-negative-duplicate", model_text(faults="duplicate = -2"), "faults.duplicate",
     "a whole number >= 0, got -2"),
    ("faults-negative-removals", model_text(faults="receiver_removals = -1"), "faults.receiver_removals",
     "a whole number >= 0, got -1"),
    ("faults-string", model_text(faults='loss = "1"'), "faults.loss", "a whole number >= 0, got '1'"),
    ("faults-unknown-key", model_text(faults="reorder = 1"), "faults.reorder",
     "one of dead, duplicate, loss, max_batch, max_in_flight, receiver_removals, stale_packets"),
    ("faults-max-in-flight-0", model_text(faults="max_in_flight = 0"), "faults.max_in_flight", "at least 1"),
    ("faults-stale-not-bool", model_text(faults="stale_packets = 1"), "faults.stale_packets",
     'true, false or "replies", got 1'),
    ("faults-stale-other-text", model_text(faults='stale_packets = "acks"'), "faults.stale_packets",
     'true, false or "replies", got \'acks\''),
    ("faults-not-table", model_text(top=TOP + "\nfaults = 1", faults=None), "faults", "a table"),
    # timers
    ("timers-unknown-key", model_text(timers="xmit = true"), "timers.xmit", "one of conn_close, conn_expiry"),
    ("timers-not-bool", model_text(timers='conn_close = "yes"'), "timers.conn_close", "true or false, got 'yes'"),
    # views
    ("views-own-member-missing", model_text(views='[[views]]\nmember = "A"\nview = ["B"]'), "views[0].view",
     "a view that contains its own member"),
    ("views-second-entry", model_text(views='[[views]]\nmember = "A"\nview = ["A"]\n\n'
                                            '[[views]]\nmember = "B"\nview = ["A"]'), "views[1].view",
     "a view that contains its own member"),
    ("views-unknown-member", model_text(views='[[views]]\nmember = "C"\nview = ["C"]'), "views[0].member",
     "a member name (A, B), got 'C'"),
    ("views-unknown-in-view", model_text(views='[[views]]\nmember = "A"\nview = ["A", "Z"]'), "views[0].view",
     "a member name (A, B), got 'Z'"),
    ("views-missing-view", model_text(views='[[views]]\nmember = "A"'), "views[0]",
     "a table with keys member (a name) and view (a list of names)"),
    ("views-extra-key", model_text(views='[[views]]\nmember = "A"\nview = ["A"]\nwhen = 3'), "views[0]",
     "a table with keys member (a name) and view (a list of names)"),
    ("views-view-not-list", model_text(views='[[views]]\nmember = "A"\nview = "A"'), "views[0]",
     "a table with keys member (a name) and view (a list of names)"),
    ("views-not-array", model_text(top=TOP + "\nviews = 1"), "views",
     "an array of tables [[views]] with member and view"),
    ("views-single-table", model_text(views='[views]\nmember = "A"\nview = ["A"]'), "views",
     "an array of tables [[views]] with member and view"),
    # check
    ("check-not-table", model_text(top=TOP + "\ncheck = 1", check=None), "check", "a table"),
    ("check-unknown-key", model_text(check='expect = "pass"\nseed = 1'), "check.seed",
     "one of exclude, expect, max_states, partial_order, properties, states, symmetry, witness"),
    ("check-exclude-not-list", model_text(check='exclude = "in_order"\nexpect = "pass"'), "check.exclude",
     "a list of property names to leave out"),
    ("check-exclude-unknown", model_text(check='exclude = ["no_such_property"]\nexpect = "pass"'), "check.exclude",
     "got 'no_such_property'"),
    ("check-expect-excluded", model_text(check='exclude = ["in_order"]\nexpect = "violation:in_order"'),
     "check.expect", "got 'violation:in_order'"),
    ("check-witness-not-list", model_text(check='expect = "pass"\nwitness = "A: application sends to B"'),
     "check.witness", "a non-empty list of steps"),
    ("check-witness-empty", model_text(check='expect = "pass"\nwitness = []'), "check.witness",
     "a non-empty list of steps"),
    ("check-witness-blank-step", model_text(check='expect = "pass"\nwitness = [" "]'), "check.witness",
     "a non-empty list of steps"),
    # config (UNICAST3 has no settings; UNICAST2 has max_stable_msgs and sync_resend_bound)
    ("config-for-unicast3", model_text(top=TOP + "\n\n[config]\nmax_stable_msgs = 1"), "config.max_stable_msgs",
     "one of ack_threshold"),
    ("config-ack-threshold-below-2", model_text(top=TOP + "\n\n[config]\nack_threshold = 1"), "config.ack_threshold",
     "at least 2, got 1"),
    ("config-unknown-unicast2", model_text(top=TOP.replace('"unicast3"', '"unicast2"') + "\n\n[config]\nfoo = 1"),
     "config.foo", "one of max_stable_msgs, sync_resend_bound"),
    ("config-below-minimum", model_text(top=TOP.replace('"unicast3"', '"unicast2"') + "\n\n[config]\n"
                                        "max_stable_msgs = 0"), "config.max_stable_msgs", "at least 1, got 0"),
    ("config-other-protocol", model_text(top=TOP + "\n\n[config.unicast2]\nmax_stable_msgs = 1"),
     "config.unicast2", "a protocol of the file (unicast3)"),
    # protocol lists (side by side)
    ("protocol-list-unknown", model_text(top='protocol = ["unicast3", "unicast5"]\nmembers = ["A", "B"]'), "protocol",
     "one of nakack2, nakack4, unicast2, unicast3, unicast4, got 'unicast5' in the list"),
    ("protocol-list-duplicate", model_text(top='protocol = ["unicast3", "unicast3"]\nmembers = ["A", "B"]'),
     "protocol", "a list of distinct ones, got ['unicast3', 'unicast3']"),
    ("protocol-list-empty", model_text(top='protocol = []\nmembers = ["A", "B"]'), "protocol",
     "a list of distinct ones, got []"),
    ("check-property-unknown", model_text(check='properties = ["no_such_property"]\nexpect = "pass"'),
     "check.properties", "got 'no_such_property'"),
    ("check-properties-not-list", model_text(check='properties = "all"\nexpect = "pass"'), "check.properties",
     'a list of property names (or ["all"])'),
    ("check-expect-missing", model_text(check='properties = ["all"]'), "check.expect",
     "\"pass\" or \"violation:<one of the checked properties>\", got None"),
    ("check-expect-malformed", model_text(check='expect = "fail"'), "check.expect", "got 'fail'"),
    ("check-expect-no-property", model_text(check='expect = "violation"'), "check.expect", "got 'violation'"),
    ("check-expect-unknown-property", model_text(check='expect = "violation:no_such_property"'), "check.expect",
     "got 'violation:no_such_property'"),
    ("check-expect-unchecked-property",
     model_text(check='properties = ["no_duplicate", "in_order"]\nexpect = "violation:no_spurious_purge"'),
     "check.expect", "got 'violation:no_spurious_purge'"),
    ("check-expect-not-string", model_text(check="expect = 1"), "check.expect", "got 1"),
    ("check-states-negative", model_text(check='expect = "pass"\nstates = -1'), "check.states",
     "a whole number >= 0, got -1"),
    ("check-states-string", model_text(check='expect = "pass"\nstates = "many"'), "check.states",
     "a whole number >= 0, got 'many'"),
    ("check-max-states-negative", model_text(check='expect = "pass"\nmax_states = -5'), "check.max_states",
     "a whole number >= 0, got -5"),
]


@pytest.mark.parametrize(("text", "key", "expected"), [pytest.param(t, k, e, id=i) for i, t, k, e in MISTAKES])
def test_mistake_is_one_line_naming_file_and_key(tmp_path: Path, text: str, key: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {key}: expected "), message
    assert expected in message


@pytest.mark.parametrize(("text", "key"), [pytest.param(t, k, id=i) for i, t, k, _ in MISTAKES])
def test_check_of_bad_model_exits_2_with_that_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    text: str, key: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as caught:
        load(path)
    code = main(run_check(path, tmp_path))
    assert_one_cli_error(capsys, code, str(caught.value))
    assert not (tmp_path / "traces").exists()


def test_check_properties_accepts_a_subset(tmp_path: Path) -> None:
    text = model_text(check='properties = ["no_duplicate", "in_order"]\nexpect = "violation:in_order"')
    model = load(write(tmp_path, text))
    assert model.properties == ("no_duplicate", "in_order")
    assert [p.name for p in model.world.properties] == ["no_duplicate", "in_order"]
    assert model.expect == "violation:in_order"


def test_every_shipped_property_name_is_accepted(tmp_path: Path) -> None:
    names = property_names(world_adapters()["unicast3"])
    for name in names:
        text = model_text(check=f'properties = ["{name}"]\nexpect = "violation:{name}"')
        assert load(write(tmp_path, text, f"{name}.toml")).properties == (name,)


# ---------------------------------------------------------------- file-level mistakes


def test_not_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, 'protocol = "unicast3"\nmembers = ["A", "B"\n')
    with pytest.raises(ModelError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not valid TOML: ")
    assert "\n" not in message
    assert_one_cli_error(capsys, main(run_check(path, tmp_path)), message)


def test_empty_file_names_the_first_missing_key(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    with pytest.raises(ModelError,
                       match=r": protocol: expected one of nakack2, nakack4, unicast2, unicast3, unicast4, got None$"):
        load(path)


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(ModelError) as caught:
        load(path)
    assert str(caught.value) == f"{path}: no such model file"
    code = main(run_check(path, tmp_path))
    assert_one_cli_error(capsys, code, f"{path}: no such model file or folder")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'description = "caf\xe9"\n')
    with pytest.raises(ModelError, match=r"latin1\.toml: "):
        load(path)


def test_protocol_as_list(tmp_path: Path) -> None:
    """A list of protocols runs the scenario side by side; a list of one is that protocol."""
    one = load(write(tmp_path, model_text(top='protocol = ["unicast3"]\nmembers = ["A", "B"]'), "one.toml"))
    assert (one.protocol, one.protocols, one.side_by_side) == ("unicast3", ("unicast3",), False)
    path = write(tmp_path, model_text(top='protocol = ["unicast2", "unicast3"]\nmembers = ["A", "B"]'), "two.toml")
    with pytest.raises(ModelError) as caught:
        load(path)
    assert str(caught.value) == (f"{path}: protocol: expected one protocol, got 2 side by side (unicast2, "
                                 "unicast3): name one, or read them all with load_all")
    assert [m.protocol for m in load_all(path)] == ["unicast2", "unicast3"]
    assert load(path, protocol="unicast3").protocol == "unicast3"
    with pytest.raises(ModelError, match=r": protocol: expected 'unicast4' among the protocols of the file"):
        load(path, protocol="unicast4")


def test_variant_item_as_list(tmp_path: Path) -> None:
    path = write(tmp_path, model_text(top=TOP + '\nvariant = [["JGRP-1873"]]'))
    with pytest.raises(ModelError, match=r": variant: expected names from"):
        load(path)


def test_cli_reports_a_crash_free_line_for_every_mistake_in_a_real_process(tmp_path: Path) -> None:
    """One real process per kind of exit-2 input, to see exit code and streams as a shell does."""
    bad = write(tmp_path, model_text(sends='"A-B" = 1'), "bad.toml")
    broken = write(tmp_path, "members = [", "broken.toml")
    for path, start in ((bad, f"seqcheck: {bad}: sends.A-B: expected "),
                        (broken, f"seqcheck: {broken}: not valid TOML: "),
                        (tmp_path / "absent.toml", f"seqcheck: {tmp_path / 'absent.toml'}: ")):
        done = cpu_limit.run([sys.executable, "-m", "checks.cli", *run_check(path, tmp_path)],
                              capture_output=True, text=True, cpu_seconds=60)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert done.stderr.startswith(start)
        assert done.stderr.count("\n") == 1 and done.stderr.endswith("\n")


def test_one_bad_file_in_a_folder_stops_before_anything_runs(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    write(folder, model_text(), "a-good.toml")
    bad = write(folder, model_text(faults="max_in_flight = 0"), "b-bad.toml")
    code = main(run_check(folder, tmp_path))
    assert_one_cli_error(capsys, code, f"{bad}: faults.max_in_flight: expected at least 1")


# ---------------------------------------------------------------- variants and JIRA aliases


@pytest.mark.parametrize(("jira", "flag"), sorted(VARIANT_ALIASES.items()))
def test_jira_alias_names_the_variant(tmp_path: Path, jira: str, flag: str) -> None:
    by_alias = load(write(tmp_path, model_text(top=TOP + f'\nvariant = ["{jira}"]'), "alias.toml"))
    by_flag = load(write(tmp_path, model_text(top=TOP + f'\nvariant = ["{flag}"]'), "flag.toml"))
    assert by_alias.variant == by_flag.variant == (flag,)
    assert getattr(by_alias.world.cfg.variant, flag) is True


def test_jgrp_1873_alias_as_a_string_and_mixed_with_its_flag(tmp_path: Path) -> None:
    single = load(write(tmp_path, model_text(top=TOP + '\nvariant = "JGRP-1873"'), "single.toml"))
    both = load(write(tmp_path, model_text(top=TOP + '\nvariant = ["no_timestamps", "JGRP-1873", "JGRP-1548"]'),
                      "both.toml"))
    assert single.variant == ("no_timestamps",)
    assert both.variant == ("no_hs_resend", "no_timestamps")


def test_every_variant_flag_has_a_jira_alias() -> None:
    assert set(VARIANT_ALIASES.values()) == {f.name for f in dataclasses.fields(u3.Variant)}


def test_views_and_faults_reach_the_bounds(tmp_path: Path) -> None:
    text = model_text(faults="loss = 2\nduplicate = 1\nreceiver_removals = 1\nmax_in_flight = 2\nstale_packets = true",
                      views='[[views]]\nmember = "A"\nview = ["A"]\n\n[[views]]\nmember = "A"\nview = ["A", "B"]')
    bounds = load(write(tmp_path, text)).world.bounds
    assert (bounds.loss, bounds.duplicate, bounds.receiver_removals, bounds.max_in_flight) == (2, 1, 1, 2)
    assert bounds.stale_packets is True
    assert bounds.views == ((frozenset({0}), frozenset({0, 1})), ())


# ---------------------------------------------------------------- pinned state counts


def test_pinned_state_count_mismatch_exits_1_with_a_mismatch_row(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, model_text(check='expect = "pass"\nstates = 1'))
    assert load(path).pinned_states == 1
    assert main(run_check(path, tmp_path)) == 1
    out, err = capsys.readouterr()
    assert err == ""
    rows = [line for line in out.splitlines() if line.startswith(str(path))]
    assert len(rows) == 1
    assert "MISMATCH: expected 1 distinct states, got " in rows[0]
    assert "1 model, 0 as expected, 1 not" in out


def test_pinned_state_count_that_matches_is_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    free = write(tmp_path, model_text(), "free.toml")
    assert main(run_check(free, tmp_path, "--json")) == 0
    states = json.loads(capsys.readouterr().out)["states"]
    pinned = write(tmp_path, model_text(check=f'expect = "pass"\nstates = {states}'), "pinned.toml")
    assert main(run_check(pinned, tmp_path, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["matches"], report["states"], report["verdict"]) == (True, states, "pass")


# ---------------------------------------------------------------- side by side

SIDE_TOP = 'description = "side by side"\nprotocol = ["unicast2", "unicast3"]\nmembers = ["A", "B"]'


def side_text(*, top: str = "", config: str = "", timers: str = "", check: str = 'expect = "pass"') -> str:
    parts = [SIDE_TOP + top, '[sends]\n"A->B" = 1', "[faults]\nloss = 1"]
    parts += [t for t in (config, timers) if t]
    parts.append(f"[check]\n{check}")
    return "\n\n".join(parts) + "\n"


def test_side_by_side_shares_the_world_and_splits_what_differs(tmp_path: Path) -> None:
    text = side_text(top='\nvariant = { unicast2 = ["fix:JGRP-1873"], unicast3 = ["JGRP-1548"] }',
                     config="[config.unicast2]\nmax_stable_msgs = 2",
                     timers="[timers]\nconn_expiry = true\n\n[timers.unicast3]\nconn_close = false",
                     check='properties = { unicast2 = ["in_order", "sync_resend_bounded"] }\n'
                           'exclude = { unicast3 = ["eventually_acked"] }\n'
                           'expect = { unicast2 = "pass", unicast3 = "violation:eventually_delivered" }\n'
                           'states = { unicast3 = 7 }')
    u2, u3 = load_all(write(tmp_path, text, "side.toml"))
    assert (u2.protocol, u3.protocol) == ("unicast2", "unicast3")
    assert u2.side_by_side and u3.side_by_side and u2.protocols == u3.protocols == ("unicast2", "unicast3")
    assert u2.world.bounds == u3.world.bounds
    assert (u2.variant, u3.variant) == (("fix_timestamps",), ("no_hs_resend",))
    assert (u2.world.cfg.max_stable_msgs, u2.world.cfg.conn_expiry) == (2, True)
    assert (u3.world.cfg.conn_expiry, u3.world.cfg.conn_close) == (True, False)
    assert u2.properties == ("in_order", "sync_resend_bounded")
    assert "eventually_acked" not in u3.properties and "eventually_delivered" in u3.properties
    assert (u2.expect, u3.expect) == ("pass", "violation:eventually_delivered")
    assert (u2.pinned_states, u3.pinned_states) == (None, 7)
    assert split_reference(u2.reference) == (str(u2.path), "unicast2")
    assert split_reference(str(u2.path)) == (str(u2.path), None)


SIDE_MISTAKES: list[tuple[str, str, str, str]] = [
    ("expect-missing-one", side_text(check='expect = { unicast2 = "pass" }'), "check.expect.unicast3",
     "got None"),
    ("expect-unknown-protocol", side_text(check='expect = { unicast2 = "pass", unicast4 = "pass" }'),
     "check.expect.unicast4", "one of the file's protocols (unicast2, unicast3)"),
    ("expect-bad-one", side_text(check='expect = { unicast2 = "pass", unicast3 = "fail" }'), "check.expect.unicast3",
     "got 'fail'"),
    ("variant-bad-for-one", side_text(top='\nvariant = { unicast3 = ["fix:JGRP-1873"] }'), "variant.unicast3",
     "got 'fix:JGRP-1873'"),
    ("variant-shared-unknown-to-one", side_text(top='\nvariant = ["JGRP-1548"]'), "variant",
     "got 'JGRP-1548'"),
    ("config-shared-for-unicast2-only", side_text(config="[config]\nmax_stable_msgs = 1"), "config.max_stable_msgs",
     "one of ack_threshold, for protocol unicast3 (put another protocol's under [config.<protocol>])"),
    ("timers-shared-unicast3-only", side_text(timers="[timers]\nconn_close = false"), "timers.conn_close",
     "one of conn_expiry, for protocol unicast2 (put another protocol's under [timers.<protocol>])"),
    ("timers-own-unknown", side_text(timers="[timers.unicast2]\nconn_close = false"), "timers.unicast2.conn_close",
     "one of conn_expiry, for protocol unicast2"),
    ("timers-own-not-table", side_text(timers="[timers]\nunicast2 = 1"), "timers.unicast2", "a table"),
    ("properties-per-protocol-bad", side_text(check='properties = { unicast3 = ["sync_resend_bounded"] }\n'
                                                    'expect = "pass"'), "check.properties.unicast3",
     "got 'sync_resend_bounded'"),
    ("states-per-protocol-bad", side_text(check='expect = "pass"\nstates = { unicast2 = -1 }'),
     "check.states.unicast2", "a whole number >= 0, got -1"),
]


@pytest.mark.parametrize(("text", "key", "expected"), [pytest.param(t, k, e, id=i) for i, t, k, e in SIDE_MISTAKES])
def test_side_by_side_mistake_is_one_line_naming_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              text: str, key: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as caught:
        load_all(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {key}: expected "), message
    assert expected in message, message
    assert_one_cli_error(capsys, main(run_check(path, tmp_path)), message)


def test_check_shows_one_row_per_protocol_and_separate_traces(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    text = side_text(top='\nvariant = { unicast2 = ["JGRP-1563"] }',
                     check='properties = ["eventually_delivered"]\n'
                           'expect = { unicast2 = "violation:eventually_delivered", unicast3 = "pass" }')
    path = write(tmp_path, text, "lone-first.toml")
    assert main(run_check(path, tmp_path)) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(str(path))]
    assert [row.split()[:2] for row in rows] == [[str(path), "[unicast2]"], [str(path), "[unicast3]"]]
    assert all(row.endswith("  ok") for row in rows)
    traces = sorted(p.name for p in (tmp_path / "traces").rglob("*.json"))
    assert traces == ["lone-first.unicast2.json"]


def test_models_with_the_same_stem_get_separate_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder, model_text(top=TOP + '\nvariant = ["JGRP-1548"]', sends='"A->B" = 2',
                                            check='expect = "violation:eventually_delivered"'), "same.toml")
    traces = tmp_path / "traces"
    assert main(["check", "--no-progress", "--trace-dir", str(traces), str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    written = sorted(p for p in traces.rglob("*.json"))
    assert len(written) == 2 and {p.name for p in written} == {"same.json"}
    assert {p.parent.name for p in written} == {"a", "b"}


# ---------------------------------------------------------------- exclude and witness


def test_exclude_leaves_properties_out(tmp_path: Path) -> None:
    model = load(write(tmp_path, model_text(check='exclude = ["eventually_acked", "in_order"]\nexpect = "pass"')))
    assert "eventually_acked" not in model.properties and "in_order" not in model.properties
    assert model.properties == tuple(p for p in property_names(world_adapters()["unicast3"])
                                     if p not in ("eventually_acked", "in_order"))


WITNESS = ['A: application sends to B', 'B receives DATA(seqno=1, conn_id=0, first, payload=1) from A']


def test_a_witness_that_replays_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = ", ".join(f'"{step}"' for step in WITNESS)
    path = write(tmp_path, model_text(check=f'expect = "pass"\nwitness = [{steps}]'))
    assert load(path).witness == tuple(WITNESS)
    assert main(run_check(path, tmp_path, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["matches"], report["witness_steps"], report["witness_error"]) == (True, 2, None)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "witness: the scenario's 2 steps" in out and "» delivers payload 1 from A" in out


def test_a_witness_step_that_is_not_enabled_is_a_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = ", ".join(f'"{step}"' for step in [WITNESS[1], WITNESS[0]])
    path = write(tmp_path, model_text(check=f'expect = "pass"\nwitness = [{steps}]'))
    assert main(run_check(path, tmp_path)) == 1
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(str(path))]
    assert row.endswith(f"MISMATCH: witness step 1 ({WITNESS[1]!r}) is not enabled; enabled: A: application "
                        "sends to B")
    assert main(["show", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"seqcheck: {path}: witness step 1 ")


def test_a_witness_that_breaks_a_checked_property_is_a_mismatch(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """UNICAST2's JGRP-1873 race after a view change, written as a witness of a model that claims P6."""
    steps = ["A: application sends to B", "A: application sends to B",
             "B receives DATA(seqno=1, conn_id=0, first, payload=1) from A",
             "B receives DATA(seqno=2, conn_id=0, payload=2) from A",
             "A: retransmit task runs (XMIT_REQs, first-message resend)", "B installs view [B]",
             "B receives DATA(seqno=1, conn_id=0, first, payload=1) from A",
             "A receives STABLE(hd=2, hr=2, conn_id=0) from B"]
    listed = ", ".join(f'"{step}"' for step in steps)
    text = model_text(top=TOP.replace('"unicast3"', '"unicast2"'), sends='"A->B" = 2', faults=None,
                      views='[[views]]\nmember = "B"\nview = ["B"]',
                      check=f'properties = ["no_spurious_purge"]\nexpect = "violation:no_spurious_purge"\n'
                            f'witness = [{listed}]')
    path = write(tmp_path, text)
    assert main(run_check(path, tmp_path)) == 1
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(str(path))]
    assert row.endswith(f"MISMATCH: witness step 8 ({steps[-1]!r}) violates no_spurious_purge")


def test_show_of_a_model_without_witness_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, model_text())
    assert_one_cli_error(capsys, main(["show", str(path)]),
                         f"{path}: check.witness: expected a witness to draw (the file has none)")

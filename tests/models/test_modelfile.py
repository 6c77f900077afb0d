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
import subprocess
import sys
from pathlib import Path

import pytest

from checks.cli import main
from models.modelfile import Model, ModelError, load
from models.properties import property_names
from models.protocol_unicast3 import UNICAST3
from models.protocols import PROTOCOLS
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
    assert model.properties == tuple(property_names(PROTOCOLS["unicast3"]))
    assert model.pinned_states is None
    assert model.world.member_names == ("A", "B")
    assert model.world.bounds.sends == (0, 1, 0, 0)


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
     "one of check, config, description, faults, members, protocol, sends, timers, variant, views"),
    ("description-not-string", model_text(top=TOP.replace('"a test model"', "3")), "description", "a string"),
    # protocol
    ("protocol-missing", model_text(top='members = ["A", "B"]'), "protocol", "one of unicast2, unicast3, got None"),
    ("protocol-unknown", model_text(top=TOP.replace('"unicast3"', '"unicast4"')), "protocol",
     "one of unicast2, unicast3, got 'unicast4'"),
    ("protocol-not-string", model_text(top=TOP.replace('"unicast3"', "3")), "protocol", "one of unicast2, unicast3, got 3"),
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
    ("sends-key-syntax", model_text(sends='"A-B" = 1'), "sends.A-B", 'a key of the form "A->B"'),
    ("sends-unknown-member", model_text(sends='"A->C" = 1'), "sends.A->C", "a member name (A, B), got 'C'"),
    ("sends-unknown-source", model_text(sends='"Z->B" = 1'), "sends.Z->B", "a member name (A, B), got 'Z'"),
    ("sends-self", model_text(sends='"A->A" = 1'), "sends.A->A", "two different members"),
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
     "one of duplicate, loss, max_in_flight, receiver_removals, stale_packets"),
    ("faults-max-in-flight-0", model_text(faults="max_in_flight = 0"), "faults.max_in_flight", "at least 1"),
    ("faults-stale-not-bool", model_text(faults="stale_packets = 1"), "faults.stale_packets",
     "true or false, got 1"),
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
     "one of expect, max_states, properties, states"),
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
    names = property_names(PROTOCOLS["unicast3"])
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
    with pytest.raises(ModelError, match=r": protocol: expected one of unicast2, unicast3, got None$"):
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
    path = write(tmp_path, model_text(top='protocol = ["unicast3"]\nmembers = ["A", "B"]'))
    with pytest.raises(ModelError, match=r": protocol: expected one of unicast2, unicast3"):
        load(path)


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
        done = subprocess.run([sys.executable, "-m", "checks.cli", *run_check(path, tmp_path)],
                              capture_output=True, text=True, timeout=60)
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
    assert "1 models, 0 as expected, 1 not" in out


def test_pinned_state_count_that_matches_is_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    free = write(tmp_path, model_text(), "free.toml")
    assert main(run_check(free, tmp_path, "--json")) == 0
    states = json.loads(capsys.readouterr().out)["states"]
    pinned = write(tmp_path, model_text(check=f'expect = "pass"\nstates = {states}'), "pinned.toml")
    assert main(run_check(pinned, tmp_path, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["matches"], report["states"], report["verdict"]) == (True, states, "pass")

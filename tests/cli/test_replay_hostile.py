"""`seqcheck replay --emit-test` on a hostile trace file: nothing read from the file, its name or
the model's name may become code in the emitted test (issue 18, item 1).

The hostile trace is a real counterexample whose step texts carry a line break followed by code,
saved under a file name with triple quotes and a line break, naming a copy of its model whose file
name does the same. The emitted test must parse to nothing but the expected statements (the calls
the actions say, as literals), run green, and leave no trace of the injected code having run.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
from pathlib import Path

from checks import cpu_limit
from checks.check import trace_file
from checks.cli import MODELS_DIR, main
from models.modelfile import load

PAYLOAD = "import pathlib; pathlib.Path('PWNED').write_text('pwned')"  # in the current folder
SCRIPT_METHODS = {"send", "deliver", "duplicate", "lose", "timer", "view", "remove_receiver"}


def _hostile_trace(tmp_path: Path) -> Path:
    """A checked counterexample rewritten by an attacker (see the module docstring)."""
    source = MODELS_DIR / "unicast3" / "jgrp1548-no-hs-resend.toml"
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(source)]) == 0
    raw = json.loads(trace_file(load(source), tmp_path / "traces").read_text())
    evil_dir = tmp_path / "evil"
    evil_dir.mkdir()
    model_copy = evil_dir / f'm"""\n{PAYLOAD}\n""".toml'
    shutil.copy(source, model_copy)
    raw["model"] = model_copy.name  # found beside the trace file
    for step in raw["steps"]:
        step["text"] = "x\n" + PAYLOAD + "\r\n    " + PAYLOAD
    trace = evil_dir / 'trace"""\nimport os\n""".json'
    trace.write_text(json.dumps(raw))
    return trace


def _statements_are_only_the_script(tree: ast.Module) -> None:
    """Module: a docstring, imports, ENGINE_VARIANT = Variant(...), one test function whose body is
    ``net = EngineScript(...)``, ``net.<script method>(<literals>)`` calls and one assert."""
    body = list(tree.body)
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    tests = [node for node in body if isinstance(node, ast.FunctionDef)]
    rest = [node for node in body[1:] if not isinstance(node, ast.FunctionDef)]
    assert all(isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)) for node in rest), ast.dump(tree)
    assert [type(node) for node in rest].count(ast.Assign) == 1
    assert len(tests) == 1
    function = tests[0]
    assert isinstance(function.body[0], ast.Assign) and isinstance(function.body[-1], ast.Assert)
    for statement in function.body[1:-1]:
        assert isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call), ast.dump(statement)
        call = statement.value
        assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
        assert call.func.value.id == "net" and call.func.attr in SCRIPT_METHODS | {"settle"}
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            ast.literal_eval(argument)  # raises unless a plain literal


def test_an_injected_trace_emits_only_its_actions(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    trace = _hostile_trace(tmp_path)
    emitted = tmp_path / "test_emitted_hostile.py"
    assert main(["replay", str(trace), "--emit-test", str(emitted)]) == 0
    _statements_are_only_the_script(ast.parse(emitted.read_text()))
    run = cpu_limit.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(emitted)],
                        capture_output=True, text=True, cpu_seconds=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout
    assert not marker.exists()


def test_the_project_never_evaluates_strings() -> None:
    """No module of the project calls ``eval``, ``exec`` or ``compile`` (input must not become code)."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for package in ("spec", "impl", "models", "checks"):
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in ("eval", "exec", "compile")):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found

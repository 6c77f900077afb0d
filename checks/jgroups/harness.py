"""One harness JVM: commands as JSON lines to its standard input, one answer line per command.

``Harness(release)`` compiles (``build.py``) and starts the JVM; ``command(op, **fields)`` sends
one command and returns its answer (``HarnessError`` when the harness refused it: a harness or
schedule defect, never a verdict). One JVM serves many schedules: ``reset`` starts a new one.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from types import TracebackType
from typing import Any

from checks.jgroups.build import compiled
from checks.jgroups.locate import Release, jdk

# A small heap is plenty (a schedule holds a few hundred messages); serial GC and one compiler
# thread keep the JVM's footprint small beside the checker and other harnesses.
JVM_OPTIONS = ("-Xms32m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:CICompilerCount=2", "-Xss4m",
               "-Djava.net.preferIPv4Stack=true")


class HarnessError(Exception):
    """The harness refused a command or died; the message is one line."""


class Harness:
    def __init__(self, release: Release) -> None:
        tools = jdk()
        classes = compiled(release, tools)
        self.release = release
        self.process = subprocess.Popen(
            [str(tools.java), *JVM_OPTIONS, "-cp", f"{release.jar}:{classes}", "seqcheck.jgroups.Harness"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        hello = self.command("hello")
        self.version: str = hello["jgroups"]
        self.protocols: list[str] = hello["protocols"]
        self.commands = 0

    def command(self, op: str, **fields: Any) -> dict[str, Any]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps({"op": op, **fields}, separators=(",", ":")) + "\n")
            stdin.flush()
            line = stdout.readline()
        except (BrokenPipeError, OSError) as error:
            raise HarnessError(f"the harness JVM ({self.release.version}) is gone: {error}") from None
        if not line:
            err = self.process.stderr.read() if self.process.stderr else ""
            last = err.strip().splitlines()[-1] if err.strip() else "no message"
            raise HarnessError(f"the harness JVM ({self.release.version}) exited: {last}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise HarnessError(f"harness ({self.release.version}): {op}: {answer['error']}")
        return answer

    def cpu_seconds(self) -> float:
        """The JVM's CPU time so far (every thread: the harness's, the compilers', the collector's)."""
        return float(self.command("cpu")["cpu_ns"]) / 1e9

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(HarnessError):
                self.command("quit")
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

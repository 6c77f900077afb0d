"""Child processes that talk JSON lines (stdin: commands, stdout: reports), for the demo and the
network bench.

This module owns starting such a child (``subprocess.Popen``, with the sockets it inherits) and
reading its stdout from the event loop. It does not use ``asyncio.create_subprocess_exec``: under
some hosts (pytest among them) asyncio's child watcher found its children already reaped and
reported exit status 255 for children that had exited cleanly; ``Popen`` waits for its own pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any


class Child:
    """One child: ``tell`` writes a command line, ``read`` the next report (None at its end)."""

    def __init__(self, process: subprocess.Popen[bytes], reader: asyncio.StreamReader) -> None:
        self.process, self.reader = process, reader

    @classmethod
    async def start(cls, module: str, args: Sequence[str], pass_fds: Sequence[int]) -> Child:
        process = subprocess.Popen([sys.executable, "-m", module, *args], pass_fds=tuple(pass_fds),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        reader = asyncio.StreamReader(limit=1 << 24)
        assert process.stdout is not None
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                          process.stdout)
        return cls(process, reader)

    def tell(self, command: dict[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.closed:
            return
        try:
            stdin.write((json.dumps(command) + "\n").encode())
            stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    async def read(self) -> dict[str, Any] | None:
        """The next JSON object the child printed (lines that are not one are skipped), None at EOF."""
        while True:
            line = await self.reader.readline()
            if not line:
                return None
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict):
                return found

    @property
    def exit_code(self) -> int | None:
        return self.process.poll()

    async def finish(self, grace: float) -> int:
        """Close stdin, wait up to ``grace`` seconds for the child to exit (then kill it); its status."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        for _ in range(int(grace * 20)):
            if self.process.poll() is not None:
                return int(self.process.returncode)
            await asyncio.sleep(0.05)
        self.process.kill()
        return int(self.process.wait())

"""The harness compiled against one JGroups jar, once: ``javac`` on the Java sources of
``checks/jgroups/java`` with the jar on the class path, into a cache folder named by the hash of
the sources, the jar and the compiler's version (``SEQCHECK_CACHE``, else ``$XDG_CACHE_HOME`` or
``~/.cache``, then ``seqcheck/harness/``). Concurrent builds (test workers) are safe: each
compiles into a folder of its own and the first to finish is renamed into place.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from checks.cache import cache_root
from checks.jgroups.locate import Jdk, JGroupsUnavailable, Release

SOURCES = Path(__file__).parent / "java"


def sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def _digest(release: Release, jdk: Jdk) -> str:
    h = hashlib.sha256()
    for source in sources():
        h.update(source.relative_to(SOURCES).as_posix().encode())
        h.update(source.read_bytes())
    with release.jar.open("rb") as jar:
        for block in iter(lambda: jar.read(1 << 20), b""):
            h.update(block)
    version = subprocess.run([str(jdk.javac), "-version"], capture_output=True, text=True, check=False)
    h.update((version.stdout + version.stderr).encode())
    return h.hexdigest()[:24]


def compiled(release: Release, jdk: Jdk) -> Path:
    """The folder of the harness's classes for ``release`` (compiled now if not cached)."""
    target = cache_root() / "harness" / f"{release.version}-{_digest(release, jdk)}"
    if (target / "seqcheck" / "jgroups" / "Harness.class").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        done = subprocess.run([str(jdk.javac), "-nowarn", "-encoding", "UTF-8", "-cp", str(release.jar),
                               "-d", str(work), *map(str, sources())], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip())
            raise JGroupsUnavailable(f"the harness does not compile against {release.jar.name}: {first}")
        with contextlib.suppress(OSError):  # another process finished first: its classes are the same
            work.rename(target)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target

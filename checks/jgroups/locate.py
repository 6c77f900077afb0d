"""Where JGroups and a JDK are: the jars (a folder of them, or one jar) and ``java``/``javac``.

The folder is ``SEQCHECK_JGROUPS`` (a folder of ``jgroups-VERSION.jar`` files, or one jar), else
``../shared/jgroups`` beside the repository (or the working folder) where it exists. A version is
named as its jar is (``5.4.12.Final``), without ``.Final`` (``5.4.12``), or ``master`` (the
``-SNAPSHOT`` jar); a path to a jar names that jar. Whatever is missing is one line
(``JGroupsUnavailable``), which the command line reports with exit status 2 and the tests turn
into a skip (or, under ``SEQCHECK_REQUIRE_JGROUPS=1``, a failure).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ENV_FOLDER = "SEQCHECK_JGROUPS"
_JAR = re.compile(r"^jgroups-(\d+\.\d+\.\d+[.\-][A-Za-z0-9.\-]+)\.jar$")


class JGroupsUnavailable(Exception):
    """No JGroups jar or no JDK where one is needed: the message is one line saying what and where."""


@dataclass(frozen=True)
class Release:
    version: str  # as the jar names it: 5.4.12.Final, 5.6.0-SNAPSHOT-06c847b
    jar: Path

    @property
    def numbers(self) -> tuple[int, int, int]:
        major, minor, micro = re.match(r"(\d+)\.(\d+)\.(\d+)", self.version).groups()  # type: ignore[union-attr]
        return int(major), int(minor), int(micro)

    @property
    def snapshot(self) -> bool:
        return "SNAPSHOT" in self.version


def default_folder() -> Path | None:
    """The folder of jars: ``SEQCHECK_JGROUPS`` if set, else ``../shared/jgroups`` beside the
    repository or the working folder if it exists."""
    configured = os.environ.get(ENV_FOLDER)
    if configured:
        return Path(configured)
    here = Path(__file__).resolve().parents[2]  # the repository (editable install) or site-packages
    for base in (here, Path.cwd()):
        candidate = base.parent / "shared" / "jgroups"
        if candidate.is_dir():
            return candidate
    return None


def releases(folder: Path | None = None) -> list[Release]:
    """Every JGroups jar of ``folder`` (sources jars aside), oldest first."""
    folder = folder if folder is not None else default_folder()
    if folder is None:
        return []
    if folder.is_file():
        found = _JAR.match(folder.name)
        return [Release(found.group(1) if found else folder.stem, folder)]
    out = []
    for jar in sorted(folder.glob("jgroups-*.jar")):
        found = _JAR.match(jar.name)
        if found and not jar.name.endswith("-sources.jar"):
            out.append(Release(found.group(1), jar))
    return sorted(out, key=lambda r: (r.numbers, r.snapshot))


def release(name: str) -> Release:
    """The release ``name`` (a version, ``master``, or a path to a jar); ``JGroupsUnavailable`` if
    there is none."""
    if name.endswith(".jar"):
        path = Path(name)
        if not path.is_file():
            raise JGroupsUnavailable(f"--jgroups {name}: no such jar")
        return releases(path)[0]
    folder = default_folder()
    known = releases(folder)
    if not known:
        where = f"{ENV_FOLDER}={folder}" if os.environ.get(ENV_FOLDER) else (
            str(folder) if folder else f"no {ENV_FOLDER} set and no ../shared/jgroups folder")
        raise JGroupsUnavailable(f"--jgroups {name}: no JGroups jars found ({where}); set {ENV_FOLDER} to a folder of "
                                 f"jgroups-VERSION.jar files (Maven Central: org.jgroups:jgroups:VERSION)")
    for candidate in known:
        if name in (candidate.version, candidate.version.removesuffix(".Final")) or (
                name == "master" and candidate.snapshot):
            return candidate
    names = ", ".join(r.version for r in known)
    raise JGroupsUnavailable(f"--jgroups {name}: no such release in {folder} (there: {names}; "
                             f"or master, or a path to a jar)")


@dataclass(frozen=True)
class Jdk:
    java: Path
    javac: Path


def jdk() -> Jdk:
    """``java`` and ``javac`` (``JAVA_HOME/bin`` first, then ``PATH``); ``JGroupsUnavailable`` if
    either is missing."""
    found = {}
    home = os.environ.get("JAVA_HOME")
    for tool in ("java", "javac"):
        path = None
        if home and (Path(home) / "bin" / tool).is_file():
            path = Path(home) / "bin" / tool
        elif shutil.which(tool):
            path = Path(shutil.which(tool))  # type: ignore[arg-type]
        if path is None:
            raise JGroupsUnavailable(f"the JGroups harness needs a JDK: {tool} not found on PATH or in JAVA_HOME "
                                     f"(install openjdk-17-jdk-headless)")
        found[tool] = path
    return Jdk(found["java"], found["javac"])

"""Optional dependencies: the ``extras`` of ``pyproject.toml`` a command may need, and the one-line
error that names the extra to install when one is missing.

Spark (``pyspark``, about 490 MB) is the ``spark`` extra, included in ``test``: ``pip install -e .``
leaves it out, and only what runs on a Spark master needs it (``fuzz`` on a ``local[...]`` or
``spark://`` master, ``check --swarm`` unless ``--master none``, ``conform --master``, ``bench --fuzz``
unless ``--no-spark``). Those ask ``require_spark`` before they start a session.
"""

from __future__ import annotations

import importlib.util

SPARK_EXTRA = "spark"


class MissingExtra(Exception):
    """A command needs an optional dependency that is not installed; the message is one line
    naming the extra (``checks/cli.py`` prints it and exits 2)."""


def has_spark() -> bool:
    """Whether ``pyspark`` can be imported (without importing it: that takes a second)."""
    try:
        return importlib.util.find_spec("pyspark") is not None
    except (ImportError, ValueError):  # a broken or blanked-out package (sys.modules["pyspark"] = None)
        return False


def require_spark(what: str, instead: str = "") -> None:
    """Raise ``MissingExtra`` naming the ``spark`` extra if pyspark is not installed; ``what``:
    the option or command that needs it, ``instead``: how to do without it, if there is a way."""
    if not has_spark():
        alternative = f", or {instead}" if instead else ""
        raise MissingExtra(f"{what} needs Spark, which is not installed: pip install 'seqcheck[{SPARK_EXTRA}]' "
                           f"(in a checkout: pip install -e '.[{SPARK_EXTRA}]'){alternative}")

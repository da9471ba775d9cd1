"""What a report or a ``--json`` line needs to say about the tool itself: version, revision, schema.

:data:`JSON_SCHEMA` is the version of the ``--json`` line formats (DESIGN.md): each line carries it
as ``"schema"``; it grows only when a field changes meaning or goes away (new fields are additive and
keep it). :func:`version` is the installed distribution's version; :func:`git_revision` the
commit of the checkout the code runs from (None for an installed wheel outside a repository).
"""

from __future__ import annotations

import functools
import os

JSON_SCHEMA = 1
DISTRIBUTION = "scopefuzz"


@functools.lru_cache(maxsize=None)
def version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        return dist_version(DISTRIBUTION)
    except PackageNotFoundError:       # running from a checkout that was never installed
        return "0+unknown"


@functools.lru_cache(maxsize=None)
def git_revision() -> str | None:
    """``git describe``-like revision of the source tree (``<sha>`` or ``<sha>-dirty``), or None."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    import subprocess               # here: every command imports this module, few ask this
    try:
        sha = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{sha}-dirty" if dirty.strip() else sha or None


def version_line() -> str:
    rev = git_revision()
    return f"scopefuzz {version()}" + (f" (git {rev})" if rev else "")

"""The memory ceiling of every oracle call (DESIGN.md round 3: ``--max-memory``).

An allowed set can be far larger than the machine: issue 32's 21-event AMDGPU program allows
74 million states, and expanding such a set into arrays (what random access, ``allows`` on the
whole set and herd's layout need) costs gigabytes. Every place in the oracle that is about to
allocate memory in proportion to the number of states asks :func:`guard` first; past the ceiling
it raises :class:`~oracle.errors.MemoryCeiling` (an :class:`~oracle.errors.OracleError`: one line,
exit 2 from ``scopefuzz check``, an oracle error in campaigns, the minimizer and the pytest
plugin, which all call :func:`oracle.check`), naming the states found so far and what to use
instead, so that no caller is killed by the kernel's out-of-memory killer.

The ceiling is :data:`DEFAULT_FRACTION` of the machine's physical memory, or the environment
variable ``SCOPEFUZZ_MAX_MEMORY``, or what :func:`set_limit` (``--max-memory``) gives: a number of
bytes with an optional ``K``/``M``/``G`` suffix (powers of 1024). It bounds the process's resident
memory now plus the allocation asked for.
"""

from __future__ import annotations

import os
import re

from .errors import MemoryCeiling

#: the default ceiling: this fraction of the machine's physical memory
DEFAULT_FRACTION = 0.25

_LIMIT: int | None = None


def parse_size(text: str) -> int:
    """``2G``, ``500M``, ``65536`` -> bytes (K, M, G, T: powers of 1024); ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (write e.g. 2G, 500M or a number of bytes)")
    scale = 1024 ** "_KMGT".index(m.group(2).upper() or "_")
    value = int(float(m.group(1)) * scale)
    if value <= 0:
        raise ValueError(f"must be a size > 0, got {text!r}")
    return value


def physical_memory() -> int:
    """The machine's physical memory in bytes (0 when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def limit() -> int:
    """The ceiling in bytes now (see the module docstring)."""
    if _LIMIT is not None:
        return _LIMIT
    env = os.environ.get("SCOPEFUZZ_MAX_MEMORY")
    if env:
        try:
            return parse_size(env)
        except ValueError:
            pass
    phys = physical_memory()
    return int(phys * DEFAULT_FRACTION) if phys else 4 << 30


def set_limit(value: int | str | None) -> None:
    """Set the ceiling (bytes or a size text; None: back to the default)."""
    global _LIMIT
    _LIMIT = None if value is None else (parse_size(value) if isinstance(value, str)
                                         else int(value))


def resident() -> int:
    """This process's resident memory in bytes (0 when unknown)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def guard(extra: int, states: int, what: str) -> None:
    """Raise :class:`MemoryCeiling` when allocating ``extra`` more bytes (for ``what``, over a set
    of ``states`` allowed states) would take the process past the ceiling."""
    cap = limit()
    now = resident()
    if now + extra <= cap:
        return
    raise MemoryCeiling(
        f"{states:,} allowed states found; {what} needs about {_mb(extra)} more (process at "
        f"{_mb(now)}), past the memory ceiling of {_mb(cap)} (--max-memory): ask for the "
        f"verdict alone (no --states, no --format herd), one outcome (--outcome), or the states "
        f"streamed (--states, --json), or raise --max-memory")


def _mb(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB"

"""hw.sim — a CPU simulator of an AMD GPU memory system, with mutants (DESIGN.md "sim").

``make_backend(spec)`` is the factory registered as the ``sim`` backend family: ``spec`` is what
follows ``sim:`` in the backend name (see :mod:`hw.sim.profiles` for the syntax).
"""

from __future__ import annotations

import os as _os

from litmus.jitcache import announce_compiles as _announce
from litmus.jitcache import guard as _guard

from .threads import wait_passively as _wait_passively

_wait_passively()       # before numba's OpenMP threads start (hw/sim/threads.py)

#: the sources the simulator's compiled kernel is built from (see litmus/jitcache.py)
_guard(_os.path.dirname(_os.path.abspath(__file__)), ["kernel.py", "uops.py", "../../litmus/rmw.py",
                                                      "../../litmus/rmw_jit.py"])
_announce("hw.sim", "the simulator")

from .backend import SimBackend, parse_spec  # noqa: E402
from .mutants import MUTANTS, Mutant  # noqa: E402
from .profiles import DEFAULT_PROFILE, PROFILES, Profile  # noqa: E402


def make_backend(spec: str | None) -> SimBackend:
    return SimBackend(*parse_spec(spec))


__all__ = ["SimBackend", "make_backend", "parse_spec", "MUTANTS", "Mutant", "PROFILES",
           "Profile", "DEFAULT_PROFILE"]

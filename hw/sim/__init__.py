"""hw.sim — a CPU simulator of an AMD GPU memory system, with mutants (DESIGN.md "sim").

``make_backend(spec)`` is the factory registered as the ``sim`` backend family: ``spec`` is what
follows ``sim:`` in the backend name (see :mod:`hw.sim.profiles` for the syntax).
"""

from __future__ import annotations

from .backend import SimBackend, parse_spec
from .mutants import MUTANTS, Mutant
from .profiles import DEFAULT_PROFILE, PROFILES, Profile


def make_backend(spec: str | None) -> SimBackend:
    return SimBackend(*parse_spec(spec))


__all__ = ["SimBackend", "make_backend", "parse_spec", "MUTANTS", "Mutant", "PROFILES",
           "Profile", "DEFAULT_PROFILE"]

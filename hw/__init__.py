"""hw — backends that run litmus tests: ``sim`` (CPU simulator of an AMD GPU memory system, with
mutants), ``opencl`` (kernels on real devices) and ``isa`` (clang-22's AMDGPU machine code run on
the simulator's memory system). :func:`get_backend` maps a backend name (``sim``, ``sim:MUTANT``,
``opencl``, ``opencl:PLATFORM:DEVICE``, ``isa:TARGET[:MUTANT]``) to an instance;
:func:`parse_backend_spec` reads such a name (and the compiler campaigns' ``ptxc:...``) into a
typed :class:`BackendSpec` without opening anything (:mod:`hw.spec`).

Backends import only :mod:`litmus` (and their own numba/pyopencl helpers), never ``oracle`` or
``fuzz``: comparing what a backend shows with what the model allows is the harness's job
(:mod:`fuzz.compare`).
"""

from __future__ import annotations

import pkgutil

from .backend import (Backend, BackendError, BackendFactory, BackendRefused, ExhaustiveBackend,
                      Histogram)
from .spec import FAMILIES, BackendSpec, parse_backend_spec


def get_backend(name: str) -> Backend:
    family, _, rest = name.partition(":")
    target = FAMILIES.get(family)
    if target is None:
        known = ", ".join(sorted(FAMILIES)) or "none yet"
        raise BackendError(f"unknown backend {name!r} (available: {known})")
    factory: BackendFactory = pkgutil.resolve_name(target)
    return factory(rest or None)


__all__ = ["Backend", "BackendError", "BackendFactory", "BackendRefused", "BackendSpec",
           "ExhaustiveBackend", "Histogram", "get_backend", "parse_backend_spec", "FAMILIES"]

"""hw — backends that run litmus tests: ``sim`` (CPU simulator of an AMD GPU memory system, with
mutants) and ``opencl`` (kernels on real devices). :func:`get_backend` maps a backend name
(``sim``, ``sim:MUTANT``, ``opencl``, ``opencl:PLATFORM:DEVICE``) to an instance."""

from __future__ import annotations

import importlib

from .backend import Backend, BackendError, BackendRefused, Histogram

#: backend family -> "module:factory"; factory(spec_after_colon_or_None) -> Backend
FAMILIES: dict[str, str] = {"opencl": "hw.opencl:make_backend", "sim": "hw.sim:make_backend",
                            "isa": "hw.isa:make_backend"}


def get_backend(name: str) -> Backend:
    family, _, rest = name.partition(":")
    target = FAMILIES.get(family)
    if target is None:
        known = ", ".join(sorted(FAMILIES)) or "none yet"
        raise BackendError(f"unknown backend {name!r} (available: {known})")
    mod, _, factory = target.partition(":")
    return getattr(importlib.import_module(mod), factory)(rest or None)


__all__ = ["Backend", "BackendError", "BackendRefused", "Histogram", "get_backend", "FAMILIES"]

"""What fuzz reads from a backend name (``sim``, ``sim:MUTANT``, ``isa:TARGET[,OPTS][:MUTANT]``,
``opencl[:P:D]``): its family, its mutant, whether it runs the simulator or owns a device.

The grammar is hw's (``hw.get_backend`` parses and validates a name); fuzz only needs these few
facts about a name before or without opening the backend, and asks them here, in one place, so
that a typed spec from hw can replace this module's body without touching its callers.
"""

from __future__ import annotations

#: backend families that run the simulator's compiled kernel (warmed up before a campaign)
SIMULATED = ("sim", "isa")
#: backend families whose runs occupy a device (one worker per device)
DEVICE_FAMILIES = ("opencl",)


def backend_family(spec: str) -> str:
    """The family of backend name ``spec``: the text before its first ``:``."""
    return spec.partition(":")[0]


def mutant_of(spec: str) -> str | None:
    """The planted mutant a backend name names (``sim:M``, ``isa:T:M,OPTS``), else None."""
    fam, _, rest = spec.partition(":")
    if fam == "isa":                      # isa:TARGET[,OPTS]:MUTANT[,OPTS]
        mut = rest.partition(":")[2].split(",")[0]
        return mut or None
    return rest or None if fam == "sim" else None


def simulated(*specs: str | None) -> bool:
    """Does any of the backend names (None entries skipped) run the simulator?"""
    return any(spec is not None and backend_family(spec) in SIMULATED for spec in specs)


def owns_device(spec: str) -> bool:
    """Backends whose runs occupy a device (OpenCL); the simulator runs on the CPU."""
    return backend_family(spec) in DEVICE_FAMILIES

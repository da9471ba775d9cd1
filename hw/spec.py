"""Backend names read in one place: :func:`parse_backend_spec` turns ``sim``, ``sim:MUTANT[@PROFILE]``,
``isa:TARGET[,OPTS][:MUTANT[,OPTS]]``, ``opencl[:PLATFORM:DEVICE]`` and the compiler campaigns'
``ptxc:COMPILER[:sm_XX,Oo][:MUTANT]`` into a typed :class:`BackendSpec` (issue 34: the harness
asks it instead of splitting names on ``:`` itself).

Each family's grammar stays its own (``hw.sim.backend.parse_spec``, ``hw.isa.targets.parse_spec``,
``hw.opencl.devices.select``, ``hw.ptxc.parse_spec``): the reader of a family calls it, so a name
this module accepts is one the family's factory accepts, and a bad one is the family's
:class:`~hw.backend.BackendError` (one line). Opening a device is left to the factory: an
``opencl`` spec is read for its shape only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .backend import BackendError

#: backend family -> "module:factory", a :class:`~hw.backend.BackendFactory` imported on first use
#: (:func:`hw.get_backend`; a new family is one line here, docs/architecture.md)
FAMILIES: dict[str, str] = {"opencl": "hw.opencl:make_backend", "sim": "hw.sim:make_backend",
                            "isa": "hw.isa:make_backend"}
#: families whose backends run on the simulator's kernel (numba: warmed up before a campaign)
SIMULATOR_FAMILIES = ("sim", "isa")
#: families whose backends occupy a device (one process per device; opened by workers only)
DEVICE_FAMILIES = ("opencl",)
#: the compiler campaigns' family (``fuzz --compile``; no ``hw.FAMILIES`` factory of its own)
COMPILER_FAMILY = "ptxc"


@dataclass(frozen=True)
class BackendSpec:
    """One backend name, read.

    - ``name``: the name as given; ``family``: its word before the first ``:``; ``spec``: the
      rest (what the family's factory gets), or None;
    - ``mutant``: the injected bug it names (a simulator mutant, an isa code edit, a PTX
      mutant), or None;
    - ``detail``: the family's own typed reading (a ``hw.sim.profiles.Profile``, a
      ``hw.isa.targets.Target``, ``(platform, device)`` keys of an OpenCL device, a
      ``hw.ptxc.Compiler``).
    """

    name: str
    family: str
    spec: str | None
    mutant: str | None = None
    detail: Any = None

    @property
    def simulator(self) -> bool:
        """Whether the backend runs on the simulator's kernel (``sim``, ``isa``)."""
        return self.family in SIMULATOR_FAMILIES

    @property
    def device(self) -> bool:
        """Whether the backend occupies a device (``opencl``)."""
        return self.family in DEVICE_FAMILIES

    @property
    def compiler(self) -> bool:
        """Whether it names a compiler campaign's front end (``ptxc:...``)."""
        return self.family == COMPILER_FAMILY


def _sim(spec: str | None) -> tuple[str | None, Any]:
    from .sim.backend import parse_spec
    profile, mutant = parse_spec(spec)
    return mutant, profile


def _isa(spec: str | None) -> tuple[str | None, Any]:
    from .isa.mutants import MUTANTS
    from .isa.targets import parse_spec
    target, mutant = parse_spec(spec, MUTANTS)
    return mutant, target


def _opencl(spec: str | None) -> tuple[str | None, Any]:
    from .opencl.devices import device_keys
    return None, device_keys(spec)


def _ptxc(spec: str | None) -> tuple[str | None, Any]:
    from . import ptxc
    if not spec:
        raise BackendError(f"ptxc needs a compiler: ptxc:COMPILER[:OPTIONS][:MUTANT] "
                           f"({', '.join(ptxc.COMPILERS)})")
    parts = spec.split(":")
    compiler = ptxc.parse_spec(":".join(parts[:2]))
    mutant = parts[2] if len(parts) > 2 and parts[2] else None
    if len(parts) > 3:
        raise BackendError(f"bad compiler backend {spec!r}: expected COMPILER[:OPTIONS][:MUTANT]")
    if mutant is not None:
        from .ptxc.mutants import get
        get(mutant)                       # BackendError naming the known mutants
    return mutant, compiler


#: family -> its reader (spec -> (mutant, detail)); a family of ``hw.FAMILIES`` without one here
#: is read for its family and spec only
READERS: dict[str, Callable[[str | None], tuple[str | None, Any]]] = {
    "sim": _sim, "isa": _isa, "opencl": _opencl, COMPILER_FAMILY: _ptxc}


def parse_backend_spec(name: str) -> BackendSpec:
    """The typed reading of a backend name; :class:`BackendError` (one line) for an unknown
    family or a spec its family refuses."""
    name = name.strip()
    family, colon, rest = name.partition(":")
    if family not in FAMILIES and family not in READERS:
        known = ", ".join(sorted(set(FAMILIES) | set(READERS)))
        raise BackendError(f"unknown backend {name!r} (available: {known})")
    spec = rest if colon and rest else None
    reader = READERS.get(family)
    mutant, detail = reader(spec) if reader is not None else (None, None)
    return BackendSpec(name, family, spec, mutant, detail)

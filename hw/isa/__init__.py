"""hw.isa — clang-22's AMDGPU machine code for a litmus test, run on the simulator (issue 15).

Pipeline: litmus test -> OpenCL C (:mod:`.source`) -> clang-22 + llvm-objdump-22, cached
(:mod:`.toolchain`) -> instructions (:mod:`.disasm`) -> per-thread value interpretation
(:mod:`.interp`) -> [mutant edits (:mod:`.mutants`)] -> simulator micro-ops (:mod:`.translate`)
-> a simulator machine (:mod:`.machine`) run by :class:`.backend.IsaBackend`.
``make_backend(spec)`` is the factory of the ``isa`` backend family (``isa:TARGET...``).
"""

from __future__ import annotations

from .backend import IsaBackend, make_backend
from .mutants import MUTANTS
from .targets import TARGETS

__all__ = ["IsaBackend", "make_backend", "MUTANTS", "TARGETS"]

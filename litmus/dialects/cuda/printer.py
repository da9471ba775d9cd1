"""Printer for the CUDA dialect: the OPENCL printer (litmus/dialects/opencl/printer.py) with CUDA's
spelling, as the front end (:mod:`.parse`) reads it: the placement ``P0@cta C,gpu G``, the scope
argument ``cuda::thread_scope_thread`` ... ``cuda::thread_scope_system`` (always written),
parameters ``atomic_int* x`` / ``int* x`` (non-atomic ones, ``Test.meta``) with no address
space (every location is global), and fences ``atomic_thread_fence(ORDER, SCOPE)``. CUDA has
no barriers: a barrier row is refused.
"""

from __future__ import annotations

from ...ir import Instr, Test
from ...scopes import Placement
from ..c.printer import Unspellable
from ..opencl.printer import OpenCLPrinter
from .parse import SCOPE_NAMES, parse_cuda


class CUDAPrinter(OpenCLPrinter):
    DIALECT = "CUDA"
    parse = staticmethod(parse_cuda)
    SCOPE_NAMES = SCOPE_NAMES

    def placement(self, p: Placement) -> str:
        if p != Placement(wg=p.wg, agent=p.agent) or p.wg is None:
            raise Unspellable(f"placement {p} (CUDA threads have a block and a GPU)")
        return f"@cta {p.wg},gpu {p.agent}"

    def fence(self, ins: Instr) -> str:
        if ins.attrs != ("flags=global",):
            raise Unspellable(f"fence [{' '.join(ins.attrs)}]")
        return f"atomic_thread_fence({self.order(ins.order)}{self.scope_arg(ins.scope)});"

    def barrier(self, entry: Instr, exit_: Instr) -> str:
        raise Unspellable("a barrier (the CUDA dialect has none)")

    def param_types(self, test: Test) -> dict[str, str]:
        types = super().param_types(test)
        if any(rs != ("global",) for rs in self.regions.values()):
            raise Unspellable("a location outside global memory")
        return types

    def param(self, tid: int, base: str, ptype: str) -> str:
        return f"{ptype} {base}"


_PRINTER = CUDAPrinter()


def format_cuda(test: Test) -> str:
    """The test in the CUDA dialect (module doc); PrintError for what it cannot spell."""
    return _PRINTER.format(test)


__all__ = ["CUDAPrinter", "format_cuda"]

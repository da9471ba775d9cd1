"""The ``PTX`` dialect (Dat3M's PTX suite; header ``PTX`` or ``ptx``): front end, printer,
default model ``ptx``, warm-up sample and its :class:`~litmus.dialect.Dialect` record."""

from ...dialect import Dialect
from .parse import PROXIES, SCOPES, parse_ptx
from .printer import format_ptx, format_ptx_instr

SAMPLE = """PTX warmup
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.relaxed.gpu x, 1 | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.relaxed.gpu r1, x ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

DIALECT = Dialect(
    name="PTX", words=("PTX",), aliases=("ptx",), parse=parse_ptx, print=format_ptx, model="ptx",
    sample=SAMPLE, scopes=tuple(SCOPES.items()), spaces=PROXIES, control_flow=True,
    package="litmus/dialects/ptx/")

__all__ = ["DIALECT", "SAMPLE", "format_ptx", "format_ptx_instr", "parse_ptx"]

"""The Vulkan dialect (Dat3M's VULKAN suite; header ``VULKAN`` or ``Vulkan``): front end,
printer, default model ``vulkan``, warm-up sample and its :class:`~litmus.dialect.Dialect`
record."""

from ...dialect import Dialect
from .parse import parse_vulkan
from .printer import format_vulkan, format_vulkan_instr

SAMPLE = """Vulkan warmup
{ x=0; y=0; }
 P0@sg 0, wg 0, qf 0                   | P1@sg 0, wg 1, qf 0                        ;
 st.atom.dv.sc0 x, 1                   | ld.atom.acq.dv.sc0.semsc0 r0, y            ;
 st.atom.rel.dv.sc0.semsc0 y, 1        | ld.atom.dv.sc0 r1, x                       ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

DIALECT = Dialect(
    name="VULKAN", words=("VULKAN", "Vulkan"), parse=parse_vulkan, print=format_vulkan, model="vulkan",
    sample=SAMPLE, scopes=(("sg", "wave"), ("wg", "wg"), ("qf", "agent"), ("dv", "sys")),
    spaces=("sc0", "sc1", "sc2", "sc3"), control_flow=True, package="litmus/dialects/vulkan/")

__all__ = ["DIALECT", "SAMPLE", "format_vulkan", "format_vulkan_instr", "parse_vulkan"]

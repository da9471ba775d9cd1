"""The AMDGPU dialect, scopefuzz's native one (LITMUS.md): front end, printer, default model
``amdgpu``, warm-up sample and its :class:`~litmus.dialect.Dialect` record."""

from ...dialect import Dialect
from .parse import parse_amdgpu
from .printer import format_amdgpu, format_instr, format_placement

#: message passing with a release/acquire pair across two workgroups (oracle/warmup.py)
SAMPLE = """AMDGPU warmup
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                   ;
 st.atom.agent x, 1     | ld.atom.acq.agent r0, y   ;
 st.atom.rel.agent y, 1 | ld.atom.agent r1, x       ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

DIALECT = Dialect(
    name="AMDGPU", words=("AMDGPU",), parse=parse_amdgpu, print=format_amdgpu, model="amdgpu",
    sample=SAMPLE,
    scopes=(("thread", "thread"), ("wave", "wave"), ("wg", "wg"), ("cluster", "cluster"),
            ("agent", "agent"), ("sys", "sys")),
    spaces=("global", "lds"), package="litmus/dialects/amdgpu/")

__all__ = ["DIALECT", "SAMPLE", "format_amdgpu", "format_instr", "format_placement",
           "parse_amdgpu"]

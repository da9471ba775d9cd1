"""The ``TILEIR`` dialect (CUDA Tile IR programs, docs/tileir.md): its ops (:mod:`.ops`), front
end, printer, default model ``tileir``, warm-up sample and :class:`~litmus.dialect.Dialect`
record."""

from ...dialect import Dialect
from .ops import HEADER, SCOPES, TileOp
from .parse import parse_tileir
from .printer import format_op, format_tileir

SAMPLE = """TILEIR warmup
{ x = 0; f = 0; }
 P0@block 0, device 0                     | P1@block 1, device 0                            ;
 t0 = store relaxed device [x], [1]       | [r0], t2 = load acquire device [f]              ;
 t1 = store release device [f], [1] token=t0 | [r1], t3 = load relaxed device [x] token=t2 ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

DIALECT = Dialect(
    name=HEADER, words=(HEADER,), parse=parse_tileir, print=format_tileir, model="tileir",
    sample=SAMPLE, scopes=tuple(zip(SCOPES, ("wg", "agent", "sys"))), spaces=("global",),
    package="litmus/dialects/tileir/", mapped_to="PTX",
    mapping="litmus.mappings.tileir_ptx:lower")

__all__ = ["DIALECT", "SAMPLE", "TileOp", "format_op", "format_tileir", "parse_tileir"]

"""The ``C`` dialect (Dat3M/herd's C11 litmus tests, the C11 conformance suite): front end,
printer (:mod:`.printer`), default model ``rc11``, warm-up sample and its
:class:`~litmus.dialect.Dialect` record."""

from ...dialect import Dialect
from .parse import parse_c
from .printer import format_c

SAMPLE = """C warmup
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (1:r0=1 /\\ 1:r1=0)
"""

DIALECT = Dialect(
    name="C", words=("C",), parse=parse_c, print=format_c, model="rc11", sample=SAMPLE,
    scopes=(("", "sys"),), spaces=("global",), control_flow=True, package="litmus/dialects/c/", c_comments=True)

__all__ = ["DIALECT", "SAMPLE", "format_c", "parse_c"]

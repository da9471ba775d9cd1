"""The ``OPENCL`` dialect (OpenCL C 2.0 litmus tests, Dat3M's OPENCL suite): front end, printer
(:mod:`.printer`), default model ``opencl``, warm-up sample and its
:class:`~litmus.dialect.Dialect` record."""

from ...dialect import Dialect
from .parse import SCOPES, parse_opencl
from .printer import format_opencl

SAMPLE = """OPENCL warmup
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);
  atomic_store_explicit(y, 1, memory_order_release, memory_scope_device);
}
P1@wg 1, dev 0 (global atomic_int* x, global atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, memory_scope_device);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, memory_scope_device);
}
exists (1:r0=1 /\\ 1:r1=0)
"""

DIALECT = Dialect(
    name="OPENCL", words=("OPENCL",), parse=parse_opencl, print=format_opencl, model="opencl",
    sample=SAMPLE, scopes=tuple(SCOPES.items()), spaces=("global", "local"), control_flow=True,
    package="litmus/dialects/opencl/", c_comments=True)

__all__ = ["DIALECT", "SAMPLE", "format_opencl", "parse_opencl"]

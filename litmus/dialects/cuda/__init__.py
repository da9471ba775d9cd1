"""The ``CUDA`` dialect (CUDA C++ source programs of the compilers-in-the-loop check,
docs/compilers.md): front end, printer (:mod:`.printer`), default model ``opencl``, warm-up sample and
its :class:`~litmus.dialect.Dialect` record."""

from ...dialect import Dialect
from .parse import SCOPES, parse_cuda
from .printer import format_cuda

SAMPLE = """CUDA warmup
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_device);
  atomic_store_explicit(y, 1, memory_order_release, cuda::thread_scope_device);
}
P1@cta 1,gpu 0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_device);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, cuda::thread_scope_device);
}
exists (P1:r0=1 /\\ P1:r1=0)
"""

DIALECT = Dialect(
    name="CUDA", words=("CUDA",), parse=parse_cuda, print=format_cuda, model="opencl", sample=SAMPLE,
    scopes=tuple(SCOPES.items()), spaces=("global",), control_flow=True,
    package="litmus/dialects/cuda/", c_comments=True)

__all__ = ["DIALECT", "SAMPLE", "format_cuda", "parse_cuda"]

"""hw.opencl — the ``opencl`` backend: litmus tests as OpenCL kernels on real devices.

:mod:`~hw.opencl.codegen` turns a test into a kernel (kernel languages ``cl3``, ``amdgcn`` and
``ptx``; ``codegen --dialect``),
:mod:`hw.layout` spreads thread roles over work-items (MC Mutants' parallel testing
environment), :mod:`~hw.opencl.runner` runs it with pyopencl and counts outcomes with numpy,
:mod:`~hw.opencl.devices` lists and picks devices. pyopencl is imported lazily, so codegen works
without an OpenCL installation.
"""

from .codegen import KERNEL_LANGUAGES, CodegenError, Kernel, barrier_problem, generate


def make_backend(spec: str | None):
    """Factory registered in ``hw.FAMILIES["opencl"]``: ``opencl`` or ``opencl:P:D``."""
    from .runner import OpenCLBackend
    return OpenCLBackend(spec)


__all__ = ["KERNEL_LANGUAGES", "CodegenError", "Kernel", "barrier_problem", "generate", "make_backend"]

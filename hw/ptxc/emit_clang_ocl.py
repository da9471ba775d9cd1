"""``clang-ocl``: OpenCL C 2.0 for the ``nvptx64-nvidia-nvcl`` target.

This machine has no libclc for NVPTX, so the library functions ``atomic_load_explicit`` ... of
``opencl-c.h`` would stay undefined calls in the PTX. The kernel therefore spells each OpenCL C
2.0 atomic as the clang builtin that implements it, ``__opencl_atomic_load/store/fetch_OP/
exchange/compare_exchange_strong`` (OpenCL memory scopes ``__OPENCL_MEMORY_SCOPE_WORK_ITEM/
WORK_GROUP/DEVICE/ALL_SVM_DEVICES``), and ``atomic_work_item_fence(flags, order, scope)`` as
``__scoped_atomic_thread_fence(order, scope)`` (clang has no OpenCL fence builtin; the flags
select address spaces, and every location here is global). Locations are ``global int *``
parameters, cast to ``global atomic_int *`` for the atomics. OpenCL has no cluster scope.
"""

from __future__ import annotations

from .emit_clang_cuda import ORDER, SCOPE as FENCE_SCOPE
from .emit_common import Spelling

SCOPE = {"thread": "__OPENCL_MEMORY_SCOPE_WORK_ITEM", "wg": "__OPENCL_MEMORY_SCOPE_WORK_GROUP",
         "agent": "__OPENCL_MEMORY_SCOPE_DEVICE", "sys": "__OPENCL_MEMORY_SCOPE_ALL_SVM_DEVICES"}
FETCH = {"add": "__opencl_atomic_fetch_add", "sub": "__opencl_atomic_fetch_sub",
         "and": "__opencl_atomic_fetch_and", "or": "__opencl_atomic_fetch_or",
         "xor": "__opencl_atomic_fetch_xor", "min": "__opencl_atomic_fetch_min",
         "max": "__opencl_atomic_fetch_max", "xchg": "__opencl_atomic_exchange"}


class ClangOcl(Spelling):
    NAME = "clang-ocl"
    SUFFIX = ".cl"

    def kernel_head(self, name, params):
        return f"kernel void {name}({', '.join(params)}) {{"

    def param(self, cname):
        return f"global int *{cname}"

    def gid(self):
        return ("__nvvm_read_ptx_sreg_tid_x() + __nvvm_read_ptx_sreg_ctaid_x() * "
                "__nvvm_read_ptx_sreg_ntid_x()")

    @staticmethod
    def _a(p):
        return f"(global atomic_int *){p}"

    def load(self, p, order, scope):
        return f"__opencl_atomic_load({self._a(p)}, {ORDER[order]}, {SCOPE[scope]})"

    def store(self, p, v, order, scope):
        return f"__opencl_atomic_store({self._a(p)}, {v}, {ORDER[order]}, {SCOPE[scope]});"

    def rmw(self, op, p, v, order, scope):
        return f"{FETCH[op]}({self._a(p)}, {v}, {ORDER[order]}, {SCOPE[scope]})"

    def cas(self, p, e, v, succ, fail, scope):
        return (f"__opencl_atomic_compare_exchange_strong({self._a(p)}, &{e}, {v}, "
                f"{ORDER[succ]}, {ORDER[fail]}, {SCOPE[scope]});")

    def fence(self, order, scope, ins):
        return f"__scoped_atomic_thread_fence({ORDER[order]}, {FENCE_SCOPE[scope]});"

    def refuse(self, ins):
        if ins.scope == "cluster":
            return "OpenCL C has no cluster scope"
        if ins.scope == "thread" and ins.base != "fence":
            return ("memory_scope_work_item on an atomic operation (OpenCL C 2.0 allows it on "
                    "fences only; clang rejects it)")
        return None

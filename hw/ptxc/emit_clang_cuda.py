"""``clang-cuda``: CUDA C++ with clang's ``__scoped_atomic_*`` builtins, compiled device-only.

Without the CUDA headers (``-nocudainc``) ``__global__`` is defined as clang's attribute and the
thread ids are read with the ``__nvvm_read_ptx_sreg_*`` builtins. Every atomic is one builtin
call with the C11 order (``__ATOMIC_*``) and a memory scope (``__MEMORY_SCOPE_SINGLE/WRKGRP/
CLUSTR/DEVICE/SYSTEM`` for work-item, work-group/block, cluster, device, system); fences are
``__scoped_atomic_thread_fence``; a compare-exchange is the strong form.
"""

from __future__ import annotations

from .emit_common import Spelling

ORDER = {"rlx": "__ATOMIC_RELAXED", "acq": "__ATOMIC_ACQUIRE", "rel": "__ATOMIC_RELEASE",
         "acq_rel": "__ATOMIC_ACQ_REL", "sc": "__ATOMIC_SEQ_CST"}
SCOPE = {"thread": "__MEMORY_SCOPE_SINGLE", "wg": "__MEMORY_SCOPE_WRKGRP",
         "cluster": "__MEMORY_SCOPE_CLUSTR", "agent": "__MEMORY_SCOPE_DEVICE",
         "sys": "__MEMORY_SCOPE_SYSTEM"}
FETCH = {"add": "__scoped_atomic_fetch_add", "sub": "__scoped_atomic_fetch_sub",
         "and": "__scoped_atomic_fetch_and", "or": "__scoped_atomic_fetch_or",
         "xor": "__scoped_atomic_fetch_xor", "min": "__scoped_atomic_fetch_min",
         "max": "__scoped_atomic_fetch_max", "xchg": "__scoped_atomic_exchange_n"}


class ClangCuda(Spelling):
    NAME = "clang-cuda"
    SUFFIX = ".cu"

    def prelude(self):
        return ["#define __global__ __attribute__((global))"]

    def gid(self):
        return ("__nvvm_read_ptx_sreg_tid_x() + __nvvm_read_ptx_sreg_ctaid_x() * "
                "__nvvm_read_ptx_sreg_ntid_x()")

    def load(self, p, order, scope):
        return f"__scoped_atomic_load_n({p}, {ORDER[order]}, {SCOPE[scope]})"

    def store(self, p, v, order, scope):
        return f"__scoped_atomic_store_n({p}, {v}, {ORDER[order]}, {SCOPE[scope]});"

    def rmw(self, op, p, v, order, scope):
        return f"{FETCH[op]}({p}, {v}, {ORDER[order]}, {SCOPE[scope]})"

    def cas(self, p, e, v, succ, fail, scope):
        return (f"__scoped_atomic_compare_exchange_n({p}, &{e}, {v}, 0, {ORDER[succ]}, "
                f"{ORDER[fail]}, {SCOPE[scope]});")

    def fence(self, order, scope, ins):
        return f"__scoped_atomic_thread_fence({ORDER[order]}, {SCOPE[scope]});"

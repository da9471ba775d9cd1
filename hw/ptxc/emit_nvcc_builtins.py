"""``nvcc-builtins``: CUDA C++ with nvcc's ``__nv_atomic_*`` builtins (CUDA 12.8+).

``__nv_atomic_load_n/store_n/exchange_n/fetch_OP/compare_exchange_n(p, &e, v, weak=false, succ,
fail, scope)`` and ``__nv_atomic_thread_fence(order, scope)``, orders ``__NV_ATOMIC_*`` and
scopes ``__NV_THREAD_SCOPE_THREAD/BLOCK/CLUSTER/DEVICE/SYSTEM`` (declared by nvcc itself,
crt/device_functions.h).
"""

from __future__ import annotations

from .emit_common import Spelling

ORDER = {"rlx": "__NV_ATOMIC_RELAXED", "acq": "__NV_ATOMIC_ACQUIRE",
         "rel": "__NV_ATOMIC_RELEASE", "acq_rel": "__NV_ATOMIC_ACQ_REL",
         "sc": "__NV_ATOMIC_SEQ_CST"}
SCOPE = {"thread": "__NV_THREAD_SCOPE_THREAD", "wg": "__NV_THREAD_SCOPE_BLOCK",
         "cluster": "__NV_THREAD_SCOPE_CLUSTER", "agent": "__NV_THREAD_SCOPE_DEVICE",
         "sys": "__NV_THREAD_SCOPE_SYSTEM"}
FETCH = {"add": "__nv_atomic_fetch_add", "sub": "__nv_atomic_fetch_sub",
         "and": "__nv_atomic_fetch_and", "or": "__nv_atomic_fetch_or",
         "xor": "__nv_atomic_fetch_xor", "min": "__nv_atomic_fetch_min",
         "max": "__nv_atomic_fetch_max", "xchg": "__nv_atomic_exchange_n"}


class NvccBuiltins(Spelling):
    NAME = "nvcc-builtins"
    SUFFIX = ".cu"

    def load(self, p, order, scope):
        return f"__nv_atomic_load_n({p}, {ORDER[order]}, {SCOPE[scope]})"

    def store(self, p, v, order, scope):
        return f"__nv_atomic_store_n({p}, {v}, {ORDER[order]}, {SCOPE[scope]});"

    def rmw(self, op, p, v, order, scope):
        return f"{FETCH[op]}({p}, {v}, {ORDER[order]}, {SCOPE[scope]})"

    def cas(self, p, e, v, succ, fail, scope):
        return (f"__nv_atomic_compare_exchange_n({p}, &{e}, {v}, false, {ORDER[succ]}, "
                f"{ORDER[fail]}, {SCOPE[scope]});")

    def fence(self, order, scope, ins):
        return f"__nv_atomic_thread_fence({ORDER[order]}, {SCOPE[scope]});"

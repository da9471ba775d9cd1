"""``nvcc-libcu``: CUDA C++ with libcu++'s ``cuda::atomic_ref<int, cuda::thread_scope_*>``.

Each atomic access constructs an ``atomic_ref`` on the location and calls ``load/store/
fetch_OP/exchange/compare_exchange_strong(expected, desired, success, failure)`` with a
``cuda::memory_order_*``; fences are ``cuda::atomic_thread_fence(order, scope)``. libcu++ in
CUDA 13.0 has no cluster scope (refused).
"""

from __future__ import annotations

from .emit_common import Spelling

ORDER = {"rlx": "cuda::memory_order_relaxed", "acq": "cuda::memory_order_acquire",
         "rel": "cuda::memory_order_release", "acq_rel": "cuda::memory_order_acq_rel",
         "sc": "cuda::memory_order_seq_cst"}
SCOPE = {"thread": "cuda::thread_scope_thread", "wg": "cuda::thread_scope_block",
         "agent": "cuda::thread_scope_device", "sys": "cuda::thread_scope_system"}
FETCH = {"add": "fetch_add", "sub": "fetch_sub", "and": "fetch_and", "or": "fetch_or",
         "xor": "fetch_xor", "min": "fetch_min", "max": "fetch_max", "xchg": "exchange"}


class NvccLibcu(Spelling):
    NAME = "nvcc-libcu"
    SUFFIX = ".cu"

    def prelude(self):
        return ["#include <cuda/atomic>"]

    @staticmethod
    def _ref(p, scope):
        return f"cuda::atomic_ref<int, {SCOPE[scope]}>(*{p})"

    def load(self, p, order, scope):
        return f"{self._ref(p, scope)}.load({ORDER[order]})"

    def store(self, p, v, order, scope):
        return f"{self._ref(p, scope)}.store({v}, {ORDER[order]});"

    def rmw(self, op, p, v, order, scope):
        return f"{self._ref(p, scope)}.{FETCH[op]}({v}, {ORDER[order]})"

    def cas(self, p, e, v, succ, fail, scope):
        return (f"{self._ref(p, scope)}.compare_exchange_strong({e}, {v}, {ORDER[succ]}, "
                f"{ORDER[fail]});")

    def fence(self, order, scope, ins):
        return f"cuda::atomic_thread_fence({ORDER[order]}, {SCOPE[scope]});"

    def refuse(self, ins):
        if ins.scope == "cluster":
            return "libcu++ (CUDA 13.0) has no cluster thread scope"
        return None

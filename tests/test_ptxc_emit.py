"""The kernel emitters (hw/ptxc/emit_*.py): what each front end's source says for one access,
the role layout, and what is refused. No compiler needed."""

from __future__ import annotations

import pytest

from hw import BackendError, BackendRefused
from hw.ptxc import COMPILERS, SPELLINGS, Compiler, parse_spec, refusal
from hw.ptxc.emit_common import emit
from hw.ptxc.layout import make_layout
from litmus.parse_c import parse_c
from litmus.parse_opencl import parse_opencl

MP_WG = parse_opencl("""OPENCL MP_wg
{ [x]=0; [y]=0; }
P0@wg 0, dev 0 (global int* x, global atomic_int* y) {
  *x = 1;
  atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group);
}
P1@wg 0, dev 0 (global int* x, global atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, memory_scope_device);
  int r1 = *x;
}
exists (1:r0=1 /\\ 1:r1=0)
""")

C_SB = parse_c("""C SB
{ [x]=0; [y]=0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_seq_cst);
  int r0 = atomic_fetch_add_explicit(y, 2, memory_order_acq_rel);
}
P1 (atomic_int* x, atomic_int* y) {
  atomic_thread_fence(memory_order_seq_cst);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (0:r0=0 /\\ 1:r1=0)
""")

#: front end -> (the release/work-group store of MP_WG, the acquire/device load)
SPELLED = {
    "clang-cuda": ("__scoped_atomic_store_n(p_y, 1, __ATOMIC_RELEASE, __MEMORY_SCOPE_WRKGRP);",
                   "r0 = __scoped_atomic_load_n(p_y, __ATOMIC_ACQUIRE, __MEMORY_SCOPE_DEVICE);"),
    "clang-ocl": ("__opencl_atomic_store((global atomic_int *)p_y, 1, __ATOMIC_RELEASE, "
                  "__OPENCL_MEMORY_SCOPE_WORK_GROUP);",
                  "r0 = __opencl_atomic_load((global atomic_int *)p_y, __ATOMIC_ACQUIRE, "
                  "__OPENCL_MEMORY_SCOPE_DEVICE);"),
    "nvcc-libcu": ("cuda::atomic_ref<int, cuda::thread_scope_block>(*p_y).store(1, "
                   "cuda::memory_order_release);",
                   "r0 = cuda::atomic_ref<int, cuda::thread_scope_device>(*p_y).load("
                   "cuda::memory_order_acquire);"),
    "nvcc-builtins": ("__nv_atomic_store_n(p_y, 1, __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_BLOCK);",
                      "r0 = __nv_atomic_load_n(p_y, __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_DEVICE);"),
}


@pytest.mark.parametrize("name", COMPILERS)
def test_each_front_end_spells_order_and_scope(name):
    em = emit(MP_WG, SPELLINGS[name](), per_role=False)
    store, load = SPELLED[name]
    lines = [ln.strip() for ln in em.text.splitlines()]
    assert store in lines
    assert load in lines
    # plain accesses stay plain C (no volatile)
    assert "*p_x = 1;" in lines and "r1 = *p_x;" in lines
    assert "volatile" not in em.text
    # the rows' source lines point at those statements
    assert em.text.splitlines()[em.lines[0][1] - 1].strip() == store
    assert em.text.splitlines()[em.lines[1][0] - 1].strip() == load


def test_c_atomics_are_system_scope_and_fences_and_rmw_spelled():
    em = emit(C_SB, SPELLINGS["clang-cuda"](), per_role=False)
    lines = [ln.strip() for ln in em.text.splitlines()]
    assert "__scoped_atomic_store_n(p_x, 1, __ATOMIC_SEQ_CST, __MEMORY_SCOPE_SYSTEM);" in lines
    assert "r0 = __scoped_atomic_fetch_add(p_y, 2, __ATOMIC_ACQ_REL, __MEMORY_SCOPE_SYSTEM);" \
        in lines
    assert "__scoped_atomic_thread_fence(__ATOMIC_SEQ_CST, __MEMORY_SCOPE_SYSTEM);" in lines
    em = emit(C_SB, SPELLINGS["nvcc-libcu"](), per_role=False)
    assert "cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);" \
        in [ln.strip() for ln in em.text.splitlines()]


def test_layout_roles_ctas_and_output_words():
    # MP_WG: both threads in work-group 0 -> one CTA of two threads, gids 0 and 1
    lay = make_layout(MP_WG)
    assert (lay.ntid, lay.nctas) == (2, 1)
    assert [(r.cta, r.pos, r.gid) for r in lay.roles] == [(0, 0, 0), (0, 1, 1)]
    assert lay.roles[1].observed == ("r0", "r1") and lay.stride == 2
    em = emit(MP_WG, SPELLINGS["clang-cuda"](), per_role=False)
    assert "out[2] = r0;" in em.text and "out[3] = r1;" in em.text
    assert "case 0: {" in em.text and "case 1: {" in em.text
    # C threads each get a CTA of their own
    lay = make_layout(C_SB)
    assert (lay.ntid, lay.nctas) == (1, 2)
    assert [(r.cta, r.gid) for r in lay.roles] == [(0, 0), (1, 1)]


def test_per_role_layout_has_one_kernel_per_thread():
    em = emit(MP_WG, SPELLINGS["nvcc-builtins"](), per_role=True)
    assert em.kernels == ("P0", "P1")
    assert "switch" not in em.text
    assert 'extern "C" __global__ void P0(int *p_x, int *p_y, int *out) {' in em.text
    em = emit(MP_WG, SPELLINGS["clang-ocl"](), per_role=True)
    assert "kernel void P1(global int *p_x, global int *p_y, global int *out) {" in em.text


def test_refusals():
    barrier = parse_opencl("""OPENCL bar
{ [x]=0; }
P0@wg 0, dev 0 (global int* x) { *x = 1; B1: barrier(CLK_GLOBAL_MEM_FENCE); }
P1@wg 0, dev 0 (global int* x) { B1: barrier(CLK_GLOBAL_MEM_FENCE); int r0 = *x; }
exists (1:r0=0)
""")
    why = refusal(barrier, Compiler("clang-cuda"))
    assert why is not None and "barrier" in why
    with pytest.raises(BackendRefused, match="barrier"):
        emit(barrier, SPELLINGS["clang-cuda"](), per_role=False)
    item = parse_opencl("""OPENCL wi
{ [x]=0; }
P0@wg 0, dev 0 (global atomic_int* x) {
  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_work_item); }
exists (x=1)
""")
    assert "work_item" in refusal(item, Compiler("clang-ocl"))
    assert refusal(item, Compiler("clang-cuda")) is None
    named = parse_c("""C named
{ [x]=0; }
P0 (atomic_int* x) { int t = atomic_load_explicit(x, memory_order_relaxed); }
exists (0:t=1)
""")
    assert "names register 't'" in refusal(named, Compiler("clang-cuda"))
    assert refusal(MP_WG, Compiler("nvcc-libcu")) is None


def test_parse_spec():
    assert parse_spec("clang-cuda") == Compiler("clang-cuda", 90, "O2", False)
    c = parse_spec("nvcc-libcu:sm_80,O0,per-role")
    assert c == Compiler("nvcc-libcu", 80, "O0", True)
    assert c.spec() == "nvcc-libcu:sm_80,O0,per-role"
    assert parse_spec(c.spec()) == c
    assert parse_spec("clang-ocl:O3").spec() == "clang-ocl:sm_90,O3"
    for bad, msg in (("gcc", "unknown compiler 'gcc'"), ("clang-cuda:sm_91", "sm_91"),
                     ("clang-cuda:O9", "bad compiler option 'O9'")):
        with pytest.raises(BackendError, match=msg) as e:
            parse_spec(bad)
        assert "\n" not in str(e.value)


def test_cuda_dialect_scope_words():
    # the CUDA source dialect's IR names scopes cta/gpu/sys (INTERFACE.md): block/device/system
    import dataclasses
    th = [dataclasses.replace(t, code=tuple(
        i.replace(scope={"wg": "cta", "agent": "gpu"}.get(i.scope, i.scope)) for i in t.code))
        for t in MP_WG.threads]
    cuda = dataclasses.replace(MP_WG, threads=tuple(th), dialect="CUDA")
    assert refusal(cuda, Compiler("nvcc-libcu")) is None
    lines = [ln.strip() for ln in emit(cuda, SPELLINGS["nvcc-libcu"](), False).text.splitlines()]
    assert SPELLED["nvcc-libcu"][0] in lines and SPELLED["nvcc-libcu"][1] in lines

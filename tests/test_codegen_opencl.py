"""Codegen of litmus tests into OpenCL kernels (hw/opencl/codegen.py, hw/layout.py), no device needed.

Structure tests check that each construct is lowered to the right builtin with an order and scope
at least as strong as the instruction's (hand-derived tables below), never a byte-for-byte copy of
the output. The compile tests build the amdgcn kernel of every corpus test and of our own
instruction set for six gfx targets with clang-22 (skipped only when clang-22 is absent).
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import litmus
from litmus import Condition, Const, Instr, Location, Placement, Test, Thread
from hw.layout import block_of, check_shape, layout_of, role_table
from hw.opencl.codegen import (EMITTERS, KERNEL_LANGUAGES, CL3Emitter, CodegenError,
                               barrier_problem, generate, split_phases)
from hw.opencl.runner import count_rows

from conftest import CORPORA
from opencl_programs import LDS_BARRIER, SB_SC_FENCE

CLANG = shutil.which("clang-22")
TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250")


def one(instr: str, decl: str = "x = 0; lds a = 0;") -> Test:
    return litmus.parse(f"AMDGPU one\n{{ {decl} }}\n P0@wg 0 ;\n {instr} ;\nexists (true)\n")


def code_lines(src: str) -> list[str]:
    """The test's lowered statements: phase-0 onwards, no comments, no preprocessor lines."""
    body = src[src.index("/* phase 0 */"):]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return [ln.strip() for ln in body.splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


# --- every construct: builtin, order and scope (hand-derived expectations) ----------------------

CL3_CASES = [
    ("ld.atom.acq.agent r0, x", "atomic_load_explicit", "memory_order_acquire", "SF_SCOPE_AGENT"),
    ("ld.atom.sc.wg r0, x", "atomic_load_explicit", "memory_order_seq_cst", "SF_SCOPE_WG"),
    ("ld.atom r0, x", "atomic_load_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("st.atom.rel.cluster x, 1", "atomic_store_explicit", "memory_order_release", "SF_SCOPE_AGENT"),
    ("st.atom.sc.wave x, 1", "atomic_store_explicit", "memory_order_seq_cst", "SF_SCOPE_WG"),
    ("rmw.add.acq_rel.agent r0, x, 1", "atomic_fetch_add_explicit", "memory_order_acq_rel", "SF_SCOPE_AGENT"),
    ("rmw.sub r0, x, 1", "atomic_fetch_sub_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("rmw.xchg.acq.wg r0, x, 1", "atomic_exchange_explicit", "memory_order_acquire", "SF_SCOPE_WG"),
    ("rmw.and.rel r0, x, 1", "atomic_fetch_and_explicit", "memory_order_release", "SF_SCOPE_SYS"),
    ("rmw.or r0, x, 1", "atomic_fetch_or_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("rmw.xor r0, x, 1", "atomic_fetch_xor_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("rmw.max r0, x, 1", "atomic_fetch_max_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("rmw.min r0, x, 1", "atomic_fetch_min_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("cas.acq.agent r0, x, 0, 1", "atomic_compare_exchange_strong_explicit", "memory_order_acquire", "SF_SCOPE_AGENT"),
    ("fence.rel.wg", "atomic_work_item_fence", "memory_order_release", "SF_SCOPE_WG"),
    ("fence.acq.agent", "atomic_work_item_fence", "memory_order_acquire", "SF_SCOPE_AGENT"),
    ("fence.sc", "atomic_work_item_fence", "memory_order_seq_cst", "SF_SCOPE_SYS"),
    ("fence.acq_rel.thread", "atomic_work_item_fence", "memory_order_acq_rel", "SF_SCOPE_WG"),
    ("fence.rel.agent.noav", "atomic_work_item_fence", "memory_order_release", "SF_SCOPE_AGENT"),
    # no OpenCL equivalent: a relaxed atomic at the scope (atomic and available/visible there)
    ("ld.vis.agent r0, x", "atomic_load_explicit", "memory_order_relaxed", "SF_SCOPE_AGENT"),
    ("st.av.wg x, 1", "atomic_store_explicit", "memory_order_relaxed", "SF_SCOPE_WG"),
    ("ld.vol r0, x", "atomic_load_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    ("st.vol x, 1", "atomic_store_explicit", "memory_order_relaxed", "SF_SCOPE_SYS"),
    # LDS atomics are capped at workgroup scope
    ("ld.atom.acq.agent r0, a", "atomic_load_explicit", "memory_order_acquire", "SF_SCOPE_WG"),
]

GCN_CASES = [
    ("ld.atom.acq.agent r0, x", "__scoped_atomic_load_n", "__ATOMIC_ACQUIRE", "__MEMORY_SCOPE_DEVICE"),
    ("ld.atom.sc.wave r0, x", "__scoped_atomic_load_n", "__ATOMIC_SEQ_CST", "__MEMORY_SCOPE_WVFRNT"),
    ("ld.atom.thread r0, x", "__scoped_atomic_load_n", "__ATOMIC_RELAXED", "__MEMORY_SCOPE_SINGLE"),
    ("st.atom.rel.wg x, 1", "__scoped_atomic_store_n", "__ATOMIC_RELEASE", "__MEMORY_SCOPE_WRKGRP"),
    ("st.atom.cluster x, 1", "__scoped_atomic_store_n", "__ATOMIC_RELAXED", "SF_MEMORY_SCOPE_CLUSTER"),
    ("st.atom.sc x, 1", "__scoped_atomic_store_n", "__ATOMIC_SEQ_CST", "__MEMORY_SCOPE_SYSTEM"),
    ("rmw.add.acq_rel.agent r0, x, 1", "__scoped_atomic_fetch_add", "__ATOMIC_ACQ_REL", "__MEMORY_SCOPE_DEVICE"),
    ("rmw.xchg.rel r0, x, 1", "__scoped_atomic_exchange_n", "__ATOMIC_RELEASE", "__MEMORY_SCOPE_SYSTEM"),
    ("rmw.max.wg r0, a, 1", "__scoped_atomic_fetch_max", "__ATOMIC_RELAXED", "__MEMORY_SCOPE_WRKGRP"),
    ("cas.sc.wg r0, x, 0, 1", "__scoped_atomic_compare_exchange_n", "__ATOMIC_SEQ_CST", "__MEMORY_SCOPE_WRKGRP"),
    ("ld.vis.agent r0, x", "__builtin_amdgcn_av_load_b32", "", "__MEMORY_SCOPE_DEVICE"),
    ("st.av.wg x, 1", "__builtin_amdgcn_av_store_b32", "", "__MEMORY_SCOPE_WRKGRP"),
]

GCN_FENCES = [("fence.rel.agent", "__ATOMIC_RELEASE", '"agent"'),
              ("fence.acq.wg", "__ATOMIC_ACQUIRE", '"workgroup"'),
              ("fence.sc.wave", "__ATOMIC_SEQ_CST", '"wavefront"'),
              ("fence.acq_rel.thread", "__ATOMIC_ACQ_REL", '"singlethread"'),
              ("fence.rel.cluster", "__ATOMIC_RELEASE", '"cluster"'),
              ("fence.sc", "__ATOMIC_SEQ_CST", '""')]


@pytest.mark.parametrize("instr,fn,order,scope", CL3_CASES)
def test_cl3_lowering(instr, fn, order, scope):
    lines = code_lines(generate(one(instr), "cl3").source)
    calls = [ln for ln in lines if fn + "(" in ln]
    assert len(calls) == 1, lines
    assert order in calls[0] and scope in calls[0]


@pytest.mark.parametrize("instr,fn,order,scope", GCN_CASES)
def test_amdgcn_lowering(instr, fn, order, scope):
    src = generate(one(instr), "amdgcn").source
    body = src[src.index("/* phase 0 */"):]
    call = [ln for ln in body.splitlines() if fn + "(" in ln]
    assert len(call) == 1, body
    assert order in call[0] and scope in call[0]


@pytest.mark.parametrize("instr,order,scope", GCN_FENCES)
def test_amdgcn_fence_scope_names(instr, order, scope):
    lines = code_lines(generate(one(instr), "amdgcn").source)
    fences = [ln for ln in lines if ln.startswith("__builtin_amdgcn_fence(")]
    assert fences == [f"__builtin_amdgcn_fence({order}, {scope});"]


def test_amdgcn_av_has_faithful_fallback():
    src = generate(one("ld.vis.agent r0, x"), "amdgcn").source
    body = src[src.index("/* phase 0 */"):]
    # the av builtin only under its __has_builtin guard, else a relaxed scoped atomic at the scope
    assert re.search(r"#ifdef SF_AV_LOAD\n.*__builtin_amdgcn_av_load_b32\(.*\n#else\n.*"
                     r"__scoped_atomic_load_n\(p0_x, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE\)", body)
    assert "__has_builtin(__builtin_amdgcn_av_load_b32)" in src


def test_amdgcn_volatile_is_volatile_access():
    lines = code_lines(generate(one("ld.vol r0, x\n ;\n st.vol x, 2"), "amdgcn").source)
    assert any("volatile __global int *" in ln and "P0_r0 =" in ln for ln in lines)
    assert any("volatile __global int *" in ln and "= 2;" in ln for ln in lines)


ORDER_RANK = {"relaxed": 0, "acquire": 1, "release": 1, "acq_rel": 2, "seq_cst": 3}
CL3_SCOPE_RANK = {"SF_SCOPE_WG": 2, "SF_SCOPE_AGENT": 4, "SF_SCOPE_SYS": 5}
SCOPES = ("thread", "wave", "wg", "cluster", "agent", "sys")


def _never_weaker_cases():
    for scope in SCOPES:
        for o in ("rlx", "acq", "sc"):
            yield f"ld.atom.{o}.{scope} r0, x", o, scope
        for o in ("rlx", "rel", "sc"):
            yield f"st.atom.{o}.{scope} x, 1", o, scope
        for o in ("rlx", "acq", "rel", "acq_rel", "sc"):
            yield f"rmw.add.{o}.{scope} r0, x, 1", o, scope
            yield f"cas.{o}.{scope} r0, x, 0, 1", o, scope
        for o in ("acq", "rel", "acq_rel", "sc"):
            yield f"fence.{o}.{scope}", o, scope


def test_cl3_never_weaker_than_the_instruction():
    """Every order is kept or strengthened; every scope is mapped to one at least as wide."""
    want_order = {"rlx": 0, "acq": 1, "rel": 1, "acq_rel": 2, "sc": 3}
    n = 0
    for instr, o, scope in _never_weaker_cases():
        lines = code_lines(generate(one(instr), "cl3").source)
        call = next(ln for ln in lines if "memory_order_" in ln)
        orders = re.findall(r"memory_order_(\w+)", call)
        scope_tok = re.findall(r"SF_SCOPE_\w+", call)[-1]
        assert ORDER_RANK[orders[0]] >= want_order[o], instr
        if o in ("acq", "rel"):   # an acquire stays an acquire (or stronger), a release a release
            assert orders[0] in ({"acq": "acquire", "rel": "release"}[o], "acq_rel", "seq_cst")
        assert CL3_SCOPE_RANK[scope_tok] >= SCOPES.index(scope), instr
        n += 1
    assert n > 100


def test_cas_failure_order_raises_success_order():
    lines = code_lines(generate(one("cas.rlx.acq r0, x, 0, 1"), "cl3").source)
    call = next(ln for ln in lines if "compare_exchange" in ln)
    assert re.findall(r"memory_order_\w+", call) == ["memory_order_acquire", "memory_order_acquire"]
    lines = code_lines(generate(one("cas.rel.sc r0, x, 0, 1"), "cl3").source)
    call = next(ln for ln in lines if "compare_exchange" in ln)
    assert re.findall(r"memory_order_\w+", call) == ["memory_order_seq_cst", "memory_order_seq_cst"]


def test_cas_returns_old_value_in_register():
    lines = code_lines(generate(one("cas r0, x, 3, 4"), "cl3").source)
    stmt = next(ln for ln in lines if "compare_exchange" in ln)
    assert "int sf_e = 3;" in stmt and "&sf_e, 4," in stmt and "P0_r0 = sf_e" in stmt


def test_scope_macros_follow_device_features():
    src = generate(one("st.atom x, 1"), "cl3").source
    m = re.search(r"#if defined\(__opencl_c_atomic_scope_all_devices\)\s*\n"
                  r"#define SF_SCOPE_SYS memory_scope_all_svm_devices\s*\n#else\s*\n"
                  r"#define SF_SCOPE_SYS memory_scope_device", src)
    assert m
    assert re.search(r"#define SF_SCOPE_WG memory_scope_work_group", src)
    assert re.search(r"#define SF_SCOPE_AGENT memory_scope_device", src)
    assert "memory_scope_sub_group" not in src


# --- weakening switch -------------------------------------------------------------------------

def test_weaken_switch_changes_only_what_it_says():
    t = litmus.parse(SB_SC_FENCE)
    good = [ln for ln in code_lines(generate(t, "cl3").source) if "fence" in ln]
    bad = [ln for ln in code_lines(generate(t, "cl3", weaken="sc-fence-as-acq_rel").source)
           if "fence" in ln]
    assert len(good) == len(bad) == 2
    assert all("memory_order_seq_cst" in ln for ln in good)
    assert all("memory_order_acq_rel" in ln and "seq_cst" not in ln for ln in bad)
    relaxed = code_lines(generate(t, "cl3", weaken="relaxed").source)
    assert not any("atomic_work_item_fence" in ln for ln in relaxed)
    with pytest.raises(CodegenError):
        generate(t, "cl3", weaken="nonsense")


def test_a_dialect_is_one_emitter_class(monkeypatch):
    """The generator asks the registered emitter for every dialect-specific line: a new dialect
    (here cl3 with marked fences) is one subclass in EMITTERS, no branch elsewhere."""
    class Marked(CL3Emitter):
        name = "cl3-marked"

        def fence(self, order, scope):
            return "/* marked */ " + super().fence(order, scope)

    monkeypatch.setitem(EMITTERS, Marked.name, Marked)
    t = litmus.parse(SB_SC_FENCE)
    src = generate(t, "cl3-marked").source
    assert src.count("/* marked */ atomic_work_item_fence(") == 2
    assert src.replace("/* marked */ ", "").replace("cl3-marked kernel", "cl3 kernel") == \
        generate(t, "cl3").source
    assert set(KERNEL_LANGUAGES) == {"cl3", "amdgcn", "ptx"}


# --- barriers and async -------------------------------------------------------------------------


def test_barrier_waits_become_phase_boundaries():
    t = litmus.parse(LDS_BARRIER)
    k = generate(t, "cl3")
    assert k.phases == 1
    lines = code_lines(k.source)
    # a release fence before the boundary and an acquire fence after it: the phase barrier
    # orders memory (an OpenCL barrier with flags 0 does not, and fences do not synchronise
    # through it: docs/opencl.md, "The cl3 kernels against the OpenCL model")
    i = lines.index("SF_PHASE_BARRIER_MEM();")
    before, after = lines[:i], lines[i + 1:]
    # P0's stores and release fence before the boundary, P1's acquire fence and loads after it
    assert any("*p0_a = 1" in ln for ln in before) and any("memory_order_release" in ln for ln in before)
    assert any("memory_order_acquire" in ln for ln in after) and any("P1_r0 = *p1_a" in ln for ln in after)
    assert "#define SF_PHASE_BARRIER() work_group_barrier(0)" in k.source
    assert "#define SF_PHASE_BARRIER_MEM() work_group_barrier(CLK_GLOBAL_MEM_FENCE | " \
        "CLK_LOCAL_MEM_FENCE)" in k.source
    # without the acquire fence, the barrier stays an execution barrier
    bare = generate(litmus.parse(LDS_BARRIER.replace("fence.acq.wg", "ld r2, x   ")), "cl3")
    assert "SF_PHASE_BARRIER();" in code_lines(bare.source)
    assert "#define SF_PHASE_BARRIER() __builtin_amdgcn_s_barrier()" in generate(t, "amdgcn").source
    assert barrier_problem(t) is None


def test_split_phases():
    t = litmus.parse(LDS_BARRIER)
    assert [len(p) for p in split_phases(t.threads[0].code)] == [3, 0]
    assert [len(p) for p in split_phases(t.threads[1].code)] == [0, 3]


def test_barrier_problems_are_reported():
    misaligned = """AMDGPU named
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 bar.join 1      | barrier         ;
 bar.signal 1    | ld r0, x        ;
 bar.wait 1      |                 ;
 barrier         |                 ;
exists (true)
"""
    assert "line up" in barrier_problem(litmus.parse(misaligned))
    cluster = """AMDGPU cluster
{ x = 0; }
 P0@wg 0      | P1@wg 1      ;
 bar.signal -3 | bar.signal -3 ;
 bar.wait -3  | bar.wait -3  ;
exists (true)
"""
    assert "cluster barrier" in barrier_problem(litmus.parse(cluster))
    # threads of different workgroups need not line up; a shorter wait sequence is a prefix
    fine = """AMDGPU fine
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 | P2@wg 1 ;
 barrier         | barrier         | barrier ;
 barrier         |                 | barrier ;
                 |                 | barrier ;
exists (true)
"""
    assert barrier_problem(litmus.parse(fine)) is None


ASYNC = """AMDGPU async
{{ x = 1; y = 2; lds a = 0; lds b = 0; }}
 P0@wg 0 ;
{rows}
exists (true)
"""


@pytest.mark.parametrize("prog,count", [
    # two marks, wait 1: the first mark completes; one copy (after it) may remain in flight
    (["async.ld a, x", "async.mark", "async.ld b, y", "async.mark", "async.wait 1"], 1),
    (["async.ld a, x", "async.mark", "async.ld b, y", "async.ld a, y", "async.mark",
      "async.wait 1"], 2),
    (["async.ld a, x", "async.mark", "async.wait 0"], 0),
    (["async.ld a, x", "async.ld b, y", "async.mark", "async.ld a, y", "async.mark",
      "async.ld b, x", "async.wait 1"], 2),
])
def test_asynccnt_wait_counts(prog, count):
    t = litmus.parse(ASYNC.format(rows="\n".join(f" {p} ;" for p in prog)))
    src = generate(t, "amdgcn").source
    waits = re.findall(r"__builtin_amdgcn_s_wait_asynccnt\((\d+)\)", src)
    assert waits[0] == str(count)
    assert waits[-1] == "0"          # thread end completes every copy
    assert src.count("__builtin_amdgcn_global_load_async_to_lds_b32(") == prog.count("async.ld a, x") \
        + prog.count("async.ld b, y") + prog.count("async.ld a, y") + prog.count("async.ld b, x")


def test_async_is_synchronous_in_cl3():
    t = litmus.parse(ASYNC.format(rows=" async.ld a, x ;\n async.mark ;\n async.wait 0 ;\n ld r0, a ;"))
    lines = code_lines(generate(t, "cl3").source)
    assert lines.index("*p0_a = *p0_x;") < lines.index("P0_r0 = *p0_a;")


# --- kernel shape ---------------------------------------------------------------------------

def test_outputs_every_register_and_locations_per_instance():
    t = litmus.parse(SB_SC_FENCE)
    k = generate(t, "cl3")
    assert k.registers == ((0, "r0"), (1, "r0"))
    assert k.globals == ("x", "y")
    assert re.search(r"out\[\(ulong\)i0 \* 2u \+ 0u\] = P0_r0;", k.source)
    assert re.search(r"out\[\(ulong\)i1 \* 2u \+ 1u\] = P1_r0;", k.source)
    # each role addresses its own instance's copy of x and y
    assert re.search(r"p0_x = mem \+ \(0ul \* n_instances \+ \(\(ulong\)i0 \* perm\)", k.source)
    assert re.search(r"p1_y = mem \+ \(1ul \* n_instances \+ \(\(ulong\)i1 \* perm\)", k.source)


def test_register_initial_values_are_emitted():
    t = litmus.parse("AMDGPU r\n{ x = 0; P0:r1 = 7; }\n P0 ;\n ld r0, x ;\nexists (P0:r1 == 7)\n")
    assert "int P0_r1 = 7;" in generate(t, "cl3").source


def test_codegen_errors_are_one_line():
    t = one("ld r0, x")
    with pytest.raises(CodegenError, match="unknown dialect"):
        generate(t, "nvptx")
    with pytest.raises(CodegenError, match="the cl3 dialect lowers AMDGPU tests; this test is C"):
        generate(t.__class__(**{**t.__dict__, "dialect": "C"}), "cl3")
    with pytest.raises(CodegenError, match="bad kernel name"):
        generate(t, "cl3", kernel_name="1x")


# --- layout properties ------------------------------------------------------------------------

@st.composite
def placements(draw):
    n = draw(st.integers(1, 6))
    threads = []
    for _ in range(n):
        wg = draw(st.one_of(st.none(), st.integers(0, 2)))
        wave = draw(st.one_of(st.none(), st.integers(0, 2))) if wg is not None else None
        threads.append(Thread(Placement(wave=wave, wg=wg, cluster=draw(st.integers(0, 1))), ()))
    return Test("p", (Location("x"),), tuple(threads), Condition("exists", Const(True)))


@settings(max_examples=60, deadline=None)
@given(placements(), st.sampled_from([(1, 4), (2, 2), (4, 1)]), st.sampled_from([1, 2, 3]),
       st.sampled_from([1, 3, 5]))
def test_role_table_respects_the_scope_tree(test, blocks_stride, mult_pow, lane_mult):
    lay = layout_of(test)
    W = 4
    L = W * max(lay.max_waves, 2) * mult_pow
    n_blocks, S = blocks_stride
    G = lay.n_wg_roles
    n_wgs = G * n_blocks * S
    assert check_shape(lay, n_wgs, L, W) is None
    T = lay.n_threads
    table = role_table(lay, n_wgs, L, W, lane_mult, S).reshape(n_wgs, L, T)
    NI = n_wgs * L
    where = np.empty((NI, T, 2), dtype=np.int64)    # instance, thread -> (workgroup, lane)
    for t in range(T):
        col = table[:, :, t].ravel()
        assert sorted(col.tolist()) == list(range(NI))          # a bijection per role
        where[col, t, 0] = np.arange(NI) // L
        where[col, t, 1] = np.arange(NI) % L
    for a in range(T):
        for b in range(a + 1, T):
            same_wg = test.same(a, b, "wg")
            same_wave = test.same(a, b, "wave")
            wg_eq = where[:, a, 0] == where[:, b, 0]
            assert (wg_eq.all() if same_wg else (~wg_eq).all())
            chunk_eq = (where[:, a, 1] // W) == (where[:, b, 1] // W)
            if same_wave:
                assert chunk_eq.all()
            elif same_wg:
                assert (~chunk_eq).all()
            # never the same work-item for two threads of one instance
            assert not ((where[:, a] == where[:, b]).all(axis=1)).any()
    # all threads of an instance sit in one block
    blocks = np.stack([block_of(where[:, t, 0], n_wgs, G, S)[0] for t in range(T)], axis=1)
    assert (blocks == blocks[:, :1]).all()


def test_shape_problems():
    lay = layout_of(litmus.parse(LDS_BARRIER))
    assert check_shape(lay, 1, 8, 4) is None
    assert "wave size" in check_shape(lay, 1, 6, 4)
    assert "waves in one workgroup" in check_shape(lay, 1, 4, 4)


# --- outcome counting -------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.lists(st.integers(-3, 3), min_size=0, max_size=200),
       st.sampled_from([0, 1 << 20, 1 << 40]))
def test_count_rows_matches_a_counter(k, flat, offset):
    n = len(flat) // k
    rows = np.array(flat[:n * k], dtype=np.int64).reshape(n, k)
    rows[:, 0] += offset            # wide spans take the np.unique path
    want = collections.Counter(tuple(r) for r in rows.tolist())
    assert count_rows(rows) == dict(want)


def test_count_rows_no_columns():
    assert count_rows(np.zeros((5, 0), dtype=np.int32)) == {(): 5}


# --- command line ----------------------------------------------------------------------------

def test_codegen_command(tmp_path, capsys):
    from fuzz.cli import main
    f = tmp_path / "sb.litmus"
    f.write_text(SB_SC_FENCE)
    assert main(["codegen", "--dialect", "amdgcn", str(f)]) == 0
    out = capsys.readouterr().out
    assert "__kernel void litmus(" in out and "__builtin_amdgcn_fence(__ATOMIC_SEQ_CST, \"agent\")" in out
    assert main(["codegen", str(f)]) == 0
    assert "atomic_work_item_fence" in capsys.readouterr().out
    bad = tmp_path / "bad.litmus"
    bad.write_text("AMDGPU bad\n{ x = 0; }\n P0 ;\n frob x ;\nexists (true)\n")
    assert main(["codegen", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(str(bad) + ":") and "\n" not in err


# --- compiling with clang-22 for real gfx targets ------------------------------------------------

OWN_PROGRAMS = [
    """AMDGPU every-instruction
{ x = 0; y = 1; z; lds a = 3; lds b; P1:r9 = 7; }
 P0@wave 0, wg 0                 | P1@wave 0, wg 0            | P2@wg 1             ;
 ld r0, x                        | st x, 1                    | async.ld a, x       ;
 ld.vis.agent r1, y              | st.av.wg y, 2              | async.mark          ;
 ld.vol r2, z                    | st.vol z, 3                | async.ld b, y       ;
 ld.atom.acq.wg r3, x            | st.atom.rel.agent x, 4     | async.mark          ;
 rmw.add.acq_rel r4, y, 1        | rmw.xchg.sc.wave r0, a, 5  | async.wait 1        ;
 cas.rel.acq.cluster r5, x, 0, 1 | cas.sc.noav r1, y, 1, 2    | ld r0, a            ;
 fence.sc.thread                 | fence.rel.noav             | async.wait 0        ;
 barrier                         | barrier                    | ld r1, b            ;
 ld.atom.sc r6, a                | st.atom.wg b, 1            | rmw.min.rlx r2, z, 0 ;
 bar.signal -1                   | bar.signal -1              | rmw.max r3, z, 9    ;
 bar.wait -1                     | bar.wait -1                | rmw.and r4, z, 1    ;
 rmw.or r7, x, 2                 | rmw.xor r2, x, 1           | rmw.sub r5, z, 1    ;
 ld.vis.wave r8, a               | st.av.sys a, 2             | ld.vol r6, a        ;
exists (P0:r0 == 0)
""",
    """AMDGPU named-and-cluster
{ x = 0; }
 P0@wave 0, wg 0  | P1@wave 1, wg 0  | P2@wg 1        ;
 bar.init 1, 2    | bar.join 1       | bar.signal -3  ;
 bar.join 1       | bar.signal 1     | bar.wait -3    ;
 bar.signal 1     | bar.wait 1       | st.atom.cluster x, 1 ;
 bar.wait 1       | bar.leave        |                ;
 bar.leave        |                  |                ;
exists (true)
""",
    """AMDGPU all-scopes
{ x = 0; }
 P0                                 ;
 fence.acq.thread                    ;
 fence.rel.wave                      ;
 fence.acq_rel.wg                    ;
 fence.sc.cluster                    ;
 fence.acq.agent.noav                ;
 st.atom.rel.thread x, 1            ;
 rmw.xchg.acq.cluster.noav r0, x, 2 ;
 cas.acq_rel.rlx.agent r1, x, 2, 3  ;
exists (true)
""",
]


def _combined_source(dialect: str, corpus: bool = True) -> tuple[str, int]:
    tests = [litmus.parse(p) for p in OWN_PROGRAMS]
    if corpus:
        tests = []
        for path in litmus.litmus_files([CORPORA]):
            try:
                t = litmus.parse_file(path)
            except litmus.ParseError:
                continue            # the corpus owners' business
            if t.dialect == "AMDGPU":
                tests.append(t)
    parts = [generate(t, dialect, kernel_name=f"litmus_{i}").source for i, t in enumerate(tests)]
    return "\n".join(parts), len(tests)


def _clang(tmp_path, src: str, target: str, *mode: str) -> subprocess.CompletedProcess:
    f = tmp_path / "k.cl"
    f.write_text(src)
    return subprocess.run([CLANG, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                           f"-mcpu={target}", "-nogpulib", *mode, "-o", str(tmp_path / "k.out"),
                           str(f)], capture_output=True, text=True)


@pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")
@pytest.mark.parametrize("target", TARGETS)
def test_amdgcn_own_programs_compile_to_machine_code(tmp_path, target):
    """Our programs cover every instruction: full compile (front end + AMDGPU back end)."""
    src, n = _combined_source("amdgcn", corpus=False)
    r = _clang(tmp_path, src, target, "-O1", "-c")
    assert r.returncode == 0, r.stderr[:2000]
    assert "error" not in r.stderr


@pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")
@pytest.mark.parametrize("target", TARGETS)
def test_amdgcn_corpus_kernels_compile(tmp_path, target):
    """Every corpus test's kernel compiled to machine code for the target (front end and AMDGPU
    back end; -O0 keeps it to a few seconds per target, the test above covers -O1)."""
    src, n = _combined_source("amdgcn")
    assert n > 0
    r = _clang(tmp_path, src, target, "-O0", "-c")
    assert r.returncode == 0, r.stderr[:2000]
    assert "error" not in r.stderr


@pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")
def test_amdgcn_gfx1250_uses_async_dma_and_split_barriers(tmp_path):
    src = generate(litmus.parse(OWN_PROGRAMS[0]), "amdgcn").source
    f = tmp_path / "k.cl"
    f.write_text(src)
    asm = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                          "-mcpu=gfx1250", "-nogpulib", "-O1", "-S", "-o", "-", str(f)],
                         capture_output=True, text=True, check=True).stdout
    assert "global_load_async_to_lds_b32" in asm
    assert "s_wait_asynccnt" in asm
    assert "s_barrier_signal -1" in asm and "s_barrier_wait -1" in asm
    asm90a = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                             "-mcpu=gfx90a", "-nogpulib", "-O1", "-S", "-o", "-", str(f)],
                            capture_output=True, text=True, check=True).stdout
    assert "async_to_lds" not in asm90a and "s_barrier" in asm90a   # synchronous fallback


@pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")
def test_cl3_kernels_parse_as_opencl_c_3(tmp_path):
    src, _ = _combined_source("cl3")
    src += _combined_source("cl3", corpus=False)[0].replace("void litmus_", "void own_litmus_")
    f = tmp_path / "k.cl"
    f.write_text(src)
    r = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL3.0", "-Xclang", "-finclude-default-header",
                        "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942", "-nogpulib",
                        "-fsyntax-only", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]


@pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")
def test_cl3_sys_scope_macro_expansion(tmp_path):
    """With the all-devices feature sys maps to all_svm_devices, without it to device."""
    src = generate(one("st.atom.sc x, 1"), "cl3").source
    f = tmp_path / "k.cl"
    f.write_text(src)
    base = [CLANG, "-x", "cl", "-cl-std=CL3.0", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-E",
            str(f)]
    with_feature = subprocess.run(base + ["-D__opencl_c_atomic_scope_all_devices=1"],
                                  capture_output=True, text=True, check=True).stdout
    without = subprocess.run(base + ["-U__opencl_c_atomic_scope_all_devices"],
                             capture_output=True, text=True, check=True).stdout
    assert "memory_order_seq_cst, memory_scope_all_svm_devices)" in with_feature
    assert "memory_order_seq_cst, memory_scope_device)" in without


def test_params_from_environment(monkeypatch):
    from hw import BackendError
    from hw.opencl.runner import ENV_PARAMS, Params, params_from_env
    monkeypatch.setenv(ENV_PARAMS, "wg_size=128, shuffle=yes,timeout_s=2.5,kernel_language=amdgcn")
    p = params_from_env(Params(testing_wgs=7))
    assert (p.wg_size, p.shuffle, p.timeout_s, p.kernel_language, p.testing_wgs) == (
        128, True, 2.5, "amdgcn", 7)
    monkeypatch.setenv(ENV_PARAMS, "dialect=ptx")          # the earlier name is still read
    assert params_from_env(Params()).kernel_language == "ptx"
    monkeypatch.setenv(ENV_PARAMS, "nosuch=1")
    with pytest.raises(BackendError, match="unknown parameter 'nosuch'"):
        params_from_env()
    monkeypatch.setenv(ENV_PARAMS, "wg_size=big")
    with pytest.raises(BackendError, match="bad value 'big' for wg_size"):
        params_from_env()

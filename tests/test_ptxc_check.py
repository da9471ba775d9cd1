"""The compilers-in-the-loop check (fuzz/compilers.py) on hand-written PTX read-backs: a sound
lowering holds, a lowering that drops the release (or narrows the scope) is a counterexample with
the hand-derived extra outcome, racy sources are skipped, and the reader's own registers are
projected away. Then the same through a real compiler (clang-cuda; skipped without clang-22)."""

import pytest

from litmus import parse
from fuzz.compilers import SOURCE_MODEL, explain_counterexample, judge

MP_CUDA = """CUDA MP
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_SCOPE);
  atomic_store_explicit(y, 1, memory_order_release, cuda::thread_scope_SCOPE);
}
P1@cta 1,gpu 0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_SCOPE);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, cuda::thread_scope_SCOPE);
}
exists (P1:r0=1 /\\ P1:r1=0)
"""


def ptx_mp(w, r):
    return ("PTX MP\n{\nx=0;\ny=0;\n}\n"
            " P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n"
            f" st.relaxed.gpu x, 1 | ld.{r}.gpu r0, y ;\n"
            f" st.{w}.gpu y, 1 | ld.relaxed.gpu r1, x ;\n"
            "exists (P1:r0 == 1 /\\ P1:r1 == 0)\n")


def src(scope="device"):
    return parse(MP_CUDA.replace("SCOPE", scope), "mp.litmus")


def test_sound_lowering_holds():
    v = judge(src(), parse(ptx_mp("release", "acquire"), "mp.ptx"))
    assert (v.status, v.extra, v.source_model) == ("holds", [], "opencl")


def test_dropped_release_is_a_counterexample_with_the_mp_outcome():
    v = judge(src(), parse(ptx_mp("relaxed", "acquire"), "mp.ptx"))
    assert v.status == "counterexample"
    assert v.extra == [{"P1:r0": 1, "P1:r1": 0, "x": 1, "y": 1}]


def test_dropped_acquire_is_a_counterexample():
    v = judge(src(), parse(ptx_mp("release", "relaxed"), "mp.ptx"))
    assert v.status == "counterexample" and {"P1:r0": 1, "P1:r1": 0, "x": 1, "y": 1} in v.extra


def test_block_scope_across_ctas_is_a_heterogeneous_race_skipped():
    # atomics whose scopes do not include each other race (OpenCL 2.0 3.3.4; scoped C++ of
    # Lustig et al.): the source is UB, the compiler may give anything
    v = judge(src("block"), parse(ptx_mp("relaxed", "relaxed"), "mp.ptx"))
    assert (v.status, v.why) == ("skipped", "racy")


def test_block_scope_in_one_cta_holds_at_cta_scope_and_fails_relaxed():
    same = MP_CUDA.replace("SCOPE", "block").replace("P1@cta 1", "P1@cta 0")
    good = ptx_mp("release", "acquire").replace(".gpu", ".cta").replace("P1@cta 1", "P1@cta 0")
    assert judge(parse(same, "m.litmus"), parse(good, "m.ptx")).status == "holds"
    bad = good.replace("st.release", "st.relaxed")
    assert judge(parse(same, "m.litmus"), parse(bad, "m.ptx")).status == "counterexample"


def test_racy_source_is_skipped():
    racy = MP_CUDA.replace("SCOPE", "block").replace(
        "atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_block)", "*x = 1").replace(
        "atomic_load_explicit(x, memory_order_relaxed, cuda::thread_scope_block)", "*x").replace(
        "(atomic_int* x, atomic_int* y)", "(int* x, atomic_int* y)")
    v = judge(parse(racy, "r.litmus"), parse(ptx_mp("relaxed", "relaxed"), "mp.ptx"))
    assert (v.status, v.why) == ("skipped", "racy")


LB_C = """C LB
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_relaxed);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_relaxed);
  atomic_store_explicit(x, 1, memory_order_relaxed);
}
exists (P0:r0=1 /\\ P1:r0=1)
"""
LB_PTX = """PTX LB
{
x=0;
y=0;
}
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 ld.relaxed.sys r0, x | ld.relaxed.sys r0, y ;
 st.relaxed.sys y, 1 | st.relaxed.sys x, 1 ;
exists (P0:r0 == 1 /\\ P1:r0 == 1)
"""


def test_c_source_model_is_c11_lb_holds_rc11_would_reject():
    assert SOURCE_MODEL["C"] == "c11"
    assert judge(parse(LB_C, "lb.litmus"), parse(LB_PTX, "lb.ptx")).status == "holds"
    v = judge(parse(LB_C, "lb.litmus"), parse(LB_PTX, "lb.ptx"), source_model="rc11")
    assert v.status == "counterexample" and v.extra[0]["P0:r0"] == 1 and v.extra[0]["P1:r0"] == 1


# --- through a real compiler ------------------------------------------------------------------

def _clang():
    try:
        import hw.ptxc as ptxc
    except ImportError as e:
        return None, f"hw.ptxc missing: {e}"
    c = ptxc.parse_spec("clang-cuda:sm_90,O2")
    return (ptxc, c), ptxc.available(c)


def test_clang_cuda_mp_holds_and_a_dropped_release_is_found():
    got, why = _clang()
    if why:
        pytest.skip(why)
    ptxc, c = got
    t = src()
    compiled = ptxc.compile_test(t, c)
    assert judge(t, compiled.test).status == "holds"
    assert ".release" in compiled.ptx
    mutated = ptxc.compile_test(t, c, mutate=lambda p: p.replace("st.release", "st.relaxed"))
    v = judge(t, mutated.test)
    assert v.status == "counterexample"
    assert {"P1:r0": 1, "P1:r1": 0} == {k: v.extra[0][k] for k in ("P1:r0", "P1:r1")}
    text = explain_counterexample(t, mutated, v)
    assert "clang-22" in text and "st.relaxed" in text and "why it is forbidden" in text

"""The opencl model on small programs whose verdicts and races are derived by hand from the
model's definitions (Batty, Donaldson, Wickerson, POPL 2016, section 5; oracle/models/opencl/
opencl.model): scopes and inclusive scopes, the two memory regions, barriers, scoped SC."""

import pytest

import oracle
from litmus import parse


def check(text):
    res = oracle.check(parse(text), "opencl")
    return res.verdict, "racy" in res.flags


MP = """OPENCL mp
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global int* x, %(ty)s atomic_int* y) {
  *x = 1;
  %(rel)s
}
P1@wg %(wg)d, dev 0 (global int* x, %(ty)s atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, memory_scope_%(s1)s);
  int r1 = -1;
  if (r0 == 1) { r1 = *x; }
}
exists (1:r0=1 /\\ 1:r1=0)
"""


def mp(wg=0, s0="work_group", s1="work_group", ty="global"):
    rel = f"atomic_store_explicit(y, 1, memory_order_release, memory_scope_{s0});"
    return MP % dict(wg=wg, s1=s1, ty=ty, rel=rel)


# P1 reads x only after seeing the flag: the program is race-free exactly when that read is
# happens-after *x = 1
@pytest.mark.parametrize("kwargs, want", [
    # work-group scope, one work-group: inclusive, the release/acquire pair synchronises; x is
    # then read at its visible side effect x = 1 (hb: *x=1 -> store -> sw -> load -> read)
    (dict(wg=0), ("No", False)),
    # work-group scope across work-groups: not inclusive, no sw: the read of the non-atomic x
    # sees only the initial write (its only visible side effect), and the accesses race
    (dict(wg=1), ("Ok", True)),
    # device scope across work-groups of one device: inclusive again
    (dict(wg=1, s0="device", s1="device"), ("No", False)),
    # device and work-group scope in one work-group: not the same scope, not inclusive (OpenCL
    # 2.0, 3.3.4: "if they have the same scope"); the y accesses race as well
    (dict(wg=0, s0="work_group", s1="device"), ("Ok", True)),
    # all_svm_devices on both sides: inclusive whatever the placement
    (dict(wg=1, s0="all_svm_devices", s1="all_svm_devices"), ("No", False)),
])
def test_message_passing_and_scopes(kwargs, want):
    assert check(mp(**kwargs)) == want


def test_local_flag_does_not_order_global_data():
    # y is local: the release/acquire pair synchronises the local happens-before only (lsw);
    # the global x accesses are in the global happens-before, which has no edge between the
    # threads: x reads its initial value and races
    assert check(mp(ty="local")) == ("Ok", True)


def test_fences_of_both_regions_carry_global_data_over_a_local_flag():
    # release and acquire fences with both flags are global and local events: their
    # synchronisation through the local y joins the global happens-before too (scf)
    text = """OPENCL mpf
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global int* x, local atomic_int* y) {
  *x = 1;
  atomic_work_item_fence(%(f)s, memory_order_release, memory_scope_work_group);
  atomic_store_explicit(y, 1, memory_order_relaxed, memory_scope_work_group);
}
P1@wg 0, dev 0 (global int* x, local atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_relaxed, memory_scope_work_group);
  int r1 = -1;
  if (r0 == 1) {
    atomic_work_item_fence(%(f)s, memory_order_acquire, memory_scope_work_group);
    r1 = *x;
  }
}
exists (1:r0=1 /\\ 1:r1=0)
"""
    both = "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"
    assert check(text % dict(f=both)) == ("No", False)
    # local fences only: the fences synchronise lhb, which holds no global access
    assert check(text % dict(f="CLK_LOCAL_MEM_FENCE")) == ("Ok", True)


BARRIER = """OPENCL bar
{ [x] = 0; }
P0@wg 0, dev 0 (global int* x) {
  *x = 1;
  B1: barrier(%(flags)s);
}
P1@wg %(wg)d, dev 0 (global int* x) {
  %(b1)s
  int r = *x;
}
exists (1:r=0)
"""


def barrier(flags="CLK_GLOBAL_MEM_FENCE", wg=0, b1=True):
    return BARRIER % dict(flags=flags, wg=wg, b1=f"B1: barrier({flags});" if b1 else "")


def test_barrier_synchronises_its_region_in_one_work_group():
    # entry fence of P0 -> exit fence of P1 (bsw): *x = 1 is global-hb-before the read
    assert check(barrier()) == ("No", False)
    # a local barrier does not order global accesses
    assert check(barrier("CLK_LOCAL_MEM_FENCE")) == ("Ok", True)
    # barriers of different work-groups never meet
    assert check(barrier(wg=1)) == ("Ok", True)


def test_barrier_divergence_is_flagged():
    res = oracle.check(parse(barrier(b1=False)), "opencl")
    assert "barrier-divergence" in res.flags
    assert "barrier-divergence" not in oracle.check(parse(barrier()), "opencl").flags
    # alone in its work-group, a barrier meets nobody and diverges from nobody
    assert "barrier-divergence" not in oracle.check(parse(barrier(wg=1)), "opencl").flags


SB = """OPENCL sb
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_seq_cst, memory_scope_%(s)s);
  int r0 = atomic_load_explicit(y, memory_order_seq_cst, memory_scope_%(s)s);
}
P1@wg 1, dev 0 (global atomic_int* x, global atomic_int* y) {
  atomic_store_explicit(y, 1, memory_order_seq_cst, memory_scope_%(s)s);
  int r1 = atomic_load_explicit(x, memory_order_seq_cst, memory_scope_%(s)s);
}
exists (0:r0=0 /\\ 1:r1=0)
"""


def test_scoped_sc():
    # device scope: the four SC events are pairwise inclusive and sb ; rb ; sb ; rb is a cycle
    assert check(SB % dict(s="device")) == ("No", False)
    # work-group scope in two work-groups: no inclusive pair across them, the SC axiom says
    # nothing, and the non-inclusive atomics race
    assert check(SB % dict(s="work_group")) == ("Ok", True)


def test_generic_space_location_is_in_no_region():
    # a location declared without global/local is in neither region (the dialect's generic
    # space): sb is in no happens-before for it, so a thread may even read the initial value
    # after its own write; declared global, the read sees the write
    text = """OPENCL gen
{ [x] = 0; }
P0@wg 0, dev 0 (%s int* x) { *x = 1; int r = *x; }
exists (0:r=0)
"""
    assert check(text % "") == ("Ok", False)
    assert check(text % "global") == ("No", False)

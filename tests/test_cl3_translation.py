"""Translation validation of the ``cl3`` kernels against the OpenCL memory model.

For an AMDGPU test T, the OpenCL C program the ``cl3`` code generator emits for one instance
(read back from the kernel source by :func:`hw.opencl.as_litmus.kernel_litmus`) is an OPENCL
litmus test K. The property: every outcome the ``opencl`` model (Batty, Donaldson, Wickerson,
POPL 2016) allows for K, restricted to T's observables, is an outcome the ``amdgpu`` model allows
for T (an undef value of T's standing for any value); and K has a data race (undefined behaviour
in OpenCL) only where T itself has one: two accesses of different threads to one location, one
a write, at least one of them not an atomic (plain, volatile, ld.vis/st.av, an async copy) or the
two atomics of scopes that are not inclusive, i.e. a pair the AMDGPU model does not protect (its
reads are undef by rule 3; a write-write pair may have no observable effect, e.g. on LDS, whose
final value is not an outcome). The lowering never turns an atomic into a plain access nor
narrows a scope, so a race of K comes from such a pair of T. T with an
undefined-behaviour verdict allows everything; T whose barriers the runner refuses
(:func:`hw.opencl.codegen.barrier_problem`) never runs. Checked over every AMDGPU corpus test and
over programs of the fuzzer's own strategy, for both meanings of the system scope macro
(docs/opencl.md, "The cl3 kernels against the OpenCL model")."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings

import litmus
import oracle
from conftest import CORPORA
from fuzz.strategies import programs
from hw.opencl.as_litmus import kernel_litmus
from hw.opencl.codegen import barrier_problem, cl3_plan, generate
from litmus import parse, parse_file
from litmus.ir import UNDEF


def unprotected_pair(test) -> bool:
    """Does ``test`` have two accesses of different threads to one location (LDS: in one
    workgroup), one a write, not both atomics of inclusive scopes (module doc)?"""
    acc = []                      # (thread, location, writes, atomic scope or None)
    for tid, th in enumerate(test.threads):
        for ins in th.code:
            if ins.base == "async.ld":
                acc += [(tid, ins.loc, False, None), (tid, ins.lds, True, None)]
            elif ins.is_memory_access:
                atomic = ins.base in ("rmw", "cas") or ins.access == "atom"
                acc.append((tid, ins.loc, ins.writes, ins.scope if atomic else None))
    for a, (ta, la, wa, sa) in enumerate(acc):
        for tb, lb, wb, sb in acc[a + 1:]:
            if ta == tb or la != lb or not (wa or wb):
                continue
            if test.is_lds(la) and not test.same(ta, tb, "wg"):
                continue              # each workgroup has its own copy of an LDS location
            if sa is None or sb is None or not test.inclusive(ta, sa, tb, sb):
                return True
    return False


def refinement_problems(test, weaken=None, all_devices=True) -> tuple[str, list[str]]:
    """("vacuous" | "checked", problems) of the property for ``test`` (module doc)."""
    amd = oracle.check(test, "amdgpu")
    if amd.verdict == "Undef" or barrier_problem(test):
        return "vacuous", []
    text = kernel_litmus(test, generate(test, "cl3", weaken=weaken), all_devices=all_devices)
    ocl = oracle.check(parse(text), "opencl")
    keys = test.observables()
    problems = []
    for s in ocl.states:
        if not any(all(a[k] == UNDEF or a[k] == s[k] for k in keys) for a in amd.states):
            problems.append(f"{test.name}: the kernel allows {({k: s[k] for k in keys})}, "
                            f"which the AMDGPU model forbids")
            break
    if "racy" in ocl.flags and not unprotected_pair(test):
        problems.append(f"{test.name}: the kernel races (undefined in OpenCL), the test has no "
                        "unprotected pair of accesses")
    return "checked", problems


DIRS = sorted(p.parent.name for p in CORPORA.glob("*/expected.csv")
              if litmus.dialects.dialect_of(next(p.parent.rglob("*.litmus")).read_text())
              == "AMDGPU")


@pytest.mark.parametrize("d", DIRS)
def test_cl3_kernels_of_the_corpora_refine_the_tests(d):
    checked, bad = 0, []
    for f in sorted((CORPORA / d).rglob("*.litmus")):
        kind, problems = refinement_problems(parse_file(str(f)))
        checked += kind == "checked"
        bad += problems
    assert bad == []
    assert checked >= 5


def test_system_scope_without_all_devices_support():
    # PoCL (and any device without __opencl_c_atomic_scope_all_devices) reads SF_SCOPE_SYS as
    # memory_scope_device: the property holds there too
    bad = []
    for f in sorted((CORPORA / "classic").rglob("*.litmus")):
        t = parse_file(str(f))
        if any(i.scope == "sys" for th in t.threads for i in th.code):
            bad += refinement_problems(t, all_devices=False)[1]
    assert bad == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
@given(programs())
def test_cl3_kernels_of_generated_programs_refine_them(test):
    assert refinement_problems(test)[1] == []


def test_the_check_catches_a_wrong_lowering():
    # SB with seq_cst fences between relaxed atomics: lowering the fences as acq_rel (the
    # test-only miscompilation) lets the kernel show the forbidden outcome 0/0
    t = parse_file(str(CORPORA / "classic" / "SB" / "SB+fence.sc.cluster.xwg.litmus"))
    assert refinement_problems(t)[1] == []
    bad = refinement_problems(t, weaken="sc-fence-as-acq_rel")[1]
    assert len(bad) == 1 and "P0:r0': 0" in bad[0] and "P1:r0': 0" in bad[0]


# --- the plan's rules, each on a test that needs it (hand-derived) -----------------------------

def lines(test, **kw):
    src = generate(test, "cl3", **kw).source
    body = re.sub(r"/\*.*?\*/", "", src[src.index("/* phase 0 */"):], flags=re.S)
    return [ln.strip() for ln in body.splitlines() if ln.strip()]


MIXED = """AMDGPU mixed
{ x = 0; y = 0; }
 P0@wave 0, wg 0        | P1@wave 1, wg 0      ;
 st x, 1                | ld.atom.acq.wg r0, y ;
 st.atom.rel.agent y, 1 | ld r1, x             ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_mixed_scopes_get_the_widest_one():
    # AMDGPU: agent and wg scope in one workgroup are inclusive; OpenCL: only the same scope is
    t = parse(MIXED)
    assert cl3_plan(t).scope == "SF_SCOPE_AGENT"
    assert {m for ln in lines(t) for m in re.findall(r"SF_SCOPE_\w+", ln)} == {"SF_SCOPE_AGENT"}
    same = parse(MIXED.replace("rel.agent", "rel.wg   "))
    assert cl3_plan(same).scope is None
    assert refinement_problems(t)[1] == []


LDS_MP = """AMDGPU LDS-MP
{ y = 0; lds a = 0; }
 P0@wave 0, wg 0     | P1@wave 1, wg 0      ;
 st a, 1             | ld.atom.acq.wg r0, y ;
 st.atom.rel.wg y, 1 | ld r1, a             ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_global_and_lds_get_fences_of_both_regions():
    # an OpenCL release store to global y orders only global memory: the LDS data a needs a
    # release fence of both regions before it and an acquire fence of both after the load
    t = parse(LDS_MP)
    assert cl3_plan(t).region_fences
    ls = lines(t)
    store = next(i for i, ln in enumerate(ls) if "atomic_store_explicit" in ln)
    load = next(i for i, ln in enumerate(ls) if "atomic_load_explicit" in ln)
    both = "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, "
    assert ls[store - 1].startswith(both + "memory_order_release")
    assert ls[load + 1].startswith(both + "memory_order_acquire")
    assert not cl3_plan(parse(LDS_MP.replace("st a, 1 ", "st y, 2 ").replace("ld r1, a", "ld r1, y"))
                        ).region_fences
    assert refinement_problems(t)[1] == []


def test_seq_cst_fences_make_the_atomics_seq_cst():
    # IRIW with seq_cst fences between relaxed reads is forbidden by AMDGPU's psc (RC11's psc_F:
    # fences ordered through rf of relaxed atomics), allowed by OpenCL's SC axiom on its own
    t = parse_file(str(CORPORA / "classic" / "IRIW" / "IRIW+fence.sc.cluster.xwg.litmus"))
    assert cl3_plan(t).sc_atomics
    calls = [ln for ln in lines(t) if "atomic_" in ln and "fence" not in ln]
    assert calls and all("memory_order_seq_cst" in ln for ln in calls)
    assert not cl3_plan(t, weaken="sc-fence-as-acq_rel").sc_atomics
    assert refinement_problems(t)[1] == []


def test_kernel_litmus_names_and_declarations():
    t = parse("""AMDGPU k
{ x = 1; lds a = 5; }
 P0@wg 0              | P1@wg 1  | P2@wg 0 ;
 st.atom.rel.wg x, 2  | st a, 3  | ld r0, a ;
exists (P2:r0 == 5)
""")
    text = kernel_litmus(t)
    k = parse(text)
    # one LDS copy per workgroup role, local; x global and atomic (accessed through a cast);
    # the copies keep the LDS initial value; placements follow the layout's workgroup roles
    assert {loc.name: loc.init for loc in k.locations} == {"x": 1, "a_wg0": 5, "a_wg1": 5}
    assert dict(dict(k.meta)["regions"]) == {"x": ("global",), "a_wg0": ("local",),
                                             "a_wg1": ("local",)}
    assert set(dict(k.meta)["nonatomic"]) == {"a_wg0", "a_wg1"}
    assert [th.placement.wg for th in k.threads] == [0, 1, 0]
    assert k.threads[1].code[0].loc == "a_wg1" and k.threads[2].code[-1].loc == "a_wg0"


def test_unprotected_pairs():
    # hand-derived: a plain write racing with an atomic one; inclusive atomics; LDS in two
    # workgroups (two copies); non-inclusive atomics
    def t(p0, p1, placement="P0@wave 0, wg 0 | P1@wave 1, wg 0"):
        return parse(f"AMDGPU u\n{{ x = 0; lds a = 0; }}\n {placement} ;\n {p0} | {p1} ;\n"
                     "exists (true)\n")
    assert unprotected_pair(t("st x, 2", "st.atom.wg x, 1"))
    assert not unprotected_pair(t("st.atom.wg x, 2", "st.atom.wg x, 1"))
    assert not unprotected_pair(t("st a, 2", "st a, 1", "P0@wg 0 | P1@wg 1"))
    assert unprotected_pair(t("st a, 2", "st a, 1"))
    assert unprotected_pair(t("st.atom.wg x, 2", "ld.atom.wg r0, x", "P0@wg 0 | P1@wg 1"))
    assert not unprotected_pair(t("ld r1, x", "ld.atom.wg r0, x"))     # two reads

"""The rc11 verdict's compact pre-executions (oracle/models/rc11/builder.py: build_compact).

rmws whose results feed nothing but their own writes ("free", litmus/cfg.py: free_rmw_code) are
left to the search instead of having their values enumerated by the paths: the same consistent
executions and outcomes from far fewer pre-executions. Checked here against the full build's
outcome sets on asymmetric programs (benchmarks/scaling.py's issue-32 family, small enough to
enumerate), and on the 30-event program the full build makes 81,101 pre-executions of (issue
32: 116 s and 1 GB for its verdict before), by the number of pre-executions searched.
"""

from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

import litmus
import oracle
from litmus.cfg import ThreadCode, free_rmw_code
from oracle.lang import load_model
from oracle.models.rc11.builder import build_compact
from oracle.registry import get as get_unit
from oracle.search import explore_pe

check_mod = importlib.import_module("oracle.check")
_ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
from benchmarks import scaling  # noqa: E402


def _outcomes(pes, keys) -> set[tuple]:
    """Every outcome of ``pes`` (each explored whole), as tuples in ``keys`` order."""
    unit, prog = get_unit("rc11"), load_model("rc11")
    out = set()
    for pe in pes:
        order = [k for k, _ in pe.observables]
        back = [order.index(k) for k in keys]
        found = explore_pe(pe, prog, unit)
        assert not found.exhausted
        for row in found.states.tolist():
            out.add(tuple(row[i] for i in back))
    return out


def _family(shapes, seeds):
    for nt, nl, ev in shapes:
        for seed in seeds:
            text = scaling.amdgpu_to_c(scaling.asymmetric(nt, nl, ev, "sys", seed))
            t = litmus.parse(text)
            if free_rmw_code(t) is not None:
                yield f"{nt}t-{nl}l-{ev}e-{seed}", t


CASES = list(_family([(3, 2, 8), (4, 2, 10), (4, 3, 11), (5, 2, 12)], range(6)))


@pytest.mark.parametrize("name,test", CASES, ids=[c[0] for c in CASES])
def test_compact_outcomes_are_the_full_builds(name, test):
    keys = test.observables()
    full = oracle.check(test, "rc11", full=True)
    want = {tuple(s[k] for k in keys) for s in full.states}
    pes = build_compact(test, most=0)
    assert len(pes) == 1                 # straight-line code: one pre-execution
    assert _outcomes(pes, keys) == want
    # and the verdict the check takes from them is the full check's
    oracle.clear_cache()
    old = check_mod.COMPACT_ABOVE
    check_mod.COMPACT_ABOVE = 0
    try:
        got = oracle.check(test, "rc11")
    finally:
        check_mod.COMPACT_ABOVE = old
        oracle.clear_cache()
    assert got.pending and got.verdict == full.verdict


def test_enough_cases():
    assert len(CASES) >= 12


def test_the_30_event_counter_is_one_pre_execution():
    """Six threads, 30 events, six fetch_adds on y whose results are only observed: the full
    build enumerates 81,101 combinations of their values; the verdict searches one."""
    cases = {name: text for name, _, _, text in scaling.asymmetric_c_cases()}
    t = litmus.parse(cases["asym 6t 2l 30e C"])
    pes, compact = check_mod.verdict_pre_executions(get_unit("rc11"), t)
    assert compact and len(pes) == 1
    oracle.clear_cache()
    res = oracle.check(t, "rc11")
    # (the verdict the full build's 81,101 pre-executions gave before: Ok, 0:r0=9 /\ 0:r1=6)
    assert res.pending and res.verdict == "Ok"


def test_a_few_combinations_keep_the_full_build():
    """At most COMPACT_ABOVE pre-executions: the full check runs, with its statistics."""
    t = litmus.parse("C few\n{ [x] = 0; }\n"
                     "P0 (atomic_int* x) { int r0 = atomic_fetch_add_explicit(x, 1, "
                     "memory_order_relaxed); }\n"
                     "P1 (atomic_int* x) { int r0 = atomic_fetch_add_explicit(x, 2, "
                     "memory_order_relaxed); }\nexists (0:r0=2 /\\ 1:r0=0)\n")
    pes, compact = check_mod.verdict_pre_executions(get_unit("rc11"), t)
    assert not compact and len(pes) == 3      # (r0, r0) in (0, 0), (0, 1), (2, 0)
    oracle.clear_cache()
    res = oracle.check(t, "rc11")
    assert not res.pending and res.verdict == "Ok" and len(res.states) == 2


def _marked(text: str) -> list[list[str]]:
    t = litmus.parse(text)
    free = free_rmw_code(t)
    if free is None:
        return []
    return [[row[0] for row in tc.rows if row[0].startswith("rmw")] for tc in free]


HEAD = "C t\n{ [x] = 0; [y] = 0; }\n"


def test_only_rmws_whose_values_decide_no_path_are_free():
    add = "atomic_fetch_add_explicit({}, 1, memory_order_relaxed)"
    # results only observed: free
    assert _marked(HEAD + f"P0 (atomic_int* x, atomic_int* y) {{ int r0 = {add.format('x')}; }}\n"
                   f"P1 (atomic_int* x, atomic_int* y) {{ int r0 = atomic_load_explicit(x, "
                   f"memory_order_relaxed); }}\nexists (0:r0=0)\n") == [["rmw.free"], []]
    # a load whose value a branch reads is at x: x's rmws stay, y's is free
    assert _marked(HEAD + f"P0 (atomic_int* x, atomic_int* y) {{ int r0 = {add.format('x')}; "
                   f"int r1 = {add.format('y')}; }}\n"
                   f"P1 (atomic_int* x, atomic_int* y) {{ int r0 = atomic_load_explicit(x, "
                   f"memory_order_relaxed); if (r0 == 1) {{ atomic_store_explicit(y, 2, "
                   f"memory_order_relaxed); }} }}\nexists (0:r0=0)\n") == [["rmw", "rmw.free"],
                                                                           []]
    # an rmw's result stored elsewhere: its value decides a written value, not free
    assert _marked(HEAD + f"P0 (atomic_int* x, atomic_int* y) {{ int r0 = {add.format('x')}; "
                   f"atomic_store_explicit(y, r0, memory_order_relaxed); }}\n"
                   f"exists (0:r0=0)\n") == []
    # a cas at x: x's rmws stay
    assert _marked(HEAD + f"P0 (atomic_int* x, atomic_int* y) {{ int r0 = {add.format('x')}; }}\n"
                   f"P1 (atomic_int* x, atomic_int* y) {{ int e = 1; int r0 = "
                   f"atomic_compare_exchange_strong_explicit(x, &e, 2, memory_order_relaxed, "
                   f"memory_order_relaxed); }}\nexists (0:r0=0)\n") == []

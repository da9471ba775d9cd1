"""Thread symmetry (oracle/symmetry.py): the canonical executions and their images under the
interchangeable threads give exactly the outcome set, verdict and flags of the plain search.

Independent expectations:

- one location written then read by n threads: the states derived by hand from coherence
  (tests/test_oracle_bounding.py: rooted forests with a marked root) and their count
  ``sum_k k * C(n-1, k-1) * n^(n-k)``, up to n = 7 (14 events, 458,752 states), which the plain
  search takes seconds for;
- generated programs with k copies of a thread (distinct written values, or the same ones), an
  optional other thread, in the C (rc11, c11), AMDGPU and PTX dialects: the symmetric search
  against the plain one (symmetry off), both forced past the whole search's first try;
- which threads are found interchangeable: by hand, for programs whose scopes, values or
  required values break some swaps.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import litmus
import oracle
from oracle import search, symmetry
from oracle.check import get_unit, pre_executions
from test_oracle_bounding import by_hand, one_location


@pytest.fixture
def forced(monkeypatch):
    """Every search past its first try at once (so small programs reach the symmetric path),
    and a count of the canonical searches run."""
    monkeypatch.setattr(search, "QUERY_WHOLE_STEPS", 0)
    monkeypatch.setattr(search, "SPLIT_ABOVE", 0)
    calls = []
    real = symmetry.Action.close

    def spy(*a, **k):
        calls.append(a[0])
        return real(*a, **k)
    monkeypatch.setattr(symmetry.Action, "close", spy)
    oracle.clear_cache()
    yield calls
    oracle.clear_cache()


def _plain(monkeypatch, test, model):
    """The check with symmetry off."""
    with monkeypatch.context() as m:
        m.setattr(search, "find_symmetry", lambda *a: None)
        oracle.clear_cache()
        res = oracle.check(test, model)
    oracle.clear_cache()
    return res


def _summary(res):
    keys = sorted(res.states[0]) if len(res.states) else []
    return res.verdict, sorted(res.flags), {tuple(s[k] for k in keys) for s in res.states}


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_one_location_by_hand(forced, n):
    test = litmus.parse(one_location(n))
    res = oracle.check(test, "rc11")
    assert forced, "the symmetric search did not run"
    keys = test.observables()
    got = {tuple(s[k] for k in keys) for s in res.states}
    want_count = sum(k * math.comb(n - 1, k - 1) * n ** (n - k) for k in range(1, n + 1))
    assert len(got) == len(res.states) == want_count
    if n <= 5:
        assert got == by_hand(n)
    # every state: a read sees its own write or another thread's (never the initial 0), and the
    # co-last (final) writer reads its own value
    assert all(0 not in s[:-1] and s[s[-1] - 1] == s[-1] for s in got)


def test_one_location_group(forced):
    pe = pre_executions(get_unit("rc11"), litmus.parse(one_location(5)))[0]
    sym = symmetry.find(pe)
    assert sym is not None and sym.classes == [[0, 1, 2, 3, 4]]
    act = sym.on_block((1 << pe.n) - 1)
    assert act.order == math.factorial(5)
    ranked = [int(r) for r in act.canon if r >= 0]
    assert ranked == [0, 1, 2, 3, 4]          # each thread's store, in thread order


# --- generated programs: symmetric search == plain search ----------------------------------------
C_ORDERS = ["memory_order_relaxed", "memory_order_release", "memory_order_acquire",
            "memory_order_seq_cst"]


def _c_op(op, thread, m):
    kind, loc, order = op
    if kind == "st":
        o = {"memory_order_acquire": "memory_order_relaxed"}.get(order, order)
        return f"atomic_store_explicit({loc}, {thread}, {o});"
    if kind == "ld":
        o = {"memory_order_release": "memory_order_relaxed"}.get(order, order)
        return f"int r{m} = atomic_load_explicit({loc}, {o});"
    o = order if order != "memory_order_relaxed" else "memory_order_seq_cst"
    return f"atomic_thread_fence({o});"


#: per GPU dialect, the spelling of a store, a load (plain, release / acquire) and a fence
#: (the relaxed order stands for acq_rel, or sc in PTX)
_GPU = {"AMDGPU": (("st.atom", "st.atom.rel"), ("ld.atom", "ld.atom.acq"),
                   ("fence.acq_rel", "fence.rel", "fence.acq")),
        "PTX": (("st.relaxed", "st.release"), ("ld.relaxed", "ld.acquire"),
                ("fence.sc", "fence.acq_rel", "fence.acq_rel"))}


def _gpu_op(dialect, op, m):
    kind, loc, (order, scope) = op
    st_, ld_, fence = _GPU[dialect]
    if kind == "st":
        return f"{st_[order == 'rel']}.{scope} {loc}, VAL"
    if kind == "ld":
        return f"{ld_[order == 'acq']}.{scope} r{m}, {loc}"
    return f"{fence[('rlx', 'rel', 'acq').index(order)]}.{scope}"


@st.composite
def symmetric_programs(draw):
    """(dialect, model, text): ``k`` copies of one thread, maybe another thread, values distinct
    per copy (``same``: every copy writes the same values instead)."""
    dialect = draw(st.sampled_from(["C", "AMDGPU", "PTX"]))
    # one location more often than not: a program the model splits into independent blocks is
    # searched block by block, without symmetry
    locs = draw(st.sampled_from([["x"], ["x"], ["x", "y"]]))
    k = draw(st.integers(2, 4))
    if dialect == "C":
        order = st.sampled_from(C_ORDERS)
    elif dialect == "AMDGPU":
        order = st.tuples(st.sampled_from(["rlx", "rel", "acq"]),
                          st.sampled_from(["wg", "agent", "sys"]))
    else:
        order = st.tuples(st.sampled_from(["rlx", "rel", "acq"]), st.sampled_from(["cta", "gpu"]))
    op = st.tuples(st.sampled_from(["st", "st", "ld", "ld", "fence"]), st.sampled_from(locs),
                   order)
    body = draw(st.lists(op, min_size=1, max_size=3).filter(
        lambda b: any(o[0] == "st" for o in b)))
    other = draw(st.none() | st.lists(op, min_size=1, max_size=2))
    same = draw(st.booleans())
    groups = draw(st.lists(st.integers(0, 1), min_size=k + 1, max_size=k + 1))
    threads = [body] * k + ([other] if other else [])
    if dialect == "PTX":        # few pairs of fence.sc of different threads: the PTX builder
        # refuses more than MAX_VARIANTS Fence-SC orders (oracle/models/ptx/builder.py), an
        # OracleError on any branch, and many orders make the test slow
        sc = [sum(1 for o in ops if o[0] == "fence" and o[2][0] == "rlx") for ops in threads]
        assume(sum(a * b for i, a in enumerate(sc) for b in sc[i + 1:]) <= 12)
    for x in locs:                      # the builders order at most 8 writes per location
        assume(sum(1 for ops in threads for o in ops if o[0] == "st" and o[1] == x) <= 8)

    def value(t, m):
        return 1 + m if same and t < k else 10 * (t + 1) + m

    if dialect == "C":
        model = draw(st.sampled_from(["rc11", "c11"]))
        init = " ".join(f"[{x}] = 0;" for x in ["x", "y"])
        params = ", ".join(f"atomic_int* {x}" for x in ["x", "y"])
        lines = []
        for t, ops in enumerate(threads):
            code = []
            for m, o in enumerate(ops):
                code.append(_c_op(o, value(t, m), m))
            lines.append(f"P{t} ({params}) {{ " + " ".join(code) + " }")
        text = f"C sym\n{{ {init} }}\n" + "\n".join(lines) + "\nexists (x=0)\n"
        return dialect, model, text
    cols = []
    for t, ops in enumerate(threads):
        head = f"P{t}@wg {groups[t]}" if dialect == "AMDGPU" else f"P{t}@cta {groups[t]},gpu 0"
        code = [_gpu_op(dialect, o, m).replace("VAL", str(value(t, m)))
                for m, o in enumerate(ops)]
        cols.append([head] + code)
    depth = max(len(c) for c in cols)
    rows = [" | ".join(c[i] if i < len(c) else "" for c in cols) + " ;" for i in range(depth)]
    init = " ".join(f"{x} = 0;" for x in ["x", "y"])
    text = f"{dialect} sym\n{{ {init} }}\n" + "\n".join(rows) + "\nexists (x == 0)\n"
    return dialect, ("amdgpu" if dialect == "AMDGPU" else "ptx"), text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(symmetric_programs())
def test_symmetric_search_is_the_plain_search(monkeypatch, prog):
    dialect, model, text = prog
    test = litmus.parse(text)
    monkeypatch.setattr(search, "QUERY_WHOLE_STEPS", 0)
    monkeypatch.setattr(search, "SPLIT_ABOVE", 0)
    oracle.clear_cache()
    got = oracle.check(test, model)
    want = _plain(monkeypatch, test, model)
    assert _summary(got) == _summary(want), text


def _three_copies(p3_value: int) -> str:
    """P0-P2 store 1, 2, 3 to x (release) and load y (acquire); P3 stores ``p3_value`` to y."""
    params = "(atomic_int* x, atomic_int* y)"
    copies = [f"P{t} {params} {{ atomic_store_explicit(x, {t + 1}, memory_order_release); "
              "int r0 = atomic_load_explicit(y, memory_order_acquire); }" for t in range(3)]
    return ("C c3\n{ [x] = 0; [y] = 0; }\n" + "\n".join(copies) + "\n"
            f"P3 {params} {{ atomic_store_explicit(y, {p3_value}, memory_order_relaxed); }}\n"
            "exists (0:r0=0)\n")


@pytest.mark.parametrize("model, text, classes", [
    # three copies, distinct values: one class of three
    ("rc11", _three_copies(5), [[0, 1, 2]]),
    # the same, but P3 writes 1 (to y), as P0 does (to x): renaming 1 would move P3's value
    # too, so P0 is swapped with no one; P1 and P2 still are
    ("rc11", _three_copies(1), [[1, 2]]),
    # a copy writing the initial value 0 cannot be swapped with one writing 2
    ("rc11", "C c0\n{ [x] = 0; }\n"
     "P0 (atomic_int* x) { atomic_store_explicit(x, 0, memory_order_relaxed); "
     "int r0 = atomic_load_explicit(x, memory_order_relaxed); }\n"
     "P1 (atomic_int* x) { atomic_store_explicit(x, 2, memory_order_relaxed); "
     "int r0 = atomic_load_explicit(x, memory_order_relaxed); }\n"
     "exists (0:r0=0)\n", None),
    # scopes: P0 and P1 share a workgroup, P2 is alone; wg-scope atomics: only P0, P1 swap
    ("amdgpu", "AMDGPU wg\n{ x = 0; }\n"
     " P0@wg 0 | P1@wg 0 | P2@wg 1 ;\n"
     " st.atom.wg x, 1 | st.atom.wg x, 2 | st.atom.wg x, 3 ;\n"
     " ld.atom.wg r0, x | ld.atom.wg r0, x | ld.atom.wg r0, x ;\n"
     "exists (P0:r0 == 0)\n", [[0, 1]]),
    # an rmw computes its value from the one it read: values matter, no symmetry
    ("amdgpu", "AMDGPU rmw\n{ x = 0; }\n"
     " P0@wg 0 | P1@wg 1 ;\n"
     " rmw.add.agent r0, x, 1 | rmw.add.agent r0, x, 1 ;\n"
     "exists (P0:r0 == 0)\n", None),
])
def test_classes_by_hand(forced, monkeypatch, model, text, classes):
    test = litmus.parse(text)
    unit = get_unit(model)
    syms = [symmetry.find(pe) for pe in pre_executions(unit, test)]
    got = [s.classes if s else None for s in syms]
    assert got == [classes] * len(syms)
    assert _summary(oracle.check(test, model)) == _summary(_plain(monkeypatch, test, model))


def test_wide_program(forced, monkeypatch):
    """Over 64 events (two words per relation row): three copies of a thread storing to x then
    loading x and, twenty times, y."""
    params = "(atomic_int* x, atomic_int* y)"
    loads = " ".join(f"int r{i} = atomic_load_explicit(y, memory_order_relaxed);"
                     for i in range(1, 21))
    text = "C wide\n{ [x] = 0; [y] = 0; }\n" + "\n".join(
        f"P{t} {params} {{ atomic_store_explicit(x, {t + 1}, memory_order_relaxed); "
        f"int r0 = atomic_load_explicit(x, memory_order_relaxed); {loads} }}"
        for t in range(3)) + "\nexists (0:r0=1)\n"
    test = litmus.parse(text)
    pe = pre_executions(get_unit("rc11"), test)[0]
    assert pe.n > 64
    assert symmetry.find(pe).classes == [[0, 1, 2]]
    got = oracle.check(test, "rc11")
    assert forced
    assert _summary(got) == _summary(_plain(monkeypatch, test, "rc11"))
    # the x reads: as for one location with three threads (test_one_location_by_hand)
    assert {(s["P0:r0"], s["P1:r0"], s["P2:r0"], s["x"]) for s in got.states} == by_hand(3)

"""Fence-SC order in the PTX builder (oracle/models/ptx/builder.py): the orders are found by a
backtracking search instead of filtering all 2^pairs orientations, and the builder gives the
search only the orders in which leading fence.sc come first and trailing ones last (the others
cannot add an outcome or a race). Checked here against the model's definition written out
independently (every orientation of the morally strong pairs, acyclic with program order) on
random programs where it finishes, and on hand-derived verdicts (PTX ISA 8.10.2 Fence-SC)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus import parse
from litmus.cfg import paths_per_thread
from oracle import check
from oracle.check import clear_cache
from oracle.errors import OracleError
from oracle.models.path_executions import build_combination
from oracle.models.ptx import builder


def _reference_orders(sta) -> list[list[int]]:
    """The Fence-SC orders as the model defines them, the way the builder enumerated them
    before: every orientation of the morally strong cross-thread pairs (same-thread pairs follow
    program order), kept when acyclic together with program order (Floyd-Warshall)."""
    n, po = sta.n, sta.x0.po
    fixed, free = [], []
    for a, b in itertools.combinations(sta.sc, 2):
        if not (a.tid == b.tid or sta.inscope[a.eid] >> b.eid & 1):
            continue
        if a.tid == b.tid:
            fixed.append((a.eid, b.eid) if po[a.eid] >> b.eid & 1 else (b.eid, a.eid))
        else:
            free.append((a.eid, b.eid))
    out = []
    for dirs in itertools.product((0, 1), repeat=len(free)):
        pairs = fixed + [(a, b) if d == 0 else (b, a) for (a, b), d in zip(free, dirs)]
        rows = [0] * n
        for a, b in pairs:
            rows[a] |= 1 << b
        reach = [r | p for r, p in zip(rows, po)]
        for k in range(n):
            for i in range(n):
                if reach[i] >> k & 1:
                    reach[i] |= reach[k]
        if all(not reach[i] >> i & 1 for i in range(n)):
            out.append(rows)
    return out


def _statics(test):
    for combo in itertools.product(*paths_per_thread(test, seed=False, deps=True)):
        yield builder._Static(test, build_combination(test, combo), builder._path_deps(combo))


def _subsequence(small, big) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def _full(test, counts: bool = False):
    clear_cache()
    r = check(test, "ptx", full=True)
    out = (r.verdict, sorted(tuple(sorted(s.items())) for s in r.states), sorted(r.flags))
    return out + ((r.candidates, r.consistent) if counts else ())


def _full_all_orders(test, monkeypatch):
    """The full check (with counts) with every Fence-SC order, the builder's combinations."""
    with monkeypatch.context() as m:
        m.setattr(builder._Static, "_fence_sc_orders", builder._Static.all_fence_sc_orders)
        return _full(test, True)


def _full_unreduced(test, monkeypatch, counts: bool = False):
    """The full check with every Fence-SC order of the model and every combination of paths
    given to the search (``counts``: with the candidate and consistent counts)."""
    with monkeypatch.context() as m:
        m.setattr(builder._Static, "_fence_sc_orders", builder._Static.all_fence_sc_orders)
        m.setattr(builder, "justifiable_combinations", lambda test, paths:
                  itertools.product(*paths))
        return _full(test, counts)


# -- random programs: the reduced orders against every order ----------------------------------

_SCOPES = ("cta", "gpu", "sys")


@st.composite
def programs(draw):
    nthreads = draw(st.integers(2, 4))
    locs = ("x", "y")
    threads = []
    for t in range(nthreads):
        ops = draw(st.lists(st.sampled_from(("st", "ld", "fence", "fence", "ldacq", "strel",
                                             "cas")),
                            min_size=1, max_size=4))
        threads.append([(o, draw(st.sampled_from(locs)), draw(st.sampled_from(_SCOPES)))
                        for o in ops])
    ctas = [draw(st.integers(0, 2)) for _ in range(nthreads)]
    gpus = [draw(st.integers(0, 1)) for _ in range(nthreads)]
    cols = []
    for t, ops in enumerate(threads):
        col, r = [], 0
        for k, (o, x, s) in enumerate(ops):
            if o == "st":
                col.append(f"st.relaxed.{s} {x}, {10 * (t + 1) + k}")
            elif o == "strel":
                col.append(f"st.release.{s} {x}, {10 * (t + 1) + k}")
            elif o == "ld":
                col.append(f"ld.relaxed.{s} r{r}, {x}")
                r += 1
            elif o == "cas":
                col.append(f"atom.relaxed.{s}.cas r{r}, {x}, {k}, {10 * (t + 1) + k}")
                r += 1
            elif o == "ldacq":
                col.append(f"ld.acquire.{s} r{r}, {x}")
                r += 1
            else:
                col.append(f"fence.sc.{s}")
        cols.append(col)
    rows = max(len(c) for c in cols)
    head = " | ".join(f"P{t}@cta {ctas[t]},gpu {gpus[t]}" for t in range(nthreads))
    body = "\n".join(" | ".join(c[i] if i < len(c) else "" for c in cols) + " ;"
                     for i in range(rows))
    text = f"PTX rand\n{{ x=0; y=0; }}\n {head} ;\n{body}\nexists (x == 0)\n"
    return parse(text, "rand.litmus")


def _free_pairs(test) -> int:
    return max((len(s._pairs()[1]) for s in _statics(test)), default=0)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_orders_are_the_models_and_reduction_keeps_states_and_races(test):
    if _free_pairs(test) > 8:
        return                               # the reference enumerates 2^pairs: keep it small
    for sta in _statics(test):
        every = _reference_orders(sta)
        assert sta.all_fence_sc_orders() == every
        reduced = sta._fence_sc_orders()
        assert reduced and _subsequence(reduced, every)
    mp = pytest.MonkeyPatch()
    try:
        assert _full(test) == _full_unreduced(test, mp)
        # the combinations of paths the builder drops have no candidate execution at all
        assert _full_all_orders(test, mp) == _full_unreduced(test, mp, counts=True)
    finally:
        mp.undo()
        clear_cache()


# -- hand-derived verdicts ------------------------------------------------------------------

def _iriw(scope: str, six: bool, same_gpu: bool = True) -> str:
    """IRIW, readers with a fence.sc between their loads; ``six``: a fence.sc before every
    access too (what clang emits for seq_cst loads and stores: 6 fence.sc, 13 morally strong
    cross-thread pairs). Every thread in its own CTA; with ``same_gpu`` False the writers are on
    GPU 1."""
    g = 0 if same_gpu else 1
    f = f"fence.sc.{scope}"
    p0 = ([f] if six else []) + [f"st.relaxed.{scope} x, 1"]
    p1 = ([f] if six else []) + [f"ld.relaxed.{scope} r0, x", f, f"ld.relaxed.{scope} r1, y"]
    p2 = ([f] if six else []) + [f"st.relaxed.{scope} y, 1"]
    p3 = ([f] if six else []) + [f"ld.relaxed.{scope} r0, y", f, f"ld.relaxed.{scope} r1, x"]
    cols = [p0, p1, p2, p3]
    rows = max(map(len, cols))
    body = "\n".join(" | ".join(c[i] if i < len(c) else "" for c in cols) + " ;"
                     for i in range(rows))
    return (f"PTX IRIW\n{{ x=0; y=0; }}\n P0@cta 0,gpu {g} | P1@cta 1,gpu 0 | "
            f"P2@cta 2,gpu {g} | P3@cta 3,gpu 0 ;\n{body}\n"
            f"exists (P1:r0 == 1 /\\ P1:r1 == 0 /\\ P3:r0 == 1 /\\ P3:r1 == 0)\n")


@pytest.mark.parametrize("six", [False, True])
@pytest.mark.parametrize("scope,verdict", [("cta", "Ok"), ("gpu", "No"), ("sys", "No")])
def test_iriw_fence_sc_at_each_scope(scope, verdict, six):
    """8.10.2: the readers' fence.sc are ordered one way in Fence-SC order; each reader's first
    load then precedes the other's second load in causality order, so the other cannot miss the
    write its partner saw: forbidden when the fences are morally strong (.gpu/.sys: every thread
    on one GPU). .cta fences of different CTAs are related by nothing: allowed."""
    test = parse(_iriw(scope, six), "IRIW.litmus")
    assert check(test, "ptx").verdict == verdict
    if six:
        # 13 cross-thread pairs (refused before: more than 12); the four leading fences are
        # ordered first, leaving the readers' middle fences: two orders per combination of paths
        assert max(len(s._pairs()[1]) for s in _statics(test)) == (13 if scope != "cta" else 0)
        assert all(len(s._fence_sc_orders()) == (2 if scope != "cta" else 1)
                   for s in _statics(test))


def test_iriw_gpu_fences_across_gpus_allow_and_sys_forbid():
    """Writers on another GPU: the readers' .gpu fences still order each other (they share a GPU)
    but the .gpu loads of the writers' locations are not morally strong with the .gpu stores of
    another GPU (a race, no observation): IRIW's outcome is allowed; .sys forbids it."""
    assert check(parse(_iriw("gpu", True, same_gpu=False), "I.litmus"), "ptx").verdict == "Ok"
    assert check(parse(_iriw("sys", True, same_gpu=False), "I.litmus"), "ptx").verdict == "No"


SB = """PTX SB
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
%s
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""


def test_sb_fence_sc_between_is_forbidden_and_leading_fences_allow():
    between = (" st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;\n fence.sc.gpu | fence.sc.gpu ;\n"
               " ld.relaxed.gpu r0, y | ld.relaxed.gpu r0, x ;")
    assert check(parse(SB % between, "SB.litmus"), "ptx").verdict == "No"
    # fence.sc before both accesses orders nothing of them: SB's outcome stays allowed (the
    # leading fences: one order, which loses nothing)
    leading = (" fence.sc.gpu | fence.sc.gpu ;\n st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;\n"
               " ld.relaxed.gpu r0, y | ld.relaxed.gpu r0, x ;")
    assert check(parse(SB % leading, "SB.litmus"), "ptx").verdict == "Ok"
    # .cta fences of two CTAs: not morally strong, the outcome is allowed
    cta = between.replace("fence.sc.gpu", "fence.sc.cta")
    assert check(parse(SB % cta, "SB.litmus"), "ptx").verdict == "Ok"


def test_leading_and_trailing_fences_keep_states(monkeypatch):
    """R+fence.sc with extra fence.sc at the starts and ends of the threads: the reduced orders
    (one per combination) give the states and flags of every order (18)."""
    text = """PTX R
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0      ;
 fence.sc.gpu        | fence.sc.gpu        ;
 st.relaxed.gpu x, 1 | st.relaxed.gpu y, 2 ;
 fence.sc.gpu        | fence.sc.gpu        ;
 st.relaxed.gpu y, 1 | ld.relaxed.gpu r0, x ;
 fence.sc.gpu        | fence.sc.gpu        ;
exists (y == 2 /\\ P1:r0 == 0)
"""
    test = parse(text, "R.litmus")
    stats = list(_statics(test))
    assert [len(s.all_fence_sc_orders()) for s in stats] == [20] * len(stats)
    assert [len(s._fence_sc_orders()) for s in stats] == [2] * len(stats)
    got = _full(test)
    assert got == _full_unreduced(test, monkeypatch)
    assert got[0] == "No"                      # R with fence.sc between: forbidden


def _chains(per_thread: int, threads: int = 4) -> str:
    """``threads`` threads, each a load, then per_thread x (fence.sc.gpu, load)."""
    cols = []
    for t in range(threads):
        col = [f"ld.relaxed.gpu r0, x"]
        for k in range(per_thread):
            col += ["fence.sc.gpu", f"ld.relaxed.gpu r{k + 1}, x"]
        cols.append(col)
    head = " | ".join(f"P{t}@cta {t},gpu 0" for t in range(threads))
    body = "\n".join(" | ".join(c[i] for c in cols) + " ;" for i in range(len(cols[0])))
    return f"PTX chains\n{{ x=0; }}\n {head} ;\n{body}\nexists (x == 0)\n"


def test_more_than_twelve_pairs_are_ordered():
    """4 threads with 2 middle fence.sc each: 24 cross-thread pairs (refused before), whose
    orders are the interleavings of four chains of two: 8! / 2!^4 = 2520, each a total order."""
    sta = next(_statics(parse(_chains(2), "c.litmus")))
    assert len(sta._pairs()[1]) == 24
    orders = sta._fence_sc_orders()
    assert len(orders) == 2520
    assert len({tuple(o) for o in orders}) == 2520
    assert all(sum(bin(r).count("1") for r in o) == 28 for o in orders)     # C(8, 2) pairs


def test_too_many_orders_is_an_error():
    """4 chains of 3 middle fences: 12! / 3!^4 = 369,600 orders, past MAX_VARIANTS."""
    sta = next(_statics(parse(_chains(3), "c.litmus")))
    with pytest.raises(OracleError, match="more than 4096 Fence-SC orders"):
        sta._fence_sc_orders()

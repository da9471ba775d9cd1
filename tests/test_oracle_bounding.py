"""Bounding (the search skipping subtrees whose outcomes are all found) never changes a state set.

Bounding reads each observable's possible values; under the coherence hints a coherent read's
placed sources co-before a write that is cohord-before it are left out (``explore._cowr_bar``).
Two independent checks:

- one location written then read by n threads (rc11, relaxed): the allowed states derived by hand
  from coherence — thread i's read sees a write co-after-or-equal its own (CoWR), the final value
  is the co-last write, and nothing else constrains relaxed accesses — are the pairs
  (a, f) where ``a`` maps each thread to the thread whose value it reads, following ``a`` from
  any thread ends at a thread reading its own write (no cycle: it would be a co cycle), and the
  final writer ``f`` is such a thread (it is co-last, so it reads its own write). Their number is
  ``sum_k k * C(n-1, k-1) * n^(n-k)`` (rooted forests with a marked root): 2160 for n = 5;
- for multi-writer programs, the search with bounding gives the same states as without it.
"""

from __future__ import annotations

import itertools
import math

import pytest

import litmus
import oracle
from oracle.check import get_unit, load_model, pre_executions
from oracle.pack import options, search_pe


def _c_test(name: str, nloc: int, threads: list[list[str]]) -> str:
    locs = [f"x{i}" for i in range(nloc)]
    init = " ".join(f"[{x}] = 0;" for x in locs)
    params = ", ".join(f"atomic_int* {x}" for x in locs)
    body = [f"P{t} ({params}) {{ " + " ".join(lines) + " }" for t, lines in enumerate(threads)]
    return f"C {name}\n{{ {init} }}\n" + "\n".join(body) + "\nexists (0:r0=0)\n"


def _st(x: str, v: int) -> str:
    return f"atomic_store_explicit({x}, {v}, memory_order_relaxed);"


def _ld(r: str, x: str) -> str:
    return f"int {r} = atomic_load_explicit({x}, memory_order_relaxed);"


def one_location(n: int) -> str:
    return _c_test(f"one-loc-{n}", 1, [[_st("x0", i + 1), _ld("r0", "x0")] for i in range(n)])


def by_hand(n: int) -> set[tuple]:
    """The allowed (thread i's r0 for each i, final x0) of :func:`one_location` (module doc)."""
    out = set()
    for a in itertools.product(range(n), repeat=n):
        def root(i):
            seen = set()
            while a[i] != i:
                if i in seen:
                    return None
                seen.add(i)
                i = a[i]
            return i
        if any(root(i) is None for i in range(n)):
            continue
        for f in range(n):
            if a[f] == f:
                out.add(tuple(v + 1 for v in a) + (f + 1,))
    return out


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_one_location_states_by_hand(n):
    oracle.clear_cache()
    test = litmus.parse(one_location(n))
    res = oracle.check(test, "rc11")
    keys = test.observables()
    assert keys == [f"P{i}:r0" for i in range(n)] + ["x0"]
    got = {tuple(s[k] for k in keys) for s in res.states}
    want = by_hand(n)
    assert len(want) == sum(k * math.comb(n - 1, k - 1) * n ** (n - k) for k in range(1, n + 1))
    assert got == want


#: multi-writer programs: CoWR, CoRR, CoRW and CoWW shapes on one or two locations
PROGRAMS = [
    _c_test("mix1", 1, [[_st("x0", 1), _ld("r0", "x0"), _ld("r1", "x0")],
                        [_st("x0", 2), _st("x0", 3), _ld("r0", "x0")],
                        [_ld("r0", "x0"), _st("x0", 4), _ld("r1", "x0")]]),
    _c_test("mix2", 2, [[_st("x0", 1), _ld("r0", "x1"), _st("x1", 5), _ld("r1", "x0")],
                        [_st("x1", 2), _ld("r0", "x0"), _st("x0", 3), _ld("r1", "x1")],
                        [_ld("r0", "x0"), _st("x0", 4), _ld("r1", "x0")]]),
    one_location(4),
    "AMDGPU amd-mw\n{ x = 0; y = 0; }\n"
    " P0@wg 0 | P1@wg 1 | P2@wg 2 ;\n"
    " st.atom.agent x, 1 | st.atom.agent x, 2 | rmw.add.agent r2, y, 3 ;\n"
    " st.atom.agent y, 1 | ld.atom.agent r0, x | st.atom.agent x, 3 ;\n"
    " ld.atom.agent r0, x | st.atom.agent y, 2 | ld.atom.agent r0, y ;\n"
    " ld.atom.agent r1, y | ld.atom.agent r1, y | ld.atom.agent r1, x ;\n"
    "exists (P0:r0 == 0)\n",
]


@pytest.mark.parametrize("text", PROGRAMS, ids=lambda t: t.split()[1])
def test_bounding_keeps_states(text):
    test = litmus.parse(text)
    model = oracle.check(test).model
    unit, prog = get_unit(model), load_model(model)
    pes = pre_executions(unit, test)
    assert pes
    for pe in pes:
        nobs = len(pe.observables)
        runs = {}
        for bound in (True, False):
            # raisable=0: bounding may skip subtrees whatever flags they could raise (the state
            # set does not depend on flags)
            st, ns, _, _, _, fails, _ = search_pe(pe, prog, unit.hints,
                                                  options(pe.n, nobs, bound=bound, raisable=0))
            runs[bound] = ({tuple(r) for r in st[:ns].tolist()}, fails)
        assert runs[True][0] == runs[False][0]
        assert runs[True][0]

"""The candidate search of the tests' Python references of the rc11 and vulkan models
(``rc11/reference.py``, ``vulkan/reference.py``): independent of the numba engine, it
enumerates every reads-from choice (a read reads a write to its location *with the value the path
assumed*, never a po-later write of its own thread) and every coherence order (per location a
total order of its writes, initial write first) over the events of
:mod:`oracle.models.path_executions`, and lets the model's ``consistent(x)`` decide; the outcome
is the path's final registers and, per location, the value of its co-last write.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Callable

from litmus.cfg import UNROLL, paths_per_thread
from litmus.ir import Test
from litmus.outcome import evaluate, verdict as herd_verdict

from oracle.check import Result
from oracle.models.path_executions import Execution, build_combination, bits, empty


def _rf_choices(x: Execution) -> list[list[int]]:
    """Per read, the writes it may read from (same location and value, not po-later)."""
    writes_by_loc: dict[str, list[Event]] = {}
    for e in x.events:
        if e.kind == "W":
            writes_by_loc.setdefault(e.loc, []).append(e)
    out = []
    for e in x.events:
        if e.kind != "R":
            continue
        cands = [w.eid for w in writes_by_loc.get(e.loc, [])
                 if (e.val is None or w.val == e.val) and not (x.po[e.eid] >> w.eid) & 1]
        out.append((e.eid, cands))
    return out


def _co_choices(x: Execution):
    per_loc = []
    for loc in x.test.locations:
        ws = [e.eid for e in x.events if e.kind == "W" and e.loc == loc.name and e.tid >= 0]
        init = next(e.eid for e in x.events if e.tid < 0 and e.loc == loc.name)
        per_loc.append((init, ws))
    return per_loc


def _co_rel(n: int, orders) -> list[int]:
    co = empty(n)
    for init, perm in orders:
        chain = (init,) + tuple(perm)
        for a, i in enumerate(chain):
            for j in chain[a + 1:]:
                co[i] |= 1 << j
    return co


#: The conformance models' Python references return the oracle's own Result.
ConformanceResult = Result


def executions(test: Test, unroll: int = UNROLL, prepare=None, partial=None, seed=True,
               thin_air=False):
    """Yield (Execution, paths, co orders) for every rf/co candidate.

    ``prepare(x0)``, when given, is called once per combination of paths with the execution
    before rf/co are chosen; it returns a list of dicts (one per variant of the combination, e.g.
    the barrier synchronization choices), each merged into the candidates' ``cache``; an empty
    list drops the combination (e.g. a control barrier that can never complete).

    ``partial(x)``, when given, is the model's consistency check applied to a candidate whose
    reads are only partly assigned a source: every model here is monotone in rf (more rf edges
    give more edges in every derived relation), so a failing partial candidate is abandoned with
    every completion of it. Reads are assigned in event order.
    """
    paths = paths_per_thread(test, unroll, seed, thin_air)
    for combo in itertools.product(*paths):
        x0 = build_combination(test, combo)
        variants = prepare(x0) if prepare is not None else [{}]
        if not variants:
            continue
        rfc = _rf_choices(x0)
        if any(not c for _, c in rfc):
            continue
        cos = _co_choices(x0)
        co_lists = [[(init, p) for p in itertools.permutations(ws)] for init, ws in cos]
        nr = len(rfc)
        for orders in itertools.product(*co_lists):
            co = _co_rel(x0.n, orders)
            for extra in variants:
                def make(rf):
                    return Execution(test, x0.events, x0.n, x0.po, x0.rmw, x0.loc, x0.sets,
                                     x0.ext, rf, co, dict(extra))

                def dfs(k, rf):
                    if k == nr:
                        yield make(rf)
                        return
                    r, cands = rfc[k]
                    for w in cands:
                        rf2 = list(rf)
                        rf2[w] |= 1 << r
                        if partial is not None and nr - k > 2 and len(cands) > 1 \
                                and not partial(make(rf2)):
                            continue
                        yield from dfs(k + 1, rf2)

                for x in dfs(0, empty(x0.n)):
                    x.op_event = x0.op_event
                    yield x, combo, orders


def final_state(test: Test, x: Execution, combo, orders) -> dict:
    state: dict = {}
    src = None
    for tid, path in enumerate(combo):
        regs = path.reg_dict()
        for r in test.registers(tid):
            v = regs.get(r, test.register_init(tid, r))
            if isinstance(v, tuple):                  # a free read: the value of its rf source
                if src is None:
                    src = {}
                    for w, row in enumerate(x.rf):
                        for rd in bits(row):
                            src[rd] = w
                v = x.events[src[x.op_event[tid][v[1]]]].val
            state[f"P{tid}:{r}"] = v
    last = {}
    for (init, perm), loc in zip(orders, test.locations):
        eid = perm[-1] if perm else init
        last[loc.name] = x.events[eid].val
    for loc in test.globals:
        state[loc.name] = last[loc.name]
    return state


#: Most candidate executions one test may enumerate before the check gives up (ValueError).
BUDGET = 300_000


@dataclass(frozen=True)
class PythonModel:
    """A model written in Python over :class:`Execution` s (the rc11 and vulkan references).

    ``consistent(x)`` decides an execution; ``racy(x)`` raises the ``racy`` flag when some
    consistent execution (satisfying the test's ``filter``, if any) has a race; ``prepare(x0)``
    (or None) gives the per-execution variants :func:`executions` enumerates; ``seed``: whether
    the value domains must be seeded (False where the model forbids (po | rf) cycles)."""

    consistent: Callable[[Execution], bool]
    racy: Callable[[Execution], bool]
    prepare: Callable | None = None
    seed: bool = True
    #: the model file declares ``allow thin-air``: reads may take values out of thin air
    #: (litmus/cfg.py: value_domains)
    thin_air: bool = False


def check_with(model: PythonModel, test: Test, name: str, unroll: int = UNROLL,
               budget: int = BUDGET, stop: str | None = None) -> ConformanceResult:
    """Enumerate candidates, keep the model's consistent ones, compute states, verdict, flags.

    ``stop="verdict"`` ends the search as soon as one state decides the verdict (a witness of an
    ``exists``/``~exists`` proposition, a counterexample of a ``forall``), ``stop="race"`` at the
    first racy execution: the states are then only those found so far. Used by the conformance
    runs, where only the verdict (or the race flag) is compared.
    """
    t0 = time.perf_counter()
    filt = dict(test.meta).get("filter")
    states: dict[tuple, dict] = {}
    cand = cons = 0
    racy = False
    q, prop = test.condition.quantifier, test.condition.prop
    for x, combo, orders in executions(test, unroll, model.prepare, model.consistent,
                                       model.seed, model.thin_air):
        cand += 1
        if cand > budget:
            raise ValueError(f"{test.name}: more than {budget} candidate executions")
        if not model.consistent(x):
            continue
        cons += 1
        st = final_state(test, x, combo, orders)
        if filt is not None and not evaluate(filt, st):
            continue
        key = tuple(st[k] for k in test.observables())
        states.setdefault(key, st)
        if not racy and model.racy(x):
            racy = True
            if stop == "race":
                break
        if stop == "verdict" and evaluate(prop, st) != (q == "forall"):
            break
    obs = test.observables()
    sts = [dict(zip(obs, k)) for k in sorted(states, key=repr)]
    v = herd_verdict(test.condition, sts)
    return ConformanceResult(name, v, sts, ["racy"] if racy else [], [], cand, cons,
                             time.perf_counter() - t0)

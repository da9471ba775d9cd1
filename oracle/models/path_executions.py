"""Candidate executions of C/Vulkan-dialect tests and a small bit-set relation algebra.

This is the execution side the rc11 and vulkan models share (the AMDGPU engine works on
straight-line programs only; these dialects branch and compute values, litmus/cfg.py):

1. every thread's pre-executions (paths with the values their reads returned, litmus/cfg.py);
2. for every combination of one path per thread, the events: one initial write per location
   (``tid == -1``), then each thread's operations in program order (an rmw gives a read and a write
   related by ``rmw``);
3. every reads-from choice (a read reads a write to its location *with the value the path
   assumed*, never a po-later write of its own thread) and every coherence order (per location a
   total order of its writes, initial write first);
4. the model's ``consistent(x)`` decides; the outcome is the path's final registers and, per
   location, the value of its co-last write.

Relations are lists of Python ints, one bit-set row per event (bit j of row i: i -> j).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Callable

from litmus.cfg import UNROLL, Path, paths_per_thread, unsequenced
from litmus.ir import Test
from litmus.outcome import evaluate, verdict as herd_verdict

from oracle.check import Result


# --- relation algebra ---------------------------------------------------------------------------

def bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def empty(n: int) -> list[int]:
    return [0] * n


def union(*rs: list[int]) -> list[int]:
    out = list(rs[0])
    for r in rs[1:]:
        out = [a | b for a, b in zip(out, r)]
    return out


def inter(a: list[int], b: list[int]) -> list[int]:
    return [x & y for x, y in zip(a, b)]


def minus(a: list[int], b: list[int]) -> list[int]:
    return [x & ~y for x, y in zip(a, b)]


def seq(a: list[int], b: list[int]) -> list[int]:
    out = []
    for row in a:
        v = 0
        while row:
            low = row & -row
            v |= b[low.bit_length() - 1]
            row ^= low
        out.append(v)
    return out


def inverse(a: list[int]) -> list[int]:
    n = len(a)
    out = [0] * n
    for i, row in enumerate(a):
        for j in bits(row):
            out[j] |= 1 << i
    return out


def restrict(a: list[int], dom: int, rng: int) -> list[int]:
    """[dom]; a; [rng]"""
    return [(row & rng) if (dom >> i) & 1 else 0 for i, row in enumerate(a)]


def ident(s: int, n: int) -> list[int]:
    return [(1 << i) if (s >> i) & 1 else 0 for i in range(n)]


def opt(a: list[int]) -> list[int]:
    """a? (reflexive closure)"""
    return [row | (1 << i) for i, row in enumerate(a)]


def plus(a: list[int]) -> list[int]:
    """Transitive closure (Warshall over bit rows)."""
    r = list(a)
    n = len(r)
    for k in range(n):
        bk = 1 << k
        rk = r[k]
        if not rk:
            continue
        for i in range(n):
            if r[i] & bk:
                r[i] |= rk
        rk = r[k]
    return r


def irreflexive(a: list[int]) -> bool:
    return all(not (row >> i) & 1 for i, row in enumerate(a))


def acyclic(a: list[int]) -> bool:
    return irreflexive(plus(a))


def cross(s: int, t: int, n: int) -> list[int]:
    return [t if (s >> i) & 1 else 0 for i in range(n)]


# --- events and executions ----------------------------------------------------------------------

@dataclass
class Event:
    eid: int
    tid: int               # -1 for initial writes
    kind: str              # W R F B AV VIS
    loc: str | None
    val: int | None
    instr: object | None
    index: int = -1        # instruction row (for barriers: which cbar)
    order: str | None = None   # rlx acq rel acq_rel sc, None for plain
    atomic: bool = False
    is_rmw: bool = False


@dataclass
class Execution:
    """One candidate execution; relations are bit-set rows over ``events``."""

    test: Test
    events: list[Event]
    n: int
    po: list[int]
    rmw: list[int]
    loc: list[int]                  # same location (accesses only)
    sets: dict[str, int]            # named event sets as bit masks
    ext: list[int]                  # different threads (initial writes count as their own)
    rf: list[int] = field(default_factory=list)
    co: list[int] = field(default_factory=list)
    cache: dict = field(default_factory=dict)

    def fr(self) -> list[int]:
        if "fr" not in self.cache:
            self.cache["fr"] = seq(inverse(self.rf), self.co)
        return self.cache["fr"]


def _build(test: Test, combo: tuple[Path, ...]):
    events: list[Event] = []
    for loc in test.locations:
        events.append(Event(len(events), -1, "W", loc.name, loc.init, None, atomic=True))
    thread_events: list[list[int]] = []
    rmw_pairs = []
    op_event: list[list[int]] = []       # per thread: op index -> event id (the read of an rmw)
    for tid, path in enumerate(combo):
        ids = []
        op_event.append([])
        for op in path.ops:
            op_event[tid].append(len(events))
            ins = op.instr
            order = ins.order
            atomic = ins.access == "atom" or ins.base in ("rmw", "cas")
            if op.kind == "U":
                ro = {"rel": "rlx", "acq_rel": "acq"}.get(order, order)
                wo = {"acq": "rlx", "acq_rel": "rel"}.get(order, order)
                r = Event(len(events), tid, "R", op.loc, op.rval, ins, op.index, ro, True, True)
                events.append(r)
                w = Event(len(events), tid, "W", op.loc, op.wval, ins, op.index, wo, True, True)
                events.append(w)
                ids += [r.eid, w.eid]
                rmw_pairs.append((r.eid, w.eid))
                continue
            kind = op.kind
            val = op.rval if kind == "R" else op.wval
            e = Event(len(events), tid, kind, op.loc, val, ins, op.index,
                      order if (atomic or kind in ("F", "B")) else None, atomic)
            events.append(e)
            ids.append(e.eid)
        thread_events.append(ids)
    n = len(events)
    po = empty(n)
    for ids in thread_events:
        for a, i in enumerate(ids):
            for j in ids[a + 1:]:
                # the accesses of two operands of one C operator are unsequenced (C11 6.5p3)
                if not unsequenced(events[i].instr, events[j].instr):
                    po[i] |= 1 << j
    rmw = empty(n)
    for r, w in rmw_pairs:
        rmw[r] |= 1 << w
    by_loc: dict[str, int] = {}
    for e in events:
        if e.loc is not None:
            by_loc[e.loc] = by_loc.get(e.loc, 0) | (1 << e.eid)
    loc = [by_loc[e.loc] if e.loc is not None else 0 for e in events]
    sets = {"W": 0, "R": 0, "F": 0, "IW": 0, "A": 0}
    for e in events:
        b = 1 << e.eid
        if e.kind in ("W", "R", "F"):
            sets[e.kind] |= b
        if e.tid < 0:
            sets["IW"] |= b
        if e.atomic:
            sets["A"] |= b
    thr: dict[int, int] = {}
    for e in events:
        key = e.tid if e.tid >= 0 else -1 - e.eid
        thr[key] = thr.get(key, 0) | (1 << e.eid)
    allm = (1 << n) - 1
    ext = [allm & ~thr[e.tid if e.tid >= 0 else -1 - e.eid] for e in events]
    x = Execution(test, events, n, po, rmw, loc, sets, ext)
    x.op_event = op_event
    return x


def path_values(path: Path) -> tuple[frozenset, frozenset]:
    """The (location, value) pairs a path's reads assume and the ones its writes write."""
    reads, writes = set(), set()
    for op in path.ops:
        if op.rval is not None:
            reads.add((op.loc, op.rval))
        if op.wval is not None:
            writes.add((op.loc, op.wval))
    return frozenset(reads), frozenset(writes)


def justifiable_combinations(test: Test, paths: list[list[Path]]):
    """The combinations of one path per thread in which every value a read assumed is written
    to its location by some write of the combination (or is the initial value). The others have
    no candidate execution at all (a read's rf source must write the value its path assumed),
    so dropping them keeps every outcome; with thin-air value domains most combinations are of
    that kind."""
    init = {(loc.name, loc.init) for loc in test.locations}
    sig = [[path_values(p) for p in ps] for ps in paths]
    for idx in itertools.product(*(range(len(ps)) for ps in paths)):
        reads, writes = set(), set(init)
        for t, k in enumerate(idx):
            r, w = sig[t][k]
            reads |= r
            writes |= w
        if reads <= writes:
            yield tuple(paths[t][k] for t, k in enumerate(idx))


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
        x0 = _build(test, combo)
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
    """A model written in Python over :class:`Execution` s (the rc11 and vulkan fallbacks).

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

"""Events of C/Vulkan-dialect tests and a small bit-set relation algebra.

The execution side the rc11 and vulkan builders share (these dialects branch and compute values,
litmus/cfg.py): for one combination of thread paths (each with the values its reads returned),
the events — one initial write per location (``tid == -1``), then each thread's operations in
program order (an rmw gives a read and a write related by ``rmw``) — with po, rmw, loc, ext and
the basic sets (:func:`build_combination`), and which combinations of paths can occur at all
(:func:`justifiable_combinations`). The PTX builder turns :func:`build_combination`'s form into
the engine's pre-executions (rc11, c11, opencl and vulkan build tables straight from the paths,
:mod:`oracle.models.path_tables`); the Python references of the two models
(:mod:`oracle.models.reference_paths`) enumerate rf and co over it themselves.

Relations are lists of Python ints, one bit-set row per event (bit j of row i: i -> j).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from litmus.cfg import Path, unsequenced
from litmus.ir import Test


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


def build_combination(test: Test, combo: tuple[Path, ...]):
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


def add_observables(pe, test: Test, combo, x0, final: dict) -> None:
    """Outcome keys of one path combination built in readable form (``x0`` from
    :func:`build_combination`; the PTX builder): each register is the value an event read (or a constant
    the path assigned), each global the value its final-memory read ``final[name]`` sees."""
    for tid, path in enumerate(combo):
        regs = path.reg_dict()
        for r in test.registers(tid):
            v = regs.get(r, test.register_init(tid, r))
            pe.observables.append((f"P{tid}:{r}", ("event", x0.op_event[tid][v[1]])
                                   if isinstance(v, tuple) else ("const", v)))
    for loc in test.globals:
        pe.observables.append((loc.name, ("event", final[loc.name])))


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

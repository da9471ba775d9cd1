"""The candidate executions of one pre-execution, evaluated by the compiled model, in the order
of the readable derivation: what :func:`oracle.explain` walks to find the execution it draws, and
what :func:`oracle.ubflags.witness` walks to name the pair that raised an undefined-behaviour flag.

Kept apart from :mod:`oracle.explanation` (which imports :mod:`oracle.check`, which imports
:mod:`oracle.ubflags`) so that neither the check nor the flags import the explanation: no import
circle (tests/test_layers.py).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from litmus.ir import UNDEF

from .engine import event_mask, run_rows
from .events import UNDEF_VAL, PreExecution
from .lang import DYNAMIC, Program
from .pack import pack


@dataclasses.dataclass
class Candidate:
    """One candidate execution, evaluated by the compiled model."""

    pe: PreExecution
    src: dict[int, int]          # read -> write (-1 undef)
    co: list[list[int]]          # per location, the co order
    val: list[int]
    slots: np.ndarray            # the model's slots after evaluation (up to the failing check)
    failed: str | None           # first failing check, None when consistent
    witness: object              # cycle (list of events) or set of pairs

    def outcome(self) -> dict:
        return {k: (UNDEF if (self.val[a] if kind == "event" else a) == UNDEF_VAL
                    else (self.val[a] if kind == "event" else a))
                for k, (kind, a) in self.pe.observables}


def pair_set(row_array, n: int, W: int = 1) -> set:
    """The pairs of a relation held in flat rows of ``W`` words."""
    return {(a, b) for a in range(n) for b in range(n)
            if int(row_array[a * W + (b >> 6)]) >> (b & 63) & 1}


def shortest_cycle(rel: set) -> list[int] | None:
    """A shortest cycle of ``rel`` (the first found from the lowest start) as a list of events,
    first == last; None when acyclic."""
    succ: dict[int, list[int]] = {}
    for a, b in rel:
        succ.setdefault(a, []).append(b)
    best = None
    for start in sorted(succ):
        prev = {start: None}
        frontier = [start]
        found = False
        while frontier and not found:
            nxt = []
            for u in frontier:
                for v in sorted(succ.get(u, ())):
                    if v == start:
                        path = [u]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        path.reverse()
                        cyc = path + [start]
                        if best is None or len(cyc) < len(best):
                            best = cyc
                        found = True
                        break
                    if v not in prev:
                        prev[v] = u
                        nxt.append(v)
                if found:
                    break
            frontier = nxt
    return best


def candidates(pe: PreExecution, prog: Program, hints: frozenset):
    """Every candidate of one pre-execution, in the order of the readable derivation (per
    location a co order, then per read in event order a source): a :class:`Candidate`, or None
    where the values do not resolve or break a required value."""
    p = pack(pe, prog, hints)
    n, W = pe.n, p.words
    emask = event_mask(n, W)
    base = p.slots.copy()
    run_rows(base, prog.prelude, n, W, emask)
    rd = p.reads
    choices = {int(r): [int(w) for w in rd.cand[q, :rd.ncand[q]]]
               for q, r in enumerate(rd.reads)}
    reads = sorted(choices)
    orders = [[([init] if init >= 0 else []) + list(perm) for perm in itertools.permutations(ws)]
              for init, ws in p.co_writes()]
    check_slot = {st.name: prog.node_slots[id(st.expr)] for st in prog.check_stmts}
    kinds = {st.name: st.kind for st in prog.check_stmts}

    def put(slots, s, i, j):
        slots[s, i * W + (j >> 6)] |= np.uint64(1) << np.uint64(j & 63)

    for co in itertools.product(*orders):
        co = [list(o) for o in co]
        for choice in itertools.product(*(choices[r] for r in reads)):
            src = dict(zip(reads, choice))
            val = p.values(src)
            if val is None:
                yield None
                continue
            slots = base.copy()
            slots[:len(DYNAMIC)] = 0
            for r, w in src.items():
                if w >= 0:
                    put(slots, 0, w, r)                        # rf
                    put(slots, 2, r, r)                        # Rdef
                else:
                    put(slots, 3, r, r)                        # Rundef
            for o in co:
                for i, a in enumerate(o):
                    for b in o[i + 1:]:
                        put(slots, 1, a, b)                    # co
            failed, _ = run_rows(slots, prog.ops, n, W, emask)
            if failed < 0:
                yield Candidate(pe, src, co, val, slots, None, None)
                continue
            name = prog.checks[failed]
            rel = pair_set(slots[check_slot[name]], n, W)
            if kinds[name] == "acyclic":
                witness = shortest_cycle(rel)
            elif kinds[name] == "irreflexive":
                witness = {(a, b) for (a, b) in rel if a == b}
            else:
                witness = rel
            yield Candidate(pe, src, co, val, slots, name, witness)

"""A slow, plain-Python evaluation of a model, independent of the numba engine (a test aid).

It walks the model's AST (not the compiled op array) over relations as Python sets of pairs and
enumerates candidates with :func:`itertools.product`, deriving each read's candidate writes and
each location's co orders from the readable pre-execution. Tests check that it and the engine
agree on generated programs (states, candidate counts) and on the relations of single
expressions. Nothing in the package uses it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from litmus.ir import UNDEF, Test
from litmus.rmw import apply_rmw

from oracle.check import pre_executions
from oracle.errors import OracleError
from oracle.events import PENDING_REF, UNDEF_VAL, PreExecution
from oracle.explanation import shortest_cycle as _cycle
from oracle.lang import Node, Program, load_model
from oracle.registry import get as get_unit

Rel = frozenset


def _rmw(op: int, old: int, x: int) -> int:
    return UNDEF_VAL if old == UNDEF_VAL else apply_rmw(op, old, x)


def rf_candidates(pe: PreExecution) -> dict[int, list[int]]:
    """Per read: the writes it may read from (-1 = undef), after static pruning."""
    nrf = pe.rel_rows("nrf")
    out = {}
    writes = sorted(pe.sets["W"])
    for r in sorted(pe.sets["R"]):
        er = pe.events[r]
        cs = []
        for w in writes:
            ew = pe.events[w]
            if ew.loc_id != er.loc_id or nrf[w] >> r & 1:
                continue
            if ew.wsrc < 0 and er.req_mode and ((er.req_mode == 1) != (ew.value == er.req_val)):
                continue        # a constant write that breaks the read's required value
            cs.append(w)
        if r in pe.sets.get("UndefOK", ()):
            cs.append(-1)
        out[r] = cs
    return out


def co_groups(pe: PreExecution) -> list[tuple[int, list[int]]]:
    """Per location (every loc_id of a read or write, in order): (initial write or -1, the other
    co-ordered writes)."""
    groups: dict[int, list] = {e.loc_id: [] for e in pe.events if e.loc_id >= 0}
    for w in sorted(pe.sets.get("CO", ())):
        groups.setdefault(pe.events[w].loc_id, []).append(w)
    out = []
    for lid in sorted(groups):
        ws = groups[lid]
        init = [w for w in ws if w in pe.sets.get("IW", ())]
        rest = [w for w in ws if w not in init]
        out.append((init[0] if init else -1, rest))
    return out



def values(pe: PreExecution, src: dict[int, int]) -> list[int] | None:
    """Event values for rf sources ``src`` (read -> write or -1 for undef); None on a cycle."""
    val = [PENDING_REF] * pe.n
    for i, e in enumerate(pe.events):
        if i not in src and e.wsrc < 0:
            val[i] = e.value
    for _ in range(pe.n + 1):
        for i, e in enumerate(pe.events):
            if val[i] != PENDING_REF:
                continue
            if i in src:
                s = src[i]
                val[i] = UNDEF_VAL if s < 0 else val[s]
            elif val[e.wsrc] != PENDING_REF:
                val[i] = _rmw(e.wop, val[e.wsrc], e.wopnd)
    if PENDING_REF in val:
        return None
    return val


def _closure(r: set) -> set:
    out = set(r)
    while True:
        new = {(a, d) for (a, b) in out for (c, d) in out if b == c} - out
        if not new:
            return out
        out |= new


class Evaluator:
    """Evaluates one candidate: ``env`` maps names to relations (sets of pairs)."""

    def __init__(self, pe: PreExecution, env: dict):
        self.n = pe.n
        self.env = env
        self.univ = {(a, b) for a in range(self.n) for b in range(self.n)}
        self.id = {(a, a) for a in range(self.n)}

    def ev(self, node: Node) -> set:
        op, a = node.op, node.args
        if op == "name":
            return self.env[node.name]
        if op == "zero":
            return set()
        if op == "id":
            return self.id
        if op == "univ":
            return self.univ
        if op == "union":
            return self.ev(a[0]) | self.ev(a[1])
        if op == "inter":
            return self.ev(a[0]) & self.ev(a[1])
        if op == "diff":
            return self.ev(a[0]) - self.ev(a[1])
        if op == "seq":
            x, y = self.ev(a[0]), self.ev(a[1])
            by = {}
            for (c, d) in y:
                by.setdefault(c, []).append(d)
            return {(p, d) for (p, q) in x for d in by.get(q, ())}
        if op == "compl":
            return self.univ - self.ev(a[0])
        if op == "inv":
            return {(q, p) for (p, q) in self.ev(a[0])}
        if op == "plus":
            return _closure(self.ev(a[0]))
        if op == "star":
            return _closure(self.ev(a[0])) | self.id
        if op == "opt":
            return self.ev(a[0]) | self.id
        if op in ("restrict", "dom"):
            return {(p, p) for (p, _) in self.ev(a[0])}
        if op == "ran":
            return {(q, q) for (_, q) in self.ev(a[0])}
        if op == "prod":
            return {(p, q) for (p, _) in self.ev(a[0]) for (q, _) in self.ev(a[1])}
        raise OracleError(f"unknown node {op}")


@dataclass
class Candidate:
    """One candidate execution as the reference sees it."""

    pe: PreExecution
    src: dict[int, int]          # read -> write (-1 undef)
    co: list[list[int]]          # per location, the co order
    val: list[int]
    env: dict                    # every relation after evaluation (up to the failing check)
    failed: str | None           # first failing check, None when consistent
    witness: object              # cycle (list of events) or set of pairs
    flags: list[str]

    def outcome(self) -> dict:
        return {k: (UNDEF if (self.val[a] if kind == "event" else a) == UNDEF_VAL
                    else (self.val[a] if kind == "event" else a))
                for k, (kind, a) in self.pe.observables}


def base_env(pe: PreExecution, prog: Program) -> dict:
    env = {}
    for name in prog.base[4:]:
        if name in pe.sets:
            env[name] = {(i, i) for i in pe.sets[name]}
        elif name in pe.rels:
            env[name] = pe.pairs(name)
        else:
            raise OracleError(f"model {prog.name} uses {name!r}, which the builder does not provide")
    return env


def evaluate(pe: PreExecution, prog: Program, src, co_orders, val, base) -> Candidate:
    env = dict(base)
    env["rf"] = {(w, r) for r, w in src.items() if w >= 0}
    env["Rdef"] = {(r, r) for r, w in src.items() if w >= 0}
    env["Rundef"] = {(r, r) for r, w in src.items() if w < 0}
    env["co"] = {(o[i], o[j]) for o in co_orders for i in range(len(o))
                 for j in range(i + 1, len(o))}
    ev = Evaluator(pe, env)
    flags = []
    for st in prog.stmts:
        if st.kind == "allow":          # a declared property, nothing to evaluate
            continue
        if st.kind == "let":
            env[st.name] = ev.ev(st.expr)
        elif st.kind == "fix":
            env[st.name] = set()
            while True:
                new = ev.ev(st.expr)
                if new == env[st.name]:
                    break
                env[st.name] = new
        else:
            r = ev.ev(st.expr)
            if st.kind == "flag":
                if bool(r) == st.negate:
                    flags.append(st.name)
                continue
            if st.kind == "acyclic":
                cyc = _cycle(r)
                if cyc:
                    return Candidate(pe, src, co_orders, val, env, st.name, cyc, flags)
            elif st.kind == "irreflexive":
                bad = {(a, b) for (a, b) in r if a == b}
                if bad:
                    return Candidate(pe, src, co_orders, val, env, st.name, bad, flags)
            elif st.kind == "empty":
                if r:
                    return Candidate(pe, src, co_orders, val, env, st.name, r, flags)
    return Candidate(pe, src, co_orders, val, env, None, None, flags)


def candidates(pe: PreExecution, prog: Program):
    """Every candidate of one pre-execution whose values resolve and meet required values."""
    rc = rf_candidates(pe)
    reads = sorted(rc)
    groups = co_groups(pe)
    base = base_env(pe, prog)
    co_choices = [[([i] if i >= 0 else []) + list(p) for p in itertools.permutations(rest)]
                  for i, rest in groups]
    for cos in itertools.product(*co_choices):
        for choice in itertools.product(*(rc[r] for r in reads)):
            src = dict(zip(reads, choice))
            val = values(pe, src)
            if val is None:
                yield None
                continue
            if any(e.req_mode and val[i] != UNDEF_VAL and
                   ((e.req_mode == 1) != (val[i] == e.req_val))
                   for i, e in enumerate(pe.events)):
                yield None
                continue
            yield evaluate(pe, prog, src, list(cos), val, base)


def reference_check(test: Test, model: str = "amdgpu"):
    """(states as a set of outcome tuples in test.observables() order, candidates, consistent)."""
    prog = load_model(model)
    keys = test.observables()
    states = set()
    ncand = ncons = 0
    for pe in pre_executions(get_unit(model), test):
        for c in candidates(pe, prog):
            ncand += 1
            if c is None or c.failed is not None:
                continue
            ncons += 1
            o = c.outcome()
            states.add(tuple(o[k] for k in keys))
    return states, ncand, ncons


def few_writes(test: Test, most: int = 3) -> bool:
    """At most ``most`` writes (stores and read-modify-writes) to each location of ``test``.

    The reference enumerates every co order of a location's writes times every read's candidate
    writes: a random program with five or six writes to one location takes minutes under it.
    Property tests that compare it with the engine keep their programs below that with this.
    """
    count: dict[str, int] = {}
    for th in test.threads:
        for ins in th.code:
            if ins.base in ("st", "rmw", "cas") and ins.loc is not None:
                count[ins.loc] = count.get(ins.loc, 0) + 1
    return all(n <= most for n in count.values())

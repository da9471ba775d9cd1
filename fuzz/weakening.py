"""The strict-weakening property of Tile IR over PTX, and the campaign that tests it.

Tile IR 7.11: "The axioms and relations of the Tile IR memory model are intended to be a strict
weakening of the PTX memory model." Mechanically: for a race-free Tile IR program P, every
outcome the PTX model allows for the lowered program ``lower(P)`` (litmus/mappings/tileir_ptx.py)
is allowed by the Tile IR model for P. A program that breaks it is a *counterexample*: a flaw in
the reconstruction of the Tile IR model, in the lowering, or in the claim.

:func:`weakening` decides one program; :func:`minimize` shrinks a counterexample (fewer blocks,
ops, lanes, tokens, masks) while it stays one; :func:`explain_counterexample` gives both
executions (the PTX execution that gives the outcome, and why each Tile IR candidate giving it is
inconsistent). The campaign that draws programs (the TILEIR program family, deterministic per
seed and index), records every distinct minimized counterexample and writes
``OUT/weakening.json`` runs on the campaign loop: :mod:`fuzz.weakening_campaign`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from litmus import parse
from litmus.ir import Condition, Const, Test, Thread
from litmus.mappings.tileir_ptx import location_names, lower
from litmus.print_tileir import format_tileir
from litmus.tileir import TileOp

from oracle import OracleError, check, explain


#: search budget per oracle call (steps and evaluations); a program past it is counted, not checked
BUDGET = 300_000


@dataclass
class Verdict:
    """One program judged: ``status`` is ``holds``, ``racy`` (UB under the Tile IR model: the
    property says nothing) or ``counterexample`` (``extra``: the PTX outcomes, in Tile IR names,
    that the Tile IR model forbids)."""

    status: str
    extra: list = field(default_factory=list)
    ptx: str = ""


def tileir_outcome(test: Test, ptx_state: dict) -> dict:
    """A PTX outcome of ``lower(test)`` as an outcome of ``test``: locations under their Tile IR
    names; a register only masked-out lanes write (no PTX instruction writes it) keeps its
    initial value, as in the Tile IR program."""
    back = {v: k for k, v in location_names(test).items()}
    out = {back.get(k, k): v for k, v in ptx_state.items()}
    for key in test.observables():
        if key not in out:
            tid, _, reg = key.partition(":")
            out[key] = test.register_init(int(tid[1:]), reg)
    return out


def weakening(test: Test, model: str = "tileir", against: str = "ptx",
              budget: int | None = BUDGET) -> Verdict:
    """Judge one TILEIR program (see the module docstring); OracleError when a check fails."""
    mine = check(test, model, budget=budget, name_ub=False)
    if mine.verdict == "Undef":
        return Verdict("racy")
    text = lower(test)
    theirs = check(parse(text, f"{test.name}.ptx.litmus"), against, budget=budget)
    extra = [s for s in (tileir_outcome(test, s) for s in theirs.states) if not mine.allows(s)]
    return Verdict("counterexample" if extra else "holds", extra, text)


# --- minimization -------------------------------------------------------------------------------

def _without_op(th: Thread, i: int) -> Thread:
    """Thread ``th`` without op ``i``; ops consuming its token consume nothing instead (a join
    losing an input keeps the others, or becomes a fresh token)."""
    gone = th.code[i].token
    code = []
    for k, op in enumerate(th.code):
        if k == i:
            continue
        if gone in op.token_in:
            rest = tuple(t for t in op.token_in if t != gone)
            if op.opname == "join_tokens":
                op = dataclasses.replace(op, token_in=rest) if len(rest) >= 2 else \
                    dataclasses.replace(op, opname="make_token", token_in=())
            else:
                op = dataclasses.replace(op, token_in=rest)
        code.append(op)
    return Thread(th.placement, tuple(code))


def _without_lane(op: TileOp, lane: int) -> TileOp:
    drop = lambda tup: tuple(v for k, v in enumerate(tup) if k != lane)  # noqa: E731
    return dataclasses.replace(op, addrs=drop(op.addrs), vals=drop(op.vals), cmps=drop(op.cmps),
                               regs=drop(op.regs), mask=drop(op.mask))


def _smaller(test: Test):
    """Candidate programs one step simpler than ``test``, simplest changes first."""
    ths = test.threads

    def with_threads(new):
        return dataclasses.replace(test, threads=tuple(new))

    if len(ths) > 1:
        for t in range(len(ths)):
            yield with_threads(th for k, th in enumerate(ths) if k != t)
    for t, th in enumerate(ths):
        for i in range(len(th.code)):
            yield with_threads(_without_op(th, i) if k == t else x for k, x in enumerate(ths))
    for t, th in enumerate(ths):
        for i, op in enumerate(th.code):
            simpler = []
            if op.is_memory_access and len(op.addrs) > 1:
                simpler += [_without_lane(op, lane) for lane in op.lanes()]
            if op.mask:
                simpler.append(dataclasses.replace(op, mask=()))
            if op.is_memory_access and op.token_in:
                simpler.append(dataclasses.replace(op, token_in=()))
            for new in simpler:
                code = th.code[:i] + (new,) + th.code[i + 1:]
                yield with_threads(Thread(th.placement, code) if k == t else x
                                   for k, x in enumerate(ths))
    used = {a for th in ths for op in th.code for a in op.addrs}
    if len(used) < len(test.locations):
        yield dataclasses.replace(test, locations=tuple(loc for loc in test.locations
                                                        if loc.name in used))


def _registers_used(test: Test) -> Test:
    """Drop register initial values of registers no op writes any more."""
    regs = {(t, r) for t, th in enumerate(test.threads) for r in th.registers()}
    return dataclasses.replace(test, reg_init=tuple(x for x in test.reg_init if x[:2] in regs))


def minimize(test: Test, model: str = "tileir", against: str = "ptx",
             seconds: float = 60.0) -> Test:
    """Greedily shrink a counterexample while it stays one (and race-free), within ``seconds``.
    The property compares outcome sets, so the condition becomes ``exists (true)`` (an op it
    named may go)."""
    end = time.monotonic() + seconds
    test = dataclasses.replace(test, condition=Condition("exists", Const(True)))
    changed = True
    while changed and time.monotonic() < end:
        changed = False
        for cand in _smaller(test):
            if time.monotonic() >= end:
                break
            cand = _registers_used(cand)
            if not any(th.code for th in cand.threads):
                continue
            try:
                v = weakening(cand, model, against)
            except OracleError:
                continue
            if v.status == "counterexample":
                test, changed = cand, True
                break
    return test


# --- reports ------------------------------------------------------------------------------------

def explain_counterexample(test: Test, model: str = "tileir", against: str = "ptx") -> str:
    """Both sides of a counterexample: the PTX program and an execution giving the outcome, then
    the Tile IR model's reasons to forbid it (each candidate execution and the check it fails)."""
    v = weakening(test, model, against, budget=None)
    if v.status != "counterexample":
        return f"{test.name}: not a counterexample ({v.status})\n"
    outcome = v.extra[0]
    names = location_names(test)
    ptx_test = parse(v.ptx, f"{test.name}.ptx.litmus")
    out = [f"Tile IR program ({model}):", format_tileir(test), f"Lowered PTX program ({against}):",
           v.ptx, f"{len(v.extra)} PTX outcome(s) the Tile IR model forbids; the first:",
           "  " + ", ".join(f"{k}={val}" for k, val in outcome.items()), "",
           f"--- {against}: an execution giving it",
           explain(ptx_test, {names.get(k, k): val for k, val in outcome.items()}, against).text(),
           f"--- {model}: why it is forbidden",
           explain(test, outcome, model).text()]
    return "\n".join(out)

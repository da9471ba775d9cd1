"""Outcome-directed queries: does the model allow these observed outcomes?

``allows(test, outcome, model=None)`` and ``allows_many(test, outcomes, model=None)`` answer
for the outcomes asked only, without computing the whole allowed set: each asked outcome's
values are fixed first (for one outcome, as required values of the observed events, so that a
read is only paired with writes that can give its value) and the search
(:func:`oracle.search.explore_pe`) stops as soon as an execution producing each of them is
found, skipping every subtree whose reachable values cannot give one not found yet.

An outcome maps observables (``P1:r0``, ``x``) to ints. An observable it leaves out is
unconstrained; with every observable given, the answer is exactly ``oracle.check(test).allows
(outcome)`` (undef in an allowed state matches any value). The value ``DEFINED``
(:data:`oracle.explore.DEFINED`) asks for any value but undef, the one asked value undef does
not match (:attr:`oracle.judge.Judge.all_undef`). A result ``check`` computed before (its cache)
answers directly; answers are cached per program and model.

``parse_outcome(test, text)`` reads an outcome in the tool's printed form (``P1:r0=0; x=1;``)
or the condition form (``P1:r0 == 0 /\\ x == 1``), for ``scopefuzz check --outcome``.
"""

from __future__ import annotations

import re

from litmus.ir import Test
from litmus.outcome import outcome_condition_text

from .check import _CACHE, _cache_key, default_model, pre_executions
from .errors import BudgetExhausted, OracleError
from .explore import WILD
from .gcpause import paused
from .lang import load_model
from .registry import get as get_unit
from .search import explore_pe
from .states import States
from .states import matches_free as _matches

#: (program, model) key -> (outcomes known allowed, outcomes known forbidden), as sorted tuples
_ANSWERS: dict = {}
ANSWER_LIMIT = 100_000

_ATOM = re.compile(r"\s*(\[?\s*(?:P?\d+\s*:\s*)?[A-Za-z_][A-Za-z0-9_.]*\s*\]?)\s*(==|=)\s*"
                   r"(-?(?:0x[0-9a-fA-F]+|\d+))\s*\Z")


def _key_of(text: str) -> str:
    """``P1:r0``, ``1:r0`` -> ``P1:r0``; ``[x]``, ``x`` -> ``x``."""
    t = re.sub(r"\s+", "", text).strip("[]")
    if ":" in t:
        th, reg = t.split(":", 1)
        return f"P{th.lstrip('P')}:{reg}"
    return t


def parse_outcome(test: Test, text: str) -> dict[str, int]:
    """An outcome from ``text``: ``KEY=VALUE;`` items (the printed form, ``undef`` items saying
    nothing) or ``KEY == VALUE`` atoms joined by ``/\\`` (the condition form, optionally after
    ``exists``), the two spellings of :func:`litmus.outcome.outcome_condition_text`; every key an
    observable of ``test``. Errors are one-line :class:`OracleError` s."""
    try:                    # the printed form's spelling is read in one place (litmus.outcome)
        body = outcome_condition_text(text).strip()
    except ValueError as e:
        raise OracleError(f"--outcome {text!r}: {e}") from None
    while body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    parts = [p for p in re.split(r"/\\", body) if p.strip()]
    if not parts:
        raise OracleError(f"--outcome {text!r}: empty outcome (write P1:r0=0; x=1; or "
                          f"P1:r0 == 0 /\\ x == 1)")
    keys = set(test.observables())
    out: dict[str, int] = {}
    for p in parts:
        m = _ATOM.match(p)
        if not m:
            raise OracleError(f"--outcome {text!r}: {p.strip()!r} is not KEY=VALUE (an outcome "
                              f"is a conjunction of equalities: P1:r0=0; x=1; or "
                              f"P1:r0 == 0 /\\ x == 1)")
        k = _key_of(m.group(1))
        if k not in keys:
            raise OracleError(f"--outcome {text!r}: {k} is not an observable of {test.name} "
                              f"({', '.join(test.observables())})")
        v = int(m.group(3), 0)
        if out.get(k, v) != v:
            raise OracleError(f"--outcome {text!r}: {k} given two values")
        out[k] = v
    return out


def allowed_in(states, outcomes: list) -> list[bool]:
    """Per outcome, whether a state of a computed allowed set (a :class:`~oracle.states.States`
    or a list of dicts) matches it, an observable the outcome leaves out being free."""
    if isinstance(states, States):
        return states.allows_many(outcomes, absent="free")
    return [any(_matches(s, o) for s in states) for o in outcomes]


def _row(outcome: dict, keys: list[str]) -> tuple:
    """The outcome as a tuple in ``keys`` order, ``WILD`` where it says nothing."""
    return tuple(int(outcome[k]) if k in outcome else WILD for k in keys)


def allows(test: Test, outcome: dict, model: str | None = None,
           budget: int | None = None) -> bool:
    """Does ``model`` (the dialect's default) allow ``outcome`` of ``test``? See the module
    docstring; ``budget`` as for :func:`oracle.check` (past it, :class:`OracleError`)."""
    return allows_many(test, [outcome], model, budget)[0]


def allows_many(test: Test, outcomes, model: str | None = None,
                budget: int | None = None, pes: list | None = None) -> list[bool]:
    """Per outcome of ``outcomes`` (a histogram's keys), whether ``model`` allows it: one search
    per pre-execution for all outcomes not yet found. ``pes``: the test's pre-executions under
    ``model``, when the caller has built them already (:class:`oracle.judge.Judge`)."""
    model = model or default_model(test)
    keys = test.observables()
    known = set(keys)
    for o in outcomes:
        bad = sorted(set(o) - known)
        if bad:
            raise OracleError(f"{test.name}: {', '.join(bad)} is not an observable "
                              f"({', '.join(keys)})")
    rows = [_row(o, keys) for o in outcomes]
    ckey = _cache_key(test, model)
    hit = _CACHE.get(ckey)
    if hit is not None and not hit.pending:      # the full set is known already
        return allowed_in(hit.states, outcomes)
    yes, no = _ANSWERS.get(ckey, (set(), set()))
    todo = sorted({r for r in rows if r not in yes and r not in no})
    if todo:
        with paused():              # (the search's objects die by reference counting)
            found = _search(test, model, keys, todo, budget, pes)
        for r, f in zip(todo, found):
            (yes if f else no).add(r)
        if len(_ANSWERS) >= ANSWER_LIMIT:
            _ANSWERS.clear()
        _ANSWERS[ckey] = (yes, no)
    return [r in yes for r in rows]


def _search(test: Test, model: str, keys: list[str], todo: list[tuple],
            budget: int | None, pes: list | None = None) -> list[bool]:
    """Whether some pre-execution of ``test`` produces each outcome row of ``todo``."""
    unit = get_unit(model)
    prog = load_model(model)
    found = [False] * len(todo)
    for pe in pre_executions(unit, test) if pes is None else pes:
        left = [i for i, f in enumerate(found) if not f]
        if not left:
            break
        order = [k for k, _ in pe.observables]
        if sorted(order) != sorted(keys):
            raise OracleError(f"internal: builder observables {order} differ from {keys}")
        idx = [keys.index(k) for k in order]
        targets = [tuple(todo[i][j] for j in idx) for i in left]
        res = explore_pe(pe, prog, unit, budget=budget, targets=targets)
        if res.exhausted:
            raise BudgetExhausted(f"{test.name}: search budget of {budget:,} steps and evaluations "
                              f"exhausted ({res.candidates:,} candidates evaluated); check it "
                              f"without a budget")
        for i, h in zip(left, res.hits):
            found[i] = found[i] or h
    return found


def clear_answers() -> None:
    _ANSWERS.clear()

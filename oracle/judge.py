"""A lazy judge of one test: the model's answers, each computed only when asked.

The harness (campaigns, their minimizer, ``scopefuzz run``, the pytest plugin) mostly asks a few
questions about a program: is it undefined, what is its verdict, are the outcomes a backend
showed allowed. :class:`Judge` answers each with the cheapest search that decides it and computes
the full allowed set (:func:`oracle.check`) only for what needs it:

- ``allows`` / ``allows_many``: outcome queries (:func:`oracle.query.allows_many`), which search
  only for the asked outcomes;
- ``ub``: the builders' static reasons (the pre-executions' ``ub``); for a model unit with UB
  flags (Tile IR's ``racy``) whether a consistent execution raises one is known only from the
  full check, so there it is the full check's ``ub``; so are ``ub`` and ``verdict`` of a program
  over 64 events in a unit with a fallback (the full check gives the engine a bounded try there,
  then decides by the unit's Python reference);
- ``verdict``: ``Undef`` when ``ub``; for a condition whose proposition is one equality or a
  conjunction of equalities, from one query (``exists P``: Ok iff the outcome P describes is
  allowed; ``~exists P``: Ok iff it is not, :func:`litmus.outcome.verdict`'s rules, undef
  matching any value); otherwise (``forall``, disjunctions, ``!=``) from the outcome-directed
  search for one witness or counter-witness (:mod:`oracle.witness`), and the full check's only
  where that search cannot decide (a condition without a normal form it takes, a budget run
  out);
- ``all_undef`` (every allowed state is undef at every observable, or there is none: running the
  program cannot show a forbidden outcome): from one batch query, one outcome per observable
  asking it to be ``DEFINED`` (any value but undef, :data:`oracle.explore.DEFINED`): yes iff
  none is allowed;
- ``states``, ``flags``, ``candidates``, ``consistent``, ``seconds``: the full check, computed
  once on first use and kept (it then answers the queries too).

A judge answers every question exactly as :class:`oracle.check.Result` does (the tests compare
them). ``timeout`` limits each computation it starts (:func:`oracle.deadline.call_with_timeout`:
a forked child per computation, :class:`~oracle.deadline.Timeout` past it); ``budget`` is that of
:func:`oracle.check` (past it, :class:`~oracle.errors.BudgetExhausted`).
"""

from __future__ import annotations

from collections.abc import Sequence

from litmus.ir import And, Atom, Test

from .check import Result, all_undef, check, check_size, default_model, pre_executions
from .events import WORD
from .explore import DEFINED
from .query import allowed_in, allows_many
from .registry import get as get_unit
from .deadline import call_with_timeout
from .lang import load_model
from .witness import Unsupported, disjuncts, question, search

def equality_outcome(test: Test) -> dict | None:
    """The outcome a condition's proposition describes when it is one ``==`` atom or a
    conjunction of them over observables of ``test`` with one value each, else None."""
    p = test.condition.prop
    atoms = [p] if type(p) is Atom else list(p.args) if type(p) is And else None
    if not atoms or any(type(a) is not Atom or a.op != "==" for a in atoms):
        return None
    keys = set(test.observables())
    out: dict[str, int] = {}
    for a in atoms:
        if a.key not in keys or out.get(a.key, a.value) != a.value:
            return None
        out[a.key] = a.value
    return out


class Judge:
    """The model's answers about one test, computed on demand (see the module docstring).
    Provides the fields of :class:`oracle.contracts.OracleResult`."""

    def __init__(self, test: Test, model: str | None = None, budget: int | None = None,
                 timeout: float | None = None, name_ub: bool = True):
        self.test = test
        self.model = model or default_model(test)
        self.budget = budget
        self.timeout = timeout
        self.name_ub = name_ub
        self._unit = get_unit(self.model)
        self._pes: list | None = None
        self._result: Result | None = None
        self._ub: list[str] | None = None
        self._verdict: str | None = None
        self._all_undef: bool | None = None
        self._answers: dict[tuple, bool] = {}
        self._by_check: bool | None = None

    # -- the computations (each under the timeout, when one is set) ------------------------------
    def _call(self, fn, *args):
        if not self.timeout:
            return fn(*args)
        return call_with_timeout(fn, self.timeout, *args)

    def _pre(self) -> list:
        if self._pes is None:
            check_size(self._unit, self.test)
            self._pes = pre_executions(self._unit, self.test)
        return self._pes

    def _static_ub(self) -> list[str]:
        out: list[str] = []
        for pe in self._pre():
            out += [r for r in pe.ub if r not in out]
        return out

    def _wide(self) -> bool:
        return any(pe.n > WORD for pe in self._pre())

    @property
    def _decided_by_check(self) -> bool:
        """Whether ``ub`` and ``verdict`` are the full check's: a unit with UB flags, or a
        program over 64 events in a unit with a fallback (``oracle.check`` gives the engine a
        bounded try there, then decides by the unit's reference)."""
        if self._by_check is None:
            self._by_check = bool(self._unit.ub_flags) or (
                self._unit.fallback is not None and self._call(self._wide))
        return self._by_check

    def _ask(self, outcomes: list[dict]) -> list[bool]:
        return allows_many(self.test, outcomes, self.model, self.budget, self._pre())

    def _search_verdict(self) -> str | None:
        """The verdict by :func:`oracle.witness.search` (no UB: the caller knows), or None
        where it cannot decide."""
        keys = self.test.observables()
        found_means_ok, q = question(self.test.condition)
        try:
            asked = disjuncts(q, keys)
        except Unsupported:
            return None
        hit = search(self._pre(), load_model(self.model), self._unit, keys, asked, self.budget)
        if hit is None:
            return None
        return "Ok" if hit == found_means_ok else "No"

    def _check(self) -> Result:
        return check(self.test, self.model, self.budget, self.name_ub)

    @property
    def result(self) -> Result:
        """The full check (:func:`oracle.check`), computed once."""
        if self._result is None:
            self._result = self._call(self._check)
        return self._result

    @property
    def checked(self) -> bool:
        """Whether the full check has been computed."""
        return self._result is not None

    # -- the answers -------------------------------------------------------------------------------
    def allows(self, observed) -> bool:
        """Does the model allow the observed outcome (undef matches any value)?"""
        return self.allows_many([observed])[0]

    def allows_many(self, observed: list) -> list[bool]:
        """Per observed outcome, whether the model allows it: one query for those not asked
        before (an observable an outcome leaves out is free, as in :func:`oracle.allows`)."""
        keys = [tuple(sorted(o.items())) for o in observed]
        if self._result is not None:
            return allowed_in(self._result.states, observed)
        todo = {}
        for k, o in zip(keys, observed):
            if k not in self._answers:
                todo.setdefault(k, o)
        if todo:
            got = self._call(self._ask, list(todo.values()))
            self._answers.update(zip(todo, got))
        return [self._answers[k] for k in keys]

    @property
    def ub(self) -> list[str]:
        """Why the program has undefined behaviour (empty: it has none)."""
        if self._ub is None:
            if self._decided_by_check:
                self._ub = list(self.result.ub)
            else:
                self._ub = self._call(self._static_ub)
        return self._ub

    @property
    def verdict(self) -> str:
        """``Ok``, ``No`` or ``Undef`` by LITMUS.md's rules."""
        if self._verdict is None:
            cond = self.test.condition
            want = equality_outcome(self.test)
            if self.ub:
                self._verdict = "Undef"
            elif self._result is None and want is not None and \
                    cond.quantifier in ("exists", "~exists") and not self._decided_by_check:
                hit = self.allows(want)
                self._verdict = "Ok" if hit == (cond.quantifier == "exists") else "No"
            elif self._result is None and not self._decided_by_check:
                got = self._call(self._search_verdict)
                self._verdict = self.result.verdict if got is None else got
            else:
                self._verdict = self.result.verdict
        return self._verdict

    @property
    def all_undef(self) -> bool:
        """Is every allowed state undef at every observable (vacuously: no allowed state, or no
        observable)? Such a program accepts every outcome: running it cannot find anything."""
        if self._all_undef is None:
            keys = self.test.observables()
            if self._result is not None:
                self._all_undef = all_undef(self._result.states)
            else:       # some allowed state defines some observable: not all undef
                self._all_undef = not any(self.allows_many([{k: DEFINED} for k in keys]))
        return self._all_undef

    # -- the rest of a Result: the full check --------------------------------------------------------
    @property
    def states(self) -> Sequence[dict]:
        return self.result.states

    @property
    def flags(self) -> list[str]:
        return self.result.flags

    @property
    def candidates(self) -> int:
        return self.result.candidates

    @property
    def consistent(self) -> int:
        return self.result.consistent

    @property
    def seconds(self) -> float:
        return self.result.seconds


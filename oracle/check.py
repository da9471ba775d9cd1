"""``oracle.check``: the allowed outcomes of a test under a model, and its verdict.

Pipeline: the model unit's event graph builder (:mod:`oracle.registry`) -> pre-executions ->
packed arrays -> the numba search (:func:`oracle.engine.search`) evaluating the compiled model
(:func:`oracle.lang.load_model`) on every candidate -> union of outcomes -> verdict by LITMUS.md's
rules (undef = any value).

A program whose full search is long is not searched whole for its verdict: past
:data:`LAZY_AFTER` steps of a search, the verdict is decided by an outcome-directed search
(:mod:`oracle.witness`: one witness of the condition, or proof that none exists) and the result
is a :class:`Lazy` one, whose allowed states, flags and counts are computed by the full check
when first read (``full=True`` asks for them at once).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from litmus.dialects import DEFAULT_MODEL
from litmus.jitprogress import label
from litmus.ir import UNDEF, Test, prop_atoms
from litmus.outcome import matches, verdict

from .ceiling import guard
from .errors import BudgetExhausted, OracleError
from .events import WORD, table_of
from .gcpause import paused
from .lang import load_model
from .search import explore_pe, product_rows
from .states import SMALL_SET, States
from .registry import ModelUnit, get as get_unit
from .ubflags import witness
from .ready import ready
from .witness import Unsupported, disjuncts, question, search, ub_flags_raised


@dataclass
class Result:
    """What the model allows for one test (see DESIGN.md, ``check --json``)."""

    model: str
    verdict: str
    states: Sequence[dict]         # a States (oracle/states.py); a fallback's: a list
    flags: list[str] = field(default_factory=list)
    ub: list[str] = field(default_factory=list)
    candidates: int = 0
    consistent: int = 0
    seconds: float = 0.0

    #: whether the states, flags and counts are still to be computed (:class:`Lazy`)
    pending = False

    def allows(self, observed) -> bool:
        """Does some allowed state match the concrete observed outcome (undef matches anything)?"""
        if isinstance(self.states, States):
            return self.states.allows(observed, absent="undef")
        return any(matches(s, observed) for s in self.states)

    @property
    def all_undef(self) -> bool:
        """Is every allowed state undef at every observable (vacuously: none, or no observable)?
        Every outcome is then allowed: running the program cannot show a forbidden one."""
        return all_undef(self.states)


def _lazy_field(name: str):
    """A field of :class:`Lazy` read from the full check (computed on first read); assigning it
    sets it on this result alone."""
    def get(self):
        d = self.__dict__
        if name in d["_set"]:
            return d["_set"][name]
        return getattr(self._complete(), name)

    def put(self, value):
        self.__dict__["_set"][name] = value
    return property(get, put)


class Lazy(Result):
    """A result whose verdict and ``ub`` were decided by the outcome-directed search
    (:mod:`oracle.witness`) and whose ``states``, ``flags``, ``candidates`` and ``consistent`` are
    the full check's, computed when one of them is first read (``pending`` until then); its
    ``seconds`` are the verdict's, then the verdict's and the full check's. Equal to the
    :class:`Result` of the full check in every field but ``seconds``."""

    states = _lazy_field("states")
    flags = _lazy_field("flags")
    candidates = _lazy_field("candidates")
    consistent = _lazy_field("consistent")

    def __init__(self, model: str, verdict: str, ub: list[str], seconds: float, test: Test,
                 name_ub: bool = True):
        d = self.__dict__
        d["_set"] = {}
        d["_full"] = None
        d["_test"] = test
        d["_name_ub"] = name_ub
        d["_extra"] = 0.0
        self.model = model
        self.verdict = verdict
        self.ub = ub
        d["_seconds"] = seconds

    def _complete(self) -> Result:
        full = self.__dict__["_full"]
        if full is None:
            t0 = time.perf_counter()
            full = check(self._test, self.model, None, self._name_ub, full=True)
            if full.verdict != self.verdict or full.ub != self.ub:     # (a bug: say so loudly)
                raise OracleError(f"internal: {self._test.name}: the verdict search says "
                                  f"{self.verdict} {self.ub}, the full check {full.verdict} "
                                  f"{full.ub}")
            self.__dict__["_full"] = full
            self.__dict__["_extra"] = time.perf_counter() - t0
        return full

    @property
    def pending(self) -> bool:
        return self.__dict__["_full"] is None

    @property
    def seconds(self) -> float:
        d = self.__dict__
        return d["_set"].get("seconds", d["_seconds"] + d["_extra"])

    @seconds.setter
    def seconds(self, value: float) -> None:
        self.__dict__["_set"]["seconds"] = value

    def __eq__(self, other):
        if not isinstance(other, Result):
            return NotImplemented
        return (self.model, self.verdict, self.states, self.flags, self.ub, self.candidates,
                self.consistent, self.seconds) == (other.model, other.verdict, other.states,
                                                   other.flags, other.ub, other.candidates,
                                                   other.consistent, other.seconds)

    __hash__ = None

    def __repr__(self) -> str:
        if self.pending:
            return (f"Lazy(model={self.model!r}, verdict={self.verdict!r}, ub={self.ub!r}, "
                    f"seconds={self.seconds!r}, states pending)")
        return (f"Lazy(model={self.model!r}, verdict={self.verdict!r}, states={self.states!r}, "
                f"flags={self.flags!r}, ub={self.ub!r}, candidates={self.candidates!r}, "
                f"consistent={self.consistent!r}, seconds={self.seconds!r})")

    def __reduce__(self):
        # (a forked child's result, oracle.deadline: the parent completes it if asked)
        return (Lazy, (self.model, self.verdict, list(self.ub), self.seconds, self._test,
                       self._name_ub))


def all_undef(states: Sequence[dict]) -> bool:
    """Every value of every state undef (true of no state at all)."""
    if isinstance(states, States):
        return states.all_undef
    return all(v == UNDEF for s in states for v in s.values())


def default_model(test: Test) -> str:
    """The dialect's default model (:data:`litmus.dialects.DEFAULT_MODEL`)."""
    model = DEFAULT_MODEL.get(test.dialect)
    if model is None:
        raise OracleError(f"{test.name}: dialect {test.dialect} has no default model")
    return model


def pre_executions(unit: ModelUnit, test: Test) -> list:
    """The unit's builder on ``test``, each pre-execution checked to provide the unit's declared
    vocabulary (a declared name the builder lacks is an error, not an empty set)."""
    if test.dialect not in unit.dialects:
        raise OracleError(f"{test.name}: model {unit.name} reads {'/'.join(unit.dialects)} tests, "
                          f"not {test.dialect}")
    label("oracle", f"model {unit.name}")     # what a compile from here on is said to be for
    return _vocabulary_checked(unit, unit.build(test))


def verdict_pre_executions(unit: ModelUnit, test: Test) -> tuple[list, bool]:
    """(pre-executions, compact): what a verdict alone is searched on. The builder's
    (:func:`pre_executions`), unless it makes more than :data:`COMPACT_ABOVE` and the unit has
    a compact form of at most 64 events (``ModelUnit.compact``: the same consistent executions
    and outcomes from fewer pre-executions, each searched once, but other candidate counts:
    compact True, for a verdict only)."""
    if unit.compact is not None and test.dialect in unit.dialects:
        pes = unit.compact(test, COMPACT_ABOVE)
        if pes is not None and not any([pe.n > WORD for pe in pes]):
            label("oracle", f"model {unit.name}")
            return _vocabulary_checked(unit, pes), True
    return pre_executions(unit, test), False


#: pre-executions of the builder past which a verdict is searched on the unit's compact ones
#: (one search each: a program whose builder enumerates values no path depends on makes
#: thousands where the compact form has one)
COMPACT_ABOVE = 4


def _vocabulary_checked(unit: ModelUnit, pes: list) -> list:
    """``pes``, each checked to provide the unit's declared vocabulary."""
    ok = _VOCABULARY_OK.get(unit.name)
    for pe in pes:
        t = table_of(pe)
        # builders give every table the same vocabulary objects: check each pair once
        if ok is not None and ok[0] is t.set_index and ok[1] is t.rel_index:
            continue
        if not (t.set_index.keys() >= unit.sets and t.rel_index.keys() >= unit.relations):
            missing = sorted((unit.sets - t.set_index.keys()) | (unit.relations - t.rel_index.keys()))
            raise OracleError(f"model {unit.name}: its builder does not provide declared "
                              f"{', '.join(missing)} (oracle/models/{unit.name}/__init__.py)")
        ok = _VOCABULARY_OK[unit.name] = (t.set_index, t.rel_index)
    return pes


#: model -> the (set_index, rel_index) objects last found to provide its vocabulary (kept alive
#: here, so an identity match is the same dictionaries)
_VOCABULARY_OK: dict = {}


class _Key:
    """A cache key that hashes once: the test's fields but its name and doc (``k``), hashed by
    part of them (``h``: equal keys have equal hashes)."""

    __slots__ = ("k", "h")

    def __init__(self, k, h):
        self.k = k
        self.h = h

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        return self.h == other.h and self.k == other.k


def _cache_key(test: Test, model: str):
    # the hash leaves out the locations, the condition and meta (compared, not hashed: most
    # programs differ in their threads, and each of those objects hashes through Python code)
    return _Key((model, test.locations, test.threads, test.condition, test.reg_init,
                 test.dialect, test.meta),
                hash((model, test.threads, test.reg_init, test.dialect)))


_CACHE: dict = {}
CACHE_LIMIT = 100_000

#: the engine's steps (search steps plus model evaluations) on a program over 64 events before a
#: unit with a fallback decides it instead (a few seconds of search)
FALLBACK_AFTER = 3_000_000

#: steps (per search call) of the full check's first try on a program checked without a budget:
#: past them ``check`` decides the verdict by the outcome-directed search and returns a
#: :class:`Lazy` result (a few tens of milliseconds of search: every corpus and conformance
#: program finishes well within it)
LAZY_AFTER = 100_000


def check(test: Test, model: str | None = None, budget: int | None = None,
          name_ub: bool = True, full: bool = False) -> Result:
    """Allowed outcomes, verdict and statistics of ``test`` under ``model`` (dialect default).

    ``budget`` bounds the search (loop steps plus model evaluations per pre-execution): past it the
    check raises :class:`~oracle.errors.BudgetExhausted` (an :class:`OracleError`) instead of
    running on. Campaigns use it so that one program
    with a huge candidate space is recorded as an error instead of stalling the run; ``None``
    means no limit (``scopefuzz check``). ``name_ub=False`` leaves the pair out of a UB flag's
    reason (:mod:`oracle.ubflags` looks for it candidate by candidate; campaigns that only need
    the verdict skip that).

    Without a budget, a program whose search runs past :data:`LAZY_AFTER` steps gets its
    verdict and ``ub`` from the outcome-directed search (:mod:`oracle.witness`) and the rest of
    the result when first read (:class:`Lazy`); ``full=True`` computes everything now."""
    model = model or default_model(test)
    key = _cache_key(test, model if name_ub else (model, "unnamed-ub"))
    hit = _CACHE.get(key)
    if hit is not None and type(hit) is Lazy:
        if not full:
            return Lazy(hit.model, hit.verdict, list(hit.ub), 0.0, test, name_ub)
        hit = None
    if hit is not None:
        # the key holds the condition: the cached verdict is this test's
        res = dataclasses.replace(hit, flags=list(hit.flags), ub=list(hit.ub), seconds=0.0)
        if not isinstance(hit.states, States):       # a fallback's (partial) list
            res.states = list(hit.states)
        return res
    unit = get_unit(model)
    check_size(unit, test)          # before any search: a huge test fails at once
    prog = load_model(model)
    # the clock starts after what a process does once: reading the model file, loading (or
    # compiling) the engine's machine code (oracle/warmup.py)
    ready(unit)
    with paused():                  # (the check's objects die by reference counting)
        return _compute(test, model, unit, prog, key, budget, name_ub,
                        lazy=budget is None and not full)


def _compute(test: Test, model: str, unit: ModelUnit, prog, key, budget: int | None,
             name_ub: bool, lazy: bool = False, pes: list | None = None,
             t0: float | None = None) -> Result:
    """:func:`check` past its cache: build, search, combine, cache under ``key``; with ``lazy``,
    a search past :data:`LAZY_AFTER` steps hands the verdict to :func:`_by_search`, and so does
    a program the unit has compact pre-executions for (:func:`verdict_pre_executions`)."""
    if t0 is None:
        t0 = time.perf_counter()
    if pes is None and lazy:
        pes, compact = verdict_pre_executions(unit, test)
        if compact:             # fewer pre-executions than the full check's: the verdict alone
            return _by_search(test, model, unit, prog, key, name_ub, pes, t0, compact=True)
    elif pes is None:
        pes = pre_executions(unit, test)
    # a unit with a Python reference gives the engine a bounded try on programs over 64 events
    # (the Vulkan suite's barrier programs: 36 observables, one coupled block), then decides
    # their verdict and flags with the reference
    wide = unit.fallback is not None and any([pe.n > WORD for pe in pes])
    if wide:
        budget = FALLBACK_AFTER if budget is None else min(budget, FALLBACK_AFTER)
    first_try = lazy and not wide
    cap = LAZY_AFTER if first_try else budget
    keys = test.observables()
    searched: list = []          # per pre-execution searched: (its outcome parts, columns)
    seen = None                 # their outcomes as rows, in keys order (an int64 array)
    candidates = consistent = 0
    flags = 0
    ub: list[str] = []
    for pe in pes:
        for reason in pe.ub:
            if reason not in ub:
                ub.append(reason)
        order = [k for k, _ in pe.observables]
        if order == keys:
            back = None
        elif sorted(order) != sorted(keys):
            raise OracleError(f"internal: builder observables {order} differ from {keys}")
        else:
            back = [keys.index(k) for k in order]
        if searched:         # the outcomes found so far let bounding skip subtrees: expand them
            if searched[-1][0] is not None and len(searched[-1][0]) > 1:   # a product
                size = math.prod(rows.shape[0] for _, rows in searched[-1][0])
                if size > SMALL_SET:
                    guard(size * len(keys) * 8 * 2, size, "expanding the outcomes found so far")
            last = product_rows(*searched[-1])
            seen = last if seen is None or not seen.shape[0] else np.concatenate([seen, last])
        known = seen if back is None or seen is None else seen[:, back]
        found = explore_pe(pe, prog, unit, budget=cap, flags=flags, known=known)
        if found.exhausted and first_try:               # long: the verdict by search
            return _by_search(test, model, unit, prog, key, name_ub, pes, t0)
        if found.exhausted and wide:
            res = _fallback_result(test, unit, t0)
            _CACHE[key] = res
            return dataclasses.replace(res, states=list(res.states))
        if found.exhausted:
            raise BudgetExhausted(f"{test.name}: search budget of {budget:,} steps and evaluations exhausted "
                              f"({found.candidates:,} candidates evaluated); check it without a budget")
        candidates += found.candidates
        consistent += found.consistent
        flags |= found.flags
        parts = found.parts
        if back is not None and parts is not None:      # the pre-execution's columns -> keys
            parts = [([back[o] for o in cols], rows) for cols, rows in parts]
        searched.append((parts, len(keys)))
    states = States.from_parts(keys, searched)
    raised = [prog.flags[i] for i in range(len(prog.flags)) if flags >> i & 1] if flags else []
    for flag in raised:
        if flag in unit.ub_flags:       # a flag meaning undefined behaviour: name the pair
            ub.append(witness(pes, prog, unit.hints, flag) if name_ub else flag)
    res = Result(model, verdict_of(test.condition, states, bool(ub)), states, raised, ub,
                 candidates, consistent, time.perf_counter() - t0)
    if len(_CACHE) >= CACHE_LIMIT:
        _CACHE.clear()
    # the states are immutable (shared by every result of this program); the lists are copied
    _CACHE[key] = Result(res.model, res.verdict, states, list(res.flags), list(res.ub),
                         res.candidates, res.consistent, res.seconds)
    return res


def _by_search(test: Test, model: str, unit: ModelUnit, prog, key, name_ub: bool, pes: list,
               t0: float, compact: bool = False) -> Result:
    """The verdict and ``ub`` of ``test`` by the outcome-directed search (:mod:`oracle.witness`),
    as a :class:`Lazy` result; the full check when the search cannot decide (a condition
    without a normal form it takes, a flag witness search past its limit). ``compact``: ``pes``
    are the unit's compact pre-executions (:func:`verdict_pre_executions`), which the full
    check does not take (it builds its own)."""
    keys = test.observables()
    found_means_ok, q = question(test.condition)
    full_pes = None if compact else pes
    try:
        asked = disjuncts(q, keys)
    except Unsupported:
        return _compute(test, model, unit, prog, key, None, name_ub, pes=full_pes, t0=t0)
    raised = ub_flags_raised(pes, prog, unit) if unit.ub_flags else 0
    if raised is None or (raised and compact):
        # (past its limit; or a flag to name: its pair is named on the full check's events)
        return _compute(test, model, unit, prog, key, None, name_ub, pes=full_pes, t0=t0)
    ub: list[str] = []
    for pe in pes:
        for reason in pe.ub:
            if reason not in ub:
                ub.append(reason)
    for i, flag in enumerate(prog.flags):
        if raised >> i & 1 and flag in unit.ub_flags:
            ub.append(witness(pes, prog, unit.hints, flag) if name_ub else flag)
    if ub:
        verdict_ = "Undef"
    else:
        hit = search(pes, prog, unit, keys, asked)
        verdict_ = "Ok" if hit == found_means_ok else "No"
    res = Lazy(model, verdict_, ub, time.perf_counter() - t0, test, name_ub)
    if len(_CACHE) >= CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = Lazy(model, verdict_, list(ub), res.seconds, test, name_ub)
    return res


def verdict_of(condition, states, undefined: bool) -> str:
    """:func:`litmus.outcome.verdict` of ``condition`` over ``states``; a large set still kept as
    its searches' products (:meth:`States.lazy`) answers from the distinct values of the
    observables the condition names (:meth:`States.projection`: a few rows, whatever the size of
    the set), so a verdict never expands the set."""
    if undefined:
        return "Undef"
    if isinstance(states, States) and states.is_lazy:
        names = sorted({a.key for a in prop_atoms(condition.prop)})
        if all(k in states.keys for k in names):
            small = states.projection(names)
            if small is not None:
                return verdict(condition, small, undefined)
    return verdict(condition, states, undefined)


def check_size(unit: ModelUnit, test: Test) -> None:
    """The unit's bound on ``test`` alone (:attr:`ModelUnit.size_check`), before any search: a
    program that is over its builder's limit on a lower bound fails at once. A test of a dialect
    the unit does not read is left to :func:`pre_executions` (which says so)."""
    if unit.size_check is not None and test.dialect in unit.dialects:
        unit.size_check(test)


def _fallback_result(test: Test, unit: ModelUnit, t0: float) -> Result:
    """Decide a program the engine could not finish with the unit's fallback (the same model in
    Python, its reference).

    The fallback stops early: once for the verdict and once for the data-race flag, so the result
    holds the verdict, the flags and the states that decided them, not every allowed state; the
    flag ``reference-partial`` says so.
    """
    by_verdict = unit.fallback(test, stop="verdict")
    by_race = unit.fallback(test, stop="race")
    flags = sorted(set(by_verdict.flags) | set(by_race.flags)) + ["reference-partial"]
    return Result(unit.name, by_verdict.verdict, list(by_verdict.states), flags,
                  list(by_verdict.ub), by_verdict.candidates + by_race.candidates,
                  by_verdict.consistent + by_race.consistent, time.perf_counter() - t0)


def clear_cache() -> None:
    _CACHE.clear()

"""The verdict by outcome-directed search: one witness (or counter-witness), or proof of none.

A verdict (LITMUS.md, :func:`litmus.outcome.verdict`) asks one question of the allowed states:
is there a state that *satisfies* a proposition ``Q`` for some choice of its undef values (undef
stands for any value, independently per position)? ``Q`` is the condition's proposition ``P``
under ``exists`` / ``~exists`` (``Ok`` iff there is one / there is none) and ``not P`` under
``forall`` (a state where ``P`` is not valid is a counter-witness: ``No`` iff there is one). So
no verdict needs the allowed set, only one state, or the proof that none exists.

:func:`disjuncts` puts ``Q`` in disjunctive normal form over the condition's atoms (negations
pushed onto the atoms: ``not (k == v)`` is ``k != v``) and each disjunct into one *asked
outcome* of the search (:mod:`oracle.explore`): per observable an asked value, with a flag for
``!=`` (``Options.tne``), or ``WILD`` where the disjunct says nothing. Since undef positions are
chosen independently, a state satisfies a disjunct exactly when each observable's atoms hold of
its value or the observable is undef and its atoms can hold together (``k == 1 /\\ k == 2`` and
``k == 1 /\\ k != 1`` cannot: such a disjunct is dropped): the engine's match of an asked
value (undef matches any asked value) is that. A disjunct with several ``!=`` atoms on one
observable (``k != 1 /\\ k != 2``, what ``forall (k == 1 \\/ k == 2)`` asks) asks a set of
excluded values: the least goes in the asked value with the ``!=`` flag, the others in
``Options.tex`` (a value other than undef matches when it is none of them; undef matches, as it
stands for a value outside the set). DNFs over :data:`MAX_DISJUNCTS` are left to the full
check.

The search (:func:`search`) is the engine's outcome query: the partial execution's observables
(each one's value, or its candidates' values while undecided: a three-valued evaluation of each
atom) prune every subtree where no disjunct can still be matched (bounding), a disjunct searched
alone is also given to the reads as required values (``==`` or ``!=``; :func:`oracle.search.
required`), so that a read is never paired with a write that contradicts it, and the search
stops at the first consistent execution whose outcome matches one (``Options.first``). Per
pre-execution: every disjunct together, searched whole within ``QUERY_WHOLE_STEPS``; past that,
each disjunct alone (required values, the split into blocks), until one is found.

Undefined behaviour: the builders' static reasons are the pre-executions' ``ub``; a unit whose
model flags mean undefined behaviour (``ModelUnit.ub_flags``, Tile IR's ``racy``) needs to know
whether some consistent execution raises one. :func:`ub_flags_raised` searches for one such
execution (``Options.stop_flags``: the search stops at the first), keeping no state; a
race-free program is still explored whole (without its states).
"""

from __future__ import annotations

import numpy as np

from litmus.ir import And, Atom, Const, Not, Or

from .explore import WILD
from .hints import COHERENCE_HINTS
from .pack import options, search_pe
from .search import QUERY_WHOLE_STEPS, explore_pe

#: a condition whose normal form has more disjuncts than this is decided by the full check
MAX_DISJUNCTS = 64


class Unsupported(Exception):
    """The condition has no form the search takes (see the module docstring)."""


def _nnf(prop, neg: bool):
    """``prop`` (negated when ``neg``) with negations on the atoms only."""
    kind = type(prop)
    if kind is Atom:
        if not neg:
            return prop
        return Atom(prop.thread, prop.name, "!=" if prop.op == "==" else "==", prop.value)
    if kind is Const:
        return Const(prop.value != neg)
    if kind is Not:
        return _nnf(prop.arg, not neg)
    if kind is And or kind is Or:
        args = tuple(_nnf(a, neg) for a in prop.args)
        return (Or if (kind is And) == neg else And)(args)
    raise TypeError(prop)


def _dnf(prop) -> list[list[Atom]]:
    """The disjuncts (lists of atoms) of a proposition in negation normal form."""
    kind = type(prop)
    if kind is Atom:
        return [[prop]]
    if kind is Const:
        return [[]] if prop.value else []
    if kind is Or:
        out = []
        for a in prop.args:
            out += _dnf(a)
            if len(out) > MAX_DISJUNCTS:
                raise Unsupported("too many disjuncts")
        return out
    out = [[]]                                  # And: every combination of the arguments'
    for a in prop.args:
        out = [x + y for x in out for y in _dnf(a)]
        if len(out) > MAX_DISJUNCTS:
            raise Unsupported("too many disjuncts")
    return out


def question(condition) -> tuple[bool, object]:
    """(``found_means_ok``, ``Q``): the proposition a witness state must satisfy, and whether
    finding one makes the verdict ``Ok`` (``exists``) or ``No`` (``~exists``, ``forall``)."""
    q, p = condition.quantifier, condition.prop
    if q == "exists":
        return True, p
    if q == "~exists":
        return False, p
    if q == "forall":
        return False, Not(p)
    raise ValueError(q)


def disjuncts(prop, keys: list[str]) -> list[tuple[list[int], list[bool], list[tuple]]]:
    """``prop``'s disjunctive normal form as asked outcomes over ``keys``: per disjunct, the
    asked value of each observable (``WILD`` where it says nothing), whether it is a ``!=``
    value, and the further values a ``!=`` value excludes (sorted; empty for one ``!=``).
    Raises :class:`Unsupported` where no such form exists (module docstring)."""
    index = {k: i for i, k in enumerate(keys)}
    out = []
    seen = set()
    for conj in _dnf(_nnf(prop, False)):
        eq: dict[int, int] = {}
        ne: dict[int, set[int]] = {}
        dead = False
        for a in conj:
            i = index.get(a.key)
            if i is None:
                raise Unsupported(f"{a.key} is not an observable")
            if a.op == "==":
                if eq.get(i, a.value) != a.value:
                    dead = True                 # k == 1 /\ k == 2: no value, undef included
                    break
                eq[i] = a.value
            else:
                ne.setdefault(i, set()).add(a.value)
        if dead:
            continue
        want = [WILD] * len(keys)
        tne = [False] * len(keys)
        tex: list[tuple] = [()] * len(keys)
        for i, v in eq.items():
            if v in ne.get(i, ()):
                dead = True                     # k == 1 /\ k != 1
                break
            want[i] = v
        if dead:
            continue
        for i, vs in ne.items():
            if i in eq:
                continue                        # implied by the == atom
            vs = sorted(vs)
            want[i] = vs[0]
            tne[i] = True
            tex[i] = tuple(vs[1:])
        row = (tuple(want), tuple(tne), tuple(tex))
        if row not in seen:
            seen.add(row)
            out.append((want, tne, tex))
    return out


def search(pes: list, prog, unit, keys: list[str], asked: list, budget: int | None = None):
    """Whether some pre-execution of ``pes`` has a consistent execution whose outcome matches one
    of ``asked`` (:func:`disjuncts` over ``keys``, the test's observables): True / False, or None
    when ``budget`` ran out first."""
    if not asked:
        return False
    hints = not unit.hints.isdisjoint(COHERENCE_HINTS)
    nflags = (1 << len(prog.flags)) - 1
    for pe in pes:
        order = [k for k, _ in pe.observables]
        idx = [keys.index(k) for k in order]
        nobs = len(order)
        tgt = np.array([[w[j] for j in idx] for w, _, _ in asked],
                       np.int64).reshape(len(asked), nobs)
        tne = np.array([[n[j] for j in idx] for _, n, _ in asked],
                       np.bool_).reshape(len(asked), nobs)
        tex = _excluded(asked, idx)
        if len(asked) > 1:
            # every disjunct at once, stopping at the first found: whole, within a few steps
            cap = QUERY_WHOLE_STEPS if budget is None else min(budget, QUERY_WHOLE_STEPS)
            _, ns, _, _, _, _, hit = search_pe(
                pe, prog, unit.hints, options(pe.n, nobs, max_steps=cap, raisable=nflags,
                                              hints=hints, targets=tgt, tne=tne, first=True,
                                              tex=tex))
            if ns >= 0:
                if hit.any():
                    return True
                continue
        for t in range(len(asked)):             # each alone: required values, blocks
            found = explore_pe(pe, prog, unit, budget=budget, targets=[tuple(tgt[t])],
                               tne=tne[t:t + 1], tex=tex[t:t + 1])
            if found.exhausted:
                return None
            if found.hits and found.hits[0]:
                return True
    return False


def _excluded(asked, idx) -> np.ndarray:
    """The further excluded values of ``asked`` (:func:`disjuncts`) as ``Options.tex`` in the
    observables order ``idx``: shape (asked, observables, K), ``WILD`` padding."""
    k = max([1] + [len(x) for _, _, ex in asked for x in ex])
    out = np.full((len(asked), len(idx), k), WILD, np.int64)
    for t, (_, _, ex) in enumerate(asked):
        for o, j in enumerate(idx):
            for m, v in enumerate(ex[j]):
                out[t, o, m] = v
    return out


def ub_flags_raised(pes: list, prog, unit, budget: int | None = None) -> int | None:
    """The flags of ``unit.ub_flags`` that some consistent execution raises (a bit mask over
    ``prog.flags``), each found by a search that stops at its first witness; None when a
    search does not finish within ``budget`` (or, without one, within the whole search's
    limit: past it the split search of the full check is the better way)."""
    want = 0
    for i, f in enumerate(prog.flags):
        if f in unit.ub_flags:
            want |= 1 << i
    if not want:
        return 0
    hints = not unit.hints.isdisjoint(COHERENCE_HINTS)
    raised = 0
    cap = LIMIT if budget is None else budget
    for pe in pes:
        while want & ~raised:
            nobs = len(pe.observables)
            _, ns, _, _, fl, _, _ = search_pe(
                pe, prog, unit.hints, options(pe.n, nobs, max_steps=cap, raisable=-1, hints=hints,
                                              want_state=False, stop_flags=want & ~raised))
            if ns < 0:
                return None
            new = int(fl) & want & ~raised
            raised |= new
            if not new:
                break                           # this pre-execution raises no other
    return raised


#: steps of one flag-witness search before the full check decides instead
LIMIT = 2_000_000

__all__ = ["MAX_DISJUNCTS", "Unsupported", "disjuncts", "question", "search", "ub_flags_raised"]

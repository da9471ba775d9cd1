"""Outcomes, the final condition's meaning over them, and herd-style verdicts (LITMUS.md).

An *outcome* maps every observable (``P1:r0``, ``x``) to an int or :data:`UNDEF`. Undef stands for
any value, independently in each position, so a proposition over an outcome with undef positions is
*satisfiable* (some choice of the undef values makes it true) or *valid* (every choice does).
"""

from __future__ import annotations

import itertools
import re
from typing import Iterable, Mapping

from .ir import UNDEF, And, Atom, Condition, Const, Not, Or, Prop, prop_atoms

Outcome = Mapping[str, "int | str"]


def evaluate(prop: Prop, values: Mapping[str, int]) -> bool:
    """Truth of ``prop`` when every observable it names has a concrete value."""
    kind = type(prop)
    if kind is Atom:
        v = values[prop.key]
        return (v == prop.value) if prop.op == "==" else (v != prop.value)
    if kind is And:
        for a in prop.args:
            if not evaluate(a, values):
                return False
        return True
    if kind is Or:
        for a in prop.args:
            if evaluate(a, values):
                return True
        return False
    if kind is Not:
        return not evaluate(prop.arg, values)
    if kind is Const:
        return prop.value
    raise TypeError(prop)


def _choices(prop: Prop, outcome: Outcome) -> Iterable[dict[str, int]]:
    """Every assignment that matters for the undef positions ``prop`` names.

    For an undef position the only values that can change an atom's truth are the constants it is
    compared with; one extra value (different from all of them) stands for "anything else".
    """
    consts: dict[str, set[int]] = {}
    for atom in prop_atoms(prop):
        if outcome[atom.key] == UNDEF:
            consts.setdefault(atom.key, set()).add(atom.value)
    base = {k: v for k, v in outcome.items() if v != UNDEF}
    keys = sorted(consts)
    domains = []
    for k in keys:
        vals = sorted(consts[k])
        domains.append(vals + [max(vals) + 1])
    for combo in itertools.product(*domains):
        d = dict(base)
        d.update(zip(keys, combo))
        yield d


def satisfiable(prop: Prop, outcome: Outcome) -> bool:
    """Some choice of the outcome's undef values makes ``prop`` true."""
    return any(evaluate(prop, c) for c in _choices(prop, outcome))


def valid(prop: Prop, outcome: Outcome) -> bool:
    """Every choice of the outcome's undef values makes ``prop`` true."""
    return all(evaluate(prop, c) for c in _choices(prop, outcome))


def verdict(condition: Condition, states: Iterable[Outcome], undefined: bool = False) -> str:
    """``Ok``/``No`` as herd7 gives them, or ``Undef`` when some execution has UB."""
    if undefined:
        return "Undef"
    q, p = condition.quantifier, condition.prop
    if q not in ("exists", "~exists", "forall"):
        raise ValueError(q)
    rows = getattr(states, "concrete_rows", None)
    rows = rows() if rows is not None else None
    if rows is not None:                            # a small set as rows without undef
        got = _conjunction_rows(p, q, *rows)
        if got is not None:
            return got
    hits = None if getattr(states, "outcome_columns", None) is None else \
        state_hits(p, states, valid_=q == "forall")
    if hits is not None:                            # an array-backed set: column-wise
        found = bool(hits.any()) if q != "forall" else not bool(hits.all())
        return ("Ok" if found else "No") if q == "exists" else ("No" if found else "Ok")
    keys = conj = facts = None
    for s in states:
        if UNDEF in s.values():
            if keys is None:
                keys = {atom.key for atom in prop_atoms(p)}
            undef_seen = any(s[k] == UNDEF for k in keys)
        else:
            undef_seen = False
        if undef_seen:                              # undef where the condition looks
            if conj is None:
                conj = _conjunction(p)
            if conj:                                # a conjunction of atoms: per observable
                hit = False if q == "forall" else _conjunction_satisfiable(conj, s)
            else:
                hit = valid(p, s) if q == "forall" else satisfiable(p, s)
        else:                                       # every value concrete: plain truth
            if conj is None:
                conj = _conjunction(p)
            if conj:                                # a conjunction of atoms: each must hold
                if facts is None:
                    facts = [(a.key, a.value, a.op == "==") for a in conj]
                hit = True
                for k, v, eq in facts:
                    if (s[k] == v) != eq:
                        hit = False
                        break
            else:
                hit = evaluate(p, s)
        if hit != (q == "forall"):                  # a witness (exists) or counterexample
            return "No" if q != "exists" else "Ok"
    return "No" if q == "exists" else "Ok"


def _conjunction_rows(prop: Prop, q: str, index: dict, rows) -> str | None:
    """:func:`verdict` of a conjunction of atoms on states given as rows (tuples, every value
    concrete; ``index``: observable -> its position in a row), without a dict per state; None
    for another proposition or one naming a key the rows lack (the dicts decide those)."""
    conj = _conjunction(prop)
    if not conj or any(a.key not in index for a in conj):
        return None
    facts = [(index[a.key], a.value, a.op == "==") for a in conj]
    want = q == "forall"
    for r in rows:
        hit = True
        for c, v, eq in facts:
            if (r[c] == v) != eq:
                hit = False
                break
        if hit != want:                             # a witness (exists) or counterexample
            return "No" if q != "exists" else "Ok"
    return "No" if q == "exists" else "Ok"


def state_hits(prop: Prop, states, valid_: bool = False):
    """Per state of an array-backed outcome set, whether ``prop`` is satisfiable in it (or,
    ``valid_``, valid), as a numpy bool array; None when ``states`` is not array-backed (a list
    of dicts: use :func:`satisfiable` / :func:`valid` per state).

    An array-backed set (``oracle.states.States``) has ``outcome_columns``, a function of
    observable names giving (observable -> its values as an int64 array, the int standing for
    undef), or None (a set kept as dicts, or an unknown name). The proposition is
    evaluated on whole columns; states with undef where it looks are grouped by which of its
    observables are undef, and each group tries every choice :func:`satisfiable` tries (per undef
    observable, the constants it is compared with and one value different from all of them)."""
    get = getattr(states, "outcome_columns", None)
    if get is None:
        return None
    names = sorted({a.key for a in prop_atoms(prop)})
    got = get(names)
    if got is None:
        return None
    import numpy as np
    cols, undef = got
    n = len(states)
    undef_at = {k: cols[k] == undef for k in names}
    if not names or not any(u.any() for u in undef_at.values()):
        return np.broadcast_to(np.asarray(_evaluate_columns(prop, cols), np.bool_), (n,)).copy()
    pattern = np.zeros(n, np.int64)                 # bit i: names[i] undef in the state
    for i, k in enumerate(names):
        pattern |= undef_at[k].astype(np.int64) << i
    consts: dict[str, set[int]] = {}
    for atom in prop_atoms(prop):
        consts.setdefault(atom.key, set()).add(atom.value)
    out = np.empty(n, np.bool_)
    present = np.flatnonzero(np.bincount(pattern)) if len(names) <= 16 else np.unique(pattern)
    for pat in present.tolist():
        idx = np.flatnonzero(pattern == pat)
        sub = {k: cols[k][idx] for k in names}
        free = [k for i, k in enumerate(names) if pat >> i & 1]
        domains = [sorted(consts[k]) + [max(consts[k]) + 1] for k in free]
        acc = None
        for combo in itertools.product(*domains):
            sub.update(zip(free, combo))
            val = np.broadcast_to(np.asarray(_evaluate_columns(prop, sub), np.bool_),
                                  (idx.size,))
            acc = val if acc is None else (acc & val if valid_ else acc | val)
        out[idx] = acc
    return out


def _evaluate_columns(prop: Prop, cols):
    """:func:`evaluate` on columns: each observable an int64 array (or one int for all), the
    result a bool array (or one bool)."""
    kind = type(prop)
    if kind is Atom:
        v = cols[prop.key]
        if not -(1 << 63) <= prop.value < (1 << 63):      # no int64 equals it
            same = False if not isinstance(v, int) else v == prop.value
        else:
            same = v == prop.value
        return same if prop.op == "==" else ~same if not isinstance(same, bool) else not same
    if kind is And or kind is Or:
        acc = None
        for a in prop.args:
            val = _evaluate_columns(a, cols)
            acc = val if acc is None else (acc & val if kind is And else acc | val)
        return (kind is And) if acc is None else acc
    if kind is Not:
        val = _evaluate_columns(prop.arg, cols)
        return not val if isinstance(val, bool) else ~val
    if kind is Const:
        return bool(prop.value)
    raise TypeError(prop)


def count_satisfiable(prop: Prop, states) -> int:
    """How many states of ``states`` (a list of dicts or an array-backed set) satisfy ``prop``
    for some choice of their undef positions."""
    hits = state_hits(prop, states)
    if hits is not None:
        return int(hits.sum())
    return sum(1 for s in states if satisfiable(prop, s))


def _conjunction(prop: Prop) -> list[Atom]:
    """The atoms of ``prop`` when it is one atom or a conjunction of atoms, else ``[]``."""
    if type(prop) is Atom:
        return [prop]
    if type(prop) is And and all(type(a) is Atom for a in prop.args):
        return list(prop.args)
    return []


def _conjunction_satisfiable(atoms: list[Atom], outcome: Outcome) -> bool:
    """:func:`satisfiable` for a conjunction of atoms, without enumerating choices: concrete
    atoms must hold, and each undef observable needs one value meeting all of its atoms (at most
    one ``==`` constant, not excluded by a ``!=``; with no ``==`` some other value always fits).
    (A conjunction with an undef observable is never *valid*: a value breaking an atom exists.)"""
    eq: dict[str, set] = {}
    ne: dict[str, set] = {}
    for a in atoms:
        v = outcome[a.key]
        if v == UNDEF:
            (eq if a.op == "==" else ne).setdefault(a.key, set()).add(a.value)
        elif (v == a.value) != (a.op == "=="):
            return False
    for k, cs in eq.items():
        if len(cs) > 1 or cs & ne.get(k, set()):
            return False
    return True


def condition_holds(condition: Condition, observed: Mapping[str, int]) -> bool:
    """Does a concrete (observed) outcome witness the condition's proposition?

    For ``exists`` that is P; for ``~exists`` and ``forall`` the witness of interest is the
    outcome that would refute the test (P for ``~exists``, not P for ``forall``).
    """
    val = evaluate(condition.prop, observed)
    return (not val) if condition.quantifier == "forall" else val


def matches(allowed: Outcome, observed: Mapping[str, int]) -> bool:
    """Is a concrete observed outcome an instance of an allowed outcome (undef matches anything)?"""
    for k, v in allowed.items():
        if v != UNDEF and observed.get(k) != v:
            return False
    return True


def format_outcome(outcome: Outcome) -> str:
    """``P1:r0=1; P1:r1=undef; x=1;`` in observable order."""
    return " ".join(f"{k}={v};" for k, v in outcome.items())


# --- reading an outcome given on the command line ------------------------------------------------

_PRINTED_ITEM = re.compile(r"\s*((?:P?\d+:)?[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?\d+|undef)\s*")
_QUANTIFIER = re.compile(r"\s*(~\s*exists|exists|forall)\b")


def outcome_condition_text(text: str) -> str:
    """An outcome as a proposition in the condition syntax.

    Two spellings are read: the printed form (:func:`format_outcome`: ``P1:r0=0; P1:r1=undef;
    x=1;``, an undef position meaning any value) and the condition form (``P1:r0 == 0 /\\ x == 1``,
    optionally after ``exists``). A text with ``;`` is the printed form.
    """
    m = _QUANTIFIER.match(text)
    if m and not text.lstrip().startswith("~") and ";" not in text:
        return text[m.end():]
    if ";" not in text:
        return text
    atoms = []
    for item in text.split(";"):
        if not item.strip():
            continue
        m = _PRINTED_ITEM.fullmatch(item)
        if m is None:
            raise ValueError(f"expected items like 'P1:r0=1;' or 'x=0;', got {item.strip()!r}")
        if m.group(2) != "undef":
            atoms.append(f"{m.group(1)} == {m.group(2)}")
    if not atoms:
        raise ValueError("the outcome names no observable with a value")
    return " /\\ ".join(atoms)


def read_outcome(test, text: str) -> Prop:
    """The proposition an outcome ``text`` stands for in ``test`` (either spelling of
    :func:`outcome_condition_text`), checked against the test's threads, registers and locations
    like its final condition. Errors are :class:`~litmus.lexer.ParseError` at
    ``--outcome:1:col``, the column counted in ``text``."""
    from .dialect import find
    from .dialects import format_test, parse
    from .lexer import ParseError
    try:
        body = outcome_condition_text(text)
    except ValueError as e:
        raise ParseError("--outcome", 1, 1, str(e)) from None
    # the outcome replaces the printed test's condition line, which reads back as the outcome
    # only in a straight-line dialect (no filter line, no comparison registers _cN)
    d = find(test.dialect)
    printer = format_test if d is not None and d.printable and not d.control_flow else None
    if printer is None:
        raise ParseError("--outcome", 1, 1, f"outcomes of {test.dialect}-dialect tests cannot be "
                                            "read yet (AMDGPU and TILEIR only)")
    lines = printer(test).rstrip("\n").split("\n")
    prefix = "exists ("
    lines[-1] = prefix + body + ")"
    try:
        return parse("\n".join(lines), "--outcome").condition.prop
    except ParseError as e:
        col = e.col - len(prefix) if e.line == len(lines) else 1
        if body is not text:
            col = 1                  # the printed form was rewritten: no column to point at
        raise ParseError("--outcome", 1, max(1, col), e.reason) from None

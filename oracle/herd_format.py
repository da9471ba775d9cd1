"""``check --format herd``: a result in herd7's output layout, for scripts that parse herd's logs.

herd7 prints, per test::

    Test NAME Allowed            (exists: Allowed; ~exists: Forbidden; forall: Required)
    States N
    0:r0=0; 1:r1=1; [x]=1;       (one line per final state, threads as numbers, locations
                                  in brackets)
    Ok                           (or No; Undef when an execution has undefined behaviour)
    Witnesses
    Positive: P Negative: N
    Flag *undef*                 (only with Undef)
    Condition exists (1:r0=1 /\\ [x]=1)
    Observation NAME Sometimes P N   (Never when P = 0, Always when N = 0)
    Time NAME 0.01
    Hash=...

Like herd7, States lists the final states over the observables the condition mentions only (the
registers and locations of its atoms, registers first by thread, then locations, in the test's
order), each distinct projection once: the oracle's full states (every register, every location)
are projected and merged, so a script comparing herd logs (mcompare7, msum7) sees the same lines.
herd never prints ``undef``: an observable the oracle leaves undef in a state (any value) is left
out of that state's line rather than given a made-up value.

herd counts candidate executions in Positive/Negative; the oracle keeps states, so scopefuzz counts
projected states: Positive those validating the condition (satisfying the proposition, for some
choice of their undef positions; for ``~exists``, not satisfying it), Negative the others. The
Observation line counts the states satisfying the proposition, whatever the quantifier (herd's
Sometimes/Always/Never of the proposition).
The hash is scopefuzz's canonical hash of the test (herd hashes its own way).

Streamed: the projection never holds the allowed set. A set still kept as its searches' factors
(:meth:`oracle.states.States.projection`) is projected factor by factor; an array-backed one
block by block (:meth:`~oracle.states.States.stream`: the distinct projected rows of each block,
merged); memory follows the number of distinct projections (the lines printed), not the number
of states. The lines are sorted, so the order does not depend on how the set was found.
"""

from __future__ import annotations

import numpy as np

from litmus import canonical_hash
from litmus.ir import UNDEF, And, Atom, Const, Not, Or
from litmus.outcome import count_satisfiable

from .ceiling import guard
from .events import UNDEF_VAL

KIND = {"exists": "Allowed", "~exists": "Forbidden", "forall": "Required"}


#: models whose herd cat makes a data race undefined behaviour (``undefined_unless empty dr`` in
#: herd7's rc11.cat and c11_simp.cat): herd prints ``Undef`` for the verdict and a
#: ``Flag *undef*`` line when some consistent execution races, where the oracle flags ``racy``
UNDEF_RACE_MODELS = frozenset({"rc11", "c11"})


def herd_key(key: str) -> str:
    """``P1:r0`` -> ``1:r0``; a location ``x`` -> ``[x]`` (herd7 7.58 writes every memory
    location in brackets, in its States lines and its Condition)."""
    if key.startswith("P") and ":" in key:
        return key[1:]
    return key if key.startswith("[") else f"[{key}]"


def herd_undefined(res) -> bool:
    """Whether herd7 would print ``Undef`` (and ``Flag *undef*``) for this result: the oracle's
    own Undef verdict or UB list, or a race under a model whose herd cat makes races undefined."""
    return (res.verdict == "Undef" or bool(res.ub)
            or (res.model in UNDEF_RACE_MODELS and "racy" in res.flags))


def herd_prop(prop, parent: str = "") -> str:
    """A proposition in herd's spelling (``1:r0=1``, ``/\\``, ``\\/``, ``~``)."""
    if isinstance(prop, Atom):
        who = herd_key(prop.name) if prop.thread is None else f"{prop.thread}:{prop.name}"
        atom = f"{who}={prop.value}"
        return atom if prop.op == "==" else f"~{atom}"
    if isinstance(prop, Const):
        return "true" if prop.value else "false"
    if isinstance(prop, Not):
        return f"~({herd_prop(prop.arg, 'not')})"
    sep, kind = (" /\\ ", "and") if isinstance(prop, And) else (" \\/ ", "or")
    if not isinstance(prop, (And, Or)):
        raise TypeError(prop)
    text = sep.join(herd_prop(a, kind) for a in prop.args)
    return f"({text})" if parent in ("and", "or", "not") else text


def herd_order(key: str) -> tuple:
    """herd's order of a state's observables: registers first, by thread then name, then
    locations by name (``0:t; [w]; [x]``, whatever order the test declares them in)."""
    if key.startswith("P") and ":" in key:
        thread, reg = key[1:].split(":", 1)
        return (0, int(thread) if thread.isdigit() else 0, thread, reg)
    return (1, 0, "", key)


def herd_state(state: dict) -> str:
    """One state line in herd's order (:func:`herd_order`); undef positions are left out (herd
    prints concrete values only)."""
    return " ".join(f"{herd_key(k)}={state[k]};" for k in sorted(state, key=herd_order)
                    if state[k] != "undef")


def _line_order(state: dict) -> tuple:
    """herd lists the States lines in the order of their values, observable by observable
    (:func:`herd_order`), numbers compared as numbers (:func:`_value_order`)."""
    return tuple(_value_order(state[k]) for k in sorted(state, key=herd_order))


def _value_order(v) -> tuple:
    """undef first, then numbers by value, then anything else (a symbolic value) by its text."""
    if v == "undef":
        return (0, 0, "")
    if isinstance(v, int):
        return (1, v, "")
    return (2, 0, str(v))


def condition_keys(test) -> list[str]:
    """The outcome keys the condition mentions, in the order of :meth:`Test.observables`
    (keys the test does not declare, if any, after them)."""
    seen: dict[str, None] = {}

    def walk(p):
        if isinstance(p, Atom):
            seen[p.key] = None
        elif isinstance(p, Not):
            walk(p.arg)
        elif isinstance(p, (And, Or)):
            for a in p.args:
                walk(a)
    walk(test.condition.prop)
    order = [k for k in test.observables() if k in seen]
    return order + [k for k in seen if k not in order]


def projected_states(test, states) -> list[dict]:
    """Each distinct projection of ``states`` onto :func:`condition_keys` (first-seen order for
    a list of dicts; an :class:`~oracle.states.States` is projected without expanding it, in
    no particular order: the lines are sorted)."""
    keys = condition_keys(test)
    if hasattr(states, "stream") and hasattr(states, "keys"):
        return _projected(states, keys)
    out: dict[tuple, dict] = {}
    for s in states:
        row = {k: s.get(k, "undef") for k in keys}
        out.setdefault(tuple(row.values()), row)
    return list(out.values())


def herd_lines(test, res) -> list[str]:
    q = test.condition.quantifier
    states = projected_states(test, res.states)
    # herd prints the count before the lines, so the sorted lines are held: bounded by the
    # memory ceiling like every other expansion (one line per projected state)
    guard(len(states) * (96 + 24 * len(condition_keys(test))), len(res.states),
          "herd's States lines")
    pos = count_satisfiable(test.condition.prop, states)
    neg = len(states) - pos
    obs = "Never" if pos == 0 else ("Always" if neg == 0 else "Sometimes")
    lines = [herd_state(s) for s in sorted(states, key=_line_order)]
    undef = herd_undefined(res)
    # Positive counts what validates the test's condition (for ~exists: the states without the
    # proposition), the Observation line what satisfies the proposition itself
    valid, invalid = (neg, pos) if q == "~exists" else (pos, neg)
    return ([f"Test {test.name} {KIND.get(q, 'Allowed')}", f"States {len(lines)}", *lines,
             "Undef" if undef else res.verdict, "Witnesses",
             f"Positive: {valid} Negative: {invalid}",
             *(["Flag *undef*"] if undef else []),
             f"Condition {q} ({herd_prop(test.condition.prop, 'top')})",
             f"Observation {test.name} {obs} {pos} {neg}",
             f"Time {test.name} {res.seconds:.2f}", f"Hash={canonical_hash(test, 32)}", ""])


def _projected(states, keys: list[str]) -> list[dict]:
    """The distinct projections of a :class:`~oracle.states.States` onto ``keys`` (undef where
    the set has no such observable): from its factors when it is still lazy and their product
    is small, else block by block as it is streamed."""
    if len(states) == 0:
        return []
    have = [k for k in keys if k in states.keys]
    got = states.projection(have) if states.is_lazy else None
    if got is None:
        idx = [states.keys.index(k) for k in have]
        seen: set = set()
        for block in states.stream():
            if not idx:
                if block.shape[0]:
                    seen.add(())
                continue
            part = np.unique(block[:, idx], axis=0) if block.shape[0] else block[:, idx]
            seen.update(map(tuple, part.tolist()))
        got = [{k: (UNDEF if v == UNDEF_VAL else v) for k, v in zip(have, t)} for t in seen]
    return [{k: s.get(k, UNDEF) for k in keys} for s in got]

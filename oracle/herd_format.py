"""``check --format herd``: a result in herd7's output layout, for scripts that parse herd's logs.

herd7 prints, per test::

    Test NAME Allowed            (exists: Allowed; ~exists: Forbidden; forall: Required)
    States N
    0:r0=0; 1:r1=1; x=1;         (one line per final state, threads as numbers)
    Ok                           (or No; scopefuzz's Undef verdict prints as Undef)
    Witnesses
    Positive: P Negative: N
    Condition exists (1:r0=1 /\\ 1:r1=0)
    Observation NAME Sometimes P N   (Never when P = 0, Always when N = 0)
    Time NAME 0.01
    Hash=...

herd counts candidate executions in Positive/Negative; the oracle keeps states, so scopefuzz counts
allowed states satisfying the proposition (for some choice of their undef positions) and the others.
The hash is scopefuzz's canonical hash of the test (herd hashes its own way).
"""

from __future__ import annotations

from litmus import canonical_hash
from litmus.ir import And, Atom, Const, Not, Or
from litmus.outcome import count_satisfiable

KIND = {"exists": "Allowed", "~exists": "Forbidden", "forall": "Required"}


def herd_key(key: str) -> str:
    """``P1:r0`` -> ``1:r0``; locations stay."""
    return key[1:] if key.startswith("P") and ":" in key else key


def herd_prop(prop, parent: str = "") -> str:
    """A proposition in herd's spelling (``1:r0=1``, ``/\\``, ``\\/``, ``~``)."""
    if isinstance(prop, Atom):
        who = prop.name if prop.thread is None else f"{prop.thread}:{prop.name}"
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


def herd_state(state: dict) -> str:
    return " ".join(f"{herd_key(k)}={v};" for k, v in state.items())


def herd_lines(test, res) -> list[str]:
    q = test.condition.quantifier
    pos = count_satisfiable(test.condition.prop, res.states)
    neg = len(res.states) - pos
    obs = "Never" if pos == 0 else ("Always" if neg == 0 else "Sometimes")
    states = sorted(herd_state(s) for s in res.states)
    return ([f"Test {test.name} {KIND.get(q, 'Allowed')}", f"States {len(states)}", *states,
             res.verdict, "Witnesses", f"Positive: {pos} Negative: {neg}",
             f"Condition {q} ({herd_prop(test.condition.prop, 'top')})",
             f"Observation {test.name} {obs} {pos} {neg}",
             f"Time {test.name} {res.seconds:.2f}", f"Hash={canonical_hash(test, 32)}", ""])

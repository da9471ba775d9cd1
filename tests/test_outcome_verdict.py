"""Verdicts: the fast path of ``litmus.outcome.verdict`` (plain evaluation of states without undef
at the condition's observables) agrees with LITMUS.md's definition, written out literally:
``exists P`` is Ok when some state satisfies P for some choice of its undef values, ``~exists P``
when none does, ``forall P`` when every state satisfies P for every choice."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from litmus.ir import UNDEF, And, Atom, Condition
from litmus.outcome import satisfiable, valid, verdict
from litmus_strategies import props, values

KEYS = [(0, "r0"), (1, "r0"), (None, "x")]
NAMES = ["P0:r0", "P1:r0", "x"]
outcomes = st.fixed_dictionaries({k: values | st.just(UNDEF) for k in NAMES})


def by_definition(q: str, prop, states) -> str:
    if q == "exists":
        return "Ok" if any(satisfiable(prop, s) for s in states) else "No"
    if q == "~exists":
        return "No" if any(satisfiable(prop, s) for s in states) else "Ok"
    return "Ok" if all(valid(prop, s) for s in states) else "No"


@given(st.sampled_from(["exists", "~exists", "forall"]), props(KEYS, depth=3),
       st.lists(outcomes, max_size=5))
def test_verdict_agrees_with_the_definition(q, prop, states):
    assert verdict(Condition(q, prop), states) == by_definition(q, prop, states)


atoms = st.builds(lambda k, op, v: Atom(k[0], k[1], op, v), st.sampled_from(KEYS),
                  st.sampled_from(["==", "!="]), st.integers(0, 2))


@given(st.sampled_from(["exists", "~exists", "forall"]), st.lists(atoms, min_size=1, max_size=4),
       st.lists(outcomes, min_size=1, max_size=4))
def test_conjunctions_of_atoms_agree_with_the_definition(q, conj, states):
    """The conjunction shortcut (no enumeration of undef choices) on repeated observables,
    contradictory pairs (``r0 == 1 /\\ r0 != 1``) and undef positions."""
    prop = conj[0] if len(conj) == 1 else And(tuple(conj))
    assert verdict(Condition(q, prop), states) == by_definition(q, prop, states)


def test_undef_position_is_any_value():
    p = And((Atom(0, "r0", "==", 1), Atom(0, "r0", "!=", 1)))   # never true
    s = [{"P0:r0": UNDEF, "P1:r0": 0, "x": 0}]
    assert verdict(Condition("exists", Atom(0, "r0", "==", 7)), s) == "Ok"
    assert verdict(Condition("exists", p), s) == "No"
    assert verdict(Condition("forall", Atom(0, "r0", "==", 7)), s) == "No"
    assert verdict(Condition("exists", p), s, undefined=True) == "Undef"

"""The verdict by outcome-directed search (``oracle/witness.py``) and the lazy result of ``check``.

- On Hypothesis-drawn programs of every model (AMDGPU, rc11 and c11 on C, vulkan, opencl, ptx,
  tileir), each with a drawn condition (exists / ~exists / forall over atoms ``==``/``!=``,
  ``not``, conjunctions, disjunctions, constants), the verdict and ``ub`` of ``check`` forced
  onto the witness search (``LAZY_AFTER`` = 0) are those of the full enumeration
  (``check(full=True)``), and the lazy result's states, flags and counts, once read, are the
  full check's too.
- The normal form by hand: ``forall`` is the search for a counter-witness of each negated atom,
  ``!=`` atoms, contradictions dropped (undef included), what is left to the full check.
- A counter-witness stops the search early: ``forall`` (and ``~exists``) on a program with
  hundreds of thousands of executions, whose first counter-witness is found after a handful.
- ``check``'s lazy result: pending until a field of the full check is read, pickled (the
  CLI's ``--timeout`` child) and cached; ``scopefuzz check`` prints the verdict line without
  the state set, and ``--json`` is unchanged.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pathlib
import pickle
import subprocess
import sys
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import litmus
import oracle
from litmus.ir import And, Atom, Condition, Const, Not, Or
from litmus.outcome import verdict as verdict_of_states
from oracle import witness
from oracle.explore import WILD
from oracle.pack import options, search_pe

check_mod = importlib.import_module("oracle.check")
_ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:            # (benchmarks/scaling.py's program families)
    sys.path.insert(0, _ROOT)


@contextmanager
def searched_verdicts():
    """Every check without a budget decided by the witness search (none finishes within 0
    steps), on the unit's compact pre-executions where it has them (rc11: free rmws)."""
    old = check_mod.LAZY_AFTER, check_mod.COMPACT_ABOVE
    check_mod.LAZY_AFTER = 0
    check_mod.COMPACT_ABOVE = 0
    try:
        yield
    finally:
        check_mod.LAZY_AFTER, check_mod.COMPACT_ABOVE = old


def _key_atom(key: str, op: str, value: int) -> Atom:
    if ":" in key:
        t, name = key.split(":", 1)
        return Atom(int(t[1:]), name, op, value)
    return Atom(None, key, op, value)


@st.composite
def props(draw, keys: list[str], values: list[int], depth: int = 2):
    """A proposition over ``keys``: atoms ``==``/``!=`` (values from ``values``), constants,
    ``not``, ``/\\``, ``\\/``."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        if not keys or draw(st.integers(0, 11)) == 0:
            return Const(draw(st.booleans()))
        return _key_atom(draw(st.sampled_from(keys)), draw(st.sampled_from(["==", "==", "!="])),
                         draw(st.sampled_from(values)))
    kind = draw(st.sampled_from(["and", "and", "or", "not"]))
    if kind == "not":
        return Not(draw(props(keys, values, depth - 1)))
    args = tuple(draw(st.lists(props(keys, values, depth - 1), min_size=2, max_size=3)))
    return And(args) if kind == "and" else Or(args)


def _values(test) -> list[int]:
    """Values a condition on ``test`` may name: 0-2 and the initial values (so that atoms hit
    and miss)."""
    vals = {0, 1, 2}
    vals |= {loc.init for loc in test.locations if isinstance(loc.init, int)}
    return sorted(vals)


def with_condition(draw, test):
    keys = test.observables()
    q = draw(st.sampled_from(["exists", "~exists", "forall"]))
    return dataclasses.replace(test, condition=Condition(q, draw(props(keys, _values(test)))))


def assert_search_agrees(test, model=None):
    """The witness search's verdict and ub are the enumeration's; so is the rest, once read."""
    oracle.clear_cache()
    try:
        want = oracle.check(test, model, full=True)
    except oracle.OracleError:
        return None
    oracle.clear_cache()
    with searched_verdicts():
        got = oracle.check(test, model)
    where = f"{test.name} {test.condition}\n{_text(test)}"
    assert got.verdict == want.verdict, where
    assert got.ub == want.ub, where
    if got.pending:
        assert (got.states, got.flags, got.candidates, got.consistent) == \
            (want.states, want.flags, want.candidates, want.consistent), where
        assert not got.pending
    return got


def _text(test) -> str:
    try:
        return litmus.format_test(test)
    except Exception:
        return test.dialect


def _drawn(strategy):
    @st.composite
    def draw_test(draw):
        t = draw(strategy)
        if isinstance(t, str):
            t = litmus.parse(t)
        return with_condition(draw, t)
    return draw_test()


from litmus_strategies import litmus_tests  # noqa: E402
from test_conformance_opencl import opencl_programs  # noqa: E402
from test_conformance_rc11 import c_programs  # noqa: E402
from test_conformance_vulkan import vulkan_programs  # noqa: E402
from fuzz.ptx_strategies import programs as ptx_programs  # noqa: E402
from fuzz.tileir_strategies import tileir_programs  # noqa: E402

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.filter_too_much])


@settings(max_examples=60, **_SETTINGS)
@given(_drawn(litmus_tests(max_threads=3, max_instrs=4)))
def test_search_verdict_is_the_enumerations_on_amdgpu_programs(t):
    assert_search_agrees(t)


@settings(max_examples=40, **_SETTINGS)
@given(_drawn(c_programs()), st.sampled_from(["rc11", "c11"]))
def test_search_verdict_is_the_enumerations_on_c_programs(t, model):
    assert_search_agrees(t, model)


@settings(max_examples=25, **_SETTINGS)
@given(_drawn(vulkan_programs()))
def test_search_verdict_is_the_enumerations_on_vulkan_programs(t):
    assert_search_agrees(t)


@settings(max_examples=25, **_SETTINGS)
@given(_drawn(opencl_programs()))
def test_search_verdict_is_the_enumerations_on_opencl_programs(t):
    assert_search_agrees(t)


@settings(max_examples=25, **_SETTINGS)
@given(_drawn(ptx_programs()), st.sampled_from(["ptx", "ptx60"]))
def test_search_verdict_is_the_enumerations_on_ptx_programs(t, model):
    assert_search_agrees(t, model)


@settings(max_examples=30, **_SETTINGS)
@given(_drawn(tileir_programs()))
def test_search_verdict_and_ub_are_the_enumerations_on_tileir_programs(t):
    # (Tile IR's racy flag is undefined behaviour: the flag witness search decides ub)
    assert_search_agrees(t)


# --- the normal form, by hand -----------------------------------------------------------------------
KEYS = ["P0:r0", "P1:r0", "x"]


def _cond(text: str):
    t = litmus.parse("C t\n{ [x] = 0; }\nP0 (atomic_int* x) { int r0 = atomic_load(x); }\n"
                     f"P1 (atomic_int* x) {{ int r0 = atomic_load(x); }}\n{text}\n")
    return t.condition


def test_forall_asks_for_a_counter_witness_of_each_atom():
    ok, q = witness.question(_cond("forall (P0:r0 == 1 /\\ x == 2)"))
    assert ok is False
    assert witness.disjuncts(q, KEYS) == [([1, WILD, WILD], [True, False, False], [()] * 3),
                                          ([WILD, WILD, 2], [False, False, True], [()] * 3)]


def test_exists_disjunction_and_not_equal():
    ok, q = witness.question(_cond("exists (P0:r0 == 1 \\/ ~(P1:r0 == 0 /\\ x != 3))"))
    assert ok is True
    assert witness.disjuncts(q, KEYS) == [([1, WILD, WILD], [False, False, False], [()] * 3),
                                          ([WILD, 0, WILD], [False, True, False], [()] * 3),
                                          ([WILD, WILD, 3], [False, False, False], [()] * 3)]


def test_contradictions_are_dropped_even_for_undef():
    # no single value (undef stands for one value per position) is both 1 and 2, or 1 and not 1
    _, q = witness.question(_cond("exists (P0:r0 == 1 /\\ P0:r0 == 2 \\/ x == 1 /\\ x != 1)"))
    assert witness.disjuncts(q, KEYS) == []
    _, q = witness.question(_cond("exists (x == 1 /\\ x != 2 /\\ x == 1)"))
    assert witness.disjuncts(q, KEYS) == [([WILD, WILD, 1], [False, False, False], [()] * 3)]


def test_constants():
    assert witness.disjuncts(Const(True), KEYS) == [([WILD] * 3, [False] * 3, [()] * 3)]
    assert witness.disjuncts(Const(False), KEYS) == []


def test_not_equal_atoms_on_one_observable_ask_a_set_of_excluded_values():
    # the least value is the asked != value, the others its further excluded values (tex)
    _, q = witness.question(_cond("exists (x != 2 /\\ x != 1 /\\ P0:r0 == 1 /\\ x != 5)"))
    assert witness.disjuncts(q, KEYS) == [([1, WILD, 1], [False, False, True],
                                           [(), (), (2, 5)])]
    # forall (k == 1 \\/ k == 2): a counter-witness is a value other than both
    _, q = witness.question(_cond("forall (x == 1 \\/ x == 2)"))
    assert witness.disjuncts(q, KEYS) == [([WILD, WILD, 1], [False, False, True],
                                           [(), (), (2,)])]
    # an == atom implies the != atoms it does not contradict
    _, q = witness.question(_cond("exists (x != 1 /\\ x != 2 /\\ x == 3)"))
    assert witness.disjuncts(q, KEYS) == [([WILD, WILD, 3], [False] * 3, [()] * 3)]


def test_a_huge_normal_form_is_left_to_the_full_check():
    big = And(tuple(Or((_key_atom("x", "==", i), _key_atom("P0:r0", "==", i)))
                    for i in range(8)))                       # 2^8 disjuncts
    with pytest.raises(witness.Unsupported):
        witness.disjuncts(big, KEYS)


# --- a counter-witness stops the search early --------------------------------------------------------
def _one_location(n: int, cond: str):
    """n threads each writing x then reading it (rc11, relaxed): (n!)^2 consistent executions."""
    args = "(atomic_int* x)"
    threads = "\n".join(f"P{i} {args} {{ atomic_store_explicit(x, {i + 1}, memory_order_relaxed);"
                        f" int r0 = atomic_load_explicit(x, memory_order_relaxed); }}"
                        for i in range(n))
    return litmus.parse(f"C oneloc{n}\n{{ [x] = 0; }}\n{threads}\n{cond}\n")


@pytest.mark.parametrize("cond", ["forall (P0:r0 == 1)", "~exists (P0:r0 != 1)",
                                  "forall (x == 1 \\/ P0:r0 == 1)"])
def test_the_first_counter_witness_stops_the_search(cond):
    t = _one_location(5, cond)
    oracle.clear_cache()
    full = oracle.check(t, "rc11", full=True)
    assert full.verdict == "No" and full.consistent > 1000       # there is a counter-witness
    unit = check_mod.get_unit("rc11")
    prog = check_mod.load_model("rc11")
    pe, = check_mod.pre_executions(unit, t)
    keys = t.observables()
    _, q = witness.question(t.condition)
    asked = witness.disjuncts(q, keys)
    order = [k for k, _ in pe.observables]
    tgt = [[w[keys.index(k)] for k in order] for w, _, _ in asked]
    tne = [[n[keys.index(k)] for k in order] for _, n, _ in asked]
    import numpy as np
    _, ns, cands, cons, _, _, hit = search_pe(
        pe, prog, unit.hints, options(pe.n, len(order), targets=np.array(tgt, np.int64),
                                      tne=np.array(tne, np.bool_), first=True))
    assert ns >= 0 and hit.any()
    assert cons <= 3 and cands < full.candidates / 100, (cands, full.candidates)
    oracle.clear_cache()
    with searched_verdicts():
        got = oracle.check(t, "rc11")
    assert got.pending and got.verdict == "No"


@pytest.mark.parametrize("cond,verdict", [
    ("forall (x == 1 \\/ x == 2)", "No"),              # x == 3 is a final value
    ("forall (x == 1 \\/ x == 2 \\/ x == 3)", "Ok"),   # 1, 2, 3 are every final value
    ("exists (x != 1 /\\ x != 2 /\\ x != 3)", "No"),
    ("exists (P0:r0 != 1 /\\ P0:r0 != 2)", "Ok"),      # P0 reads 3 after P2's write
    ("exists (P0:r0 != 1 /\\ P0:r0 != 2 /\\ P0:r0 != 3)", "No"),   # it reads its own or later
])
def test_not_equal_atoms_on_one_observable_are_searched(cond, verdict):
    """Values hand-derived for three threads each writing x (1, 2, 3) then reading it (rc11,
    relaxed): the final x is one of 1-3, P0 reads 1 or a write coherence-after it."""
    t = _one_location(3, cond)
    oracle.clear_cache()
    with searched_verdicts():
        got = oracle.check(t, "rc11")
    assert got.pending and got.verdict == verdict
    oracle.clear_cache()
    assert oracle.check(t, "rc11", full=True).verdict == verdict


@st.composite
def _excluding(draw, strategy):
    """A test of ``strategy`` whose condition has two or three ``!=`` atoms on one observable,
    conjoined with a drawn proposition."""
    t = draw(strategy)
    if isinstance(t, str):
        t = litmus.parse(t)
    keys = t.observables()
    if not keys:
        return with_condition(draw, t)
    k = draw(st.sampled_from(keys))
    vals = draw(st.lists(st.sampled_from(_values(t) + [3]), min_size=2, max_size=3, unique=True))
    atoms = tuple(_key_atom(k, "!=", v) for v in vals)
    rest = draw(props(keys, _values(t), 1))
    prop = And(atoms + (rest,)) if draw(st.booleans()) else And(atoms)
    if draw(st.booleans()):
        prop = Not(prop)                 # forall/exists over the negation: == disjuncts too
    q = draw(st.sampled_from(["exists", "~exists", "forall"]))
    return dataclasses.replace(t, condition=Condition(q, prop))


@settings(max_examples=40, **_SETTINGS)
@given(_excluding(c_programs()), st.sampled_from(["rc11", "c11"]))
def test_excluded_value_sets_agree_with_the_enumeration_on_c_programs(t, model):
    assert_search_agrees(t, model)


@settings(max_examples=25, **_SETTINGS)
@given(_excluding(ptx_programs()))
def test_excluded_value_sets_agree_with_the_enumeration_on_ptx_programs(t):
    assert_search_agrees(t, "ptx")


@settings(max_examples=25, **_SETTINGS)
@given(_excluding(litmus_tests(max_threads=3, max_instrs=4)))
def test_excluded_value_sets_agree_with_the_enumeration_on_amdgpu_programs(t):
    assert_search_agrees(t)


@settings(max_examples=20, **_SETTINGS)
@given(_excluding(tileir_programs()))
def test_excluded_value_sets_agree_with_the_enumeration_on_tileir_programs(t):
    assert_search_agrees(t)


def test_forall_that_holds_searches_everything_and_says_ok():
    # (CoWR: a thread reads its own write or a later one, never the initial 0)
    t = _one_location(3, "forall (P0:r0 != 0 /\\ P1:r0 != 0 /\\ ~(P2:r0 == 0))")
    oracle.clear_cache()
    with searched_verdicts():
        got = oracle.check(t, "rc11")
    assert got.pending and got.verdict == "Ok"
    oracle.clear_cache()
    assert oracle.check(t, "rc11", full=True).verdict == "Ok"


# --- the lazy result ---------------------------------------------------------------------------------
MP = """C mp
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) { *x = 1; atomic_store_explicit(y, 1, memory_order_release); }
P1 (atomic_int* x, atomic_int* y) { int r0 = atomic_load_explicit(y, memory_order_acquire); int r1 = *x; }
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_a_lazy_result_completes_once_and_equals_the_full_check():
    t = litmus.parse(MP)
    oracle.clear_cache()
    full = oracle.check(t, full=True)
    oracle.clear_cache()
    with searched_verdicts():
        lazy = oracle.check(t)
        again = oracle.check(t)                 # the cache keeps the verdict
    assert lazy.pending and again.pending and lazy.verdict == full.verdict == "No"
    assert "pending" in repr(lazy)
    clone = pickle.loads(pickle.dumps(lazy))     # the CLI's --timeout child sends it back
    assert clone.pending and clone.verdict == "No"
    assert lazy.states == full.states and not lazy.pending
    assert lazy.flags == full.flags and lazy.candidates == full.candidates
    same = dataclasses.replace(full, seconds=lazy.seconds)      # (every field but seconds)
    assert lazy == same and same == lazy and lazy != full and clone.states == full.states
    lazy.flags = ["x"]                          # a field set on one result stays there
    assert lazy.flags == ["x"] and oracle.check(t).flags == full.flags


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz.cli", "check", *args],
                          capture_output=True, text=True, timeout=600)


def test_cli_prints_the_searched_verdict_without_the_state_set(tmp_path):
    # issue 32's benchmark family: a 24-event wg-scope program, whose full search is long
    from benchmarks.scaling import asymmetric
    f = tmp_path / "asym.litmus"
    f.write_text(asymmetric(5, 2, 24, "wg"))
    out = _cli(str(f))
    assert out.returncode == 0, out.stderr
    line = out.stdout.splitlines()[0]
    assert line.startswith("asym-5t-2l-24e-wg  Ok  (model amdgpu, decided by a witness search")


def test_cli_json_is_the_full_check(tmp_path):
    f = tmp_path / "mp.litmus"
    f.write_text(MP)
    out = _cli("--json", str(f))
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    oracle.clear_cache()
    full = oracle.check(litmus.parse(MP), full=True)
    assert obj["states"] == list(full.states) and obj["candidates"] == full.candidates
    assert obj["verdict"] == verdict_of_states(litmus.parse(MP).condition, full.states)


# --- check --format herd: projected without expanding ----------------------------------------------
def test_herd_lines_of_a_large_set_are_those_of_its_list_of_dicts():
    from benchmarks.scaling import amdgpu_multi
    from oracle.herd_format import herd_lines
    t = litmus.parse(amdgpu_multi(4, False))
    t = dataclasses.replace(t, condition=litmus.parse(
        amdgpu_multi(4, False).replace("exists (P0:r0 == 0 /\\ P1:r0 == 0)",
                                       "forall (P0:r0 == 0 \\/ ~(P1:r0 == 1) \\/ x == 2)")).condition)
    oracle.clear_cache()
    res = oracle.check(t, full=True)
    assert len(res.states) > 2048 and res.states.is_lazy       # kept as its blocks' factors
    got = herd_lines(t, res)
    assert res.states.is_lazy                                   # not expanded to project it
    want = herd_lines(t, dataclasses.replace(res, states=list(res.states)))
    assert [x for x in got if not x.startswith("Time")] == \
        [x for x in want if not x.startswith("Time")]
    assert any(x.startswith("States ") and x != "States 0" for x in got)

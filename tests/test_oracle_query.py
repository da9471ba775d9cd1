"""Outcome-directed queries (``oracle.allows``, ``oracle.allows_many``, ``check --outcome``).

- on generated AMDGPU programs the answers for every outcome over small values (a histogram's
  keys), one at a time and in one batch, for outcomes that leave an observable out, and for
  outcomes asking observables to be ``DEFINED`` (any value but undef), are those of the
  pure-Python reference evaluation's allowed states (``tests/reference.py``: an outcome is
  allowed when some allowed state matches it, undef matching any value but ``DEFINED``);
- the same on generated C programs against the rc11 reference (``oracle/models/rc11/reference.py``);
- hand-derived answers for SB and message passing in C11 (relaxed SB allows 0/0; release/acquire
  MP forbids r0=1, r1=0), through the API and the command line in both outcome forms, with exit
  status 0 / 1 and one-line errors (status 2) for outcomes that are not outcomes of the test.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings

import litmus
import oracle
from litmus.ir import UNDEF
from reference import reference_check
from oracle.explore import DEFINED
from oracle.models.rc11.reference import check as rc11_ref
from test_conformance_rc11 import c_programs
from test_oracle_props import programs


def _meets(v, want) -> bool:
    """A state's value ``v`` meets an asked value: ``DEFINED`` is any value but undef; undef
    meets every other value."""
    return v != UNDEF if want == DEFINED else v == UNDEF or v == want


def _allowed_by(states: list[tuple], keys: list[str], outcome: dict) -> bool:
    """Some state (a tuple in ``keys`` order) meets ``outcome`` on its keys (:func:`_meets`)."""
    idx = [keys.index(k) for k in outcome]
    return any(all(_meets(s[i], outcome[keys[i]]) for i in idx) for s in states)


def _defined_outcomes(keys: list[str]) -> list[dict]:
    """Outcomes asking for ``DEFINED``: one per observable (what ``Judge.all_undef`` asks),
    every observable at once, and the first one with the others given 1."""
    out = [{k: DEFINED} for k in keys] + [{k: DEFINED for k in keys}]
    if len(keys) > 1:
        out.append({keys[0]: DEFINED, **{k: 1 for k in keys[1:]}})
    return out


def _histogram_keys(keys: list[str], values=(0, 1, 2)) -> list[dict]:
    return [dict(zip(keys, combo)) for combo in itertools.product(values, repeat=len(keys))]


def _agree(test, ref_states: list[tuple], model=None):
    keys = test.observables()
    outs = _histogram_keys(keys)
    want = [_allowed_by(ref_states, keys, o) for o in outs]
    oracle.clear_cache()
    assert oracle.allows_many(test, outs, model) == want
    oracle.clear_cache()
    # one at a time (each answered by a search with the values as required values)
    for o, w in list(zip(outs, want))[:12]:
        oracle.clear_cache()
        assert oracle.allows(test, o, model) == w, o
    # an observable left out is free
    if len(keys) > 1:
        part = [{k: v for k, v in o.items() if k != keys[0]} for o in outs[:9]]
        oracle.clear_cache()
        assert oracle.allows_many(test, part, model) == \
            [_allowed_by(ref_states, keys, o) for o in part]
    # DEFINED (any value but undef: an undef position does not meet it), in one batch and
    # one at a time (a single outcome is searched with required values)
    defs = _defined_outcomes(keys)
    dwant = [_allowed_by(ref_states, keys, o) for o in defs]
    oracle.clear_cache()
    assert oracle.allows_many(test, defs, model) == dwant
    for o, w in zip(defs, dwant):
        oracle.clear_cache()
        assert oracle.allows(test, o, model) == w, o
    # a full check cached first answers the same
    oracle.clear_cache()
    oracle.check(test, model)
    assert oracle.allows_many(test, outs, model) == want
    assert oracle.allows_many(test, defs, model) == dwant


@settings(max_examples=30, deadline=None)
@given(programs(max_instrs=4))
def test_queries_agree_with_the_amdgpu_reference(text):
    test = litmus.parse(text)
    ref_states, _, _ = reference_check(test)
    _agree(test, sorted(ref_states, key=repr))


@settings(max_examples=20, deadline=None)
@given(c_programs())
def test_queries_agree_with_the_rc11_reference(text):
    test = litmus.parse(text)
    ref = rc11_ref(test)
    keys = test.observables()
    _agree(test, [tuple(s[k] for k in keys) for s in ref.states], "rc11")


SB = """C SB
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed);
  int r0 = atomic_load_explicit(y, memory_order_relaxed); }
P1 (atomic_int* x, atomic_int* y) { atomic_store_explicit(y, 1, memory_order_relaxed);
  int r0 = atomic_load_explicit(x, memory_order_relaxed); }
exists (0:r0 = 0 /\\ 1:r0 = 0)
"""

MP = """C MP
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release); }
P1 (atomic_int* x, atomic_int* y) { int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed); }
exists (1:r0 = 1 /\\ 1:r1 = 0)
"""


def test_hand_derived_answers():
    sb, mp = litmus.parse(SB), litmus.parse(MP)
    oracle.clear_cache()
    # relaxed SB: every pair of read values, x and y end 1
    assert oracle.allows(sb, {"P0:r0": 0, "P1:r0": 0, "x": 1, "y": 1})
    assert oracle.allows_many(sb, [{"P0:r0": a, "P1:r0": b} for a in (0, 1) for b in (0, 1)]) \
        == [True, True, True, True]
    assert not oracle.allows(sb, {"x": 0})              # x's only write is 1, co-after init
    assert not oracle.allows(sb, {"P0:r0": 2})          # no write of 2
    # release/acquire MP: reading the flag makes the data visible
    assert not oracle.allows(mp, {"P1:r0": 1, "P1:r1": 0})
    assert oracle.allows_many(mp, [{"P1:r0": 1, "P1:r1": 1}, {"P1:r0": 0, "P1:r1": 0},
                                   {"P1:r0": 0, "P1:r1": 1}, {"P1:r0": 1, "P1:r1": 0}]) \
        == [True, True, True, False]


def test_outcome_text_forms():
    mp = litmus.parse(MP)
    want = {"P1:r0": 1, "P1:r1": 0}
    assert oracle.query.parse_outcome(mp, "P1:r0=1; P1:r1=0;") == want
    assert oracle.query.parse_outcome(mp, "P1:r0 == 1 /\\ P1:r1 == 0") == want
    assert oracle.query.parse_outcome(mp, "1:r0=1 /\\ [x] = 1") == {"P1:r0": 1, "x": 1}
    for bad, msg in (("P1:r0 = 1 \\/ P1:r1 = 0", "not KEY=VALUE"),
                     ("P2:r0=1;", "not an observable"), ("", "empty outcome"),
                     ("P1:r0=1; P1:r0=2;", "two values"), ("P1:r0 != 1", "not KEY=VALUE")):
        with pytest.raises(oracle.OracleError) as e:
            oracle.query.parse_outcome(mp, bad)
        assert msg in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(oracle.OracleError, match="not an observable"):
        oracle.allows(mp, {"P7:r0": 1})


def test_check_outcome_on_the_command_line(tmp_path, capsys):
    from fuzz.cli import main
    f = tmp_path / "MP.litmus"
    f.write_text(MP)
    assert main(["check", str(f), "--outcome", "P1:r0=1; P1:r1=0;"]) == 1
    assert "FORBIDDEN" in capsys.readouterr().out
    assert main(["check", str(f), "--outcome", "P1:r0 == 1 /\\ P1:r1 == 1", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["allowed"] is True and obj["outcome"] == {"P1:r0": 1, "P1:r1": 1}
    assert main(["check", str(f), "--outcome", "P1:r9=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{f}:1:1:") and err.count("\n") == 1, err


def test_the_harness_comparison_asks_only_the_observed_outcomes():
    """``fuzz.compare.compare`` judges a histogram by ``oracle.judge.Judge`` (one query for
    the observed outcomes) as by the full allowed set. MP by hand: x and y end 1 (their one
    write is co-after the initial write), and r0 = 1, r1 = 0 is forbidden."""
    from fuzz.compare import compare
    from hw.backend import Histogram
    mp = litmus.parse(MP)
    keys = mp.observables()
    h = Histogram(keys)
    for i, combo in enumerate(itertools.product((0, 1), repeat=len(keys))):
        h.add(combo, i + 1)

    def allowed(o):
        return o["x"] == 1 and o["y"] == 1 and not (o["P1:r0"] == 1 and o["P1:r1"] == 0)

    want = sum(n for o, n in h.outcomes() if not allowed(o))
    oracle.clear_cache()
    lazy = compare(oracle.Judge(mp), h, mp.condition)
    assert lazy.forbidden == want
    assert [r.allowed for r in lazy.rows] == [allowed(r.outcome) for r in lazy.rows]
    oracle.clear_cache()
    assert compare(oracle.check(mp), h, mp.condition) == lazy

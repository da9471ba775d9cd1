"""The fuzzer's program strategies (fuzz/strategies.py): well-formed, bounded, biased, deterministic."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.errors import FailedHealthCheck

import litmus
from litmus.ir import prop_atoms
from fuzz.coverage import kinds, scope_pairs
from defined_programs import assume_defined
from fakes import sc_check
from fuzz.strategies import (ALL_KINDS, FEATURES, FeatureError, RandomSource, build_program,
                             common_scope,
                             draw_placements, draw_program, estimate_events, parse_features,
                             programs)


def _written_values(test):
    """location -> list of values stored by plain/atomic stores, xchg and cas."""
    out = collections.defaultdict(list)
    for _, _, ins in test.instructions():
        if ins.base == "st" or (ins.base == "rmw" and ins.op == "xchg"):
            out[ins.loc].append(ins.args[0])
        elif ins.base == "cas" and ins.args[0] != -1:    # (-1, -1): a cas used as a read
            out[ins.loc].append(ins.args[1])
    return out


@settings(max_examples=60, deadline=None)
@given(programs())
def test_programs_are_well_formed_and_small(test):
    text = litmus.format_test(test)
    again = litmus.parse(text)
    assert again == test
    assert 1 <= len(test.threads) <= 4
    assert all(1 <= len(th.code) <= 9 for th in test.threads)
    assert estimate_events(test) <= 64
    obs = set(test.observables())
    for atom in prop_atoms(test.condition.prop):
        assert atom.key in obs
    assert test.condition.quantifier == "exists"
    for loc, vals in _written_values(test).items():
        init = test.location(loc).init
        assert len(vals) == len(set(vals)), f"two writes of one value to {loc}:\n{text}"
        assert init not in vals


@settings(max_examples=40, deadline=None)
@given(programs(features="atomics,fences"))
def test_features_select_the_instruction_set(test):
    assert set(kinds(test)) <= {"ld.atom", "st.atom", "fence"}
    assert not test.lds_locations


@settings(max_examples=30, deadline=None)
@given(programs(features="cas,fences"))
def test_cas_only_programs_read_with_a_cas(test):
    assert set(kinds(test)) <= {"cas", "fence"}
    for _, _, ins in test.instructions():
        if ins.base == "cas" and ins.args[0] == -1:
            assert ins.args == (-1, -1)


@settings(max_examples=40, deadline=None)
@given(programs(features="plain,barriers,fences"))
def test_features_without_atomics_never_draw_atomics(test):
    assert set(kinds(test)) <= {"ld", "st", "fence", "barrier", "bar.signal", "bar.wait", "rmw"}


@settings(max_examples=50, deadline=None)
@given(programs(shapes=["cycle", "coherence", "atomicity"], near_miss=0.0))
def test_cycle_condition_is_the_cycle_outcome_that_sc_forbids(test):
    """A diy cycle of po and rf/co/fr edges is forbidden under SC: the condition names it."""
    atoms = list(prop_atoms(test.condition.prop))
    assert atoms, litmus.format_test(test)
    assert sc_check(test).verdict == "No", litmus.format_test(test)


@settings(max_examples=30, deadline=None)
@given(programs())
def test_programs_are_mostly_defined(test):
    """The default strategy draws programs the oracle can judge: Undef ones are rejected with
    assume(), and a strategy drawing (almost) only Undef programs fails the filter health check."""
    res = assume_defined(test)
    assert res.states, litmus.format_test(test)      # a defined program allows some outcome


UNDEF_PROGRAM = litmus.parse("""AMDGPU waitnoarrive
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 bar.init 1, 2   | barrier         ;
 bar.join 1      | st x, 1         ;
 barrier         |                 ;
 bar.wait 1      |                 ;
 ld r0, x        |                 ;
exists (P0:r0 == 0)
""")


def test_a_strategy_of_only_undef_programs_fails_loudly():
    # P0 waits on named barrier 1 that nobody arrives at: a deadlock, verdict Undef
    @settings(max_examples=20, deadline=None, database=None)
    @given(st.integers().map(lambda _: UNDEF_PROGRAM))   # a large space of Undef programs
    def prop(test):
        assume_defined(test)

    with pytest.raises(FailedHealthCheck, match="filter"):
        prop()


def test_draw_program_is_deterministic_and_varied():
    a = [litmus.format_test(draw_program(5, i)) for i in range(40)]
    b = [litmus.format_test(draw_program(5, i)) for i in range(40)]
    assert a == b
    forms = {litmus.canonical_form(draw_program(5, i)) for i in range(40)}
    assert len(forms) >= 35
    assert draw_program(5, 0) != draw_program(6, 0)


def test_campaign_draws_cover_every_instruction_kind_and_scope_boundary():
    seen = collections.Counter()
    pairs = set()
    bounds = collections.Counter()
    for i in range(1500):
        t = draw_program(11, i)
        seen.update(kinds(t))
        pairs.update(scope_pairs(t))
        for a in range(len(t.threads)):
            for b in range(a + 1, len(t.threads)):
                bounds[common_scope([th.placement for th in t.threads], a, b)] += 1
    assert [k for k in ALL_KINDS if k not in seen] == []
    assert {"wave", "wg", "cluster", "agent", "sys"} <= set(bounds)
    assert len(pairs) >= 15


def test_near_misses_are_drawn_and_documented():
    docs = [build_program(RandomSource(i), near_miss=1.0, shapes=["cycle", "barrier", "async"])
            .doc[0] for i in range(60)]
    changes = [d.split("near miss: ")[1].split()[0] for d in docs if "near miss" in d]
    assert len(changes) >= 40
    assert {"narrow", "weaken", "drop"} <= set(changes)
    assert not any("near miss" in draw_program(2, i, near_miss=0.0).doc[0] for i in range(30))


def test_placements_share_scope_instances():
    src = RandomSource(3)
    for _ in range(200):
        pl = draw_placements(src, 3, frozenset(FEATURES))
        assert len(pl) == 3
        # an explicit wave id is only printed when another thread shares the workgroup
        for p in pl:
            if p.wave is not None:
                assert sum(1 for q in pl if (q.wg, q.cluster, q.agent) == (p.wg, p.cluster, p.agent)
                           and q.wg is not None) > 1


def test_parse_features():
    assert parse_features(None) == frozenset(FEATURES)
    assert parse_features("atomics, fences") == {"atomics", "fences"}
    assert parse_features("all,-async") == frozenset(FEATURES) - {"async"}
    assert parse_features("-async") == frozenset(FEATURES) - {"async"}
    with pytest.raises(FeatureError, match="unknown feature 'atomix'"):
        parse_features("atomix")
    with pytest.raises(FeatureError, match="no memory access"):
        parse_features("fences,barriers")

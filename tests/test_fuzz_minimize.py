"""The minimizer (fuzz/minimize.py) with predicates standing in for "a forbidden outcome shows"."""

from __future__ import annotations

from hypothesis import given, settings

import litmus
from litmus.ir import prop_atoms
from fakes import StaleReadBackend, sc_check
from fuzz.minimize import (PREPARE_FIRST, PREPARE_MAX, drop_thread, forbidding_condition, minimize, renumber_registers,
                           variants)
from fuzz.strategies import programs

MP = litmus.parse("""AMDGPU MP
{ x = 0; y = 0; z = 0; }
 P0@wg 0                   | P1@wg 1                      | P2          ;
 st.vol x, 5               | ld.atom.acq.sys r0, y        | st z, 1     ;
 fence.sc.sys              | fence.acq_rel.agent          | ld r0, z    ;
 st.atom.sc.sys.noav y, 7  | ld r1, x                     |             ;
exists (P1:r0 == 7 /\\ P1:r1 == 0)
""")


def test_reduces_to_what_the_predicate_needs():
    # "fails" while some thread still has a fence with a release part and a write to x after it
    def fails(t):
        for th in t.threads:
            code = th.code
            for i, ins in enumerate(code):
                if ins.base == "fence" and ins.order in ("rel", "acq_rel", "sc"):
                    if any(j.writes and j.loc == "y" for j in code[i + 1:]):
                        return True
        return False

    small, stats = minimize(MP, fails)
    assert fails(small)
    assert len(small.threads) == 1 and small.size == 2
    fence, st = small.threads[0].code
    assert fence.order == "rel" and fence.scope == "wave"          # weakest, narrowest
    assert st.base == "st" and st.access == "plain" and not st.noav and st.args == (1,)
    assert [loc.name for loc in small.locations] == ["y"]
    assert stats.accepted == len(stats.steps) >= 6 and stats.size_before == 8


def test_never_returns_a_passing_test_and_respects_the_budget():
    calls = []

    def fails(t):
        calls.append(t)
        return t.size >= 6

    small, stats = minimize(MP, fails, max_tries=5)
    assert stats.tried == len(calls) <= 5
    assert fails(small)


def test_a_predicate_that_raises_is_not_a_reduction():
    def fails(t):
        if t != MP:
            raise RuntimeError("backend refused")
        return True

    small, _ = minimize(MP, fails)
    assert small == MP


def test_drop_thread_renumbers_the_condition():
    t = drop_thread(MP, 0)
    assert len(t.threads) == 2
    keys = {a.key for a in prop_atoms(t.condition.prop)}
    assert keys == {"P0:r0", "P0:r1"}
    litmus.parse(litmus.format_test(t))     # still a well-formed test


@settings(max_examples=25, deadline=None)
@given(programs(features="atomics,plain,fences,rmw,cas,av,vol,noav"))
def test_every_variant_is_a_well_formed_test(test):
    for why, v in variants(test):
        text = litmus.format_test(v)
        assert litmus.parse(text) == v, why
        assert v.size <= test.size


def test_forbidding_condition_is_minimal_and_forbidden():
    states = [{"P0:r0": 0, "P0:r1": 0, "x": 1}, {"P0:r0": 1, "P0:r1": 1, "x": 1},
              {"P0:r0": 0, "P0:r1": 1, "x": "undef"}]
    cond = forbidding_condition(MP, {"P0:r0": 1, "P0:r1": 0, "x": 1}, states)
    atoms = list(prop_atoms(cond.prop))
    assert {(a.key, a.value) for a in atoms} == {("P0:r0", 1), ("P0:r1", 0)}
    assert litmus.verdict(cond, states) == "No"


def test_renumber_registers_follows_the_condition():
    t = litmus.parse("""AMDGPU R
{ x = 0; }
 P0          | P1        ;
 ld r3, x    | st x, 1   ;
 ld r7, x    |           ;
exists (P0:r3 == 1 /\\ P0:r7 == 0)
""")
    r = renumber_registers(t)
    assert [i.reg for i in r.threads[0].code] == ["r0", "r1"]
    assert litmus.format_condition(r.condition) == "exists (P0:r0 == 1 /\\ P0:r1 == 0)"


def test_minimizing_a_stale_read_finding_keeps_it_forbidden():
    backend = StaleReadBackend(0.5)
    res0 = sc_check(MP)

    def fails(t):
        r = sc_check(t)
        h = backend.run(t, 200, 1)
        return any(not r.allows(o) for o, _ in h.outcomes())

    assert fails(MP) and res0.verdict == "No"
    small, _ = minimize(MP, fails)
    assert fails(small) and small.size <= 3 and len(small.threads) == 2


def test_fences_fold_into_the_adjacent_atomic():
    t = litmus.parse("""AMDGPU MPf
{ x = 0; y = 0; }
 P0                | P1                    ;
 st x, 1           | ld.atom r0, y         ;
 fence.rel.agent   | fence.acq.agent       ;
 st.atom y, 1      | ld r1, x              ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
""")
    folded = {why: v for why, v in variants(t) if "into the" in why}
    assert len(folded) == 2
    texts = [litmus.format_test(v) for v in folded.values()]
    assert any("st.atom.rel.agent y, 1" in x and "fence.rel" not in x for x in texts)
    assert any("ld.atom.acq.agent r0, y" in x and "fence.acq" not in x for x in texts)
    assert all(v.size == t.size - 1 for v in folded.values())


def test_split_workgroup_barrier_joins_into_barrier():
    t = litmus.parse("""AMDGPU B
{ lds a = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 st a, 1         | bar.signal -1   ;
 fence.rel.wg    | bar.wait -1     ;
 bar.signal -1   | fence.acq.wg    ;
 bar.wait -1     | ld r0, a        ;
exists (P1:r0 == 0)
""")
    joined = [v for why, v in variants(t) if "-> barrier" in why]
    assert len(joined) == 2
    for v in joined:
        assert v.size == t.size - 1
        assert sum(1 for _, _, i in v.instructions() if i.base == "barrier") == 1


def test_tidy_placements_keeps_scope_instances():
    from fuzz.minimize import tidy_placements
    t = litmus.parse("""AMDGPU P
{ x = 0; }
 P0@wave 0, wg 1 | P1@wave 0, wg 0 | P2@wave 1, wg 0 ;
 st x, 1         | ld r0, x        | ld r0, x        ;
exists (P1:r0 == 0)
""")
    u = tidy_placements(t)
    assert u.threads[0].placement == litmus.Placement()
    assert u.threads[1].placement == t.threads[1].placement
    for a in range(3):
        for b in range(3):
            for s in ("wave", "wg", "cluster", "agent"):
                assert u.same(a, b, s) == t.same(a, b, s)


def test_prepare_sees_each_variant_before_it_is_tried_and_changes_nothing():
    def fails(t):
        return any(ins.base == "fence" for th in t.threads for ins in th.code) and \
            any(ins.writes and ins.loc == "y" for th in t.threads for ins in th.code)

    tried_plain = []
    small, stats = minimize(MP, lambda t: tried_plain.append(t) or fails(t))
    tried, prepared, windows = [], set(), []

    def prepare(batch):
        windows.append(len(batch))
        prepared.update(id(t) for t in batch)

    def spy(t):
        assert id(t) in prepared           # handed to prepare before its turn
        tried.append(t)
        return fails(t)
    small2, stats2 = minimize(MP, spy, prepare=prepare)
    assert small2 == small and stats2.steps == stats.steps and stats2.tried == stats.tried
    assert tried == tried_plain                                 # same variants, same order
    assert windows[0] == PREPARE_FIRST and max(windows) <= PREPARE_MAX
    assert len(windows) < len(tried)                            # fewer calls than variants
    # a pass that accepts nothing: its windows double, each variant prepared once
    windows.clear()
    prepared.clear()
    n = len({(v.locations, v.threads, v.condition) for _, v in variants(MP)})
    small3, stats3 = minimize(MP, lambda t: id(t) in prepared and False, prepare=prepare)
    assert small3 is MP and stats3.tried == n == 27
    assert PREPARE_FIRST < 27 and windows[0] == PREPARE_FIRST and \
        windows[1] == min(2 * PREPARE_FIRST, 27 - PREPARE_FIRST) and sum(windows) == 27

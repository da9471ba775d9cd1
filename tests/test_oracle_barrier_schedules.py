"""Barrier schedule enumeration (oracle/barriers.py): hand-derived cases and metamorphic properties.

Derivations follow seeds/amdgpu-execution-synchronization.txt with DESIGN.md "Barriers": the
workgroup barrier expects one arrive per wave of the workgroup and is dropped at each wave's end;
a phase completes when arrives == expected; a wait waits for the phase its wave last arrived in
and every arrive/drop of that phase barrier-participates-in it. Relations are sets of
(wave, op index, wave, wait index), op indices counting barrier operations (``barrier`` is an
arrive then a wait); a wave's end-of-thread drop is not reported.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

import litmus
from litmus.ir import Condition, Const, Instr, Location, Test, Thread
from litmus.scopes import Placement
from oracle import barriers
from oracle.barriers import enumerate_schedules


def program(*columns: list[str], placements=None) -> Test:
    """A test from per-thread instruction lists; thread t is wave t of workgroup 0 by default."""
    n = len(columns)
    heads = " | ".join(placements[t] if placements else f"P{t}@wave {t}, wg 0" for t in range(n))
    depth = max(len(c) for c in columns)
    rows = "\n".join(" " + " | ".join(c[r] if r < len(c) else "" for c in columns) + " ;"
                     for r in range(depth))
    return litmus.parse(f"AMDGPU t\n{{ x = 0; }}\n {heads} ;\n{rows}\nexists (x == 0)\n")


def full(arrives, waits):
    """Every arrive in ``arrives`` participates in every wait in ``waits`` (node = (wave, op))."""
    return {a + w for a in arrives for w in waits}


# -- hand-derived cases ------------------------------------------------------------------------

def test_two_wave_workgroup_barrier_one_phase():
    s = enumerate_schedules(program(["barrier"], ["barrier"]))
    assert s.ub == []
    assert s.waves == [[0], [1]]
    assert s.participates == [frozenset(full([(0, 0), (1, 0)], [(0, 1), (1, 1)]))]


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_n_waves_two_barriers_give_one_relation(n):
    # every wave arrives twice; a phase needs all n arrives, so phase r holds exactly the r-th
    # arrive of every wave and every wave's r-th wait waits for it: one relation, no UB
    # (n >= 5 exceeded the search bound of the previous implementation)
    s = enumerate_schedules(program(*[["barrier", "barrier"]] * n))
    assert s.ub == []
    waves = range(n)
    want = full([(w, 0) for w in waves], [(w, 1) for w in waves]) | \
        full([(w, 2) for w in waves], [(w, 3) for w in waves])
    assert s.participates == [frozenset(want)]


def test_split_barrier_same_as_barrier():
    split = enumerate_schedules(program(*[["bar.signal -1", "bar.wait -1"]] * 3))
    joint = enumerate_schedules(program(*[["barrier"]] * 3))
    assert split.participates == joint.participates and split.ub == joint.ub == []


def test_early_exit_drop_completes_the_phase():
    # P0 has no barrier op: its end drops the workgroup barrier (expected 2 -> 1), so P1's
    # arrive alone completes the phase whichever comes first; the drop is not reported
    s = enumerate_schedules(program(["st x, 1"], ["barrier"]))
    assert s.ub == []
    assert s.participates == [frozenset({(1, 0, 1, 1)})]


def test_signal_then_exit_breaks_the_arrive_drop_rule():
    # P0 arrives and ends without waiting. If P1 arrives before P0's end both arrives complete
    # the phase and P0's arrive participates in P1's wait, which does not execute before P0's
    # drop: UB. If P0 ends first, its arrive and drop complete a phase nobody waits for and
    # P1's arrive completes the next one alone.
    s = enumerate_schedules(program(["bar.signal -1"], ["barrier"]))
    assert set(s.participates) == {frozenset({(1, 0, 1, 1)}),
                                   frozenset({(0, 0, 1, 1), (1, 0, 1, 1)})}
    assert s.ub == ["P0 arrives at barrier -1 and then drops it, but no wait its arrive "
                    "completes barrier-executes-before the drop"]


def test_wait_before_own_signal_deadlocks():
    s = enumerate_schedules(program(["barrier"], ["bar.wait -1", "bar.signal -1"]))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0, P1 blocked)"]


def test_wave_that_never_arrives_blocks_everyone():
    # P2 waits without arriving and never ends, so the workgroup barrier never completes
    s = enumerate_schedules(program(["barrier"], ["barrier"], ["bar.wait -1"]))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0, P1, P2 blocked)"]


def named_pair(count: int) -> Test:
    # init and joins before the workgroup barrier, then both waves signal and wait on barrier 1
    return program(["bar.init 1, %d" % count, "bar.join 1", "barrier", "bar.signal 1",
                    "bar.wait 1"],
                   ["bar.join 1", "barrier", "bar.signal 1", "bar.wait 1"])


def test_named_barrier_count_one_each_arrive_alone():
    s = enumerate_schedules(named_pair(1))
    wg = full([(0, 2), (1, 1)], [(0, 3), (1, 2)])
    assert s.ub == []
    assert s.participates == [frozenset(wg | {(0, 4, 0, 5), (1, 3, 1, 4)})]


def test_named_barrier_count_two_joint_phase():
    s = enumerate_schedules(named_pair(2))
    wg = full([(0, 2), (1, 1)], [(0, 3), (1, 2)])
    assert s.ub == []
    assert s.participates == [frozenset(wg | full([(0, 4), (1, 3)], [(0, 5), (1, 4)]))]


def test_named_barrier_count_three_deadlocks():
    # named barriers are not dropped at thread end: two arrives never reach 3
    s = enumerate_schedules(named_pair(3))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0, P1 blocked)"]


def test_named_leave_lowers_the_count():
    # P0 joins and leaves (expected 2 -> 1) before the workgroup barrier: P1's arrive completes
    # the phase alone; the leave sits in the same phase, so it participates in P1's wait too
    s = enumerate_schedules(program(["bar.init 1, 2", "bar.join 1", "bar.leave", "barrier"],
                                    ["barrier", "bar.join 1", "bar.signal 1", "bar.wait 1"]))
    assert s.ub == []
    wg = full([(0, 3), (1, 0)], [(0, 4), (1, 1)])
    assert s.participates == [frozenset(wg | {(0, 2, 1, 4), (1, 3, 1, 4)})]


def test_wait_and_leave_without_join():
    s = enumerate_schedules(program(["bar.wait 1"]))
    assert s.ub == ["P0: bar.wait without a joined named barrier"]
    s = enumerate_schedules(program(["bar.leave"]))
    assert s.ub == ["P0: bar.leave without a joined named barrier"]


def test_wait_acts_on_the_last_joined_barrier():
    # the operand of bar.wait is ignored: the wait is on barrier 2, which nobody arrives at
    s = enumerate_schedules(program(["bar.init 1, 1", "bar.init 2, 1", "bar.join 1",
                                     "bar.join 2", "bar.signal 1", "bar.wait 1"]))
    assert s.ub == ["deadlock: a barrier wait can never complete (P0 blocked)"]
    s = enumerate_schedules(program(["bar.init 1, 1", "bar.init 2, 1", "bar.join 2",
                                     "bar.join 1", "bar.signal 1", "bar.wait 2"]))
    assert s.ub == [] and s.participates == [frozenset({(0, 4, 0, 5)})]


def test_non_positive_init_count():
    s = enumerate_schedules(program(["bar.init 3, 0"]))
    assert s.ub == ["P0: bar.init 3, 0: the expected count must be positive"]


def test_init_race_first_modification_not_init():
    # P1 may arrive before P0's init (UB); the init then abandons that phase and P1's wait
    # passes with no participant. After the init, P1's arrive completes its phase alone.
    s = enumerate_schedules(program(["bar.init 1, 1"],
                                    ["bar.join 1", "bar.signal 1", "bar.wait 1"]))
    assert s.ub == ["barrier 1: first modification is not an init"]
    assert set(s.participates) == {frozenset(), frozenset({(1, 1, 1, 2)})}


def test_negative_expected_count_after_leave():
    s = enumerate_schedules(program(["bar.init 1, 1", "bar.join 1", "bar.leave", "bar.join 1",
                                     "bar.leave"]))
    assert s.ub == ["bar.leave makes the expected count of barrier 1 negative"]


CLUSTER = ["P0@wave 0, wg 0", "P1@wave 1, wg 0", "P2@wave 0, wg 1"]


def test_cluster_barrier_two_waves_of_one_workgroup():
    # two workgroups: expected 2; P0 and P1 (same workgroup) can land in one phase
    s = enumerate_schedules(program(["bar.signal -3"], ["bar.signal -3"], ["bar.signal -3"],
                                    placements=CLUSTER))
    assert s.ub == ["cluster barrier: two waves of one workgroup arrived in one phase"]


def test_cluster_barrier_single_workgroup_completes_each_arrive():
    # one workgroup in the cluster: expected 1, every arrive completes a phase of its own
    s = enumerate_schedules(program(["bar.signal -3"], ["bar.signal -3"],
                                    placements=CLUSTER[:2]))
    assert s.ub == []
    assert s.participates == [frozenset()]


def test_cluster_barrier_one_wave_per_workgroup():
    s = enumerate_schedules(program(["bar.signal -3", "bar.wait -3"],
                                    ["bar.signal -3", "bar.wait -3"],
                                    placements=["P0@wave 0, wg 0", "P1@wave 0, wg 1"]))
    assert s.ub == []
    assert s.participates == [frozenset(full([(0, 0), (1, 0)], [(0, 1), (1, 1)]))]


def test_barrier_objects_are_per_cluster_and_per_workgroup():
    # P0 and P1 sit in different clusters (wg 0 of each): two cluster barriers expecting one
    # workgroup each, and two workgroup barriers expecting one wave each, so every wait is
    # completed by its own wave's arrive alone
    col = ["bar.signal -3", "bar.wait -3", "barrier"]
    s = enumerate_schedules(program(col, col, placements=["P0@wave 0, wg 0, cluster 0",
                                                          "P1@wave 0, wg 0, cluster 1"]))
    assert s.ub == []
    assert s.participates == [frozenset({(0, 0, 0, 1), (1, 0, 1, 1), (0, 2, 0, 3),
                                         (1, 2, 1, 3)})]


def test_double_arrive_symmetric_schedule_count():
    # two waves, each arrives twice then waits (expected 2). Arrive orders give first phases
    # {a0,a0'}, {a1,a1'} or {a0,a1}; a wave waits for the phase of its last arrive; a wave that
    # ends early lets the other wave's first arrive complete a phase with its drop. Four
    # relations: both waits on {a0',a1'}; each wave on its own pair; and, per early-ending
    # wave, the other wave's wait on its second arrive alone.
    col = ["bar.signal -1", "bar.signal -1", "bar.wait -1"]
    s = enumerate_schedules(program(col, col))
    assert s.ub == []
    own0, own1 = full([(0, 0), (0, 1)], [(0, 2)]), full([(1, 0), (1, 1)], [(1, 2)])
    assert set(s.participates) == {
        frozenset(full([(0, 1), (1, 1)], [(0, 2), (1, 2)])),
        frozenset(own0 | own1),
        frozenset(own0 | {(1, 1, 1, 2)}),
        frozenset(own1 | {(0, 1, 0, 2)}),
    }


def test_lanes_that_disagree():
    s = enumerate_schedules(program(["barrier"], ["st x, 1"],
                                    placements=["P0@wave 0, wg 0", "P1@wave 0, wg 0"]))
    assert s.waves == [[0, 1]]
    assert "barrier operations differ between lanes P0 and another lane of the same wave" in s.ub


def test_search_bound_reported(monkeypatch):
    monkeypatch.setattr(barriers, "MAX_STATES", 3)
    s = enumerate_schedules(program(*[["barrier", "barrier"]] * 4))
    assert "barrier schedules too many to enumerate" in s.ub


def test_corpus_barrier_programs_agree_with_their_names_and_verdicts():
    # a corpus program named *.deadlock* reports a deadlock; a program whose expected verdict
    # is not Undef reaches no barrier UB at all and has a complete schedule
    from conftest import CORPORA
    root = CORPORA / "barrier"
    lines = (root / "expected.csv").read_text().split()
    expected = dict(line.split(",") for line in lines)
    assert len(expected) == 32
    for rel, verdict in expected.items():
        s = enumerate_schedules(litmus.parse_file(str(root / rel)))
        if ".deadlock" in rel:
            assert any(u.startswith("deadlock") for u in s.ub), rel
        if verdict != "Undef":
            assert s.ub == [] and s.participates, rel


# -- properties ------------------------------------------------------------------------------

BAR_OPS = ["barrier", "bar.signal -1", "bar.wait -1", "bar.signal 1", "bar.wait 1",
           "bar.init 1, 1", "bar.init 1, 2", "bar.join 1", "bar.leave", "st x, 1"]


@st.composite
def barrier_programs(draw, max_waves=4, max_ops=4):
    """Programs with one thread per wave in workgroup 0 (so thread id = wave index)."""
    n = draw(st.integers(1, max_waves))
    return [draw(st.lists(st.sampled_from(BAR_OPS), max_size=max_ops)) for _ in range(n)]


def rename_ub(reasons, mapping):
    """UB reasons with thread names P<i> renamed by ``mapping`` (blocked lists re-sorted)."""
    out = []
    for r in reasons:
        r = re.sub(r"P(\d+)", lambda m: f"P{mapping[int(m.group(1))]}", r)
        m = re.match(r"(deadlock: .*\()(.*)( blocked\))$", r)
        if m:
            names = sorted(m.group(2).split(", "), key=lambda p: int(p[1:]))
            r = m.group(1) + ", ".join(names) + m.group(3)
        out.append(r)
    return sorted(out)


@settings(max_examples=60, deadline=None)
@given(barrier_programs(), st.randoms(use_true_random=False))
def test_invariant_under_thread_renaming(cols, rnd):
    perm = list(range(len(cols)))
    rnd.shuffle(perm)                        # new thread i is old thread perm[i]
    old = enumerate_schedules(program(*[c or ["st x, 1"] for c in cols]))
    new = enumerate_schedules(program(*[cols[p] or ["st x, 1"] for p in perm]))
    inv = {p: i for i, p in enumerate(perm)}
    mapped = {frozenset((inv[w], i, inv[w2], j) for (w, i, w2, j) in rel)
              for rel in old.participates}
    assert set(new.participates) == mapped
    assert new.ub == rename_ub(old.ub, inv)


@settings(max_examples=40, deadline=None)
@given(barrier_programs(max_waves=3))
def test_an_identical_lane_changes_nothing(cols):
    # a lane executes its wave's barrier operations together with it: adding one is invisible
    cols = [c or ["st x, 1"] for c in cols]
    heads = [f"P{t}@wave {t}, wg 0" for t in range(len(cols))]
    base = enumerate_schedules(program(*cols, placements=heads))
    lane = enumerate_schedules(program(*cols, cols[0], placements=heads + [
        f"P{len(cols)}@wave 0, wg 0"]))
    assert lane.participates == base.participates
    assert lane.ub == base.ub
    assert lane.waves[0] == [0, len(cols)]


@settings(max_examples=40, deadline=None)
@given(barrier_programs())
def test_relations_are_well_formed(cols):
    # participants are arrives or leaves, waits are waits; a wait never depends on a po-later
    # operation of its own wave; a complete schedule yields a relation unless UB cuts it short
    s = enumerate_schedules(program(*[c or ["st x, 1"] for c in cols]))
    for rel in s.participates:
        for (w, i, w2, j) in rel:
            assert s.ops[w][i][0] in ("arrive", "drop")
            assert s.ops[w2][j][0] == "wait"
            assert not (w == w2 and i > j)
    if not s.ub:
        assert s.participates, "a UB-free program has at least one complete schedule"

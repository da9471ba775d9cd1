"""Barrier schedule enumeration (oracle/models/amdgpu/barriers.py): hand-derived cases and metamorphic properties.

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
from oracle.models.amdgpu import barriers
from oracle.models.amdgpu.barriers import enumerate_schedules


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
    # P1's wait has no arrive of its own pending: it waits on the open phase (it executes at
    # launch), which holds at most P0's arrive (1 of 2); P0 waits too, nobody ends: deadlock
    s = enumerate_schedules(program(["barrier"], ["bar.wait -1", "bar.signal -1"]))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0, P1 blocked)"]


def test_wave_that_never_arrives_blocks_everyone():
    # P2 waits (on the open phase) without arriving and never ends, so the workgroup barrier
    # (expected 3) never gets its third arrive
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
    # passes with no participant, so no operation its join reaches participates in it (the join
    # rule, UB too). After the init, P1's arrive completes its phase alone.
    s = enumerate_schedules(program(["bar.init 1, 1"],
                                    ["bar.join 1", "bar.signal 1", "bar.wait 1"]))
    assert s.ub == ["P1: the wait on barrier 1 has no join that barrier-executes-before an "
                    "operation participating in it",
                    "barrier 1: first modification is not an init"]
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


def test_cluster_barrier_dropped_when_the_other_workgroup_ends():
    # workgroup 1 never uses -3 and ends: a thread that ends drops -3 (it joined it at launch),
    # so the expected count falls from 2 to 1 and P0's arrive completes the barrier alone (the
    # drop participates too, but end-of-wave drops are not reported). Before issue 13: deadlock.
    s = enumerate_schedules(program(["bar.signal -3", "bar.wait -3"], ["st x, 1"],
                                    placements=["P0@wave 0, wg 0", "P1@wave 0, wg 1"]))
    assert s.ub == []
    assert s.participates == [frozenset({(0, 0, 0, 1)})]


def test_cluster_barrier_drop_counted_once_per_workgroup():
    # three waves of workgroup 1 end: one drop (2 -> 1), not three (2 -> -1)
    s = enumerate_schedules(program(["bar.signal -3", "bar.wait -3"], ["st x, 1"], ["st x, 1"],
                                    ["st x, 1"],
                                    placements=["P0@wave 0, wg 0", "P1@wave 0, wg 1",
                                                "P2@wave 1, wg 1", "P3@wave 2, wg 1"]))
    assert s.ub == []
    assert s.participates == [frozenset({(0, 0, 0, 1)})]


def test_cluster_arrive_then_end_breaks_the_arrive_drop_rule():
    # P1 arrives for workgroup 1 and ends at once; P0 arrives for workgroup 0: one phase, in
    # which P1's arrive participates in P0's wait. If P1's end drops -3 (it is its workgroup's
    # last wave), the wait does not barrier-execute-before the drop: UB (the arrive/drop rule)
    s = enumerate_schedules(program(["bar.signal -3", "bar.wait -3"], ["bar.signal -3"],
                                    placements=["P0@wave 0, wg 0", "P1@wave 0, wg 1"]))
    assert s.ub == ["P1 arrives at barrier -3 and then drops it, but no wait its arrive "
                    "completes barrier-executes-before the drop"]
    # a second wave P2 of workgroup 1 (the workgroup barrier first, so that its cluster wait
    # takes the phase P1 arrives in): P1 or P2 may end last, and if P1 does, its end drops -3
    # with no wait of its arrive barrier-executing-before it: still UB
    cols = [["bar.signal -3", "bar.wait -3"], ["barrier", "bar.signal -3"],
            ["barrier", "bar.wait -3"]]
    heads = ["P0@wave 0, wg 0", "P1@wave 0, wg 1", "P2@wave 1, wg 1"]
    s = enumerate_schedules(program(*cols, placements=heads))
    assert s.ub == ["P1 arrives at barrier -3 and then drops it, but no wait its arrive "
                    "completes barrier-executes-before the drop"]
    # a second workgroup barrier after the cluster operations: P2's cluster wait
    # barrier-executes-before P1's end (P2's wait -po-> P2's arrive -participates-> P1's wait
    # -po-> P1's end), whichever of them drops -3: no UB
    cols[1].append("barrier")
    cols[2].append("barrier")
    s = enumerate_schedules(program(*cols, placements=heads))
    assert s.ub == []
    wg1 = full([(1, 0), (2, 0)], [(1, 1), (2, 1)]) | full([(1, 3), (2, 3)], [(1, 4), (2, 4)])
    assert s.participates == [frozenset(wg1 | full([(0, 0), (1, 2)], [(0, 1), (2, 2)]))]


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


# -- a wait with no arrive of its own wave pending waits on the open phase ---------------------
# DESIGN.md: "A wait waits on the phase its wave last arrived in (if not yet waited for), else on
# the open phase". The open phase is the one open when the wait executes, i.e. when its wave's
# preceding barrier operation is done (at launch if there is none): see oracle/models/amdgpu/barriers.py.

def named_waiter(arrivers: int) -> Test:
    # barrier 1 expects 2; init and joins are ordered before every arrive by the workgroup
    # barrier. P0 never arrives at barrier 1 and waits on it; P1.. each arrive once.
    cols = [["bar.init 1, 2", "bar.join 1", "barrier", "bar.wait 1"]]
    for k in range(1, 3):
        cols.append(["bar.join 1", "barrier"] + (["bar.signal 1"] if k <= arrivers else []))
    return program(*cols)


def test_named_wait_without_arrive_completed_by_the_others():
    # ops: P0 init 0, join 1, arrive -1 2, wait -1 3, wait 1 4; P1/P2 join 0, arrive -1 1,
    # wait -1 2, arrive 1 3. P0's wait 1 executes when the workgroup phase completes, before
    # P1's and P2's arrives at barrier 1 (each po-after its own workgroup wait): it waits on the
    # first phase of barrier 1, which P1's and P2's arrives complete (2 of 2). They participate
    # in it; named barriers are not dropped at thread end, so no arrive/drop UB.
    s = enumerate_schedules(named_waiter(2))
    assert s.ub == []
    wg = full([(0, 2), (1, 1), (2, 1)], [(0, 3), (1, 2), (2, 2)])
    assert s.participates == [frozenset(wg | {(1, 3, 0, 4), (2, 3, 0, 4)})]


def test_named_wait_without_arrive_too_few_arrivers_deadlocks():
    # only P1 arrives at barrier 1 (1 of 2), P0 waits on that phase forever
    s = enumerate_schedules(named_waiter(1))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0 blocked)"]


def test_wait_without_arrive_then_the_other_wave_signals_and_ends():
    # P0's wait executes at launch: open phase 1 of the workgroup barrier (expected 2). P1
    # arrives (1 of 2) and ends: its drop makes expected 1 = arrived, the phase completes and
    # P0's wait passes with P1's arrive participating. P1 dropped after arriving while a wait
    # depends on its arrive and that wait is not barrier-executes-before the drop: the seed's
    # arrive/drop rule. No schedule deadlocks (P0 is waiting before P1 can arrive). The join
    # rule is broken too: P0's join (at launch) reaches only P0's own wait and end by
    # barrier-executes-before, and P0 has no operation participating in its wait.
    s = enumerate_schedules(program(["bar.wait -1"], ["bar.signal -1"]))
    assert s.participates == [frozenset({(1, 0, 0, 0)})]
    assert s.ub == ["P0: the wait on barrier -1 has no join that barrier-executes-before an "
                    "operation participating in it",
                    "P1 arrives at barrier -1 and then drops it, but no wait its arrive "
                    "completes barrier-executes-before the drop"]


def test_wait_without_arrive_shares_the_phase_of_the_other_waves_barrier():
    # P0 waits at launch on phase 1; P1's barrier arrives (1 of 2) and waits for the phase of
    # its arrive: the same phase. It needs a second arrive, and P0 neither arrives nor ends.
    s = enumerate_schedules(program(["bar.wait -1"], ["barrier"]))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0, P1 blocked)"]
    # after a joint barrier, P0 waits again without arriving; P1 arrives twice (ops 2 and 3),
    # completing phase 2 (2 of 2). P0's second wait executed when phase 1 completed, so it
    # waits on phase 2 as P1's second wait does: both get P1's two arrives.
    s = enumerate_schedules(program(["barrier", "bar.wait -1"],
                                    ["barrier", "bar.signal -1", "barrier"]))
    assert s.ub == []
    phase1 = full([(0, 0), (1, 0)], [(0, 1), (1, 1)])
    assert s.participates == [frozenset(phase1 | full([(1, 2), (1, 3)], [(0, 2), (1, 4)]))]


def test_wait_takes_the_phase_open_when_it_executes_not_a_later_one():
    # barrier 1 expects 1: each of P1's arrives completes a phase alone. P0's wait executes
    # when the workgroup phase completes, before P1's first arrive at barrier 1, so it waits on
    # that arrive's phase; P1's second arrive completes a phase nobody waits for.
    s = enumerate_schedules(program(["bar.init 1, 1", "bar.join 1", "barrier", "bar.wait 1"],
                                    ["barrier", "bar.signal 1", "bar.signal 1"]))
    assert s.ub == []
    wg = full([(0, 2), (1, 0)], [(0, 3), (1, 1)])
    assert s.participates == [frozenset(wg | {(1, 2, 0, 4)})]


def test_arrive_before_the_wait_executes_participates():
    # barrier 1 expects 2. P1 arrives at it (op 2) between two workgroup phases; P0's wait
    # executes when the second workgroup phase completes, which needs P1's arrive at -1 (op 3),
    # so after P1's op 2: the open phase then holds P1's op 2 (1 of 2), and P1's op 5 completes
    # it. Both participate in P0's wait.
    s = enumerate_schedules(program(
        ["bar.init 1, 2", "bar.join 1", "barrier", "barrier", "bar.wait 1"],
        ["barrier", "bar.signal 1", "barrier", "bar.signal 1"]))
    assert s.ub == []
    wg = full([(0, 2), (1, 0)], [(0, 3), (1, 1)]) | full([(0, 4), (1, 3)], [(0, 5), (1, 4)])
    assert s.participates == [frozenset(wg | {(1, 2, 0, 6), (1, 5, 0, 6)})]


def test_init_after_the_wait_executes_opens_the_phase_it_waits_for():
    # P0 waits on barrier 1 at launch (uninitialized, no arrive yet). P1's init resets counts,
    # abandoning nothing (no arrive), and its arrive completes the phase (count 1): P0's wait
    # gets that arrive. The init is the first modification. But P0's join reaches only P0's
    # own wait and end by barrier-executes-before, not P1's arrive: the join rule makes it UB.
    s = enumerate_schedules(program(["bar.join 1", "bar.wait 1"],
                                    ["bar.init 1, 1", "bar.signal 1"]))
    assert s.ub == ["P0: the wait on barrier 1 has no join that barrier-executes-before an "
                    "operation participating in it"]
    assert s.participates == [frozenset({(1, 1, 0, 1)})]
    # once P0's join barrier-executes-before P1's arrive (a joint workgroup barrier in
    # between), the wait is defined
    s = enumerate_schedules(program(["bar.join 1", "barrier", "bar.wait 1"],
                                    ["bar.init 1, 1", "barrier", "bar.signal 1"]))
    assert s.ub == []
    wg = full([(0, 1), (1, 1)], [(0, 2), (1, 2)])
    assert s.participates == [frozenset(wg | {(1, 3, 0, 3)})]


def test_cluster_wait_without_arrive_hip_idiom():
    # the idiom of HIP's cluster barrier: every wave of a workgroup passes the workgroup
    # barrier, one of them arrives at the cluster barrier, all of them wait on it. P0 and P1
    # form workgroup 0, P2 is workgroup 1 (cluster barrier expects 2). P0's cluster wait
    # executes when the workgroup phase completes, before P1's cluster arrive (po-after P1's
    # workgroup wait): every cluster wait gets P1's and P2's arrives.
    s = enumerate_schedules(program(["barrier", "bar.wait -3"],
                                    ["barrier", "bar.signal -3", "bar.wait -3"],
                                    ["bar.signal -3", "bar.wait -3"],
                                    placements=CLUSTER))
    assert s.ub == []
    wg = full([(0, 0), (1, 0)], [(0, 1), (1, 1)])
    assert s.participates == [frozenset(wg | full([(1, 2), (2, 0)], [(0, 2), (1, 3), (2, 1)]))]


MP_NAMED = """AMDGPU MP+named+waitnoarrive
{{ x = 0; y = 0; }}
 P0@wave 0, wg 0 | P1@wave 1, wg 0 | P2@wave 2, wg 0 ;
 bar.init 1, 2   | barrier         | barrier         ;
 bar.join 1      | st x, 1         | st y, 1         ;
 barrier         | fence.rel.wg    | fence.rel.wg    ;
 bar.wait 1      | bar.signal 1    | {signal2}       ;
 {acquire}       |                 |                 ;
 ld r0, x        |                 |                 ;
 ld r1, y        |                 |                 ;
exists (P0:r0 == 0 \\/ P0:r1 == 0)
"""


def test_message_passing_through_a_wait_without_arrive():
    import oracle
    # P1's and P2's arrives participate in P0's wait, so each release fence (po-before its
    # arrive) synchronizes with P0's acquire fence (po-after the wait), wg scopes inclusive:
    # both plain stores happen before the loads, which read 1 (the only state; verdict No)
    res = oracle.check(litmus.parse(MP_NAMED.format(signal2="bar.signal 1",
                                                    acquire="fence.acq.wg")))
    assert res.ub == [] and res.verdict == "No"
    assert res.states == [{"P0:r0": 1, "P0:r1": 1, "x": 1, "y": 1}]
    # without the acquire fence nothing synchronizes: the plain loads race with the plain
    # stores and are undefined values (so r0 == 0 is allowed)
    res = oracle.check(litmus.parse(MP_NAMED.format(signal2="bar.signal 1", acquire="")))
    assert res.ub == [] and res.verdict == "Ok"
    assert res.states == [{"P0:r0": "undef", "P0:r1": "undef", "x": 1, "y": 1}]
    # P2 not arriving leaves the phase at 1 of 2: P0's wait never completes
    res = oracle.check(litmus.parse(MP_NAMED.format(signal2="", acquire="fence.acq.wg")))
    assert res.verdict == "Undef"
    assert res.ub == ["deadlock: a barrier wait can never complete (P0 blocked)"]


def test_corpus_barrier_programs_agree_with_their_names_and_verdicts():
    # a corpus program named *.deadlock* reports a deadlock; a program whose expected verdict
    # is not Undef reaches no barrier UB at all and has a complete schedule
    from conftest import CORPORA
    root = CORPORA / "barrier"
    lines = (root / "expected.csv").read_text().split()
    expected = dict(line.split(",") for line in lines)
    assert len(expected) == 42
    for rel, verdict in expected.items():
        s = enumerate_schedules(litmus.parse_file(str(root / rel)))
        if ".deadlock" in rel:
            assert any(u.startswith("deadlock") for u in s.ub), rel
        if verdict != "Undef":
            assert s.ub == [] and s.participates, rel


def test_corpus_files_with_a_wait_without_arrive():
    from conftest import CORPORA
    root = CORPORA / "barrier"
    # P0 waits on barrier 1 without arriving, P1 alone arrives (1 of 2): only the deadlock
    s = enumerate_schedules(litmus.parse_file(
        str(root / "named/BAR+named+waitnoarrive.deadlock.xwave3.litmus")))
    assert s.participates == []
    assert s.ub == ["deadlock: a barrier wait can never complete (P0 blocked)"]
    # the wait completes (no deadlock); the UB is the arrive/drop rule alone
    s = enumerate_schedules(litmus.parse_file(
        str(root / "ub/BAR-UB+waitnoarrive+signal+exit.xwave.litmus")))
    assert s.ub == ["P0: the wait on barrier -1 has no join that barrier-executes-before an "
                    "operation participating in it",
                    "P1 arrives at barrier -1 and then drops it, but no wait its arrive "
                    "completes barrier-executes-before the drop"]


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


# -- the reduced search against a plain interleaving search -----------------------------------

def plain_search(cols: list[list[str]], wgs: list[int] | None = None):
    """Every interleaving of the object steps of one-thread-per-wave programs (wave w in
    workgroup ``wgs[w]``, default 0; all workgroups in cluster 0) using BAR_OPS and the cluster
    barrier, without the module's reductions or state abstractions: explicit phase ids,
    explicit participant sets. After each step, what needs no scheduling happens at once: joins,
    a wait without a joined named barrier (UB, the wave stops), a wait whose phase completed
    (it passes), and a wait with no arrive of its wave pending binding the open phase (the
    reading DESIGN.md's "else on the open phase" is given). A wave's end drops its workgroup
    barrier, and the workgroup's last wave to end drops the cluster barrier (DESIGN.md). Returns
    (relations, ub)."""
    ops = []
    for c in cols:
        seq = []
        for txt in c:
            seq += {"barrier": [("arrive", -1), ("wait", -1)]}.get(txt, [])
            if txt.startswith("bar."):
                name, _, arg = txt.partition(" ")
                args = tuple(int(a) for a in arg.split(",")) if arg else (None,)
                kind = {"bar.signal": "arrive", "bar.wait": "wait", "bar.init": "init",
                        "bar.join": "join", "bar.leave": "drop"}[name]
                seq.append((kind, args if kind == "init" else args[0]))
        ops.append(seq)
    n = len(ops)
    wgs = wgs or [0] * n
    groups = sorted(set(wgs))
    ub, finals = set(), set()

    def obj_of(w, bid):                     # objects: (id, workgroup); the cluster's is (-3, 0)
        return (-3, 0) if bid == -3 else (bid, wgs[w])

    # state: pcs, joined, waitfor[(w, obj)] -> phase id, done waits {(w, i): parts}, per object
    # [inited, expected, arrived, phase id, parts, workgroups arrived], completed
    # {(obj, phase id): parts}, ended, the waves whose end dropped the cluster barrier
    objs0 = {(-3, 0): [1, len(groups), 0, 0, frozenset(), frozenset()]}
    for g in groups:
        objs0[(-1, g)] = [1, wgs.count(g), 0, 0, frozenset(), frozenset()]
        objs0[(1, g)] = [0, 0, 0, 0, frozenset(), frozenset()]
    start = ([0] * n, [0] * n, {}, {}, objs0, {}, [False] * n, set())

    def complete(objs, completed, o):
        st_ = objs[o]
        completed[(o, st_[3])] = st_[4]
        st_[2], st_[3], st_[4], st_[5] = 0, st_[3] + 1, frozenset(), frozenset()

    def settle(S):
        pcs, joined, waitfor, waits, objs, completed, ended, _ = S
        moved = True
        while moved:
            moved = False
            for w in range(n):
                while not ended[w] and pcs[w] < len(ops[w]):
                    kind, arg = ops[w][pcs[w]]
                    if kind == "join":
                        joined[w] = arg
                    elif kind in ("wait", "drop") and arg not in (-1, -3) and not joined[w]:
                        ub.add(f"P{w}: bar.{'wait' if kind == 'wait' else 'leave'} without "
                               f"a joined named barrier")
                        ended[w] = True             # the wave stops (no end drop either)
                        break
                    elif kind == "wait":
                        o = obj_of(w, arg if arg in (-1, -3) else joined[w])
                        if (w, o) not in waitfor:
                            waitfor[(w, o)] = objs[o][3]        # bind: the open phase
                        if (o, waitfor[(w, o)]) not in completed:
                            break
                        waits[(w, pcs[w])] = completed[(o, waitfor.pop((w, o)))]
                    else:
                        break
                    pcs[w] += 1
                    moved = True

    def copy(S):
        pcs, joined, waitfor, waits, objs, completed, ended, dropper = S
        return (list(pcs), list(joined), dict(waitfor), dict(waits),
                {o: list(v) for o, v in objs.items()}, dict(completed), list(ended),
                set(dropper))

    def key(S):
        pcs, joined, waitfor, waits, objs, completed, ended, dropper = S
        return (tuple(pcs), tuple(joined), tuple(sorted(waitfor.items())),
                tuple(sorted(waits.items())), tuple((o, tuple(v)) for o, v in sorted(objs.items())),
                tuple(sorted(completed.items())), tuple(ended), tuple(sorted(dropper)))

    def drop(objs, completed, o, node, reason):
        st_ = objs[o]
        st_[1] -= 1
        if st_[1] < 0:
            ub.add(reason)
        old = st_[4]
        st_[4] = old | {node}
        if st_[2] == st_[1] and (st_[2] > 0 or old):
            complete(objs, completed, o)

    def step(S, w):
        pcs, joined, waitfor, waits, objs, completed, ended, dropper = S
        if pcs[w] == len(ops[w]):                       # the wave ends: drops barrier -1
            node = (w, len(ops[w]))
            drop(objs, completed, (-1, wgs[w]), node, "workgroup barrier dropped below zero")
            ended[w] = True
            if all(ended[v] for v in range(n) if wgs[v] == wgs[w]):
                drop(objs, completed, (-3, 0), node, "cluster barrier dropped below zero")
                dropper.add(w)
            return
        kind, arg = ops[w][pcs[w]]
        node = (w, pcs[w])
        if kind == "init":
            bid, count = arg
            st_ = objs[obj_of(w, bid)]
            if st_[2]:                                  # abandon a phase with arrives
                completed[(obj_of(w, bid), st_[3])] = frozenset()
                st_[3] += 1
            st_[:3] = [1, count, 0]
            st_[4] = st_[5] = frozenset()
        else:
            bid = arg if kind == "arrive" else joined[w]
            o = obj_of(w, bid)
            st_ = objs[o]
            if not st_[0]:
                ub.add(f"barrier {bid}: first modification is not an init")
            if kind == "arrive":
                if bid == -3:
                    if wgs[w] in st_[5]:
                        ub.add("cluster barrier: two waves of one workgroup arrived in one "
                               "phase")
                    st_[5] = st_[5] | {wgs[w]}
                st_[2] += 1
                waitfor[(w, o)] = st_[3]
            else:
                st_[1] -= 1
                if st_[1] < 0:
                    ub.add(f"bar.leave makes the expected count of barrier {bid} negative")
                joined[w] = 0
            st_[4] = st_[4] | {node}
            if st_[0] and st_[2] == st_[1]:
                complete(objs, completed, o)
        pcs[w] += 1

    settle(start)
    seen, stack = {key(start)}, [start]
    while stack:
        S = stack.pop()
        movable = [w for w in range(n) if not S[6][w] and (
            S[0][w] == len(ops[w]) or ops[w][S[0][w]][0] in
            ("init", "arrive", "drop"))]
        if not movable:
            if not all(S[6]):
                stuck = ", ".join(f"P{w}" for w in range(n) if not S[6][w])
                ub.add(f"deadlock: a barrier wait can never complete ({stuck} blocked)")
            else:
                finals.add((frozenset(S[3].items()), frozenset(S[7])))
            continue
        for w in movable:
            T = copy(S)
            step(T, w)
            settle(T)
            if key(T) not in seen:
                seen.add(key(T))
                stack.append(T)
    relations = set()
    for waits, droppers in finals:
        rel = frozenset((a, i, b, j) for (b, j), parts in waits for (a, i) in parts
                        if i < len(ops[a]))
        relations.add(rel)
        # the arrive/drop rule: barrier-executes-before = (po incl. the end | participates)+
        edges: dict = {}
        for (b, j), parts in waits:
            for x in parts:
                edges.setdefault(x, set()).add((b, j))
        def after(x):
            seen_, todo = set(), [x]
            while todo:
                (a, i) = todo.pop()
                nxt = {(a, k) for k in range(i + 1, len(ops[a]) + 1)} | edges.get((a, i), set())
                for y in nxt - seen_:
                    seen_.add(y)
                    todo.append(y)
            return seen_
        for w in range(n):
            joined_, drops = 0, []
            for k, (kind, arg) in enumerate(ops[w]):
                if kind == "join":
                    joined_ = arg
                elif kind in ("wait", "drop") and not joined_ and arg not in (-1, -3):
                    break
                elif kind == "drop":
                    drops.append((joined_, k))
                    joined_ = 0
            else:
                drops.append((-1, len(ops[w])))
                if w in droppers:
                    drops.append((-3, len(ops[w])))
            for (o, d) in drops:
                for k in range(d):
                    if ops[w][k] != ("arrive", o):
                        continue
                    ws = [W for W, parts in waits if (w, k) in parts]
                    if ws and not any((w, d) in after(W) for W in ws):
                        ub.add(f"P{w} arrives at barrier {o} and then drops it, but no wait "
                               f"its arrive completes barrier-executes-before the drop")
        # the join rule: each wait's join J (the last join of a named barrier before it, or the
        # join at launch for -1 and -3) barrier-executes-before some participant of the wait
        for (w, j), parts in waits:
            kind, arg = ops[w][j]
            if arg in (-1, -3):
                reach = {(w, 0)} | after((w, 0))
                bid = arg
            else:
                ji = max(k for k in range(j) if ops[w][k][0] == "join")
                reach = after((w, ji))
                bid = ops[w][ji][1]
            if not reach & parts:
                ub.add(f"P{w}: the wait on barrier {bid} has no join that "
                       f"barrier-executes-before an operation participating in it")
    return relations, sorted(ub)


# waits without an arrive of their own on both objects, next to the arrives that race with them
BIND_OPS = ["bar.join 1", "bar.wait 1", "bar.signal 1", "bar.init 1, 1", "bar.init 1, 2",
            "barrier", "bar.wait -1", "bar.signal -1", "bar.leave"]


@settings(max_examples=150, deadline=None)
@given(st.one_of(barrier_programs(),
                 st.lists(st.lists(st.sampled_from(BIND_OPS), max_size=4), min_size=2,
                          max_size=4)))
def test_reduced_search_equals_the_plain_interleaving_search(cols):
    cols = [c or ["st x, 1"] for c in cols]
    s = enumerate_schedules(program(*cols))
    relations, ub = plain_search(cols)
    assert set(s.participates) == relations
    assert s.ub == ub


CLUSTER_OPS = ["barrier", "bar.signal -1", "bar.wait -1", "bar.signal -3", "bar.wait -3",
               "st x, 1"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.lists(st.sampled_from(CLUSTER_OPS),
                                                        max_size=4)),
                min_size=1, max_size=4))
def test_reduced_search_equals_the_plain_search_on_cluster_barriers(waves):
    # waves in up to three workgroups of one cluster, using the workgroup and cluster barriers:
    # the cluster barrier's drop when a workgroup's last wave ends, and the arrive/drop rule
    # for the wave that dropped it, against the plain search
    wgs = [g for g, _ in waves]
    cols = [c or ["st x, 1"] for _, c in waves]
    heads = [f"P{t}@wave {t}, wg {g}" for t, g in enumerate(wgs)]
    s = enumerate_schedules(program(*cols, placements=heads))
    relations, ub = plain_search(cols, wgs)
    assert set(s.participates) == relations
    assert s.ub == ub

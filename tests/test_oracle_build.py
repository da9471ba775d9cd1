"""The AMDGPU event builder and the packing of pre-executions.

- One small program's events, sets and static relations, worked out by hand from the builder's
  documented vocabulary (oracle/models/amdgpu/builder.py) and the seed's scope rules.
- The packed form (oracle.events.Table, emitted directly by the builder) and the readable form
  (events, sets, rels) describe the same pre-execution: packing either gives the same arrays.
- The compiled packing (oracle/pack.py) gives every read the candidate writes, and every location
  the co orders, that the readable derivation of the reference evaluator gives.
"""

from __future__ import annotations


import numpy as np
from hypothesis import given

import litmus
from litmus_strategies import litmus_tests
from oracle.models.amdgpu import UNIT
from oracle.models.amdgpu.builder import build
from oracle.events import PreExecution
from oracle.lang import load_model
from oracle.pack import pack
from reference import co_groups, rf_candidates

PROGRAM = """AMDGPU builder
{ x = 0; y = 0; lds a = 0; }
 P0@wg 0            | P1@wg 1                   | P2@wg 1                ;
 st x, 1            | rmw.add.acq.agent r0, y, 1 | st a, 2               ;
 fence.rel.agent    | ld r1, x                  | ld.atom.wave r0, y     ;
 st.atom.agent y, 1 |                           |                        ;
exists (P1:r0 == 1)
"""
# events, by hand: initial writes per location copy (x, y, and a's copy in P2's workgroup), then
# P0 3: W x=1, 4: F.rel.agent, 5: W.atom y=1; P1 6: R of the rmw, 7: W of the rmw, 8: R x;
# P2 9: W a=2 (LDS), 10: R.atom.wave y; final reads 11: x, 12: y.


def pairs(rows) -> set[tuple[int, int]]:
    return {(i, j) for i, row in enumerate(rows) for j in range(64) if int(row) >> j & 1}


def test_hand_derived_events_sets_and_relations():
    (pe,) = build(litmus.parse(PROGRAM))
    assert pe.n == 13
    assert pe.loc_names == ["x", "y", "a@wg2"]
    assert [e.thread for e in pe.events] == [-1, -1, -1, 0, 0, 0, 1, 1, 1, 2, 2, -1, -1]
    assert [e.label for e in pe.events][:6] == ["W x=0 (init)", "W y=0 (init)", "W a=0 (init)",
                                                "W x=1", "F.rel.agent", "W.atom.agent y=1"]
    s = pe.sets
    assert s["IW"] == {0, 1, 2} and s["FR"] == {11, 12}
    assert s["R"] == {6, 8, 10, 11, 12} and s["W"] == {0, 1, 2, 3, 5, 7, 9}
    assert s["A"] == {0, 1, 2, 5, 6, 7, 10, 11, 12}
    assert s["CO"] == {0, 1, 2, 5, 7}                   # atomic writes and initial writes
    assert s["ACQ"] == s["MV"] == {6} and s["REL"] == s["MA"] == {4}
    assert s["SA"] == {0, 1, 2, 5, 7, 9}                # atomics, initial writes, the LDS write
    assert s["LV"] == {6, 10, 11, 12}                   # the plain R x is not load-visible
    assert s["LDS"] == {2, 9}
    # scope levels: plain global accesses are sys, the plain LDS write wg, the wave atomic wave
    assert s["lvl_sys"] == {0, 1, 2, 3, 8, 11, 12}
    assert s["lvl_agent"] == s["lvl_sys"] | {4, 5, 6, 7}
    assert s["lvl_wg"] == s["lvl_agent"] | {9}
    assert s["lvl_wave"] == s["lvl_wg"] | {10}
    r = pe.rels
    assert pairs(r["po"]) == {(3, 4), (3, 5), (4, 5), (6, 7), (6, 8), (7, 8), (9, 10)}
    assert pairs(r["rmw"]) == {(6, 7)}
    # nrf: the rmw's read never reads its own write; final reads never see the initial write
    # of a location something writes
    assert pairs(r["nrf"]) == {(7, 6), (0, 11), (1, 12)}
    # R y of the rmw may see W y=0 (init) and the agent-scope atomic W y=1 only: all atomic and
    # pairwise inclusive, so rule 2 defines it; so is the final y (writes 5 and 7, agent scope)
    assert s["CohR"] == {6, 12}
    assert s["UndefOK"] == {8, 10, 11}
    incl = pairs(r["incl"])
    assert (5, 6) in incl and (6, 5) in incl and (4, 6) in incl
    # the wave-scope read in P2's own wave is inclusive with nothing of another thread
    assert {(10, j) for j in (3, 4, 5, 6, 7, 8)}.isdisjoint(incl)
    assert (10, 9) in incl and (10, 1) in incl and (10, 12) in incl
    assert pairs(r["cohord"]) >= {(3, 4), (3, 11), (0, 3), (0, 12), (9, 12)}
    assert not pairs(r["aso"]) and not pairs(r["bxb"])
    assert pe.observables == [("P1:r0", ("event", 6)), ("P1:r1", ("event", 8)),
                              ("P2:r0", ("event", 10)), ("x", ("event", 11)),
                              ("y", ("event", 12))]


def readable_copy(pe: PreExecution) -> PreExecution:
    """The same pre-execution given only in readable form (no packed table)."""
    return PreExecution(list(pe.events), {k: set(v) for k, v in pe.sets.items()},
                        {k: [int(x) for x in v] for k, v in pe.rels.items()},
                        list(pe.observables), list(pe.loc_names), list(pe.ub),
                        dict(pe.barrier_events))


@given(litmus_tests())
def test_packed_and_readable_forms_pack_alike(test):
    prog = load_model("amdgpu")
    for pe in build(test):
        a, b = pack(pe, prog, UNIT.hints), pack(readable_copy(pe), prog, UNIT.hints)
        assert np.array_equal(a.slots, b.slots)
        for part in ("reads", "locs", "events", "obs"):
            x, y = getattr(a, part), getattr(b, part)
            for f in x._fields:
                assert np.array_equal(getattr(x, f), getattr(y, f)), (part, f)


@given(litmus_tests())
def test_compiled_candidates_equal_the_readable_derivation(test):
    prog = load_model("amdgpu")
    for pe in build(test):
        p = pack(pe, prog, UNIT.hints)
        rd = p.reads
        got = {int(r): [int(w) for w in rd.cand[q, :rd.ncand[q]]] for q, r in enumerate(rd.reads)}
        assert got == rf_candidates(pe)
        groups = co_groups(pe)
        assert p.co_writes() == [(init, list(rest)) for init, rest in groups]


ASYNC_PROGRAM = """AMDGPU async-order
{ lds a = 0; x = 0; y = 0; }
 P0            ;
 st x, 1       ;
 fence.rel.wg  ;
 async.ld a, x ;
 ld r0, y      ;
 async.mark    ;
 async.wait 0  ;
 ld r1, a      ;
exists (P0:r1 == 1)
"""
# events, by hand: initial writes of the globals first (0: x, 1: y), then the LDS copy (2: a);
# P0 3: W x=1, 4: F.rel.wg, 5: R.async x, 6: W.async a, 7: R y, 8: async.wait 0, 9: R a;
# final reads 10: x, 11: y.


def test_program_order_into_and_out_of_an_async_op():
    (pe,) = build(litmus.parse(ASYNC_PROGRAM))
    assert pe.loc_names == ["x", "y", "a@wg2"]
    assert [e.label for e in pe.events][3:10] == ["W x=1", "F.rel.wg", "R.async x", "W.async a",
                                                  "R y", "async.wait 0", "R a"]
    r = pe.rels
    # the async events are outside po; po orders the thread's other events
    assert pairs(r["po"]) == {(3, 4), (3, 7), (3, 8), (3, 9), (4, 7), (4, 8), (4, 9), (7, 8),
                              (7, 9), (8, 9)}
    # poa: every event po-before the issuing instruction -> the op's read and write
    assert pairs(r["poa"]) == {(3, 5), (3, 6), (4, 5), (4, 6)}
    # aso: the op's read -> its write, and the op -> the wait completing the mark after it and
    # everything po-after that wait; R y (po-after the issue, before the wait) is not ordered
    assert pairs(r["aso"]) == {(5, 6), (5, 8), (5, 9), (6, 8), (6, 9)}
    assert pairs(r["cohord"]) >= pairs(r["poa"]) | pairs(r["aso"])
    # W x=1 poa-before the DMA read is lo-before it and hides the initial x from it
    assert (0, 5) in pairs(r["nrf"]) and (3, 5) not in pairs(r["nrf"])


AVSCOPE_PROGRAM = """AMDGPU avscope
{ x = 0; lds a = 0; }
 P0@wave 0, wg 0    | P1@wave 1, wg 0   | P2@wg 1 ;
 st.atom.wave a, 1  | ld.vis.wave r0, a | st x, 1 ;
 ld.atom.wave r1, x |                   |         ;
exists (P1:r0 == 1)
"""
# events, by hand: 0: W x=0 (init), 1: W a=0 (init, wg 0's copy); P0 2: W.atom.wave a=1,
# 3: R.atom.wave x; P1 4: R.vis.wave a; P2 5: W x=1; 6: final x. Initial writes and final reads
# (0, 1, 6) lie in every scope instance.


def test_availability_scope_of_lds_accesses_is_the_workgroup():
    (pe,) = build(litmus.parse(AVSCOPE_PROGRAM))
    assert pe.n == 7 and pe.sets["LDS"] == {1, 2, 4}
    r = pe.rels
    special = {0, 1, 6}

    def row(name, i):
        return {j for (k, j) in pairs(r[name]) if k == i}

    # the wave-scope LDS atomic: sync scope its wave (P0), availability scope its workgroup
    assert row("sin", 2) == special | {2, 3}
    assert row("sinav", 2) == special | {2, 3, 4}
    # ld.vis.wave on LDS: load-visible at the workgroup, though it names the wave
    assert row("sin", 4) == special | {4}
    assert row("sinav", 4) == special | {2, 3, 4}
    # a global access keeps one scope for both
    assert row("sinav", 3) == row("sin", 3) == special | {2, 3}
    assert row("sinav", 5) == row("sin", 5)
    # atomicity / synchronization still use the sync scope: the two wave-scope accesses of a in
    # different waves are not inclusive
    assert (2, 4) not in pairs(r["incl"]) and (4, 2) not in pairs(r["incl"])

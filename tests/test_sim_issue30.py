"""Simulator behaviours added for issue 30 (docs/sim.md): the asynchronous L2 writeback, slow
in-flight operations in randomized scheduling, one CU's stores to different L2 channels, and the
``cumulativity`` program family.

Expectations are hand-derived from AMDGPUUsage's text and the model, never read back from the
simulator: the s_waitcnt after ``buffer_wbl2`` "ensures that ... the L2 writeback [has]
completed", so without that wait another agent may read memory the writeback has not reached yet;
"each CU has a separate request queue per channel", so one wave's stores to two locations may
reach the L2 in either order unless a wait orders them, while stores to one location stay in order.
"""

from __future__ import annotations

import dataclasses

import pytest

import litmus
from fuzz.strategies import RandomSource, build_program, parse_features
from hw.sim import make_backend
from hw.sim.lower import lower
from hw.sim.profiles import PROFILES, with_options
from hw.sim.uops import WAIT, WB2
from oracle import check

#: issue 30's buffer_wbl2 candidate (docs/isa.md): the fence waits for the store of x, the
#: system-scope release writes the NC L2 back and must wait for that writeback before storing y
WBL2 = """AMDGPU MP+fence.agent+rel.sys.xagent
{ x = 0; y = 0; }
 P0                   | P1@agent 1            ;
 st x, 1              | ld.atom.acq.sys r0, y ;
 fence.rel.agent      | ld r1, x              ;
 st.atom.rel.sys y, 1 |                       ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def _explore_machine(m, test):
    """Exhaustive run of an explicit machine (the backend's own machine, edited)."""
    be = make_backend("gfx942,mtype=NC")
    be.machine = lambda t: m
    hist, complete = be.explore(test, 200_000)
    assert complete
    return [o for o, _ in hist.outcomes() if litmus.condition_holds(test.condition, o)]


def _without_wait_after_wb2(m):
    """The machine with the waits right after each L2 writeback removed (what clang-22 emits for
    the release store: ``buffer_wbl2 sc0 sc1; s_waitcnt lgkmcnt(0); global_store ... sc0 sc1``)."""
    prog = m.prog.copy()
    plen = m.plen.copy()
    for t in range(prog.shape[0]):
        rows = [prog[t, j].copy() for j in range(plen[t])]
        keep = [r for j, r in enumerate(rows) if not (r[0] == WAIT and j > 0
                                                     and rows[j - 1][0] == WB2)]
        prog[t] = 0
        for j, r in enumerate(keep):
            prog[t, j] = r
        plen[t] = len(keep)
    return dataclasses.replace(m, prog=prog, plen=plen)


def test_wbl2_candidate_is_forbidden_by_the_model():
    assert check(litmus.parse(WBL2)).verdict == "No"


def test_l2_writeback_completes_under_the_wait_after_it():
    """The hand lowering (writeback, then vmcnt(0), then the store) never shows the outcome; the
    same code without the wait after the writeback shows it: the writeback is in flight until a
    wait on its counter (a synchronous writeback would make the wait irrelevant)."""
    test = litmus.parse(WBL2)
    m = lower(test, with_options(PROFILES["gfx942"], ["mtype=NC"]))
    p0 = [tuple(int(v) for v in r[:5]) for r in m.prog[0, :m.plen[0]]]
    j = next(k for k, r in enumerate(p0) if r[0] == WB2)
    assert p0[j + 1][0] == WAIT                     # the hand lowering waits after it
    assert not _explore_machine(m, test)
    assert _explore_machine(_without_wait_after_wb2(m), test)


def test_wbl2_needs_nc_memory():
    """On RW memory the L2 is coherent and the writeback has nothing to do: even without the wait
    the outcome never shows."""
    test = litmus.parse(WBL2)
    m = lower(test, PROFILES["gfx942"])
    be = make_backend("gfx942")
    be.machine = lambda t: _without_wait_after_wb2(m)
    hist, complete = be.explore(test, 200_000)
    assert complete
    assert not any(litmus.condition_holds(test.condition, o) for o, _ in hist.outcomes())


# one wave's two stores to two locations: with no wait between them they may reach the L2 (and
# another CU's reader) in either order; a wait (a release fence) orders them; two stores to one
# location keep their order (one channel, one queue)
CHANNELS = """AMDGPU MP+channels
{ x = 0; y = 0; }
 P0                 | P1@wg 1                   ;
 st.atom.agent x, 1 | ld.atom.acq.agent r0, y   ;
 st.atom.agent y, 1 | ld.atom.agent r1, x       ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
COWW = """AMDGPU CoWW+observer
{ x = 0; }
 P0                 | P1@wg 1                 ;
 st.atom.agent x, 1 | ld.atom.agent r0, x     ;
 st.atom.agent x, 2 | ld.atom.agent r1, x     ;
exists (P1:r0 == 2 /\\ P1:r1 == 1)
"""


def _shows(text, backend):
    test = litmus.parse(text)
    hist, complete = make_backend(backend).explore(test, 200_000)
    assert complete
    return any(litmus.condition_holds(test.condition, o) for o, _ in hist.outcomes())


@pytest.mark.parametrize("profile", ("gfx942", "gfx12"))
def test_one_wave_stores_to_two_channels_reorder(profile):
    """The behaviour per-channel queues add is already there: stores of one CU to different
    locations perform in any order (docs/sim.md "L2 channels")."""
    assert check(litmus.parse(CHANNELS)).verdict == "Ok"
    assert _shows(CHANNELS, profile)


@pytest.mark.parametrize("profile", ("gfx942", "gfx12"))
def test_stores_to_one_location_stay_in_order(profile):
    assert check(litmus.parse(COWW)).verdict == "No"
    assert not _shows(COWW, profile)


def test_a_wait_orders_the_two_channels():
    """With a release fence (vmcnt(0) / storecnt(0)) between the stores, the reader that acquires
    y sees x: the wait orders what the channels would not."""
    text = CHANNELS.replace(" st.atom.agent y, 1 |", " fence.rel.agent    | ;\n st.atom.agent y, 1 |")
    assert check(litmus.parse(text)).verdict == "No"
    for profile in ("gfx942", "gfx12", "gfx942,wavecnt"):
        assert not _shows(text, profile)


def test_slow_operations_make_finding2_frequent():
    """Randomized mode draws a delay level per iteration (slow in-flight operations perform only
    when nothing else can act): finding 2's long reordering on ``sim:gfx942,wavecnt`` (an
    exhaustively reachable outcome, tests/test_sim_wavecnt.py) shows in well over 0.1 % of the
    iterations (about 0.014 % under uniform scheduling, docs/sim.md)."""
    from test_sim_wavecnt import WRC_FINDING2
    test = litmus.parse(WRC_FINDING2)
    h = make_backend("gfx942,wavecnt").run(test, 20_000, seed=1)
    shown = sum(c for o, c in h.outcomes() if litmus.condition_holds(test.condition, o))
    assert shown > 20, shown
    # never on the CU-wide machine, whatever the delays
    h = make_backend("gfx942").run(test, 20_000, seed=1)
    assert not any(litmus.condition_holds(test.condition, o) for o, _ in h.outcomes())


def test_randomized_runs_stay_deterministic_per_seed():
    from test_sim_wavecnt import WRC_FINDING2
    test = litmus.parse(WRC_FINDING2)
    a = make_backend("gfx942,wavecnt").run(test, 5_000, seed=7).outcomes()
    b = make_backend("gfx942,wavecnt").run(test, 5_000, seed=7).outcomes()
    assert sorted(map(repr, a)) == sorted(map(repr, b))


def test_cumulativity_family_draws_the_shape():
    """Without near misses every program of the family is forbidden by the model (a correct
    chain); P0 and P1 are two waves of one workgroup and P2 is outside it (release side), or P1
    and P2 are (acquire side)."""
    feats = parse_features(None)
    seen = set()
    for i in range(60):
        t = build_program(RandomSource(9000 + i), feats, 0.0, shapes=["cumulativity"])
        assert check(t).verdict == "No", litmus.format_test(t)
        wg = [t.instance(k, "wg") for k in range(3)]
        wave = [t.instance(k, "wave") for k in range(3)]
        pair = (0, 1) if wg[0] == wg[1] else (1, 2)
        assert wg[pair[0]] == wg[pair[1]] and wave[pair[0]] != wave[pair[1]]
        other = ({0, 1, 2} - set(pair)).pop()
        assert wg[other] != wg[pair[0]]
        seen.add(t.name.split("-")[1])
    assert seen == {"narrow", "wide"}


def test_cumulativity_family_is_drawn_by_campaigns():
    feats = parse_features(None)
    names = [build_program(RandomSource(i), feats).name for i in range(400)]
    assert any(n.startswith("cumul-") for n in names)


def test_sim_mutant_bucket_names_the_edit():
    """A planted simulator bug's findings are bucketed by the micro-ops its edits change in the
    test's lowering (the forms of acq-no-inv: an acquire's L1 invalidate missing, whichever
    thread acquires), never for the correct simulator."""
    from fuzz.buckets import bucket_of
    mp = """AMDGPU MP
{ x = 0; y = 0; }
 P0@wg 0                  | P1@wg 1                 ;
 st x, 1                  | ld.atom.acq.agent r0, y ;
 st.atom.rel.agent y, 1   | ld r1, x                ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
    rec = {"id": "MP", "test": mp, "forbidden": [{"outcome": {"P1:r0": 1, "P1:r1": 0}}],
           "sources": [{}]}
    b = bucket_of(rec, make_backend("acq-no-inv"))
    assert b["kind"] == "sim" and b["signature"] == "sim GFX9: missing inv.l1", b
    b = bucket_of(rec, make_backend("rel-no-wait"))
    assert b["signature"] == "sim GFX9: missing wait vmcnt", b
    assert bucket_of(rec, make_backend("gfx942"))["kind"] == "model"

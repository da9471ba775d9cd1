"""Weakness of the correct simulator: it shows the weak behaviours real AMD GPUs show.

Expectations are hand-derived (the weak outcome of each shape is allowed by the model, see the
doc line of each test): store buffering and load buffering with relaxed atomics, message
passing across workgroups without fences, a stale L1 read across CUs (after a .noav acquire: a
load that bypasses the L1 refreshes the line), and an LDS read before an
undrained async DMA has written.
"""

from __future__ import annotations

import pytest

import litmus
from fuzz.bench.sim_figures import LB, SB     # store and load buffering, relaxed agent atomics
from hw.sim import make_backend

MP = """AMDGPU MP
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             ;
 st.atom.agent x, 1  | ld.atom.agent r0, y ;
 st.atom.agent y, 1  | ld.atom.agent r1, x ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

STALE = """AMDGPU STALE-L1
"P1's plain load of x may hit its CU's stale L1 line after a .noav acquire (no invalidate) read P0's release: W x is available at agent, but no visibility operation on it is the load or precedes it, so the model allows any value (rule 3)."
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                      ;
 st x, 1                | ld.atom.acq.agent.noav r0, y ;
 st.atom.rel.agent y, 1 | ld r1, x                     ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

UNDRAINED = """AMDGPU ASYNC-UNDRAINED
"No asyncmark wait: the LDS load may run before the DMA has written a."
{ x = 1; lds a = 0; }
 P0@wg 0       ;
 async.ld a, x ;
 ld r0, a      ;
exists (P0:r0 == 0)
"""

CASES = {"SB": SB, "LB": LB, "MP": MP, "STALE": STALE, "UNDRAINED": UNDRAINED}
PROFILES = ("gfx942", "gfx90a", "gfx12", "gfx1250")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", list(CASES))
def test_weak_outcome_reachable_exhaustive(name, profile):
    test = litmus.parse(CASES[name])
    hist, complete = make_backend(profile).explore(test, 200_000)
    assert complete
    assert any(litmus.condition_holds(test.condition, o) for o, _ in hist.outcomes()), \
        f"{name} weak outcome never shown on sim:{profile}"
    # and the strong (sequentially consistent) outcomes are there too
    assert len(hist.counts) >= 2


@pytest.mark.parametrize("name", list(CASES))
def test_weak_outcome_reachable_randomized(name):
    test = litmus.parse(CASES[name])
    hist = make_backend(None).run(test, 50_000, seed=3)
    n = sum(c for o, c in hist.outcomes() if litmus.condition_holds(test.condition, o))
    assert n > 0
    assert hist.total == 50_000


def test_sb_weak_outcome_is_allowed_by_oracle():
    oracle = pytest.importorskip("oracle")
    for name in ("SB", "LB", "MP", "STALE"):
        test = litmus.parse(CASES[name])
        res = oracle.check(test)
        assert res.verdict == "Ok", name


def test_fences_remove_the_weak_outcome():
    # MP with agent release/acquire: the weak outcome disappears in every scheduling
    text = MP.replace("st.atom.agent y, 1  |", "st.atom.rel.agent y, 1|").replace(
        "ld.atom.agent r0, y ;", "ld.atom.acq.agent r0, y;")
    assert "st.atom.rel.agent" in text and "ld.atom.acq.agent" in text
    test = litmus.parse(text)
    for prof in PROFILES:
        hist, complete = make_backend(prof).explore(test, 200_000)
        assert complete
        assert not any(litmus.condition_holds(test.condition, o) for o, _ in hist.outcomes())

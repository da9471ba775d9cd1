"""Per-wave vector-memory counters (profile option ``wavecnt``, issue 30).

AMDGPUUsage: vector memory operations are "reported to a wavefront in execution order"; the
counters (``vmcnt``/``vscnt``/``loadcnt``/``storecnt``) are per wave. With ``wavecnt`` a
``s_waitcnt vmcnt(0)`` of one wave no longer waits for the in-flight stores of the other waves of
its CU; without it (the default) it does (docs/sim.md, "Waves and in-flight operations").

Expectations are hand-derived: in WRC+lds.rlx P0 signals P1 through a *relaxed* LDS store, so the
model allows P2 to see z = 1 and x = 0 (nothing orders P0's store to x before P1's release); the
default machine never shows it because P1's vmcnt(0) drains P0's earlier-issued store to x, the
per-wave machine shows it. WRC+lds.wg+rel.agent is docs/isa.md's finding 2 (forbidden by the
model): the hand lowering of LLVM's GFX9 tables shows it only with per-wave counters.
"""

from __future__ import annotations

import pathlib

import pytest

import litmus
from hw.sim import make_backend
from oracle import check

WRC_RLX = """AMDGPU WRC+lds.rlx
{ x = 0; z = 0; lds y = 0; }
 P0@wave 0, wg 0       | P1@wave 1, wg 0        | P2@wg 1                 ;
 st.atom.agent x, 1    | ld.atom.wg r0, y       | ld.atom.acq.agent r1, z ;
 st.atom.wg y, 1       | st.atom.rel.agent z, 1 | ld.atom.agent r2, x     ;
exists (P1:r0 == 1 /\\ P2:r1 == 1 /\\ P2:r2 == 0)
"""

WRC_FINDING2 = """AMDGPU WRC+lds.wg+rel.agent
{ x = 0; z = 0; lds y = 0; }
 P0@wave 0, wg 0       | P1@wave 1, wg 0        | P2@wg 1                 ;
 st.atom.agent x, 1    | ld.atom.acq.wg r0, y   | ld.atom.acq.agent r1, z ;
 st.atom.rel.wg y, 1   | st.atom.rel.agent z, 1 | ld.atom.agent r2, x     ;
exists (P1:r0 == 1 /\\ P2:r1 == 1 /\\ P2:r2 == 0)
"""


def _shows(text, backend):
    test = litmus.parse(text)
    hist, complete = make_backend(backend).explore(test, 500_000)
    assert complete
    return any(litmus.condition_holds(test.condition, o) for o, _ in hist.outcomes())


def test_model_verdicts():
    """The hand-derived verdicts: the relaxed signal allows the outcome, the release forbids it."""
    assert check(litmus.parse(WRC_RLX)).verdict == "Ok"
    assert check(litmus.parse(WRC_FINDING2)).verdict == "No"


@pytest.mark.parametrize("profile", ("gfx942", "gfx90a"))
def test_other_wave_store_not_drained_by_vmcnt0(profile):
    assert not _shows(WRC_RLX, profile)
    assert _shows(WRC_RLX, f"{profile},wavecnt")


@pytest.mark.parametrize("profile", ("gfx942", "gfx90a", "gfx12"))
def test_wavecnt_listing_marks_waits(profile):
    from hw.sim.lower import lower
    from hw.sim.profiles import PROFILES, with_options
    from hw.sim.uops import WAIT
    test = litmus.parse(WRC_FINDING2)
    for opts, flag in (([], 0), (["wavecnt"], 1)):
        m = lower(test, with_options(PROFILES[profile], opts))
        waits = [int(r[3]) for t in range(m.prog.shape[0])
                 for r in m.prog[t, :m.plen[t]] if r[0] == WAIT]
        assert waits and {w & 1 for w in waits} == {flag}


def test_finding2_needs_per_wave_counters_gfx942():
    """Finding 2 on the hand lowering: hidden by CU-wide waits, shown with per-wave ones."""
    assert not _shows(WRC_FINDING2, "gfx942")
    assert _shows(WRC_FINDING2, "gfx942,wavecnt")
    # GFX12's workgroup release waits storecnt, so the outcome stays hidden there
    assert not _shows(WRC_FINDING2, "gfx12,wavecnt")


CHAINS = pathlib.Path(__file__).resolve().parent.parent / "corpora" / "av" / "chains"


def _forbidden_shown(path, backend):
    test = litmus.parse_file(path)
    allows = check(test).allows
    hist, complete = make_backend(backend).explore(test, 500_000)
    return [o for o, _ in hist.outcomes() if not allows(o)]


@pytest.mark.parametrize("profile", ("gfx942", "gfx12"))
def test_lanes_of_one_wave_share_the_counters(profile):
    """P0 and P1 are lanes of one wave (two simulator threads): P1's agent release fence must
    drain P0's store as the wave's vmcnt(0) does; found by running the corpora soundness check
    with wavecnt (a per-thread count showed the forbidden outcome on every profile)."""
    path = CHAINS / "ISA2+av.wave+fence.rel.agent.chain.litmus"
    if not path.exists():
        pytest.skip(f"{path} absent")
    assert not _forbidden_shown(path, f"{profile},wavecnt")


def test_corpus_finding2_shape_gfx9_only():
    """The corpus's plain-store variant of finding 2: forbidden outcome with per-wave counters on
    gfx942 (LLVM's GFX9 workgroup release), not on gfx12, not with CU-wide waits."""
    path = CHAINS / "ISA2+rel.wg+rel.agent+plain.chain.litmus"
    if not path.exists():
        pytest.skip(f"{path} absent")
    assert _forbidden_shown(path, "gfx942,wavecnt")
    assert not _forbidden_shown(path, "gfx942")
    assert not _forbidden_shown(path, "gfx12,wavecnt")

"""Hand-derived outcomes of the AMDGPU model (seeds/amdgpu-memory-model.txt, DESIGN.md).

Each expected state set below is worked out by hand from the seed's rules (availability,
visibility, location order, the five read-value rules); the comments give the derivation.
"""

from __future__ import annotations

import pytest

import litmus
import oracle
from litmus.ir import UNDEF
from oracle import OracleError

U = UNDEF


def fill(template: str, **kw) -> str:
    for k, v in kw.items():
        template = template.replace("{" + k + "}", v)
    return template


def states(text: str, keys: list[str]) -> set[tuple]:
    res = oracle.check(litmus.parse(text))
    return {tuple(s[k] for k in keys) for s in res.states}


def verdict(text: str) -> str:
    return oracle.check(litmus.parse(text)).verdict


MP_FENCES = """AMDGPU MP+fences
{ x = 0; y = 0; }
 P0@wg 0          | P1@wg 1          ;
 st x, 1          | ld.atom.{s} r0, y ;
 fence.rel.{s}    | fence.acq.{s}    ;
 st.atom.{s} y, 1 | ld r1, x         ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_mp_fences_agent_scope():
    # r0=1: W x -po-> F rel (MakeAvailable, agent) -sw-> F acq (MakeVisible) -po-> R x, so
    # W x lo R x and init lo W x lo R x hides the initial write: rule 4 gives 1.
    # r0=0: R x may see W x without lo (no hb): rule 3 gives undef.
    assert states(fill(MP_FENCES, s="agent"), ["P1:r0", "P1:r1"]) == {(0, U), (1, 1)}
    assert verdict(fill(MP_FENCES, s="agent")) == "No"


def test_mp_fences_wg_scope_across_workgroups_gives_no_sync():
    # wg-scope atomics of different workgroups are not inclusive: rule 2 fails for R y, which may
    # see W y without lo -> undef; the fences do not synchronize (sw needs inclusive scopes).
    got = states(fill(MP_FENCES, s="wg"), ["P1:r0", "P1:r1"])
    assert got == {(U, U)}
    assert verdict(fill(MP_FENCES, s="wg")) == "Ok"


SB = """AMDGPU SB
{ x = 0; y = 0; }
 P0             | P1             ;
 st.atom.{o} x, 1 | st.atom.{o} y, 1 ;
 ld.atom.{l} r0, y | ld.atom.{l} r0, x ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""


def test_sb_relaxed_allows_all_four():
    assert states(fill(SB, o="rlx", l="rlx"), ["P0:r0", "P1:r0"]) == \
        {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_sb_seq_cst_forbids_both_zero():
    assert states(fill(SB, o="sc", l="sc"), ["P0:r0", "P1:r0"]) == {(0, 1), (1, 0), (1, 1)}


def test_sb_rel_acq_allows_both_zero():
    assert verdict(fill(SB, o="rel", l="acq")) == "Ok"


LB = """AMDGPU LB
{ x = 0; y = 0; }
 P0              | P1              ;
 ld.atom.{l} r0, y | ld.atom.{l} r0, x ;
 st.atom.{s} x, 1 | st.atom.{s} y, 1 ;
exists (P0:r0 == 1 /\\ P1:r0 == 1)
"""


def test_lb_relaxed_is_allowed_no_po_rf_acyclicity():
    assert verdict(fill(LB, l="rlx", s="rlx")) == "Ok"


def test_lb_acquire_release_is_forbidden():
    # both reads synchronize: R -po-> W -sw-> R -po-> W -sw-> R is an hb cycle
    assert verdict(fill(LB, l="acq", s="rel")) == "No"


def test_corr_forbidden_cowr_forbidden():
    corr = """AMDGPU CoRR
{ x = 0; }
 P0           | P1            ;
 st.atom x, 1 | ld.atom r0, x ;
              | ld.atom r1, x ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
    assert states(corr, ["P1:r0", "P1:r1"]) == {(0, 0), (0, 1), (1, 1)}
    cowr = """AMDGPU CoWR
{ x = 0; }
 P0            | P1           ;
 st.atom x, 1  | st.atom x, 2 ;
 ld.atom r0, x |              ;
exists (P0:r0 == 0)
"""
    # the initial write is hidden by P0's own write (init lo W lo R)
    assert states(cowr, ["P0:r0"]) == {(1,), (2,)}


def test_rmw_atomicity():
    t = """AMDGPU rmw
{ x = 0; }
 P0                | P1                ;
 rmw.add r0, x, 1  | rmw.add r0, x, 1  ;
forall (x == 2)
"""
    assert states(t, ["P0:r0", "P1:r0", "x"]) == {(0, 1, 2), (1, 0, 2)}
    assert verdict(t) == "Ok"


def test_cas_success_and_failure():
    t = """AMDGPU cas
{ x = 0; }
 P0               | P1               ;
 cas r0, x, 0, 1  | cas r0, x, 0, 2  ;
exists (x == 0)
"""
    # exactly one cas succeeds; the other fails reading the winner's value
    assert states(t, ["P0:r0", "P1:r0", "x"]) == {(0, 1, 1), (2, 0, 2)}


def test_racy_plain_read_is_undef_and_final_value_defined():
    t = """AMDGPU race
{ x = 0; }
 P0       | P1        ;
 st x, 1  | ld r0, x  ;
exists (P1:r0 == 5)
"""
    # R x may see W x, which is not lo R (no hb): rule 3 -> undef. Final read: init lo W lo F
    # hides the initial write; F sees only W, which is lo F: rule 4 -> 1.
    assert states(t, ["P1:r0", "x"]) == {(U, 1)}
    assert verdict(t) == "Ok"       # undef may be 5


def test_two_racing_plain_writes_leave_final_memory_undef():
    t = """AMDGPU 2W
{ x = 0; }
 P0       | P1       ;
 st x, 1  | st x, 2  ;
exists (x == 1)
"""
    assert states(t, ["x"]) == {(U,)}


MP_AV = """AMDGPU MP+av
{ x = 0; y = 0; }
 P0@wg 0                 | P1@wg 0                      ;
 {w} x, 1                | ld.atom.acq.wg{n} r0, y      ;
 st.atom.rel.wg{n} y, 1  | {r} r1, x                    ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_noav_drops_availability_and_visibility():
    # .noav keeps the ordering (hb) but no MakeAvailable/MakeVisible: W x is never made
    # available, so nothing makes it visible to R x: rule 3, undef, even when r0 = 1
    got = states(fill(MP_AV, w="st", r="ld", n=".noav"), ["P1:r0", "P1:r1"])
    assert got == {(0, U), (1, U)}
    got = states(fill(MP_AV, w="st", r="ld", n=""), ["P1:r0", "P1:r1"])
    assert got == {(0, U), (1, 1)}


def test_store_available_and_load_visible_restore_the_chain():
    # st.av.wg is its own availability op; ld.vis.wg is a visibility op hb-after it with
    # inclusive scopes: W x lo R x again
    got = states(fill(MP_AV, w="st.av.wg", r="ld.vis.wg", n=".noav"), ["P1:r0", "P1:r1"])
    assert got == {(0, U), (1, 1)}
    # volatile accesses are store-available / load-visible at sys scope
    got = states(fill(MP_AV, w="st.vol", r="ld.vol", n=".noav"), ["P1:r0", "P1:r1"])
    assert got == {(0, U), (1, 1)}


def test_availability_chain_bridges_scopes():
    # Property 5 of the seed: P0 makes W x available at wg scope (rel.wg, po-after W); P1 (same
    # wg) acquires it and releases at agent scope, a MakeAvailable whose instance includes W and
    # which the wg availability op happens-before; P2 (other wg) acquires at agent scope: W x is
    # visible to P2's read, so r1 = 1 whenever both flags were seen.
    t = """AMDGPU chain
{ x = 0; y = 0; z = 0; }
 P0@wg 0                | P1@wg 0                     | P2@wg 1                     ;
 st x, 1                | ld.atom.acq.wg r0, y        | ld.atom.acq.agent r0, z     ;
 st.atom.rel.wg y, 1    | st.atom.rel.agent z, 1      | ld r1, x                    ;
exists (P1:r0 == 1 /\\ P2:r0 == 1 /\\ P2:r1 == 0)
"""
    got = states(t, ["P1:r0", "P2:r0", "P2:r1"])
    assert all(r1 == 1 for (a, b, r1) in got if a == 1 and b == 1)
    assert (1, 1, 1) in got
    assert verdict(t) == "No"


def test_lds_has_one_copy_per_workgroup():
    t = """AMDGPU lds
{ lds a = 0; }
 P0@wg 0        | P1@wg 1         | P2@wg 0         ;
 st.atom a, 1   | ld.atom r0, a   | ld.atom r0, a   ;
exists (P1:r0 == 1)
"""
    got = states(t, ["P1:r0", "P2:r0"])
    assert got == {(0, 0), (0, 1)}
    assert verdict(t) == "No"


def test_wave_scope_atomics_in_different_waves_are_not_atomic():
    t = """AMDGPU wave
{ x = 0; }
 P0@wave 0, wg 0     | P1@wave 1, wg 0      ;
 st.atom.wave x, 1   | ld.atom.wave r0, x   ;
exists (P1:r0 == 1)
"""
    # not inclusive: rule 2 fails; R may see W without lo -> undef
    assert states(t, ["P1:r0"]) == {(U,)}
    same = t.replace("wave 1, wg 0", "wave 0, wg 0")
    assert states(same, ["P1:r0"]) == {(0,), (1,)}


def test_result_allows_matches_undef_positions():
    res = oracle.check(litmus.parse(fill(MP_FENCES, s="agent")))
    assert res.allows({"P1:r0": 0, "P1:r1": 7, "x": 1, "y": 1})
    assert res.allows({"P1:r0": 1, "P1:r1": 1, "x": 1, "y": 1})
    assert not res.allows({"P1:r0": 1, "P1:r1": 0, "x": 1, "y": 1})


def test_too_many_events_is_a_clear_error():
    rows = "\n".join(" st x, 1 ;" for _ in range(70))
    t = f"AMDGPU big\n{{ x = 0; }}\n P0 ;\n{rows}\nexists (x == 1)\n"
    with pytest.raises(OracleError, match="more than 64 events"):
        oracle.check(litmus.parse(t))


def test_unknown_model_is_a_clear_error():
    with pytest.raises(OracleError, match="unknown model"):
        oracle.check(litmus.parse(fill(MP_FENCES, s="agent")), "no-such-model")


def test_cache_ignores_name_but_not_program():
    a = litmus.parse(fill(MP_FENCES, s="agent"))
    b = litmus.parse(fill(MP_FENCES, s="agent").replace("MP+fences", "Other"))
    c = litmus.parse(fill(MP_FENCES, s="wg"))
    assert oracle.check(a).states == oracle.check(b).states
    assert oracle.check(a).states != oracle.check(c).states

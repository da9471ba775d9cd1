"""Programs with no memory access at all: exactly one execution (empty rf and co)."""

import litmus
import oracle

FENCES = """AMDGPU nomem
{ }
 P0        | P1        ;
 fence.sc  | fence.sc  ;
{cond}
"""

WAIT_WITHOUT_JOIN = """AMDGPU nomem-wait-nojoin
"Undef: a wait on named barrier 1 by a thread that never joined it (seed: wait without a join)."
{ }
 P0        ;
 bar.wait 1 ;
exists (true)
"""


def test_fence_only_program_has_one_empty_outcome():
    for cond, want in [("exists (true)", "Ok"), ("forall (true)", "Ok"),
                       ("exists (false)", "No"), ("~exists (false)", "Ok")]:
        r = oracle.check(litmus.parse(FENCES.replace("{cond}", cond)))
        assert r.states == [{}] and r.consistent == 1
        assert r.verdict == want, cond


def test_barrier_only_program_still_reports_undefined_behaviour():
    r = oracle.check(litmus.parse(WAIT_WITHOUT_JOIN))
    assert r.verdict == "Undef" and r.ub

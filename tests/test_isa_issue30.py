"""The isa backend under issue 30's simulator (docs/sim.md, docs/isa.md): per-wave counters by
default, finding 2's bucket, the buffer_wbl2 candidate. Skipped, with the reason, without
clang-22 / llvm-objdump-22.

Expected code shapes come from ../shared/notes/amdgpu-isa-clang22.md and the issue text (the
release store is ``buffer_wbl2 sc0 sc1; s_waitcnt lgkmcnt(0); global_store ... sc0 sc1``);
verdicts from the oracle; the meaning of the waits from AMDGPUUsage (docs/sim.md).
"""

from __future__ import annotations

import pytest

import hw
import litmus
from fuzz.buckets import bucket_of
from fuzz.known import default_known_path, load_known, mark_known
from hw.isa import toolchain
from hw.sim.uops import WAIT, WB2
from oracle import check
from test_sim_issue30 import WBL2
from test_sim_wavecnt import WRC_FINDING2

pytestmark = pytest.mark.skipif(toolchain.tools_available() is not None,
                                reason=f"isa backend: {toolchain.tools_available()}")


def _forbidden_shown(text, backend, n=50_000):
    """Forbidden outcomes shown exhaustively (up to ``n`` schedules) and, where that enumeration
    is incomplete, in 200,000 randomized iterations too."""
    test = litmus.parse(text)
    allows = check(test).allows
    be = hw.get_backend(backend)
    hist, complete = be.explore(test, n)
    out = [o for o, _ in hist.outcomes() if not allows(o)]
    if not complete:
        out += [o for o, _ in be.run(test, 200_000, seed=1).outcomes() if not allows(o)]
    return out


@pytest.mark.parametrize("spec,flag", [("isa:gfx942", 1), ("isa:gfx1200", 1),
                                       ("isa:gfx942,cuwait", 0)])
def test_isa_waits_are_per_wave_by_default(spec, flag):
    """Every wait of the compiled program counts its wave's own operations (WAIT field c = 1),
    unless ``cuwait`` asks for the CU-wide waits of the hand lowering."""
    be = hw.get_backend(spec)
    m = be.machine(litmus.parse(WRC_FINDING2))
    waits = [int(r[3]) for t in range(m.prog.shape[0]) for r in m.prog[t, :m.plen[t]]
             if r[0] == WAIT]
    assert waits and set(waits) == {flag}
    assert ("cuwait" in be.name) == (flag == 0)


def _record(text, outcome):
    t = litmus.parse(text)
    return {"id": t.name, "test": text, "forbidden": [{"outcome": outcome}], "sources": [{}]}


def test_finding2_bucket_is_the_uncumulative_release():
    """The compiled code equals the hand lowering (LLVM's table), so the cross-check finds no
    weakening; the bucket names the workgroup release that waits for no vmcnt although its wave
    stored x before it, and the maintained known-bugs file knows it as finding 2."""
    out = {"P1:r0": 1, "P2:r1": 1, "P2:r2": 0}
    for spec in ("gfx942,noscalar", "gfx90a"):
        b = bucket_of(_record(WRC_FINDING2, out), hw.get_backend(f"isa:{spec}"))
        assert b["signature"] == "GFX9: uncumulative-release:no-vmcnt (workgroup release)", b
        assert b["instruction"] == "before ds_write_b32"
        known = load_known(default_known_path())
        assert mark_known([dict(b)], known)[0]["known"]["name"].startswith("finding 2")
    # GFX12 waits storecnt before the LDS release: no such bucket
    b = bucket_of(_record(WRC_FINDING2, out), hw.get_backend("isa:gfx1200"))
    assert "uncumulative" not in b["signature"]


def test_finding2_forms_share_the_bucket():
    """The global-flag form (y in global memory at workgroup scope, a release rmw, the observer
    writing x) is the same bucket."""
    text = """AMDGPU cumul-narrow-wide-wg-W
{ x = 0; y = 0; z = 0; }
 P0@wave 0, wg 0          | P1@wave 1, wg 0             | P2                            ;
 st x, 1                  | rmw.add.acq.wg r0, y, 0     | cas.acq.cluster r0, z, -1, -1 ;
 rmw.xchg.rel.wg r0, y, 1 | cas.rel.cluster r1, z, 0, 1 | st.atom.cluster x, 2          ;
exists (P1:r0 == 1 /\\ P2:r0 == 1 /\\ x == 1)
"""
    assert check(litmus.parse(text)).verdict == "No"
    t = litmus.parse(text)
    allows = check(t).allows
    h = hw.get_backend("isa:gfx942,noscalar").run(t, 100_000, seed=1)   # (too many schedules
    assert any(not allows(o) for o, _ in h.outcomes())                   # to enumerate)
    out = {"P0:r0": 0, "P1:r0": 1, "P1:r1": 0, "P2:r0": 1, "x": 1, "y": 1, "z": 1}
    b = bucket_of(_record(text, out), hw.get_backend("isa:gfx942,noscalar"))
    assert b["signature"] == "GFX9: uncumulative-release:no-vmcnt (workgroup release)", b


ATOMICITY_FORM = """AMDGPU cycle3-WRWRWR-min
{ x = 0; z = 0; lds y = 0; }
 P0@wave 0, wg 0       | P1@wave 1, wg 0           | P2@cluster 1            ;
 st.atom.sc.agent x, 1 | cas.sc.agent r0, y, 0, 1  | cas.agent r0, z, 0, 1   ;
 st.atom.sc.wg y, -1   | rmw.add.sc.agent r1, z, 0 | fence.sc.agent          ;
                       |                           | cas.agent r1, x, -1, -1 ;
exists (P1:r0 == -1 /\\ P1:r1 == 0 /\\ P2:r1 == 0)
"""


def test_finding2_atomicity_form_shares_the_bucket():
    """gfx942/gfx950 campaign seed 12's "atomicity: atomic.agent via atomicity" finding is
    finding 2: the oracle blames the outcome on P2's cas of z (both updates of z read 0), not
    on the stale read of x, yet P0's workgroup release of y waits for no vmcnt after its store
    of x. The same test with a fence between P0's stores is never forbidden (docs/isa.md)."""
    t = litmus.parse(ATOMICITY_FORM)
    assert check(t).verdict == "No"
    out = {"P1:r0": -1, "P1:r1": 0, "P2:r0": 0, "P2:r1": 0, "x": 1, "z": 1}
    assert not check(t).allows(out)
    be = hw.get_backend("isa:gfx942,noscalar")
    b = bucket_of(_record(ATOMICITY_FORM, out), be)
    assert b["model_signature"] == "atomicity: atomic.agent via atomicity", b
    assert b["signature"] == "GFX9: uncumulative-release:no-vmcnt (workgroup release)", b
    assert b["instruction"] == "before ds_write_b32"
    known = load_known(default_known_path())
    assert mark_known([dict(b)], known)[0]["known"]["name"].startswith("finding 2")
    # the outcome shows on the compiled code; with P0's stores ordered by a fence it does not
    assert out in [dict(o) for o in _shown(be, t)]
    fenced = litmus.parse(ATOMICITY_FORM.replace(
        " st.atom.sc.wg y, -1   | rmw.add.sc.agent r1, z, 0 | fence.sc.agent          ;",
        " fence.sc.agent        | rmw.add.sc.agent r1, z, 0 | fence.sc.agent          ;\n"
        " st.atom.sc.wg y, -1   |                           |                         ;"))
    allows = check(fenced).allows
    assert not [o for o in _shown(be, fenced) if not allows(o)]


def _shown(be, test):
    return [o for o, _ in be.run(test, 100_000, seed=1).outcomes()]


def test_wbl2_candidate_code_has_no_wait_after_the_writeback():
    """P0's release store: ``buffer_wbl2 sc0 sc1`` then the store of y with no vmcnt wait in
    between (the fence's vmcnt(0) came before the writeback)."""
    be = hw.get_backend("isa:gfx942,mtype=NC")
    b = be.build(litmus.parse(WBL2))
    seq = []
    for e in b.threads[0].events:
        if e.kind == "cache" and e.op == "buffer_wbl2":
            seq.append("wbl2 " + " ".join(sorted(set(e.mods) & {"sc0", "sc1"})))
        elif e.kind == "wait" and any(n == "vmcnt" for n, _ in e.waits):
            seq.append("vmcnt")
        elif e.kind == "store" and e.addr is not None and e.addr < b.source.out_base:
            seq.append("store")
    assert seq == ["store", "wbl2 sc1", "vmcnt", "wbl2 sc0 sc1", "store"], seq
    m = be.machine(litmus.parse(WBL2))
    rows = [tuple(int(v) for v in r[:5]) for r in m.prog[0, :m.plen[0]]]
    j = max(k for k, r in enumerate(rows) if r[0] == WB2)
    assert not any(r[0] == WAIT and r[1] & 1 for r in rows[j + 1:]), rows


@pytest.mark.parametrize("target", ("gfx942", "gfx950"))
def test_wbl2_candidate_shows_on_nc_memory(target):
    """With NC memory the L2 writeback decides what the other agent reads: the outcome the model
    forbids shows (the writeback still in flight when the system-scope store of y lands); on RW
    memory, never. Its bucket names the missing wait after the writeback."""
    assert _forbidden_shown(WBL2, f"isa:{target},mtype=NC")
    assert not _forbidden_shown(WBL2, f"isa:{target}")
    b = bucket_of(_record(WBL2, {"P1:r0": 1, "P1:r1": 0}),
                  hw.get_backend(f"isa:{target},mtype=NC"))
    assert b["signature"].startswith("GFX9: missing-wait-after-wb:vmcnt"), b


def test_wbl2_candidate_not_on_gfx90a_or_gfx12():
    """gfx90a has no system-level store (the store of y waits in the NC L2 for a later
    writeback), GFX12 waits storecnt after global_wb: neither shows it."""
    for spec in ("isa:gfx90a,mtype=NC", "isa:gfx1200,mtype=NC", "isa:gfx1250,mtype=NC"):
        assert not _forbidden_shown(WBL2, spec), spec


GFX90A_CAMPAIGN_FORM = """AMDGPU cumul-narrow-wide-agent-lds-R-min
{ x = 0; z = 0; lds y = 0; }
 P0@wave 0, wg 0          | P1@wave 1, wg 0       | P2@agent 1            ;
 st x, 1                  | cas.acq r0, y, -1, -1 | cas.acq r0, z, -1, -1 ;
 rmw.xchg.rel.wg r0, y, 1 | rmw.xchg.rel r1, z, 1 | ld.atom r1, x         ;
exists (P1:r0 == 1 /\\ P2:r0 == 1 /\\ P2:r1 == 0)
"""


def test_gfx90a_campaign_form_is_finding2():
    """The gfx90a campaign's form (seed 12, program 574; docs/isa.md "gfx90a triage"): P2's
    system-scope cas and load carry ``glc`` as AMDGPUUsage's GFX90A table asks, so their level
    difference from the hand lowering names no bucket; the cause is P0's workgroup release
    (ds_wrxchg) with no vmcnt wait after its store of x: finding 2's bucket."""
    t = litmus.parse(GFX90A_CAMPAIGN_FORM)
    allows = check(t).allows
    assert check(t).verdict == "No"
    h = hw.get_backend("isa:gfx90a,noscalar").run(t, 50_000, seed=1)
    assert any(not allows(o) for o, _ in h.outcomes())
    out = {"P0:r0": 0, "P1:r0": 1, "P1:r1": 0, "P2:r0": 1, "P2:r1": 0, "x": 1, "z": 1}
    b = bucket_of(_record(GFX90A_CAMPAIGN_FORM, out), hw.get_backend("isa:gfx90a,noscalar"))
    assert b["signature"] == "GFX9: uncumulative-release:no-vmcnt (workgroup release)", b
    assert b["instruction"] == "before ds_wrxchg_rtn_b32"
    # on gfx942 the system-scope accesses carry sc0 sc1 (the table's system level): same bucket
    b = bucket_of(_record(GFX90A_CAMPAIGN_FORM, out), hw.get_backend("isa:gfx942,noscalar"))
    assert b["signature"] == "GFX9: uncumulative-release:no-vmcnt (workgroup release)", b

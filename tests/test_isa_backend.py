"""The isa backend with clang-22 in the loop (skipped, with the reason, where clang-22 or
llvm-objdump-22 is missing; CI has them: `make setup` installs clang-22 as root).

Expected instruction sequences come from ../shared/notes/amdgpu-isa-clang22.md (gathered by
compiling single operations, independently of this code) and their meaning from the AMDGPUUsage
tables restated in ../shared/notes/llvm-amdgpu.md §4; verdicts from the oracle.
"""

from __future__ import annotations

import json

import pytest

import hw
import litmus
import oracle
from conftest import CORPORA
from fuzz.cli import main
from hw.backend import BackendRefused
from hw.isa import machine as glue
from hw.isa import targets, toolchain
from hw.isa.mutants import MUTANTS
from hw.sim.uops import CNT_VM, GLD, GST, INV1, INV2, WAIT, WB2

pytestmark = pytest.mark.skipif(toolchain.tools_available() is not None,
                                reason=f"isa backend: {toolchain.tools_available()}")

TARGETS = list(targets.TARGETS)

MP = """AMDGPU MP+rel+acq.S
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                 ;
 st x, 1                | ld.atom.acq.S r0, y     ;
 st.atom.rel.S y, 1     | ld r1, x                ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

MP_PLAIN = """AMDGPU MP
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                 ;
 st.atom.agent x, 1     | ld.atom.agent r0, y     ;
 st.atom.agent y, 1     | ld.atom.wave r1, x      ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def build(text: str, spec: str):
    t, m = targets.parse_spec(spec, MUTANTS)
    b = glue.build(litmus.parse(text), t, m)
    glue.machine(b)
    return b


def shape(b, tid: int) -> list[str]:
    """Mnemonic + cache modifiers of the memory, cache and wait instructions a thread ran."""
    out = []
    for ev in b.threads[tid].events:
        ins = b.threads[tid].kernel.code[ev.index]
        if ev.kind in ("load", "store", "rmw", "cas", "cache"):
            out.append(" ".join([ins.mnemonic] + [m for m in ins.mods
                                                  if not m.startswith("offset")]))
    return out


# --- the compiled code is the code of the notes, and it means what AMDGPUUsage says -------------

@pytest.mark.parametrize("spec,scope,p0,p1", [
    # notes: gfx942 st_rel_dev / ld_acq_dev
    ("gfx942", "agent", ["global_store_dword", "buffer_wbl2 sc1", "global_store_dword sc1"],
     ["global_load_dword sc1", "buffer_inv sc1", "global_load_dword"]),
    # notes: gfx942 st_rel_sys / ld_acq_sys
    ("gfx942", "sys", ["global_store_dword", "buffer_wbl2 sc0 sc1",
                       "global_store_dword sc0 sc1"],
     ["global_load_dword sc0 sc1", "buffer_inv sc0 sc1", "global_load_dword"]),
    # notes: gfx90a ld_acq_sys (and st_rel_sys: buffer_wbl2 before the store)
    ("gfx90a", "sys", ["global_store_dword", "buffer_wbl2", "global_store_dword"],
     ["global_load_dword glc", "buffer_invl2", "buffer_wbinvl1_vol", "global_load_dword"]),
    # notes: gfx1100 ld_acq_dev
    ("gfx1100", "agent", ["global_store_b32", "global_store_b32"],
     ["global_load_b32 glc", "buffer_gl1_inv", "buffer_gl0_inv", "global_load_b32"]),
    # notes: gfx1200 st_rel_sys / ld_acq_sys
    ("gfx1200", "sys", ["global_store_b32", "global_wb scope:SCOPE_SYS",
                        "global_store_b32 scope:SCOPE_SYS"],
     ["global_load_b32 scope:SCOPE_SYS", "global_inv scope:SCOPE_SYS", "global_load_b32"]),
    # notes: gfx1250 st_rel_dev / ld_acq_dev
    ("gfx1250", "agent", ["global_store_b32", "global_wb scope:SCOPE_DEV",
                          "global_store_b32 scope:SCOPE_DEV"],
     ["global_load_b32 scope:SCOPE_DEV", "global_inv scope:SCOPE_DEV", "global_load_b32"]),
])
def test_release_acquire_code_is_the_notes_code(spec, scope, p0, p1):
    b = build(MP.replace(".S", f".{scope}"), spec)
    out = [s for s in shape(b, 1) if not s.startswith(("global_store", "buffer_inv sc1 x"))]
    assert shape(b, 0) == p0
    assert [s for s in out if "store" not in s] == p1


def test_translation_of_an_agent_acquire_on_gfx942():
    # AMDGPUUsage GFX942 load acquire agent: load sc1 (misses L1), vmcnt(0), buffer_inv sc1
    # (invalidates the L1); the plain load after it may hit the (now empty) L1
    b = build(MP.replace(".S", ".agent"), "gfx942")
    rows = [r for _, r in b.threads[1].rows]
    loads = [r for r in rows if r[0] == GLD]
    assert loads[0][2:4] == (1, 1)                           # y, level 1
    assert loads[1][2:4] == (0, 0)                           # x, level 0
    assert rows.index(loads[0]) < rows.index((WAIT, 1 << CNT_VM, 0)) < rows.index((INV1,)) \
        < rows.index(loads[1])


def test_system_release_writes_back_the_l2_on_gfx90a():
    b = build(MP.replace(".S", ".sys"), "gfx90a")
    ops = [r[0] for _, r in b.threads[0].rows if r[0] != WAIT]
    assert ops == [GST, WB2, GST]
    ops = [r[0] for _, r in b.threads[1].rows if r[0] != WAIT]
    assert ops[:3] == [GLD, INV2, INV1]


# --- runs: weak where the model allows, never forbidden with release/acquire ---------------------

@pytest.mark.parametrize("target", TARGETS)
def test_message_passing_on_every_target(target):
    be = hw.get_backend(f"isa:{target}")
    mp = litmus.parse(MP.replace(".S", ".agent"))
    res = oracle.check(mp)
    hist, complete = be.explore(mp, 100_000)
    assert complete and hist.total > 0
    assert all(res.allows(o) for o, _ in hist.outcomes())
    weak = litmus.parse(MP_PLAIN)
    hist = be.run(weak, 20_000, 3)
    assert any(o["P1:r0"] == 1 and o["P1:r1"] == 0 for o, _ in hist.outcomes()), \
        "relaxed MP never showed its (allowed) weak outcome"


def test_histogram_params_name_target_and_mutant():
    h = hw.get_backend("isa:gfx942:drop-inv").run(litmus.parse(MP.replace(".S", ".agent")), 50)
    assert h.params["target"] == "gfx942,noscalar" and h.params["isa_mutant"] == "drop-inv"


# --- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,text,why", [
    ("gfx942", "st.av.agent x, 1", "av_load/store"),
    ("gfx942", "st.atom.rel.agent.noav x, 1", "MMRA"),
    ("gfx942", "async.mark", "asyncmark"),
    ("gfx942", "bar.signal -1", "need GFX12"),
    ("gfx1200", "bar.signal -3", "gfx1250 only"),
    ("gfx1250", "bar.init 1, 1", "named barriers"),
])
def test_inexpressible_programs_are_refused_with_a_reason(spec, text, why):
    t = litmus.parse(f"AMDGPU R\n{{ x = 0; }}\n P0 ;\n {text} ;\nexists (x == 0)\n")
    with pytest.raises(BackendRefused, match=why) as e:
        hw.get_backend(f"isa:{spec}").run(t, 10)
    assert "\n" not in str(e.value)


LANES = """AMDGPU MP+lanes
{ x = 0; y = 0; }
 P0@wave 0, wg 0          | P1@wave 0, wg 0          ;
 st.atom.wave x, 1        | ld.atom.acq.wave r0, y   ;
 st.atom.rel.wave y, 1    | ld.atom.wave r1, x       ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


@pytest.mark.parametrize("target", ["gfx942", "gfx1200"])
def test_lanes_of_one_wave_run_as_one_instruction_stream(target):
    t = litmus.parse(LANES)
    b = glue.build(t, targets.TARGETS[target])
    assert [th.lid for th in b.threads] == [0, 1]            # lanes 0 and 1 of wave 0
    m = glue.machine(b)
    assert m.plen.shape == (1,)                              # one simulator thread: the wave
    merged = glue.wave_events(b.threads)
    for th in b.threads:                 # every access of each lane, in the lane's own order
        pos = [next(k for k, e in enumerate(merged) if e is ev)
               for ev in th.events if ev.kind in ("load", "store")]
        assert len(pos) >= 2 and pos == sorted(pos)
    res = oracle.check(t)
    hist, complete = hw.get_backend(f"isa:{target}").explore(t, 100_000)
    assert complete and all(res.allows(o) for o, _ in hist.outcomes())


def test_lanes_of_one_wave_with_a_barrier_are_refused():
    t = litmus.parse("AMDGPU L\n{ x = 0; }\n P0@wave 0, wg 0 | P1@wave 0, wg 0 ;\n"
                     " st x, 1 | barrier ;\n barrier | ld r0, x ;\nexists (P1:r0 == 0)\n")
    with pytest.raises(BackendRefused, match="lanes of one wave"):
        hw.get_backend("isa:gfx942").run(t, 10)


# --- WGP mode ------------------------------------------------------------------------------------

def test_wgp_mode_gives_each_wave_its_own_l0():
    text = MP.replace("P1@wg 1", "P1@wave 1, wg 0").replace("P0@wg 0", "P0@wave 0, wg 0") \
        .replace(".S", ".wg")
    wgp = glue.machine(glue.build(litmus.parse(text), targets.TARGETS["gfx1200"]))
    cu = glue.machine(glue.build(litmus.parse(text),
                                 targets.parse_spec("gfx1200,cumode", MUTANTS)[0]))
    assert wgp.tcu[0] != wgp.tcu[1] and cu.tcu[0] == cu.tcu[1]
    # WGP mode: the workgroup acquire invalidates the L0 (AMDGPUUsage GFX12 load acquire WG)
    b = build(text, "gfx1200")
    assert "global_inv scope:SCOPE_SE" in shape(b, 1)


# --- the scalar-cache (noclobber) finding: docs/isa.md ------------------------------------------

BAR = (CORPORA / "barrier" / "wg" / "BAR+fences.wg.xwave.litmus").read_text()


def test_plain_load_after_barrier_and_acquire_fence_is_a_scalar_load():
    t = litmus.parse(BAR)
    res = oracle.check(t)
    assert res.verdict == "No"                # the model forbids P1:r0 == 0
    b = build(BAR, "gfx942")
    assert [e.kind for e in b.threads[1].events if e.kind in ("load", "sload")] == ["sload"]
    h = hw.get_backend("isa:gfx942").run(t, 5000, 1)
    assert any(not res.allows(o) for o, _ in h.outcomes())
    clean, complete = hw.get_backend("isa:gfx942,noscalar").explore(t, 100_000)
    assert complete and all(res.allows(o) for o, _ in clean.outcomes())


def test_scalar_cache_staleness_needs_no_warm_line_when_the_thread_fills_it(monkeypatch):
    """The thread's own earlier (racy) load fills the scalar cache; the one after the barrier
    hits it: forbidden without any line warm at the start."""
    text = BAR.replace(" P0@wave 0, wg 0 | P1@wave 1, wg 0 ;",
                       " P0@wave 0, wg 0 | P1@wave 1, wg 0 ;\n                 | ld r1, x        ;")
    t = litmus.parse(text)
    res = oracle.check(t)
    be = hw.get_backend("isa:gfx942")
    real = be.machine

    def cold(test):
        m = real(test)
        return m.__class__(**{**m.__dict__, "warm_l1": m.warm_l1[:0].reshape(0, 2)})
    monkeypatch.setattr(be, "machine", cold)
    b = be.build(t)
    assert [e.kind for e in b.threads[1].events if e.kind in ("load", "sload")] == \
        ["sload", "sload"]
    h, _ = be.explore(t, 200_000)
    bad = [o for o, _ in h.outcomes() if not res.allows(o)]
    assert bad and all(o["P1:r0"] == 0 for o in bad)


# --- evidence, cache, command line -------------------------------------------------------------

def test_evidence_names_compiler_command_and_marks_instructions():
    be = hw.get_backend("isa:gfx942:drop-inv")
    md = be.evidence(litmus.parse(MP.replace(".S", ".agent")))
    assert toolchain.version() in md and "clang-22 -x cl" in md and "-mcpu=gfx942" in md
    assert "__scoped_atomic_load_n" in md and "```c" in md
    assert ">> global_load_dword" in md and "<- ld.atom.acq.agent r0, y" in md
    assert "!! buffer_inv sc1" in md and "[drop-inv: removed]" in md


def test_cache_falls_back_when_home_cannot_be_written(tmp_path, monkeypatch):
    # a HOME (and XDG cache) under which no folder can be made — as a read-only HOME, also
    # when the tests run as root (who may write a read-only directory): a plain file
    ro = tmp_path / "not-a-directory"
    ro.write_text("")
    monkeypatch.delenv("SCOPEFUZZ_ISA_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(ro))
    monkeypatch.setenv("HOME", str(ro))
    toolchain.cache_dir.cache_clear()
    try:
        d = toolchain.cache_dir()
        assert d is not None and not d.startswith(str(ro))
    finally:
        toolchain.cache_dir.cache_clear()


def test_compile_cache_hits_and_distinguishes_targets(tmp_path, monkeypatch):
    monkeypatch.setenv("SCOPEFUZZ_ISA_CACHE", str(tmp_path))
    toolchain.cache_dir.cache_clear()
    monkeypatch.setattr(toolchain, "_MEMO", {})
    try:
        src = "__kernel void k(__global int *m) { m[0] = 1; }\n"
        a = toolchain.compile_source(src, targets.TARGETS["gfx942"])
        toolchain._MEMO.clear()
        b = toolchain.compile_source(src, targets.TARGETS["gfx942"])
        c = toolchain.compile_source(src, targets.TARGETS["gfx1200"])
        assert not a.cached and b.cached and b.disasm == a.disasm
        assert not c.cached and "global_store_b32" in c.disasm
        assert len(list(tmp_path.glob("*.json"))) == 2
    finally:
        toolchain.cache_dir.cache_clear()


def test_run_json_and_codegen_cli(capsys, tmp_path):
    f = tmp_path / "mp.litmus"
    f.write_text(MP.replace(".S", ".agent"))
    assert main(["run", "--backend", "isa:gfx1200", "--json", "--iterations", "200",
                 str(f)]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["backend"] == "isa:gfx1200" and obj["forbidden"] == 0
    assert main(["codegen", "--dialect", "isa", "--target", "gfx942",
                 str(CORPORA / "barrier" / "wg" / "BAR+fences.wg.xwave.litmus")]) == 0
    out = capsys.readouterr().out
    assert "hand lowering" in out and "s_load_dword" in out and "scalar-load" in out
    assert main(["codegen", "--dialect", "isa", "--target", "gfx803", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown isa target" in err and "\n" not in err


def test_mutants_command_lists_isa_mutants(capsys):
    assert main(["mutants"]) == 0
    out = capsys.readouterr().out
    for name, m in MUTANTS.items():
        assert f"isa:TARGET:{name}" in out and m.summary in out


# --- finding 2: docs/isa.md -------------------------------------------------------------------

WRC_LDS = """AMDGPU WRC+lds.wg+rel.agent
{ x = 0; z = 0; lds y = 0; }
 P0@wave 0, wg 0       | P1@wave 1, wg 0        | P2@wg 1                 ;
 st.atom.agent x, 1    | ld.atom.acq.wg r0, y   | ld.atom.acq.agent r1, z ;
 st.atom.rel.wg y, 1   | st.atom.rel.agent z, 1 | ld.atom.agent r2, x     ;
exists (P1:r0 == 1 /\\ P2:r1 == 1 /\\ P2:r2 == 0)
"""


def test_gfx9_workgroup_release_is_not_cumulative_through_another_waves_release():
    t = litmus.parse(WRC_LDS)
    res = oracle.check(t)
    assert res.verdict == "No"
    b = build(WRC_LDS, "gfx942")
    p0 = [e.kind for e in b.threads[0].events if e.kind != "wait" or
          any(n == "vmcnt" for n, _ in e.waits)]
    assert p0 == ["store", "lstore"]                   # no vmcnt wait before the LDS release
    h = hw.get_backend("isa:gfx942").run(t, 1_000_000, 1)
    assert any(not res.allows(o) for o, _ in h.outcomes())
    # GFX12's workgroup release waits for the store (s_wait_storecnt) and shows nothing
    h = hw.get_backend("isa:gfx1200").run(t, 1_000_000, 1)
    assert all(res.allows(o) for o, _ in h.outcomes())

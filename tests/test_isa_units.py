"""The isa backend's parts without a compiler: objdump parsing, the value interpreter, the cache-bit
tables, mutant edits, backend names.

Inputs are objdump listings written here by hand in objdump's format (the instruction sequences
are those of ../shared/notes/amdgpu-isa-clang22.md and of clang-22's atomic optimizer); the
expected meanings come from LLVM's AMDGPUUsage memory-model tables as restated in
../shared/notes/llvm-amdgpu.md §4 (cited per test), not from running the code under test.
"""

from __future__ import annotations

import pytest

from hw.backend import BackendError
from hw.isa import disasm, interp, mutants, targets, translate
from hw.isa.interp import Event, Ptr, Sym, TranslateError
from hw.sim.uops import CNT_KM, CNT_LGKM, CNT_LOAD, CNT_STORE, CNT_VM, INV1, INV2, WB2

KERNARG = {0: Ptr("m", 0), 1: Ptr("m", 0, hi=True), 2: 0}


def listing(*lines: str, name: str = "wg0") -> str:
    """An objdump-format listing of ``lines`` (4-byte addresses; raw bytes are not read)."""
    out = [f"0000000000000000 <{name}>:"]
    addr = 0
    for ln in lines:
        text, _, label = ln.partition(" @")
        tail = f" <{name}+0x{int(label, 16):x}>" if label else ""
        out.append(f"\t{text:<58} // {addr:012X}: BF800000{tail}")
        addr += 4
    return "\n".join(out) + "\n"


def run(lines, target="gfx942", lid=0):
    k = disasm.parse(listing(*lines))["wg0"]
    return interp.Thread(k, targets.TARGETS[target], lid, KERNARG, "P0").run()


# --- objdump parsing -----------------------------------------------------------------------------

def test_parse_operands_modifiers_and_branch_targets():
    text = listing("s_load_dwordx2 s[0:1], s[0:1], 0x0",
                   "global_load_dword v1, v0, s[0:1] offset:16 sc0 sc1",
                   "s_cbranch_execz 1 @c",
                   "v_dual_mov_b32 v1, 0 :: v_dual_mov_b32 v2, s1",
                   "s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1")
    k = disasm.parse(text + "0000000000000100 <__clang_ocl_kern_imp_wg0>:\n"
                            "\ts_endpgm  // 000000000100: BF810000\n")
    assert list(k) == ["wg0"]                     # the callable clone is not a kernel we read
    code = k["wg0"].code
    assert code[1].ops == ("v1", "v0", "s[0:1]")
    assert code[1].mods == ("offset:16", "sc0", "sc1")
    assert code[1].parts[0].mod("offset") == "16"
    assert code[2].target == 0xC
    assert [p.mnemonic for p in code[3].parts] == ["v_dual_mov_b32", "v_dual_mov_b32"]
    assert code[3].parts[1].ops == ("v2", "s1")
    assert code[4].ops == ("hwreg(HW_REG_WAVE_MODE, 25, 1)", "1")   # commas inside parens


def test_cache_instruction_bits_are_modifiers_not_operands():
    k = disasm.parse(listing("buffer_wbl2 sc0 sc1", "global_inv scope:SCOPE_DEV",
                             "s_waitcnt vmcnt(0) lgkmcnt(0)"))["wg0"]
    assert k.code[0].ops == () and k.code[0].mods == ("sc0", "sc1")
    assert k.code[1].mods == ("scope:SCOPE_DEV",)
    assert k.code[2].ops == ("vmcnt(0)", "lgkmcnt(0)")


# --- the value interpreter -----------------------------------------------------------------------

def test_release_store_sequence_gfx942():
    # notes amdgpu-isa-clang22.md gfx942 st_rel_dev, in a thread with an earlier store
    evs = run(["s_load_dwordx2 s[0:1], s[0:1], 0x0", "v_mov_b32_e32 v0, 0",
               "v_mov_b32_e32 v1, 1", "s_waitcnt lgkmcnt(0)",
               "global_store_dword v0, v1, s[0:1]", "buffer_wbl2 sc1",
               "s_waitcnt vmcnt(0)", "global_store_dword v0, v1, s[0:1] offset:64 sc1",
               "s_endpgm"])
    kinds = [(e.kind, e.addr, e.value, e.op, e.mods, e.waits) for e in evs]
    assert kinds == [
        ("wait", None, None, None, (), (("lgkmcnt", 0),)),
        ("store", 0, 1, None, (), ()),
        ("cache", None, None, "buffer_wbl2", ("sc1",), ()),
        ("wait", None, None, None, (), (("vmcnt", 0),)),
        ("store", 64, 1, None, ("offset:64", "sc1"), ()),
    ]


def test_atomic_optimizer_sequence_is_one_rmw_whose_result_passes_through():
    # clang-22's atomic optimizer for fetch_add(p + 16, 1) at system scope on gfx942: one lane
    # adds popcount(exec) * 1; the result is readfirstlane(old) + mbcnt (0 for lane 0)
    evs = run(["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_mov_b64 s[4:5], exec",
               "v_mbcnt_lo_u32_b32 v0, s4, 0", "v_mbcnt_hi_u32_b32 v0, s5, v0",
               "v_cmp_eq_u32_e32 vcc, 0, v0", "s_and_saveexec_b64 s[0:1], vcc",
               "s_cbranch_execz 6 @28", "s_bcnt1_i32_b64 s4, s[4:5]", "v_mov_b32_e32 v1, 0",
               "v_mov_b32_e32 v2, s4", "global_atomic_add v1, v1, v2, s[2:3] offset:64 sc0 sc1",
               "s_or_b64 exec, exec, s[0:1]", "s_waitcnt vmcnt(0)",
               "v_readfirstlane_b32 s8, v1", "v_add_u32_e32 v0, s8, v0",
               "v_mov_b32_e32 v5, 0x1000", "global_store_dword v5, v0, s[2:3]", "s_endpgm"])
    rmw = [e for e in evs if e.kind == "rmw"]
    assert len(rmw) == 1 and rmw[0].op == "add" and rmw[0].value == 1 and rmw[0].addr == 64
    out = [e for e in evs if e.kind == "store"]
    assert out[0].addr == 0x1000 and out[0].value == rmw[0].dst      # old value, unchanged


def test_role_selection_skips_other_threads_code():
    lines = ["v_cmp_eq_u32_e32 vcc, 64, v0", "s_and_saveexec_b64 s[2:3], vcc",
             "s_cbranch_execz 2 @18", "s_load_dwordx2 s[0:1], s[0:1], 0x0",
             "v_mov_b32_e32 v1, 0", "global_load_dword v2, v1, s[0:1] offset:128",
             "s_or_b64 exec, exec, s[2:3]", "s_endpgm"]
    assert [e.kind for e in run(lines, lid=64)] == ["load"]
    assert run(lines, lid=0) == []


def test_memory_instructions_of_an_inactive_lane_do_nothing():
    # GFX11+ code where clang-22 does not branch around another role's short block: the block
    # runs with this thread's lane off in EXEC; its global and LDS accesses must not happen for
    # it, and a load must not write its destination (AMDGPU ISA: vector instructions, memory
    # included, act only for the lanes EXEC enables)
    lines = ["v_cmp_eq_u32_e32 vcc, 64, v0", "s_and_saveexec_b64 s[2:3], vcc",
             "s_load_dwordx2 s[0:1], s[0:1], 0x0", "v_mov_b32_e32 v1, 0",
             "v_mov_b32_e32 v3, 7", "global_load_dword v2, v1, s[0:1] offset:128",
             "global_store_dword v1, v3, s[0:1] offset:256", "ds_write_b32 v1, v3",
             "s_or_b64 exec, exec, s[2:3]", "s_endpgm"]
    assert run(lines, lid=0) == []
    assert [e.kind for e in run(lines, lid=64)] == ["load", "store", "lstore"]


def test_unknown_instruction_is_an_error_naming_it():
    with pytest.raises(TranslateError, match="v_frobnicate_b32"):
        run(["v_frobnicate_b32 v0, v1", "s_endpgm"])


def test_branch_on_a_loaded_value_is_an_error():
    with pytest.raises(TranslateError, match="loaded from memory"):
        run(["s_load_dwordx2 s[0:1], s[0:1], 0x0", "v_mov_b32_e32 v0, 0",
             "global_load_dword v1, v0, s[0:1]", "s_waitcnt vmcnt(0)",
             "v_cmp_eq_u32_e32 vcc, 1, v1", "s_and_saveexec_b64 s[2:3], vcc", "s_endpgm"])


def test_scalar_load_of_test_memory_is_an_event():
    evs = run(["s_load_dwordx2 s[0:1], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)",
               "s_load_dword s2, s[0:1], 0x40", "s_endpgm"])
    assert [(e.kind, e.addr, e.counter) for e in evs if e.kind == "sload"] == [("sload", 64,
                                                                                "lgkm")]


def test_gfx12_combined_wait_fields():
    # LLVM AMDGPUBaseInfo: loadcnt/storecnt in bits [13:8], dscnt in bits [5:0]
    evs = run(["s_wait_loadcnt_dscnt 0x102", "s_wait_storecnt_dscnt 0x300", "s_endpgm"],
              target="gfx1200")
    assert evs[0].waits == (("loadcnt", 1), ("dscnt", 2))
    assert evs[1].waits == (("storecnt", 3), ("dscnt", 0))


def test_lds_rmw_reads_its_data_before_writing_the_destination():
    evs = run(["v_mov_b32_e32 v0, 0", "v_mov_b32_e32 v1, 5", "ds_wrxchg_rtn_b32 v1, v0, v1",
               "s_endpgm"])
    assert evs[0].kind == "lrmw" and evs[0].value == 5 and evs[0].op == "xchg"
    assert isinstance(evs[0].dst, Sym)


# --- what each bit means (notes llvm-amdgpu.md §4.1-§4.5) ----------------------------------------

def ev(kind, *mods, op=None):
    return Event(0, kind, addr=0, op=op, mods=tuple(mods))


@pytest.mark.parametrize("target,kind,mods,level", [
    ("gfx942", "load", (), 0),                       # wavefront: plain
    ("gfx942", "load", ("sc0",), 0),                 # workgroup: sc0, same CU
    ("gfx942", "load", ("sc1",), 1),                 # agent: sc1 misses the L1
    ("gfx942", "load", ("sc0", "sc1"), 2),           # system
    ("gfx942", "rmw", ("sc0",), 1),                  # sc0 = return the old value
    ("gfx942", "rmw", ("sc0", "sc1"), 2),            # sc1 = system coherence
    ("gfx942", "store", ("sc1",), 1),
    ("gfx942", "store", ("sc0", "sc1"), 2),
    ("gfx90a", "load", ("glc",), 1),
    ("gfx90a", "load", (), 0),
    ("gfx1100", "load", ("glc",), 1),
    ("gfx1200", "load", ("scope:SCOPE_SE",), 1),     # WGP-mode workgroup: misses the CU's L0
    ("gfx1200", "load", ("scope:SCOPE_DEV",), 1),
    ("gfx1200", "load", ("scope:SCOPE_SYS",), 2),
    ("gfx1250", "load", (), 0),
    ("gfx1250", "store", ("scope:SCOPE_SYS",), 2),
])
def test_access_level(target, kind, mods, level):
    assert translate.level(targets.TARGETS[target], ev(kind, *mods)) == level


def test_workgroup_scope_misses_l1_in_tgsplit_mode():
    t = targets.with_options(targets.TARGETS["gfx942"], ["tgsplit"])
    assert translate.level(t, ev("load", "sc0")) == 1


@pytest.mark.parametrize("target,op,mods,uops", [
    ("gfx90a", "buffer_wbinvl1_vol", (), [INV1]),
    ("gfx90a", "buffer_invl2", (), [INV2]),
    ("gfx90a", "buffer_wbl2", (), [WB2]),
    ("gfx942", "buffer_inv", ("sc1",), [INV1]),
    ("gfx942", "buffer_inv", ("sc0", "sc1"), [INV2, INV1]),
    ("gfx942", "buffer_wbl2", ("sc1",), []),         # other L2s of one agent: not modelled
    ("gfx942", "buffer_wbl2", ("sc0", "sc1"), [WB2]),
    ("gfx1100", "buffer_gl0_inv", (), [INV1]),
    ("gfx1100", "buffer_gl1_inv", (), []),           # GL1 not modelled
    ("gfx1200", "global_inv", ("scope:SCOPE_DEV",), [INV1]),
    ("gfx1200", "global_inv", ("scope:SCOPE_SYS",), [INV2, INV1]),
    ("gfx1200", "global_wb", ("scope:SCOPE_SYS",), [WB2]),
    ("gfx1250", "global_wb", ("scope:SCOPE_DEV",), []),
])
def test_cache_instructions(target, op, mods, uops):
    got = translate.cache_uops(targets.TARGETS[target], ev("cache", *mods, op=op))
    assert [u[0] for u in got] == uops


def test_counters_per_family():
    assert translate.WAITS["gfx9"]["vmcnt"] == CNT_VM
    assert translate.WAITS["gfx11"]["vmcnt"] == CNT_LOAD        # GFX10+: vmcnt = loads
    assert translate.WAITS["gfx11"]["vscnt"] == CNT_STORE
    assert translate.WAITS["gfx12"]["dscnt"] == CNT_LGKM
    assert translate.WAITS["gfx12"]["kmcnt"] == CNT_KM
    assert translate.COUNTERS["gfx11"]["store"] == CNT_STORE


# --- mutants ---------------------------------------------------------------------------------------

def _acq_rel_events():
    return [Event(0, "store", addr=0, value=1, counter="store"),
            Event(1, "cache", op="buffer_wbl2", mods=("sc1",)),
            Event(2, "wait", waits=(("vmcnt", 0), ("lgkmcnt", 0))),
            Event(3, "store", addr=64, value=1, mods=("sc1",), counter="store"),
            Event(4, "load", addr=64, dst=Sym(0), mods=("sc1",), counter="load"),
            Event(5, "wait", waits=(("vmcnt", 0),)),
            Event(6, "cache", op="buffer_inv", mods=("sc1",)),
            Event(7, "barrier", op="arrive", bar=-1)]


def test_drop_inv_and_drop_wbl2_remove_exactly_their_instructions():
    t = targets.TARGETS["gfx942"]
    out, edits = mutants.apply("drop-inv", t, _acq_rel_events())
    assert [e.index for e in out] == [0, 1, 2, 3, 4, 5, 7] and [e.index for e in edits] == [6]
    out, edits = mutants.apply("drop-wbl2", t, _acq_rel_events())
    assert [e.index for e in out] == [0, 2, 3, 4, 5, 6, 7] and [e.index for e in edits] == [1]


def test_drop_vmcnt_keeps_lgkmcnt_and_waits_not_before_a_store():
    out, edits = mutants.apply("drop-vmcnt", targets.TARGETS["gfx942"], _acq_rel_events())
    waits = {e.index: e.waits for e in out if e.kind == "wait"}
    assert waits[2] == (("lgkmcnt", 0),)             # before the store: vmcnt gone
    assert waits[5] == (("vmcnt", 0),)               # before the barrier: kept
    assert [e.index for e in edits] == [2]


def test_drop_barrier_waits_removes_the_waits_before_an_arrive():
    out, edits = mutants.apply("drop-barrier-waits", targets.TARGETS["gfx942"],
                               _acq_rel_events())
    assert 5 not in [e.index for e in out] and [e.index for e in edits] == [5]


def test_weaken_scope_bits_lowers_one_level():
    t = targets.TARGETS["gfx942"]
    out, _ = mutants.apply("weaken-scope-bits", t, [ev("load", "sc0", "sc1"), ev("load", "sc1"),
                                                   ev("load", "sc0"), ev("rmw", "sc0", "sc1")])
    assert [set(e.mods) for e in out] == [{"sc1"}, {"sc0"}, set(), {"sc0"}]
    out, _ = mutants.apply("weaken-scope-bits", targets.TARGETS["gfx1200"],
                           [ev("load", "scope:SCOPE_SYS"), ev("load", "scope:SCOPE_SE")])
    assert [e.mods for e in out] == [("scope:SCOPE_DEV",), ("scope:SCOPE_CU",)]


# --- backend names ---------------------------------------------------------------------------------

def test_backend_names():
    t, m = targets.parse_spec("gfx942,tgsplit:drop-inv", mutants.MUTANTS)
    assert (t.name, t.tgsplit, t.noscalar, m) == ("gfx942", True, True, "drop-inv")
    t, m = targets.parse_spec("gfx942:drop-wbl2,mtype=RW", mutants.MUTANTS)
    assert t.mtype == "RW" and m == "drop-wbl2"          # a given option overrides the default
    assert "-mcumode" in targets.parse_spec("gfx1200,cumode", {})[0].clang_flags()
    for bad, msg in [("gfx803", "unknown isa target"), ("gfx942:nope", "unknown isa mutant"),
                     ("gfx1200,tgsplit", "tgsplit exists"), ("gfx942,bogus", "unknown isa option"),
                     ("", "needs a target")]:
        with pytest.raises(BackendError, match=msg):
            targets.parse_spec(bad, mutants.MUTANTS)


def test_other_dialects_are_refused_before_anything_is_compiled():
    """A Vulkan test (corpora/thinair) is refused with a one-line reason naming its dialect, not
    an error from printing it in the AMDGPU dialect."""
    import litmus
    from hw.backend import BackendRefused
    from hw.isa.backend import IsaBackend
    t = litmus.parse("""Vulkan LB+copy
{ x=0; y=0; P0:r0=0; P1:r1=0; }
 P0@sg 0, wg 0, qf 0  | P1@sg 0, wg 0, qf 0  ;
 ld.atom.wg.sc0 r0, x | ld.atom.wg.sc0 r1, y ;
 st.atom.wg.sc0 y, r0 | st.atom.wg.sc0 x, r1 ;
exists (P0:r0 == 1 /\\ P1:r1 == 1)
""")
    with pytest.raises(BackendRefused, match="reads the AMDGPU dialect, not Vulkan") as e:
        IsaBackend(targets.TARGETS["gfx942"]).run(t, 10)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name,top", [("gfx90a", 1), ("gfx1100", 1), ("gfx942", 2),
                                      ("gfx950", 2), ("gfx1200", 2), ("gfx1250", 2)])
def test_top_level_is_the_highest_level_the_bits_name(name, top):
    """AMDGPUUsage (notes §4.1): GFX90A's system-scope load atomic is ``glc=1`` (the agent bit;
    stores and atomics carry none), GFX11 likewise; GFX942 has ``sc0 sc1`` and GFX12
    ``scope:SCOPE_SYS`` for system scope."""
    assert translate.top_level(targets.TARGETS[name]) == top


def test_level_at_the_tables_level_is_not_a_weakening():
    """A system-scope access compiled with ``glc`` on gfx90a is what the table asks (the hand
    lowering's system level is stronger than the ISA can name): not a bucket cause. The same
    difference on gfx942 (which has ``sc0 sc1``), or a system load left in the L1 on gfx90a, is."""
    from hw.isa.culprit import _weaker
    t = targets.TARGETS
    for kind in ("level:gld:sys->L2", "level:gcas:sys->L2", "level:grmw:sys->L2",
                 "level:gst:sys->L2"):
        assert not _weaker(kind, t["gfx90a"]) and not _weaker(kind, t["gfx1100"])
        assert _weaker(kind, t["gfx942"]) and _weaker(kind, t["gfx1200"])
    assert _weaker("level:gld:sys->L1", t["gfx90a"])
    assert _weaker("level:gld:L2->L1", t["gfx90a"])
    assert _weaker("missing-wait:vmcnt", t["gfx90a"])
    assert not _weaker("extra-wait:vmcnt", t["gfx90a"])

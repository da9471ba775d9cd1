"""The PTX reader (hw/ptxc/read.py) on hand-written PTX: each case's expected litmus rows are
derived by hand from the PTX ISA (the default or qualifier under test), not from the reader.

The source test fixes the layout the PTX follows: locations x (param 0) and y (param 1), the
output array (param 2); P0 stores its register r0 to out[0], P1 its r1 to out[1]. The reader's
own registers start at r10 (the source uses r0, r1).
"""

from __future__ import annotations

import pytest

from hw import BackendError
from hw.ptxc import read_ptx
from litmus.parse_c import parse_c
from litmus.parse_ptx import parse_ptx

SOURCE = parse_c("""C hand
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) { int r0 = atomic_load_explicit(x, memory_order_relaxed); }
P1 (atomic_int* x, atomic_int* y) { int r1 = atomic_load_explicit(y, memory_order_relaxed); }
exists (0:r0=1 /\\ 1:r1=1)
""")

PRELUDE = """.reg .b32 %r<30>;
.reg .b64 %rd<30>;
.reg .pred %p<10>;
ld.param.u64 %rd11, [{k}_param_0];
cvta.to.global.u64 %rd1, %rd11;
ld.param.u64 %rd12, [{k}_param_1];
cvta.to.global.u64 %rd2, %rd12;
ld.param.u64 %rd13, [{k}_param_2];
cvta.to.global.u64 %rd3, %rd13;
"""


def module(p0: str, p1: str = "ret;") -> str:
    """Per-role kernels P0 and P1 with the layout's parameters and the bodies given."""
    out = [".version 8.0", ".target sm_90", ".address_size 64"]
    for k, body in (("P0", p0), ("P1", p1)):
        out.append(f".visible .entry {k}(.param .u64 {k}_param_0, .param .u64 {k}_param_1, "
                   f".param .u64 {k}_param_2)")
        out.append("{")
        out.append(PRELUDE.format(k=k))
        out.append(body)
        out.append("}")
    return "\n".join(out) + "\n"


def rows(p0_cells: list[str], p1_cells: list[str]):
    """The expected thread codes, parsed from PTX-dialect cells."""
    table = [["P0@cta 0,gpu 0", "P1@cta 1,gpu 0"]]
    for i in range(max(len(p0_cells), len(p1_cells))):
        table.append([p0_cells[i] if i < len(p0_cells) else "",
                      p1_cells[i] if i < len(p1_cells) else ""])
    text = "PTX expected\n{ x=0; y=0; P0:r0=0; P1:r1=0; }\n" + "\n".join(
        " " + " | ".join(r) + " ;" for r in table) + "\nexists (P0:r0 == 1 /\\ P1:r1 == 1)\n"
    t = parse_ptx(text)
    return [th.code for th in t.threads]


def read(p0: str, p1: str = "ret;"):
    test, origin = read_ptx(SOURCE, module(p0, p1), per_role=True)
    return test, origin


def codes(p0: str, p1: str = "ret;"):
    test, _ = read(p0, p1)
    return [th.code for th in test.threads]


# --- defaults (PTX ISA) ----------------------------------------------------------------------------

def test_plain_ld_st_are_weak():
    # ld/st without .sem are weak (PTX ISA 9.7.9.8 / 9.7.9.10)
    got = codes("st.global.u32 [%rd2], 1;\nld.global.u32 %r1, [%rd1];\n"
                "st.global.u32 [%rd3], %r1;\nret;")
    assert got == rows(["st.weak y, 1", "ld.weak r10, x", "ld r0, r10"], [])


def test_atom_and_red_default_to_relaxed_gpu():
    # atom/red without .sem are .relaxed, without scope .gpu (9.7.13.5, 9.7.13.6)
    got = codes("atom.global.add.u32 %r1, [%rd1], 1;\nred.global.or.b32 [%rd2], 2;\n"
                "st.global.u32 [%rd3], %r1;\nret;")
    assert got == rows(["atom.relaxed.gpu.add r10, x, 1", "red.relaxed.gpu.or y, 2", "ld r0, r10"],
                       [])


def test_fence_without_sem_is_acq_rel_and_membar_is_fence_sc():
    got = codes("fence.gpu;\nmembar.gl;\nmembar.cta;\nmembar.sys;\nret;")
    # (the dialect reads membar.LEVEL as fence.sc.SCOPE, keeping a 'membar' mark)
    assert got == rows(["fence.acq_rel.gpu", "membar.gl", "membar.cta", "membar.sys"], [])
    assert [(i.order, i.scope) for i in got[0]] == [("acq_rel", "agent"), ("sc", "agent"),
                                                    ("sc", "wg"), ("sc", "sys")]


def test_strong_access_without_scope_is_gpu():
    got = codes("ld.relaxed.global.u32 %r1, [%rd1];\nst.global.u32 [%rd3], %r1;\nret;")
    assert got == rows(["ld.relaxed.gpu r10, x", "ld r0, r10"], [])


# --- qualifiers -------------------------------------------------------------------------------------

def test_each_qualifier_and_scope():
    got = codes(
        "ld.acquire.cta.global.u32 %r1, [%rd1];\n"
        "ld.relaxed.cluster.u32 %r2, [%rd2];\n"          # generic state space
        "st.release.sys.global.b32 [%rd2], %r1;\n"
        "ld.volatile.global.u32 %r3, [%rd1];\n"
        "st.volatile.global.u32 [%rd1], 3;\n"
        "ld.mmio.relaxed.sys.global.u32 %r4, [%rd1];\n"
        "atom.acq_rel.sys.global.exch.b32 %r5, [%rd1], 4;\n"
        "atom.acquire.gpu.global.cas.b32 %r6, [%rd2], 0, %r5;\n"
        "atom.release.cta.global.min.s32 %r7, [%rd2], 1;\n"
        "fence.sc.cluster;\nfence.acq_rel.sys;\n"
        "st.global.u32 [%rd3], %r1;\nret;")
    assert got == rows([
        "ld.acquire.cta r10, x", "ld.relaxed.cluster r11, y", "st.release.sys y, r10",
        "ld.volatile r12, x", "st.volatile x, 3", "ld.relaxed.sys r13, x",
        "atom.acq_rel.sys.exch r14, x, 4", "atom.acquire.gpu.cas r15, y, 0, r14",
        "atom.release.cta.min r16, y, 1", "fence.sc.cluster", "fence.acq_rel.sys", "ld r0, r10"],
        [])


def test_cache_hints_are_ignored_but_nc_loads_refused():
    got = codes("ld.global.cg.L1::no_allocate.u32 %r1, [%rd1];\nst.global.u32 [%rd3], %r1;\nret;")
    assert got == rows(["ld.weak r10, x", "ld r0, r10"], [])
    with pytest.raises(BackendError, match=r"ptx line \d+: .*ld.global.nc"):
        read("ld.global.nc.u32 %r1, [%rd1];\nret;")


# --- control flow -------------------------------------------------------------------------------------

def test_branch_on_a_loaded_value():
    # setp + @p bra become one beq/bne (the predicate has no other use)
    got = codes("ld.acquire.gpu.global.u32 %r1, [%rd1];\n"
                "setp.ne.s32 %p1, %r1, 1;\n@%p1 bra $L__BB0_2;\n"
                "st.relaxed.gpu.global.u32 [%rd2], 1;\n"
                "$L__BB0_2:\nst.global.u32 [%rd3], %r1;\nret;")
    assert got == rows(["ld.acquire.gpu r10, x", "bne r10, 1, LC01", "st.relaxed.gpu y, 1",
                        "LC01:", "ld r0, r10"], [])


def test_predicated_store():
    # @%p st ... executes only when p holds: a branch around it
    got = codes("ld.relaxed.gpu.global.u32 %r1, [%rd1];\n"
                "setp.eq.s32 %p1, %r1, 1;\n"
                "mov.u32 %r2, 5;\n"
                "@%p1 st.relaxed.gpu.global.u32 [%rd2], %r2;\n"
                "st.global.u32 [%rd3], %r1;\nret;")
    assert got == rows(["ld.relaxed.gpu r10, x",
                        "ld r11, 1", "beq r10, 1, LC01", "ld r11, 0", "LC01:",
                        "beq r11, 0, LC02", "st.relaxed.gpu y, 5", "LC02:", "ld r0, r10"], [])


def test_cas_loop():
    # a CAS loop: retry until the cas read the expected value; the back edge is a goto
    got = codes("ld.relaxed.gpu.global.u32 %r1, [%rd1];\n"
                "$L__BB0_1:\n"
                "add.s32 %r2, %r1, 1;\n"
                "atom.relaxed.gpu.global.cas.b32 %r3, [%rd1], %r1, %r2;\n"
                "setp.ne.s32 %p1, %r3, %r1;\n"
                "mov.u32 %r1, %r3;\n"
                "@%p1 bra $L__BB0_1;\n"
                "st.global.u32 [%rd3], %r3;\nret;")
    assert got == rows(["ld.relaxed.gpu r10, x",
                        "LC01:",
                        "add r11, r10, 1",
                        "atom.relaxed.gpu.cas r12, x, r10, r11",
                        "ld r13, 1", "bne r12, r10, LC02", "ld r13, 0", "LC02:",
                        "ld r10, r12",
                        "bne r13, 0, LC01",
                        "ld r0, r12"], [])


def test_selp_is_a_branch():
    got = codes("ld.relaxed.gpu.global.u32 %r1, [%rd1];\n"
                "setp.eq.s32 %p1, %r1, 2;\n"
                "selp.u32 %r2, 7, 9, %p1;\n"
                "st.global.u32 [%rd3], %r2;\nret;")
    assert got == rows(["ld.relaxed.gpu r10, x",
                        "ld r11, 1", "beq r10, 2, LC01", "ld r11, 0", "LC01:",
                        "ld r12, 7", "bne r11, 0, LC02", "ld r12, 9", "LC02:",
                        "ld r0, r12"], [])


def test_role_switch_folds_to_the_roles_own_code():
    # one kernel: gid = tid.x + ctaid.x * ntid.x; P0 is gid 0 (cta 0), P1 gid 1 (cta 1)
    body = PRELUDE.format(k="litmus") + """
mov.u32 %r2, %tid.x;
mov.u32 %r3, %ctaid.x;
mov.u32 %r4, %ntid.x;
mad.lo.s32 %r5, %r3, %r4, %r2;
setp.eq.s32 %p1, %r5, 1;
@%p1 bra $L__BB0_3;
setp.ne.s32 %p2, %r5, 0;
@%p2 bra $L__BB0_4;
ld.acquire.sys.global.u32 %r6, [%rd1];
st.global.u32 [%rd3], %r6;
bra.uni $L__BB0_4;
$L__BB0_3:
ld.relaxed.sys.global.u32 %r7, [%rd2];
st.global.u32 [%rd3+4], %r7;
$L__BB0_4:
ret;
"""
    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry litmus("
           ".param .u64 litmus_param_0, .param .u64 litmus_param_1, "
           ".param .u64 litmus_param_2)\n{\n" + body + "}\n")
    test, _ = read_ptx(SOURCE, ptx, per_role=False)
    assert [th.code for th in test.threads] == rows(["ld.acquire.sys r10, x", "ld r0, r10"],
                                                    ["ld.relaxed.sys r10, y", "ld r1, r10"])


def test_called_function_is_inlined_and_local_memory_is_registers():
    # the clang-ocl wrapper: the entry passes its parameters to a .func through .param slots;
    # the -O0 stack (__local_depot) holds values the reader follows as registers
    ptx = """.version 8.0
.target sm_90
.address_size 64
.func impl(.param .b64 impl_param_0, .param .b64 impl_param_1, .param .b64 impl_param_2)
{
.local .align 8 .b8 __local_depot1[16];
.reg .b64 %SP;
.reg .b64 %rd<10>;
.reg .b32 %r<10>;
mov.u64 %SP, __local_depot1;
ld.param.b64 %rd1, [impl_param_0];
ld.param.b64 %rd3, [impl_param_2];
st.u64 [%SP], %rd1;
ld.u64 %rd4, [%SP];
ld.relaxed.sys.u32 %r1, [%rd4];
st.u32 [%SP+8], %r1;
ld.u32 %r2, [%SP+8];
st.global.u32 [%rd3], %r2;
ret;
}
.entry P0(.param .u64 P0_param_0, .param .u64 P0_param_1, .param .u64 P0_param_2)
{
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [P0_param_0];
ld.param.u64 %rd2, [P0_param_1];
ld.param.u64 %rd3, [P0_param_2];
{
.param .b64 param0;
.param .b64 param1;
.param .b64 param2;
st.param.b64 [param0], %rd1;
st.param.b64 [param1], %rd2;
st.param.b64 [param2], %rd3;
call.uni impl, (param0, param1, param2);
}
ret;
}
.entry P1(.param .u64 P1_param_0, .param .u64 P1_param_1, .param .u64 P1_param_2)
{
ret;
}
"""
    test, origin = read_ptx(SOURCE, ptx, per_role=True)
    assert [th.code for th in test.threads] == rows(
        ["ld.relaxed.sys r10, x", "ld r11, r10", "ld r12, r11", "ld r0, r12"], [])
    # origins name the PTX line and text of each row
    assert origin[0][0][1] == "ld.relaxed.sys.u32 %r1, [%rd4]"
    assert origin[0][0][0] == 15


# --- errors -------------------------------------------------------------------------------------

def test_unknown_instruction_is_an_error_naming_it():
    with pytest.raises(BackendError, match=r"^ptx line 16: unknown instruction 'prmt.b32'"):
        read("prmt.b32 %r1, %r2, %r3, 0;\nret;")


def test_address_from_a_loaded_value_is_an_error():
    with pytest.raises(BackendError, match=r"ptx line \d+: .*not a fixed location"):
        read("ld.global.u64 %rd5, [%rd1];\nld.global.u32 %r1, [%rd5];\nret;")


def test_external_call_is_an_error():
    with pytest.raises(BackendError, match=r"call to a function the PTX does not define"):
        read("{\n.param .b32 param0;\nst.param.b32 [param0], 0;\ncall.uni ext, (param0);\n}\nret;")


def test_missing_kernel_is_an_error():
    with pytest.raises(BackendError, match="no kernel 'P1'"):
        read_ptx(SOURCE, module("ret;").replace(".entry P1", ".entry Q1"), per_role=True)


def test_vector_store_to_the_output_array():
    # a compiler may merge a role's adjacent out[] words into one st.v2: each word is read
    src = parse_c("""C two
{ [x]=0; [y]=0; }
P0 (atomic_int* x, atomic_int* y) { int r0 = atomic_load_explicit(x, memory_order_relaxed);
  int r1 = atomic_load_explicit(y, memory_order_relaxed); }
P1 (atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed); }
exists (0:r0=1 /\\ 0:r1=1)
""")
    ptx = module("ld.relaxed.gpu.global.u32 %r1, [%rd1];\nld.relaxed.gpu.global.u32 %r2, [%rd2];\n"
                 "st.global.v2.u32 [%rd3], {%r1, %r2};\nret;",
                 "st.relaxed.gpu.global.u32 [%rd1], 1;\nret;")
    test, _ = read_ptx(src, ptx, per_role=True)
    text = ("PTX e\n{ x=0; y=0; P0:r0=0; P0:r1=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n"
            " ld.relaxed.gpu r10, x | st.relaxed.gpu x, 1 ;\n ld.relaxed.gpu r11, y | ;\n"
            " ld r0, r10 | ;\n ld r1, r11 | ;\nexists (P0:r0 == 1 /\\ P0:r1 == 1)\n")
    assert [th.code for th in test.threads] == [th.code for th in parse_ptx(text).threads]


# --- calls through function pointers (nvcc -O0 with libcu++) -------------------------------------

#: the shape of libcu++'s fetch_add at cicc -O0: ``__cuda_fetch_weak_if_local(ptr, &bop)`` calls
#: ``__cuda_is_local`` and, only on local memory, the helper it was given as a function pointer
#: (``call %rd3, (...), prototype``); on global memory it returns 0 and the caller does the atom
FPTR_FUNCS = """.func (.param .b32 func_retval0) is_local(.param .b64 is_local_param_0)
{
.reg .b32 %r<2>;
mov.u32 %r1, {local};
st.param.b32 [func_retval0+0], %r1;
ret;
}
.func bop_store(.param .b64 bop_store_param_0, .param .b64 bop_store_param_1)
{
.reg .b64 %rd<3>;
ld.param.u64 %rd1, [bop_store_param_0];
st.relaxed.gpu.u32 [%rd1], 7;
ret;
}
.func (.param .b32 func_retval0) weak_if_local(.param .b64 weak_if_local_param_0,
    .param .b64 weak_if_local_param_1)
{
.reg .pred %p<3>;
.reg .b32 %r<4>;
.reg .b64 %rd<5>;
ld.param.u64 %rd1, [weak_if_local_param_0];
ld.param.u64 %rd3, [weak_if_local_param_1];
{ // callseq 1, 0
.param .b64 param0;
st.param.b64 [param0+0], %rd1;
.param .b32 retval0;
call.uni (retval0), is_local, (param0);
ld.param.b32 %r2, [retval0+0];
}
setp.ne.s32 %p1, %r2, 0;
@%p1 bra $L__LOCAL;
mov.u32 %r3, 0;
bra.uni $L__DONE;
$L__LOCAL:
{ // callseq 2, 0
.param .b64 param0;
st.param.b64 [param0+0], %rd1;
.param .b64 param1;
st.param.b64 [param1+0], %rd1;
prototype_2 : .callprototype ()_ (.param .b64 _, .param .b64 _);
call %rd3, (param0, param1), prototype_2;
}
mov.u32 %r3, 1;
$L__DONE:
st.param.b32 [func_retval0+0], %r3;
ret;
}
"""

FPTR_P0 = """mov.u64 %rd5, {target};
{{ // callseq 3, 0
.param .b64 param0;
st.param.b64 [param0+0], %rd1;
.param .b64 param1;
st.param.b64 [param1+0], %rd5;
.param .b32 retval0;
call.uni (retval0), weak_if_local, (param0, param1);
ld.param.b32 %r8, [retval0+0];
}}
setp.ne.s32 %p2, %r8, 0;
@%p2 bra $L__END;
atom.acq_rel.gpu.global.add.u32 %r1, [%rd1], 1;
st.global.u32 [%rd3], %r1;
$L__END:
ret;"""


def _fptr_module(local: int, target: str = "bop_store") -> str:
    text = module(FPTR_P0.format(target=target))
    head, rest = text.split(".visible .entry P0", 1)
    return head + FPTR_FUNCS.replace("{local}", str(local)) + ".visible .entry P0" + rest


def test_dead_indirect_call_is_dropped_with_its_path():
    # is_local is 0: the call through the function pointer is never reached; the atom is
    test, _ = read_ptx(SOURCE, _fptr_module(0), per_role=True)
    assert test.threads[0].code == rows(["atom.acq_rel.gpu.add r10, x, 1", "ld r0, r10"], [])[0]


def test_live_indirect_call_through_a_constant_is_inlined():
    # is_local is 1: the call reaches bop_store through %rd3 = the address mov'd in P0 and
    # passed through two .param slots; its store is read, and the atom is skipped
    test, origin = read_ptx(SOURCE, _fptr_module(1), per_role=True)
    assert test.threads[0].code == rows(["st.relaxed.gpu x, 7"], [])[0]
    assert origin[0][0][1] == "st.relaxed.gpu.u32 [%rd1], 7"


def test_indirect_call_through_an_unknown_value_is_an_error():
    # the pointer is P0's first parameter (an address of memory, not of a function)
    with pytest.raises(BackendError, match=r"indirect call through %rd3 is not read: its "
                                           r"target is not a constant function address"):
        read_ptx(SOURCE, _fptr_module(1, "%rd1"), per_role=True)

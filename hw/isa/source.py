"""Litmus test -> the OpenCL C that clang-22 compiles for the ``isa`` backend.

One ``__kernel`` per workgroup instance of the test; inside it each thread of the workgroup is
one work-item — lane 0 of its own wave, or lane k of a wave it shares with other threads (lanes of
one wave in the test) — selected by its work-item id, running its instructions as straight-line
code. The instructions are lowered by the ``amdgcn`` dialect of
:mod:`hw.opencl.codegen` (``__scoped_atomic_*``, ``__builtin_amdgcn_fence``, volatile
accesses); barriers and LDS DMA are emitted here.

Why one kernel per workgroup: LDS is shared by the work-items of one workgroup of one dispatch,
and the compiler may (and does) optimise LDS accesses knowing every access in its kernel —
a thread's LDS store that no code of its kernel reads may be deleted. Threads of one workgroup
therefore share one kernel; threads of different workgroups touch only global memory, which no
compiler can reason about across work-groups, so separate kernels lose nothing.

Memory layout (so that the machine code names every location by an immediate offset from one
base pointer ``m``): global location ``k`` at ``m + GLOBAL_STRIDE*k``; the value of the ``j``-th
register observable is stored to ``m + OUT_BASE + GLOBAL_STRIDE*j`` at the end of its thread;
LDS location ``k`` at ``L + LDS_STRIDE*k`` of a ``__local int *L`` kernel argument (dynamic LDS,
whose contents the compiler cannot assume: the test's initial LDS values are the simulator's).
Strides keep accesses out of reach of the load/store merger (adjacent dwords become
``dwordx2``; LDS pairs within 255 dwords become ``ds_read2``).

A test that clang-22 cannot express raises :class:`IsaRefused` with the reason (one line).
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus import Test, format_instr

from ..backend import BackendRefused
from ..opencl.codegen import AmdgcnEmitter, CodegenError
from .targets import Target

GLOBAL_STRIDE = 16          # ints between global locations (64 bytes)
OUT_BASE = 1024             # ints: first output slot (byte offset 4096)
LDS_STRIDE = 257            # ints between LDS locations (1028 bytes)


class IsaRefused(BackendRefused):
    """The test has a construct clang-22 cannot express for this target (one line)."""


@dataclass(frozen=True)
class Role:
    """One thread of the test as it runs in the compiled code."""

    tid: int
    kernel: str            # the kernel (one per workgroup instance)
    lid: int               # its work-item id: lane ``lid % wave size`` of wave ``lid // wave size``


@dataclass(frozen=True)
class Source:
    """The OpenCL C of a test, and where each thread and observable lives in it."""

    text: str
    kernels: tuple[str, ...]
    roles: tuple[Role, ...]             # indexed by thread id
    globals: tuple[str, ...]            # global location k -> name
    lds: tuple[str, ...]                # LDS location k -> name
    outputs: tuple[tuple[int, str], ...]  # output slot j -> (thread, register)
    out_base: int                       # byte offset of output slot 0

    def out_offset(self, j: int) -> int:
        return self.out_base + 4 * GLOBAL_STRIDE * j

    def global_offset(self, name: str) -> int:
        return 4 * GLOBAL_STRIDE * self.globals.index(name)


def refusal(test: Test, target: Target) -> str | None:
    """Why clang-22 cannot express ``test`` for ``target`` (or None)."""
    waves: dict = {}
    for t in range(len(test.threads)):
        waves.setdefault(test.instance(t, "wave"), []).append(t)
    for tids in waves.values():
        if len(tids) < 2:
            continue
        lanes = f"P{tids[0]} and P{tids[1]} are lanes of one wave"
        if target.opt == "-O0":
            return f"{lanes}: at -O0 their code shares stack accesses (one instruction, two lanes)"
        for t in tids:
            for ins in test.threads[t].code:
                if ins is not None and (ins.is_barrier or ins.base == "async.ld"):
                    return (f"{lanes}: P{t}: {format_instr(ins)} in a wave that runs several "
                            "threads' code one after the other (a barrier would be executed once "
                            "per thread; an LDS DMA writes lane-relative addresses)")
    if target.tgsplit and test.lds_locations:
        return "tgsplit mode has no LDS; the test declares LDS locations"
    for tid, th in enumerate(test.threads):
        for ins in th.code:
            if ins is None:
                continue
            what = f"P{tid}: {format_instr(ins)}"
            b = ins.base
            if ins.noav:
                return f"{what}: clang-22 cannot attach the amdgcn-av MMRA (.noav)"
            if b in ("ld", "st") and ins.access in ("vis", "av") and not test.is_lds(ins.loc):
                return (f"{what}: clang-22 has no __builtin_amdgcn_av_load/store "
                        "(availability/visibility intrinsics came after LLVM 22)")
            if b in ("async.mark", "async.wait"):
                return (f"{what}: clang-22 has no __builtin_amdgcn_asyncmark / "
                        "wait_asyncmark")
            if b == "cas" and target.opt == "-O0":
                return (f"{what}: at -O0 a compare-exchange branches on its result, which "
                        "the isa interpreter cannot follow")
            if b == "async.ld" and target.family != "gfx9" and target.name != "gfx1250":
                return (f"{what}: clang-22 has an LDS DMA builtin for GFX9 "
                        "(global_load_lds) and gfx1250 (global_load_async_to_lds) only")
            if b in ("bar.init", "bar.join", "bar.leave") or \
                    (b in ("bar.signal", "bar.wait") and ins.args[0] > 0):
                return (f"{what}: named barriers need barrier objects that OpenCL C in clang-22 "
                        "cannot declare")
            if b in ("bar.signal", "bar.wait"):
                if target.family != "gfx12":
                    return f"{what}: split barriers (s_barrier_signal/wait) need GFX12"
                if ins.args[0] == -3 and target.name != "gfx1250":
                    return f"{what}: the cluster barrier exists on gfx1250 only"
    return None


def _prelude(test: Test, target: Target) -> list[str]:
    return [f"/* scopefuzz isa source for litmus test {test.name} (target {target.label()}).",
            " * One kernel per workgroup; each thread is one lane (work-item id lid). */",
            "#ifdef __MEMORY_SCOPE_CLUSTR",
            "#define SF_MEMORY_SCOPE_CLUSTER __MEMORY_SCOPE_CLUSTR",
            "#else",
            "#define SF_MEMORY_SCOPE_CLUSTER __MEMORY_SCOPE_DEVICE",
            "#endif", ""]


def _lower(em: AmdgcnEmitter, test: Test, target: Target, tid: int, ins) -> list[str]:
    b = ins.base
    if b == "barrier":
        return ["__builtin_amdgcn_s_barrier();"]
    if b == "bar.signal":
        return [f"__builtin_amdgcn_s_barrier_signal({ins.args[0]});"]
    if b == "bar.wait":
        return [f"__builtin_amdgcn_s_barrier_wait({ins.args[0]});"]
    if b == "async.ld":
        src, dst = em.ptr(tid, ins.loc), em.ptr(tid, ins.lds)
        if target.name == "gfx1250":
            return [f"__builtin_amdgcn_global_load_async_to_lds_b32({src}, {dst}, 0, 0);"]
        # GFX9: the synchronous LDS DMA (the compiler orders it; stronger than async.ld)
        return [f"__builtin_amdgcn_global_load_lds({src}, {dst}, 4, 0, 0);"]
    try:
        return em.lower(tid, ins, {"marks": [], "async_ops": []})
    except CodegenError as e:
        raise IsaRefused(str(e)) from None


def generate(test: Test, target: Target) -> Source:
    """The OpenCL C of ``test`` for ``target``; :class:`IsaRefused` when it cannot be written."""
    if test.dialect not in AmdgcnEmitter.READS:         # the emitter below writes the source
        raise IsaRefused(f"the isa backend reads the {'/'.join(AmdgcnEmitter.READS)} dialect, "
                         f"not {test.dialect}")
    if not test.threads:
        raise IsaRefused("the test has no threads")
    why = refusal(test, target)
    if why:
        raise IsaRefused(why)
    em = AmdgcnEmitter(test, None)
    globs = tuple(loc.name for loc in test.globals)
    ldss = tuple(loc.name for loc in test.lds_locations)
    outputs = tuple((t, r) for t in range(len(test.threads)) for r in test.registers(t))
    out_of = {o: j for j, o in enumerate(outputs)}
    base = max(OUT_BASE, GLOBAL_STRIDE * (len(globs) + 1))
    # workgroups in order of their first thread; waves inside a workgroup likewise; threads of
    # one wave are its lanes 0, 1, ...
    wgs: dict = {}
    for t in range(len(test.threads)):
        wgs.setdefault(test.instance(t, "wg"), []).append(t)
    lane_of: dict[int, tuple[int, int]] = {}
    for tids in wgs.values():
        waves: dict = {}
        for t in tids:
            w = waves.setdefault(test.instance(t, "wave"), [len(waves), 0])
            lane_of[t] = (w[0], w[1])
            w[1] += 1
    lines = _prelude(test, target)
    roles: dict[int, Role] = {}
    kernels = []
    for k, tids in enumerate(wgs.values()):
        kname = f"wg{k}"
        kernels.append(kname)
        params = "__global int *m" + (", __local int *L" if ldss else "")
        # at -O0 the kernel calls its body (a clone) unless the body is inlined into it
        inline = "__attribute__((always_inline)) " if target.opt == "-O0" else ""
        lines += [f"{inline}__kernel void {kname}({params})", "{",
                  "  const uint lid = __builtin_amdgcn_workitem_id_x();"]
        for w, tid in enumerate(tids):
            lid = lane_of[tid][0] * target.waves + lane_of[tid][1]
            roles[tid] = Role(tid, kname, lid)
            th = test.threads[tid]
            lines.append(f"  {'if' if w == 0 else '} else if'} (lid == {lid}u) {{")
            code = "; ".join(format_instr(i) for i in th.code if i is not None) or "(empty)"
            lines.append(f"    /* P{tid}: {code} */")
            # a scheduling barrier (no memory effect, so it changes no memory-dependent
            # analysis) at both ends of each thread's code: the optimizer does not merge code
            # that two threads share into one divergent instruction (each thread's code stays
            # its own, as in a kernel of its own). An inline asm would do it too, but LLVM
            # counts it as a memory clobber, which changes the code under test.
            lines.append("    __builtin_amdgcn_sched_barrier(0);")
            used = []
            for ins in th.code:
                if ins is not None:
                    used += [x for x in ins.locations() if x not in used]
            for name in used:
                if test.is_lds(name):
                    lines.append(f"    __local int *{em.ptr(tid, name)} = L + "
                                 f"{LDS_STRIDE * ldss.index(name)};")
                else:
                    lines.append(f"    __global int *{em.ptr(tid, name)} = m + "
                                 f"{GLOBAL_STRIDE * globs.index(name)};")
            for r in test.registers(tid):
                lines.append(f"    int {em.reg(tid, r)} = {test.register_init(tid, r)};")
            for ins in th.code:
                if ins is None:
                    continue
                lines.append(f"    /* {format_instr(ins)} */")
                lines += ["    " + s for s in _lower(em, test, target, tid, ins)]
            if target.name == "gfx1250" and any(i is not None and i.base == "async.ld"
                                                for i in th.code):
                lines.append("    __builtin_amdgcn_s_wait_asynccnt(0);  /* thread end completes "
                             "every async copy */")
            for r in test.registers(tid):
                j = out_of[(tid, r)]
                lines.append(f"    m[{base + GLOBAL_STRIDE * j}] = {em.reg(tid, r)};")
            lines.append("    __builtin_amdgcn_sched_barrier(0);")
        lines += ["  }", "}", ""]
    return Source("\n".join(lines), tuple(kernels), tuple(roles[t] for t in range(len(roles))),
                  globs, ldss, outputs, 4 * base)

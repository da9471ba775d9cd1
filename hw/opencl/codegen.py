"""Litmus test -> OpenCL C kernel for the parallel testing environment (issue 8).

Three kernel languages share one kernel skeleton (:mod:`hw.layout` says which instance each
role of a work-item belongs to); they differ in how each instruction is lowered, one
:class:`Emitter` subclass per kernel language (:data:`EMITTERS`). A kernel language is not a
litmus dialect: the test dialects an emitter lowers are its declared ``READS``; the command line
still names the kernel language ``codegen --dialect`` (DESIGN.md):

``cl3``
    OpenCL C 3.0: ``atomic_*_explicit`` with ``memory_order_*`` / ``memory_scope_*``,
    ``atomic_work_item_fence``, ``work_group_barrier``. For PoCL and any OpenCL 3.0 device.
``ptx``
    OpenCL C 1.2 with inline PTX, for PTX-dialect tests on NVIDIA GPUs (:mod:`hw.opencl.emit_ptx`).
``amdgcn``
    OpenCL C for ROCm with clang builtins: ``__scoped_atomic_*``, ``__builtin_amdgcn_fence`` with
    LLVM scope names, ``__builtin_amdgcn_s_barrier``, the gfx1250 LDS-DMA builtin with
    asyncmark / ``s_wait_asynccnt`` waits and the av load/store builtins when ``__has_builtin``
    says the compiler has them, and a faithful (never weaker) fallback when it does not.

Every construct with no exact equivalent is lowered to something at least as strong; the table
:data:`LOWERINGS` documents each choice and ``docs/opencl.md`` repeats it. Barrier-like
operations become *phase boundaries*: each thread's code is cut at its barrier waits, every
work-item runs phase 0 of all its roles, one workgroup barrier, phase 1 of all roles, and so on.
That is stronger than the test's barriers only when, in every workgroup, the threads wait on the
same barrier objects in the same order (:func:`barrier_problem` says when it is not; the runner
then refuses the test).

``weaken`` is a test-only switch that deliberately miscompiles (``sc-fence-as-acq_rel``: sequentially
consistent fences become acq_rel fences; ``relaxed``: every atomic relaxed and every fence dropped),
so the tests can check that the harness catches a wrong lowering on a real device.
"""

from __future__ import annotations

from litmus import Instr, Test
from litmus.ir import is_acquire, is_release

from ..layout import layout_of
from .emitter import (  # noqa: F401 (the shared skeleton, re-exported for its callers)
    barrier_problem, BOTH_REGIONS, CL3_ORDER, cl3_plan, CL3_SCOPE, CL3_SCOPE_ORDER,
    Cl3Plan, CodegenError, Emitter, GCN_FENCE_SCOPE, GCN_ORDER, GCN_SCOPE,
    Kernel, KERNEL_ARGS, LOWERINGS, RMW_FN, split_phases, wait_objects,
    WEAKENINGS)
from .emit_ptx import PTXEmitter


class CL3Emitter(Emitter):
    """OpenCL C 3.0: ``atomic_*_explicit``, ``atomic_work_item_fence``, ``work_group_barrier``;
    async copies are synchronous, volatile accesses relaxed atomics at the widest scope."""

    name = "cl3"
    ORDERS = CL3_ORDER
    XCHG, FETCH = "atomic_exchange_explicit", "atomic_fetch_{op}_explicit"

    def __init__(self, test: Test, weaken: str | None):
        super().__init__(test, weaken)
        self.plan = cl3_plan(test, weaken)

    def scope(self, s: str, lds: bool) -> str:
        if self.plan.scope:
            return self.plan.scope
        return "SF_SCOPE_WG" if lds else CL3_SCOPE[s]

    def atomic_order(self, o: str) -> str:
        """seq_cst in a test with a seq_cst fence (the plan's ``sc_atomics``)."""
        return "sc" if self.plan.sc_atomics and self.weaken is None else o

    def region_fence(self, o: str) -> list[str]:
        """A test over global and LDS memory: a fence of both regions next to an atomic with
        release (before it) or acquire (after it) semantics, at the plan's scope."""
        if not self.plan.region_fences or self.weaken == "relaxed":
            return []
        scope = self.plan.scope or "SF_SCOPE_WG"
        return [f"atomic_work_item_fence({BOTH_REGIONS}, {CL3_ORDER[o]}, {scope});"]

    def around(self, order: str, fail: str | None, body: list[str]) -> list[str]:
        """``body`` with the region fences its orders need. A seq_cst atomic gets seq_cst fences
        on both sides: OpenCL's SC order sees program order only inside one region's
        happens-before, and an SC fence of both regions links an SC access of one region to the
        next of the other."""
        if order == "sc":
            return self.region_fence("sc") + body + self.region_fence("sc")
        before = self.region_fence("rel") if is_release(order) else []
        after = self.region_fence("acq") if is_acquire(order) or is_acquire(fail) else []
        return before + body + after

    def phase_barrier(self, k: int) -> str:
        """With both memory flags where the plan says a release fence precedes the boundary and
        an acquire fence follows it."""
        return "SF_PHASE_BARRIER_MEM();" if self.plan.barrier_flags[k] else "SF_PHASE_BARRIER();"

    def atomic_ptr(self, tid: int, loc: str) -> str:
        space = "__local" if self.test.is_lds(loc) else "__global"
        return f"({space} atomic_int *){self.ptr(tid, loc)}"

    def cas_call(self, p: str, desired: int, o1: str, o2: str, s: str) -> str:
        return f"atomic_compare_exchange_strong_explicit({p}, &sf_e, {desired}, {o1}, {o2}, {s})"

    def fence(self, order: str, scope: str) -> str:
        return (f"atomic_work_item_fence({BOTH_REGIONS}, {CL3_ORDER[order]}, "
                f"{self.plan.scope or CL3_SCOPE[scope]});")

    def async_copy(self, src: str, dst: str, copy: str) -> list[str]:
        return [copy + "  /* synchronous copy */"]

    def async_mark(self) -> list[str]:
        return ["/* async.mark: nothing to do, copies are synchronous */"]

    def async_wait(self, n: int, state: dict) -> list[str]:
        return [f"/* async.wait {n}: nothing to do, copies are synchronous */"]

    def atomic(self, tid: int, ins: Instr, lds: bool, acc: str, scope: str, order: str,
               r: str | None, v) -> list[str]:
        ap, o, s = self.atomic_ptr(tid, ins.loc), self.order(order), self.scope(scope, lds)
        return [f"{r} = atomic_load_explicit({ap}, {o}, {s});" if r is not None
                else f"atomic_store_explicit({ap}, {v}, {o}, {s});"]

    def prelude(self) -> list[str]:
        return super().prelude() + [
            "#if defined(__opencl_c_atomic_scope_all_devices)",
            "#define SF_SCOPE_SYS memory_scope_all_svm_devices",
            "#else",
            "#define SF_SCOPE_SYS memory_scope_device  /* no all-devices scope: device is the widest */",
            "#endif",
            "#define SF_SCOPE_AGENT memory_scope_device",
            "#define SF_SCOPE_WG memory_scope_work_group  /* thread and wave scopes too (stronger) */",
            "#define SF_GROUP_ID() get_group_id(0)",
            "#define SF_LOCAL_ID() get_local_id(0)",
            "#define SF_PHASE_BARRIER() work_group_barrier(0)",
            "#define SF_PHASE_BARRIER_MEM() work_group_barrier(CLK_GLOBAL_MEM_FENCE | "
            "CLK_LOCAL_MEM_FENCE)  /* a release fence before, an acquire fence after */",
            "#define SF_INIT_BARRIER() work_group_barrier(CLK_LOCAL_MEM_FENCE)",
        ]

    def counter(self) -> tuple[str, str]:
        return ("atomic_fetch_add_explicit((__global atomic_int *)sf_c, 1, memory_order_relaxed, "
                "memory_scope_device)",
                "atomic_load_explicit((__global atomic_int *)sf_c, memory_order_relaxed, "
                "memory_scope_device)")


class AmdgcnEmitter(Emitter):
    """OpenCL C for ROCm with clang builtins: ``__scoped_atomic_*``, ``__builtin_amdgcn_fence``,
    ``__builtin_amdgcn_s_barrier``, the LDS-DMA / asyncmark builtins and the av load/store
    builtins where ``__has_builtin`` finds them, a faithful fallback otherwise."""

    name = "amdgcn"
    PLATFORM = "AMD Accelerated Parallel Processing"        # ROCm
    ORDERS = GCN_ORDER
    XCHG, FETCH = "__scoped_atomic_exchange_n", "__scoped_atomic_fetch_{op}"

    def scope(self, s: str, lds: bool) -> str:
        return GCN_SCOPE[s]

    def cas_call(self, p: str, desired: int, o1: str, o2: str, s: str) -> str:
        return f"__scoped_atomic_compare_exchange_n({p}, &sf_e, {desired}, 0, {o1}, {o2}, {s})"

    def fence(self, order: str, scope: str) -> str:
        return f'__builtin_amdgcn_fence({GCN_ORDER[order]}, "{GCN_FENCE_SCOPE[scope]}");'

    def async_copy(self, src: str, dst: str, copy: str) -> list[str]:
        return ["#ifdef SF_ASYNC_DMA",
                f"__builtin_amdgcn_global_load_async_to_lds_b32({src}, {dst}, 0, 0);",
                "#else", copy + "  /* synchronous copy */", "#endif"]

    def async_mark(self) -> list[str]:
        return ["#if defined(SF_ASYNC_DMA) && defined(SF_ASYNCMARK)",
                "__builtin_amdgcn_asyncmark();", "#endif"]

    def async_wait(self, n: int, state: dict) -> list[str]:
        marks = state["marks"]
        lines = ["#ifdef SF_ASYNC_DMA", "#ifdef SF_ASYNCMARK",
                 f"__builtin_amdgcn_wait_asyncmark({n});", "#else"]
        if len(marks) > n:
            # copies issued before the last completed mark must be done; the rest may remain
            done_upto = marks[len(marks) - n - 1]
            left = len(state["async_ops"]) - done_upto
            lines.append(f"__builtin_amdgcn_s_wait_asynccnt({left});")
        else:
            lines.append(f"/* async.wait {n}: no mark to complete yet */")
        lines += ["#endif", "#endif"]
        return lines

    def volatile(self, tid: int, ins: Instr, lds: bool, r: str | None, v) -> list[str]:
        p = self.ptr(tid, ins.loc)
        q = "__local" if lds else "__global"
        return [f"{r} = *(volatile {q} int *){p};" if r is not None
                else f"*(volatile {q} int *){p} = {v};"]

    def atomic(self, tid: int, ins: Instr, lds: bool, acc: str, scope: str, order: str,
               r: str | None, v) -> list[str]:
        p = self.ptr(tid, ins.loc)
        o, s = self.order(order), self.scope(scope, lds)
        load = r is not None
        atomic = (f"{r} = __scoped_atomic_load_n({p}, {o}, {s});" if load
                  else f"__scoped_atomic_store_n({p}, {v}, {o}, {s});")
        if acc in ("vis", "av"):
            gp = f"(__global unsigned int *){p}"
            if load:
                fast = f"{r} = (int)__builtin_amdgcn_av_load_b32({gp}, {s});"
                guard = "SF_AV_LOAD"
            else:
                fast = f"__builtin_amdgcn_av_store_b32({gp}, (unsigned int){v}, {s});"
                guard = "SF_AV_STORE"
            return [f"#ifdef {guard}", fast, "#else", atomic, "#endif"]
        return [atomic]

    def prelude(self) -> list[str]:
        return super().prelude() + [
            "#ifndef __has_builtin",
            "#define __has_builtin(x) 0",
            "#endif",
            "#ifdef __MEMORY_SCOPE_CLUSTR",
            "#define SF_MEMORY_SCOPE_CLUSTER __MEMORY_SCOPE_CLUSTR",
            "#else",
            "#define SF_MEMORY_SCOPE_CLUSTER __MEMORY_SCOPE_DEVICE  /* no cluster scope: agent is stronger */",
            "#endif",
            "#if __has_builtin(__builtin_amdgcn_av_load_b32)",
            "#define SF_AV_LOAD 1",
            "#endif",
            "#if __has_builtin(__builtin_amdgcn_av_store_b32)",
            "#define SF_AV_STORE 1",
            "#endif",
            "#if __has_builtin(__builtin_amdgcn_asyncmark) && __has_builtin(__builtin_amdgcn_wait_asyncmark)",
            "#define SF_ASYNCMARK 1",
            "#endif",
            "#if __has_builtin(__builtin_amdgcn_global_load_async_to_lds_b32) && "
            "(defined(SF_ASYNCMARK) || __has_builtin(__builtin_amdgcn_s_wait_asynccnt))",
            "#define SF_ASYNC_DMA 1",
            "#endif",
            "#define SF_GROUP_ID() __builtin_amdgcn_workgroup_id_x()",
            "#define SF_LOCAL_ID() __builtin_amdgcn_workitem_id_x()",
            "#define SF_PHASE_BARRIER() __builtin_amdgcn_s_barrier()",
            "#define SF_INIT_BARRIER() do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, \"workgroup\"); "
            "__builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, \"workgroup\"); } while (0)",
        ]

    def counter(self) -> tuple[str, str]:
        return ("__scoped_atomic_fetch_add(sf_c, 1, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)",
                "__scoped_atomic_load_n(sf_c, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)")

    def role_end(self, state: dict) -> list[str]:
        if not state["async_ops"]:
            return []
        return ["#ifdef SF_ASYNC_DMA", "#ifdef SF_ASYNCMARK",
                "  __builtin_amdgcn_asyncmark(); __builtin_amdgcn_wait_asyncmark(0);"
                "  /* thread end completes every copy */",
                "#else", "  __builtin_amdgcn_s_wait_asynccnt(0);", "#endif", "#endif"]


#: kernel language -> its emitter class (``codegen --dialect``)
EMITTERS: dict[str, type[Emitter]] = {e.name: e for e in (CL3Emitter, AmdgcnEmitter, PTXEmitter)}
KERNEL_LANGUAGES = tuple(EMITTERS)


def languages_for(dialect: str) -> tuple[str, ...]:
    """The kernel languages whose emitters lower tests of the litmus ``dialect`` (their declared
    ``READS``), in :data:`EMITTERS` order."""
    return tuple(name for name, em in EMITTERS.items() if dialect in em.READS)


def generate(test: Test, kernel_language: str = "cl3", weaken: str | None = None,
             kernel_name: str = "litmus") -> Kernel:
    """The kernel of ``test`` in ``kernel_language``; :class:`CodegenError` for what has no
    lowering.

    ``kernel_name`` names the kernel function (several kernels can then share one source file).
    """
    if not kernel_name.isidentifier():
        raise CodegenError(f"bad kernel name {kernel_name!r}")
    if kernel_language not in EMITTERS:
        raise CodegenError(f"unknown dialect {kernel_language!r} (expected one of "
                           f"{', '.join(KERNEL_LANGUAGES)})")
    if weaken not in WEAKENINGS:
        raise CodegenError(f"unknown weakening {weaken!r}")
    reads = EMITTERS[kernel_language].READS
    if test.dialect not in reads:
        others = languages_for(test.dialect)
        raise CodegenError(f"the {kernel_language} dialect lowers {'/'.join(reads)} tests; this "
                           f"test is {test.dialect}"
                           + (f" (use --dialect {others[0]})" if others else ""))
    layout = layout_of(test)
    em = EMITTERS[kernel_language](test, weaken)
    regs = tuple((tid, r) for tid in range(len(test.threads)) for r in test.registers(tid))
    globs = tuple(loc.name for loc in test.globals)
    ldss = tuple(loc.name for loc in test.lds_locations)
    G, T = layout.n_wg_roles, layout.n_threads
    phases = [split_phases(th.code) for th in test.threads]
    n_phases = max(len(p) for p in phases) if phases else 1

    out = em.prelude()
    out.append("")
    for name, text in em.LOWERINGS.items():
        out.append(f"/* lowering of {name}: {text} */")
    out.append("")
    for tid, th in enumerate(test.threads):
        code = "; ".join(em.text(i) for i in th.code) or "(empty)"
        r = layout.roles[tid]
        out.append(f"/* P{tid} (wg role {r.wg}, wave role {r.wave}, lane {r.lane}): {code} */")
    out += [
        "",
        f"__kernel void {kernel_name}(__global int *mem, __global int *out, __global const uint *roles,",
        "                     __global const uint *wg_ids, __global int *scratch, __global int *sync,",
        "                     __local int *lds, const uint wg_size, const uint n_instances,",
        "                     const uint n_testing, const uint perm, const uint stride,",
        "                     const uint stress_iters, const uint stress_lines,",
        "                     const uint pre_stress_iters, const uint sync_spins,",
        "                     const uint block_stride, const uint sync_target,",
        "                     const uint rendezvous_spins)",
        "{",
        "  const uint lid = SF_LOCAL_ID();",
        "  const uint wg = wg_ids[SF_GROUP_ID()];",
        "  if (wg >= n_testing) {",
        "    /* memory-stress workgroup: stress_iters stores and loads on scratch lines, then done */",
        "    __global volatile int *s = scratch;",
        "    for (uint k = 0; k < stress_iters; k++) {",
        "      uint line = ((lid + k * 7u) % stress_lines) * 16u;",
        "      s[line] = (int)k; s[line + 1u] = s[line] + 1;",
        "    }",
        "    return;",
        "  }",
        "  if (pre_stress_iters) {",
        "    __global volatile int *s = scratch;",
        "    for (uint k = 0; k < pre_stress_iters; k++) {",
        "      uint line = ((lid * 3u + k) % stress_lines) * 16u;",
        "      s[line + 2u] = s[line + 3u] + 1;",
        "    }",
        "  }",
        f"  const ulong slot = (ulong)wg * wg_size + lid;",
    ]
    for tid in range(T):
        out.append(f"  const uint i{tid} = roles[slot * {T}u + {tid}u];")
    for tid, th in enumerate(test.threads):
        used = []
        for ins in th.code:
            for loc in ins.locations():
                if loc not in used:
                    used.append(loc)
        g = layout.roles[tid].wg
        for loc in used:
            if test.is_lds(loc):
                k = ldss.index(loc)
                out.append(f"  __local int *{em.ptr(tid, loc)} = lds + "
                           f"({k * G + g}u * wg_size + i{tid} % wg_size);")
            else:
                k = globs.index(loc)
                out.append(f"  __global int *{em.ptr(tid, loc)} = mem + "
                           f"({k}ul * n_instances + ((ulong)i{tid} * perm) % n_instances) * stride;")
    for tid, r in regs:
        out.append(f"  int {em.reg(tid, r)} = {test.register_init(tid, r)};")
    if ldss:
        out.append("  /* LDS initial values, one copy per (instance, workgroup role) */")
        for k, name in enumerate(ldss):
            init = test.location(name).init
            out.append(f"  for (uint j = lid; j < {G}u * wg_size; j += wg_size) "
                       f"lds[{k * G}u * wg_size + j] = {init};")
        out.append("  SF_INIT_BARRIER();")
    arrive, look = em.counter()
    out += [
        "  /* line up the workgroups of this block: one work-item per workgroup spins (bounded);",
        "     the first workgroup waits longer, for the device's other threads to start */",
        "  if (sync_spins && lid == 0) {",
        "    const uint bound = wg == 0 ? rendezvous_spins : sync_spins;",
        f"    __global int *sf_c = sync + (wg / (block_stride * {G}u)) * block_stride + wg % block_stride;",
        f"    (void){arrive};",
        f"    for (uint k = 0; k < bound && {look} < (int)sync_target; k++) ;",
        "  }",
        "  SF_PHASE_BARRIER();",
    ]
    states = [{"marks": [], "async_ops": []} for _ in test.threads]
    for ph in range(n_phases):
        if ph:
            out.append(f"  {em.phase_barrier(ph - 1)}  /* phase boundary: barrier waits of the test */")
        out.append(f"  /* phase {ph} */")
        for tid in range(T):
            if ph >= len(phases[tid]):
                continue
            body = phases[tid][ph]
            last = ph == len(phases[tid]) - 1
            if not body and not (last and em.role_end(states[tid])):
                continue
            out.append(f"  /* P{tid} */")
            for ins in body:
                out.append(f"  /* {em.text(ins)} */")
                for line in em.lower(tid, ins, states[tid]):
                    out.append(line if line.startswith("#") else "  " + line)
            if last:                     # after the body: it may have issued async copies
                out += em.role_end(states[tid])
    nr = len(regs)
    for j, (tid, r) in enumerate(regs):
        out.append(f"  out[(ulong)i{tid} * {nr}u + {j}u] = {em.reg(tid, r)};")
    if not regs:
        out.append("  (void)out;")
    out.append("}")
    return Kernel("\n".join(out) + "\n", kernel_language, layout, regs, globs, ldss, n_phases - 1,
                  kernel_name)

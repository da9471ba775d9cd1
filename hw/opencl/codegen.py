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

from dataclasses import dataclass

from litmus import Instr, Test, format_instr
from litmus.cfg import attr
from litmus.ir import BASES, is_acquire, is_release

from ..backend import BackendError
from ..layout import Layout, layout_of

WEAKENINGS = (None, "sc-fence-as-acq_rel", "relaxed")


class CodegenError(BackendError):
    """A test that cannot be turned into a kernel (one line)."""


#: How each construct is lowered, per kernel language (documentation, also printed in kernel headers).
LOWERINGS = {
    "scopes": ("cl3: thread/wave/wg -> memory_scope_work_group (sub-groups are not assumed to be "
               "waves); cluster/agent -> memory_scope_device; sys -> memory_scope_all_svm_devices "
               "when the device has __opencl_c_atomic_scope_all_devices, else memory_scope_device. "
               "LDS scopes are capped at work_group. amdgcn: exact (__MEMORY_SCOPE_SINGLE/WVFRNT/"
               "WRKGRP/CLUSTR/DEVICE/SYSTEM; CLUSTR -> DEVICE when clang lacks it)."),
    "ld.vis/st.av": ("cl3: relaxed atomic load/store at the mapped scope (atomic and available/"
                     "visible at that scope: stronger). amdgcn: __builtin_amdgcn_av_{load,store}_b32 "
                     "when present, else the relaxed scoped atomic. On LDS: a plain access (every LDS "
                     "access is available/visible at workgroup scope)."),
    "ld.vol/st.vol": ("cl3: relaxed atomic at the widest mapped scope. amdgcn: a volatile access "
                      "(LLVM volatile = available/visible at system scope)."),
    ".noav": "dropped (the op then also makes accesses available/visible: stronger).",
    "async.ld": ("cl3: a synchronous copy at the issue point (completes before anything after "
                 "it: stronger). amdgcn: __builtin_amdgcn_global_load_async_to_lds_b32 when the "
                 "compiler has it and a wait builtin, else the synchronous copy. Every role ends "
                 "with a wait for all its async copies (the model completes them at thread end)."),
    "async.mark/async.wait": ("cl3: nothing (copies are synchronous). amdgcn with async DMA: "
                              "__builtin_amdgcn_asyncmark/wait_asyncmark when present, else "
                              "s_wait_asynccnt with the number of own copies issued after the "
                              "last mark that must complete (counting only this role's copies "
                              "waits for more: stronger)."),
    "barriers": ("every barrier wait (barrier, bar.wait -1/-3/named) is a phase boundary: one "
                 "work_group_barrier(0) (cl3) / __builtin_amdgcn_s_barrier() (amdgcn) that every "
                 "work-item executes; bar.signal, bar.init, bar.join and bar.leave emit nothing (an "
                 "arrive moved to the next wait or to thread end is stronger). Sound only when "
                 "the wait sequences of the threads of each workgroup agree (barrier_problem); "
                 "cluster barriers across workgroups have no equivalent and are refused."),
    "cas": ("strong compare-exchange; a failure order stronger than the success order raises the "
            "success order (OpenCL C forbids it otherwise)."),
    "cl3 plan": ("cl3 only, so that the kernel under the OpenCL memory model is never weaker than the "
                 "test under the AMDGPU model (Cl3Plan, docs/opencl.md): a test mixing scopes uses "
                 "its widest one everywhere; a test over global and LDS memory puts fences of "
                 "both regions next to its release/acquire/seq_cst atomics; a test with a seq_cst "
                 "fence makes every atomic seq_cst; a phase barrier with a release fence before "
                 "it and an acquire fence after it carries both memory flags."),
}

CL3_ORDER = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire",
             "rel": "memory_order_release", "acq_rel": "memory_order_acq_rel",
             "sc": "memory_order_seq_cst"}
GCN_ORDER = {"rlx": "__ATOMIC_RELAXED", "acq": "__ATOMIC_ACQUIRE", "rel": "__ATOMIC_RELEASE",
             "acq_rel": "__ATOMIC_ACQ_REL", "sc": "__ATOMIC_SEQ_CST"}
CL3_SCOPE = {"thread": "SF_SCOPE_WG", "wave": "SF_SCOPE_WG", "wg": "SF_SCOPE_WG",
             "cluster": "SF_SCOPE_AGENT", "agent": "SF_SCOPE_AGENT", "sys": "SF_SCOPE_SYS"}
GCN_SCOPE = {"thread": "__MEMORY_SCOPE_SINGLE", "wave": "__MEMORY_SCOPE_WVFRNT",
             "wg": "__MEMORY_SCOPE_WRKGRP", "cluster": "SF_MEMORY_SCOPE_CLUSTER",
             "agent": "__MEMORY_SCOPE_DEVICE", "sys": "__MEMORY_SCOPE_SYSTEM"}
GCN_FENCE_SCOPE = {"thread": "singlethread", "wave": "wavefront", "wg": "workgroup",
                   "cluster": "cluster", "agent": "agent", "sys": ""}
RMW_FN = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "max": "max",
          "min": "min"}

#: kernel arguments, in order (the runner sets them by position)
KERNEL_ARGS = ("mem", "out", "roles", "wg_ids", "scratch", "sync", "lds", "wg_size",
               "n_instances", "n_testing", "perm", "stride", "stress_iters", "stress_lines",
               "pre_stress_iters", "sync_spins", "block_stride", "sync_target", "rendezvous_spins")


@dataclass(frozen=True)
class Kernel:
    """A generated kernel and what the runner needs to drive it."""

    source: str
    kernel_language: str                     # cl3, amdgcn or ptx (:data:`KERNEL_LANGUAGES`)
    layout: Layout
    registers: tuple[tuple[int, str], ...]   # (tid, reg) in observable order
    globals: tuple[str, ...]                 # global locations in observable order
    lds: tuple[str, ...]                     # LDS locations
    phases: int                              # number of phase boundaries
    name: str = "litmus"


# --- phases -----------------------------------------------------------------------------------

def _is_wait(ins: Instr) -> bool:
    return ins.base in ("barrier", "bar.wait") or (ins.base == "cbar" and "arrive" not in ins.attrs)


def split_phases(code) -> list[list[Instr]]:
    """Cut straight-line code after each barrier wait: phase k ends at the k-th wait."""
    phases: list[list[Instr]] = [[]]
    for ins in code:
        if _is_wait(ins):
            phases.append([])
        else:
            phases[-1].append(ins)
    return phases


def wait_objects(code) -> list:
    """The barrier object each wait of a thread waits on (named waits: the last joined one)."""
    joined = None
    out = []
    for ins in code:
        if ins.base == "bar.join":
            joined = ins.args[0]
        elif ins.base == "barrier":
            out.append(-1)
        elif ins.base == "bar.wait":
            b = ins.args[0]
            out.append(("named", joined) if b > 0 else b)
        elif _is_wait(ins):                         # PTX bar.cta.sync INST, ID
            out.append(("cbar", attr(ins, "inst"), attr(ins, "id")))
    return out


def barrier_problem(test: Test) -> str | None:
    """Why phase-boundary lowering of this test's barriers could be weaker than the test, or None."""
    for tid, th in enumerate(test.threads):
        for ins in th.code:
            if ins.barrier_id == -3 and test.workgroups_in_cluster(tid) > 1:
                return (f"P{tid}: cluster barrier across {test.workgroups_in_cluster(tid)} "
                        "workgroups has no OpenCL equivalent")
    groups: dict = {}
    for tid, th in enumerate(test.threads):
        groups.setdefault(test.instance(tid, "wg"), []).append(tid)
    for tids in groups.values():
        for t in tids:
            for ins in test.threads[t].code:
                if ins.base != "cbar":
                    continue
                bid, quorum = attr(ins, "id"), attr(ins, "quorum")
                if bid is not None and not bid.lstrip("-").isdigit():
                    return f"P{t}: barrier id {bid} is a register: its waits cannot be matched"
                if quorum is not None and int(quorum) != len(tids):
                    return (f"P{t}: barrier thread count {quorum} is not the {len(tids)} threads "
                            "of its CTA: a workgroup-wide barrier would change who it releases")
        seqs = [(t, wait_objects(test.threads[t].code)) for t in tids]
        longest = max(seqs, key=lambda s: len(s[1]))
        for t, s in seqs:
            if s != longest[1][:len(s)]:
                return (f"barrier waits of P{t} {s} and P{longest[0]} {longest[1]} do not line up; "
                        "a workgroup-barrier lowering would be weaker")
    return None


def _cas_orders(succ: str, fail: str) -> tuple[str, str]:
    """OpenCL/C11 require failure <= success and no release in failure: raise success if needed."""
    if fail == "sc":
        return "sc", "sc"
    if fail == "acq" and succ in ("rlx", "rel"):
        return ("acq" if succ == "rlx" else "acq_rel"), "acq"
    return succ, fail


# --- the cl3 plan: what the OpenCL model needs beyond each instruction ------------------------

#: OpenCL scope macros of cl3, narrowest first
CL3_SCOPE_ORDER = ("SF_SCOPE_WG", "SF_SCOPE_AGENT", "SF_SCOPE_SYS")
BOTH_REGIONS = "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"


@dataclass(frozen=True)
class Cl3Plan:
    """Test-wide choices of the ``cl3`` lowering that keep the kernel, read under the OpenCL
    memory model (Batty, Donaldson, Wickerson, POPL 2016: ``oracle/models/opencl``), never weaker
    than the test under the AMDGPU model. Each one closes a gap where an OpenCL construct alone
    promises less than the AMDGPU one (docs/opencl.md, "The cl3 kernels against the OpenCL
    model"; ``tests/test_cl3_translation.py`` checks the result):

    - ``scope``: the one scope macro of every atomic and fence. OpenCL's inclusive scopes need
      *the same* scope on both sides (OpenCL 2.0, 3.3.4), AMDGPU's only that each contains the
      other's thread: a test that mixes scopes gets its widest one everywhere (stronger);
    - ``region_fences``: the test accesses global and LDS memory. An OpenCL atomic orders only
      its own region, an AMDGPU one every address space: a release atomic is preceded by a
      release fence of both regions, an acquire atomic followed by an acquire fence of both,
      and a seq_cst atomic has a seq_cst fence of both regions on each side (OpenCL's SC order
      sees program order only within one region's happens-before);
    - ``sc_atomics``: the test has a seq_cst fence. OpenCL's SC fences (the paper's scoped SC
      axiom) order only through rb, mo and hb next to them; AMDGPU's (RC11's psc_F) also through
      the rf of relaxed atomics between fences of different threads (IRIW+fence.sc): every atomic
      access becomes seq_cst, which puts those edges into OpenCL's SC order;
    - ``barrier_flags``: per phase boundary, whether its work-group barrier carries both memory
      flags. An OpenCL barrier with flags 0 orders no memory, and fences around it do not
      synchronise through it; AMDGPU's release fence -> barrier -> acquire fence does (bsw): a
      boundary gets the flags when a release fence precedes it and an acquire fence follows it.
    """

    scope: str | None
    region_fences: bool
    sc_atomics: bool
    barrier_flags: tuple[bool, ...]


def _is_scoped_op(ins: Instr, test: Test) -> bool:
    if ins.base in ("rmw", "cas", "fence"):
        return True
    if ins.base in ("ld", "st"):
        return ins.access in ("atom", "vol") or (ins.access in ("vis", "av")
                                                 and not test.is_lds(ins.loc))
    return False


def _scope_macro(ins: Instr, test: Test) -> str:
    if ins.access == "vol":
        return "SF_SCOPE_SYS"
    if ins.loc is not None and test.is_lds(ins.loc):
        return "SF_SCOPE_WG"
    return CL3_SCOPE[ins.scope]


def cl3_plan(test: Test, weaken: str | None = None) -> Cl3Plan:
    """The :class:`Cl3Plan` of ``test`` (with ``weaken``, the plan the miscompiling lowering would
    make: it sees no seq_cst fence where it lowers them as acq_rel, and no fence at all where it
    drops them)."""
    ops = [ins for th in test.threads for ins in th.code if _is_scoped_op(ins, test)]
    macros = {_scope_macro(ins, test) for ins in ops}
    scope = max(macros, key=CL3_SCOPE_ORDER.index) if macros else None
    used = {loc for th in test.threads for ins in th.code for loc in ins.locations()}
    region_fences = len({test.is_lds(loc) for loc in used}) == 2
    fences = [] if weaken == "relaxed" else \
        [ins for th in test.threads for ins in th.code if ins.base == "fence"]
    sc_atomics = weaken is None and any(f.order == "sc" for f in fences)
    phases = [split_phases(th.code) for th in test.threads]
    n = max(len(p) for p in phases) if phases else 1

    def fence_in(ps, kind) -> bool:
        return any(ins.base == "fence" and weaken != "relaxed" and kind(ins.order)
                   for p in ps for ins in p)
    flags = tuple(any(fence_in(p[:k], is_release) for p in phases)
                  and any(fence_in(p[k:], is_acquire) for p in phases) for k in range(1, n))
    return Cl3Plan(scope if len(macros) > 1 else None, region_fences, sc_atomics, flags)


# --- code generation: one emitter class per kernel language -------------------------------------

class Emitter:
    """The lowering into one kernel language: one instruction of one role at a time
    (:meth:`lower`), plus the kernel's prelude, the block rendezvous counter and what ends a role.

    The base class holds what every kernel language shares (plain accesses, cas orders, phase
    boundaries, the ``weaken`` switch); a kernel language is one subclass that fills in the
    constructs it spells its own way. Adding one (``ptx`` is one) is one more subclass registered
    in :data:`EMITTERS`.
    """

    #: the kernel language's name (``codegen --dialect``, ``Kernel.kernel_language``)
    name = ""
    #: the test dialects it lowers (litmus header words)
    READS: tuple[str, ...] = ("AMDGPU",)
    #: the OpenCL platform whose GPUs get this kernel language by default (a substring of the
    #: platform's name, :func:`hw.opencl.runner.default_kernel_language`); "" for none
    PLATFORM = ""
    #: construct -> how it is lowered (printed in the kernel header)
    LOWERINGS: dict[str, str] = LOWERINGS
    #: litmus order -> the kernel language's memory order
    ORDERS: dict[str, str] = {}
    #: the atomic exchange, and the fetch-and-op with ``{op}`` from :data:`RMW_FN`
    XCHG = FETCH = ""

    def __init__(self, test: Test, weaken: str | None):
        self.test, self.weaken = test, weaken

    # names
    @staticmethod
    def reg(tid: int, r: str) -> str:
        return f"P{tid}_{r}"

    @staticmethod
    def ptr(tid: int, loc: str) -> str:
        return f"p{tid}_{loc}"

    @staticmethod
    def text(ins: Instr) -> str:
        """An instruction as the test's dialect writes it (kernel comments, error messages)."""
        return format_instr(ins)

    def order(self, o: str) -> str:
        if self.weaken == "relaxed":
            o = "rlx"
        return self.ORDERS[o]

    # what each kernel language spells its own way
    def scope(self, s: str, lds: bool) -> str:
        raise NotImplementedError

    def atomic_ptr(self, tid: int, loc: str) -> str:
        return self.ptr(tid, loc)

    def atomic_order(self, o: str) -> str:
        """The order an atomic access of order ``o`` is emitted with."""
        return o

    def around(self, order: str, fail: str | None, body: list[str]) -> list[str]:
        """``body``, an atomic access of ``order`` (``fail``: a cas failure order), with whatever
        the kernel language puts next to it."""
        return body

    def phase_barrier(self, k: int) -> str:
        """The statement of phase boundary ``k`` (0: between phases 0 and 1)."""
        return "SF_PHASE_BARRIER();"

    def cas_call(self, p: str, desired: int, o1: str, o2: str, s: str) -> str:
        raise NotImplementedError

    def fence(self, order: str, scope: str) -> str:
        raise NotImplementedError

    def async_copy(self, src: str, dst: str, copy: str) -> list[str]:
        raise NotImplementedError

    def async_mark(self) -> list[str]:
        raise NotImplementedError

    def async_wait(self, n: int, state: dict) -> list[str]:
        raise NotImplementedError

    def volatile(self, tid: int, ins: Instr, lds: bool, r: str | None, v) -> list[str] | None:
        """A volatile access, or None to lower it as an atomic access at system scope."""
        return None

    def atomic(self, tid: int, ins: Instr, lds: bool, acc: str, scope: str, order: str,
               r: str | None, v) -> list[str]:
        raise NotImplementedError

    def prelude(self) -> list[str]:
        """Macros the kernel body uses (scopes, ids, barriers, feature tests)."""
        return [f"/* scopefuzz {self.name} kernel for litmus test {self.test.name}",
                " * Generated by `scopefuzz codegen`; lowering choices: docs/opencl.md. */"]

    def counter(self) -> tuple[str, str]:
        """(arrive, look): a relaxed device-scope increment and load of the rendezvous counter
        ``sf_c``."""
        raise NotImplementedError

    def role_end(self, state: dict) -> list[str]:
        """Lines that end a role (completing what it left in flight)."""
        return []

    # lowering
    def lower(self, tid: int, ins: Instr, state: dict) -> list[str]:
        b = ins.base
        t = self.test
        if b not in BASES:
            raise CodegenError(f"P{tid}: {b!r} has no kernel lowering (AMDGPU dialect only)")
        if b in ("ld", "st"):
            return self.access(tid, ins)
        if b == "rmw":
            lds = t.is_lds(ins.loc)
            p, r = self.atomic_ptr(tid, ins.loc), self.reg(tid, ins.reg)
            fn = self.XCHG if ins.op == "xchg" else self.FETCH.format(op=RMW_FN[ins.op])
            order = self.atomic_order(ins.order)
            return self.around(order, None, [f"{r} = {fn}({p}, {ins.args[0]}, {self.order(order)}, "
                                             f"{self.scope(ins.scope, lds)});"])
        if b == "cas":
            lds = t.is_lds(ins.loc)
            succ, fail = _cas_orders(self.atomic_order(ins.order),
                                     self.atomic_order(ins.fail_order))
            p, r = self.atomic_ptr(tid, ins.loc), self.reg(tid, ins.reg)
            e, d = ins.args
            call = self.cas_call(p, d, self.order(succ), self.order(fail), self.scope(ins.scope, lds))
            return self.around(succ, fail, [f"{{ int sf_e = {e}; (void){call}; {r} = sf_e; }}"])
        if b == "fence":
            o = ins.order
            if self.weaken == "relaxed":
                return ["/* fence dropped by weaken=relaxed (test-only miscompilation) */"]
            if self.weaken == "sc-fence-as-acq_rel" and o == "sc":
                o = "acq_rel"
            return [self.fence(o, ins.scope)]
        if b == "async.ld":
            src, dst = self.ptr(tid, ins.loc), self.ptr(tid, ins.lds)
            state["async_ops"].append(len(state["marks"]))
            return self.async_copy(src, dst, f"*{dst} = *{src};")
        if b == "async.mark":
            state["marks"].append(len(state["async_ops"]))
            return self.async_mark()
        if b == "async.wait":
            return self.async_wait(ins.args[0], state)
        if b in ("bar.signal", "bar.init", "bar.join", "bar.leave"):
            return [f"/* {format_instr(ins)}: arrive/membership folded into the phase barriers */"]
        raise CodegenError(f"P{tid}: no lowering for {format_instr(ins)!r}")

    def access(self, tid: int, ins: Instr) -> list[str]:
        lds = self.test.is_lds(ins.loc)
        p = self.ptr(tid, ins.loc)
        load = ins.base == "ld"
        r = self.reg(tid, ins.reg) if load else None
        v = None if load else ins.args[0]
        acc = ins.access
        if acc == "plain" or (lds and acc in ("vis", "av")):
            return [f"{r} = *{p};" if load else f"*{p} = {v};"]
        scope = ins.scope
        if acc == "vol":
            lines = self.volatile(tid, ins, lds, r, v)
            if lines is not None:
                return lines
            acc, scope = "atom", "sys"
        order = self.atomic_order(ins.order if ins.access == "atom" else "rlx")
        return self.around(order, None, self.atomic(tid, ins, lds, acc, scope, order, r, v))


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


from .emit_ptx import PTXEmitter  # noqa: E402  (it subclasses Emitter, defined above)

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

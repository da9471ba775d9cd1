"""The kernel skeleton shared by the OpenCL kernel languages: :class:`Emitter` (one subclass per
kernel language: ``cl3`` and ``amdgcn`` in :mod:`hw.opencl.codegen`, ``ptx`` in
:mod:`hw.opencl.emit_ptx`), the lowering table :data:`LOWERINGS`, the phases cut at barrier
waits (:func:`split_phases`, :func:`barrier_problem`), the OpenCL C 3.0 plan (:func:`cl3_plan`)
and :class:`CodegenError`.

Kept apart from :mod:`hw.opencl.codegen`, which registers every emitter (:data:`EMITTERS`), so
that an emitter module imports this one and codegen imports the emitters: no import circle
(tests/test_layers.py). docs/opencl.md describes the lowering.
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus import Instr, Test, format_instr
from litmus.cfg import attr
from litmus.ir import BASES, is_acquire, is_release

from ..backend import BackendError
from ..layout import Layout

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

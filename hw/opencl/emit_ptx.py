"""The ``ptx`` kernel language: OpenCL C 1.2 with inline PTX for PTX-dialect tests.

NVIDIA's OpenCL implementation compiles OpenCL C 1.2, which has no scoped atomics; its compiler
accepts inline PTX (GNU ``__asm__`` with ``r``/``l`` constraints), so every memory operation of
the test is one PTX instruction spelled as the test spells it (PTX ISA, "Parallel
Synchronization and Communication Instructions"): a weak access ``ld.weak``/``st.weak``, a
strong one ``ld.relaxed|acquire.SCOPE`` / ``st.relaxed|release.SCOPE``, ``ld/st.volatile``,
``atom.SEM.SCOPE.OP``, ``red.SEM.SCOPE.OP``, ``atom.SEM.SCOPE.cas``, ``fence.sc|acq_rel.SCOPE``
and ``fence.proxy.alias``. Each is ``__volatile__`` with a ``memory`` clobber, so the C compiler
neither drops nor reorders them: the kernel keeps the test's program order. The kernel skeleton
(thread roles, phases at barrier waits, the rendezvous) is the one of :mod:`hw.opencl.codegen`;
its work-item ids, phase barrier and rendezvous counter are inline PTX too, so the kernel needs
no OpenCL library calls and ``clang -target nvptx64-nvidia-cuda`` followed by ``ptxas`` checks it
without a device.

Where the kernel cannot be exact it is stronger (it allows fewer outcomes than the test), never
weaker; :data:`PTX_LOWERINGS` lists each choice (printed in the kernel header, repeated in
``docs/opencl.md``). Accesses through the surface, texture or constant proxy and accesses
through an alias (a second virtual address of a location) need image objects or a second
mapping that the kernel's flat buffer does not have: :class:`~hw.opencl.codegen.CodegenError`.
"""

from __future__ import annotations

from litmus import Instr
from litmus.cfg import attr
from litmus.print_ptx import format_ptx_instr

from .emitter import CodegenError, Emitter

#: the program model's scope word -> PTX scope. OpenCL launches no thread-block clusters, so a
#: test's .cluster scope becomes .gpu, which includes every thread of any cluster (stronger)
PTX_SCOPE = {"thread": "cta", "wave": "cta", "wg": "cta", "cluster": "gpu", "agent": "gpu",
             "sys": "sys"}
#: litmus order -> PTX .sem of ld/st/atom
PTX_SEM = {"rlx": "relaxed", "acq": "acquire", "rel": "release", "acq_rel": "acq_rel"}
#: rmw op -> (PTX atom/red operation, operand type); sub is add of the negated operand
PTX_ATOM = {"add": ("add", "u32"), "sub": ("add", "u32"), "and": ("and", "b32"),
            "or": ("or", "b32"), "xor": ("xor", "b32"), "min": ("min", "s32"),
            "max": ("max", "s32"), "xchg": ("exch", "b32"), "inc": ("inc", "u32"),
            "dec": ("dec", "u32")}

PTX_LOWERINGS = {
    "accesses": ("exact: ld.weak/st.weak, ld.relaxed|acquire.SCOPE, st.relaxed|release.SCOPE, "
                 "ld/st.volatile, each on the .global state space (every PTX test location is a "
                 "global one)."),
    "scopes": (".cta/.gpu/.sys exact; .cluster -> .gpu (OpenCL launches no clusters; .gpu "
               "includes every thread of a cluster: stronger)."),
    "atom/red": ("exact atom.SEM.SCOPE.OP / red.SEM.SCOPE.OP; .sub -> .add of the negated operand "
                 "(the same value); red with .acquire/.acq_rel (red has .relaxed and .release "
                 "only) -> atom with the same .sem (a read too: stronger)."),
    "cas": "exact atom.SEM.SCOPE.cas.b32 (it writes back the value read on failure, like the test).",
    "fences": ("fence.sc.SCOPE exact, membar.LEVEL -> fence.sc.SCOPE (equal on sm_70+), "
               "fence.acq_rel.SCOPE exact, fence.acquire/.release.SCOPE -> fence.acq_rel.SCOPE "
               "(stronger; the one-sided fences need PTX 8.6), fence.proxy.alias exact, "
               "fence.proxy.surface/texture/constant -> nothing (the kernel accesses memory "
               "through the generic proxy only, so they order nothing)."),
    "barriers": ("each bar.cta.sync wait is a phase boundary: bar.sync 0 executed by every "
                 "work-item of the workgroup (a CTA-wide barrier with the test's memory ordering); "
                 "bar.cta.arrive emits nothing (an arrive moved to the next wait or to thread "
                 "end is stronger). Refused when the waits of a CTA's threads do not line up, "
                 "when a barrier id is a register or a thread count is not the CTA's thread count."),
    "proxies": ("accesses through the surface, texture or constant proxy (suld, sust, tld, cold, "
                "suatom, sured) and through aliases have no lowering: refused."),
}


def _asm(text: str, outputs: str, inputs: str) -> str:
    return f'__asm__ __volatile__("{text}" : {outputs} : {inputs} : "memory");'


class PTXEmitter(Emitter):
    """OpenCL C 1.2 with inline PTX, for tests in the PTX dialect (NVIDIA GPUs)."""

    name = "ptx"
    READS = ("PTX",)
    PLATFORM = "NVIDIA"
    LOWERINGS = PTX_LOWERINGS

    @staticmethod
    def text(ins: Instr) -> str:
        return format_ptx_instr(ins) or ""

    def sem(self, order: str) -> str:
        return "relaxed" if self.weaken == "relaxed" else PTX_SEM[order]

    @staticmethod
    def scope(s: str, lds: bool = False) -> str:
        return PTX_SCOPE[s]

    def operand(self, tid: int, ins: Instr, k: int = 0) -> int | str:
        """Operand ``k`` of ``ins``: a constant, or the C variable of a register operand (a
        data dependency stays one); expressions over registers are not lowered."""
        if len(ins.args) > k:
            return ins.args[k]
        text = attr(ins, ("exp", "val")[k] if ins.base == "cas" else "val")
        if text is not None and text in self.test.registers(tid):
            return self.reg(tid, text)
        raise CodegenError(f"P{tid}: {self.text(ins)!r}: an expression operand has no kernel "
                           "lowering (constants and registers only)")

    def lower(self, tid: int, ins: Instr, state: dict) -> list[str]:
        b = ins.base
        proxy = attr(ins, "proxy")
        if b != "fence" and proxy is not None:
            raise CodegenError(f"P{tid}: {self.text(ins)!r} goes through the {proxy} proxy: "
                               "no kernel lowering (it needs OpenCL image objects)")
        if attr(ins, "via") is not None:
            raise CodegenError(f"P{tid}: {self.text(ins)!r} goes through an alias: no kernel "
                               "lowering (the kernel maps each location once)")
        if b in ("ld", "st"):
            return self.access(tid, ins)
        if b == "rmw":
            return self.rmw(tid, ins)
        if b == "cas":
            return self.cas(tid, ins)
        if b == "fence":
            return self.ptx_fence(ins, proxy)
        if b == "cbar" and "arrive" in ins.attrs:
            return [f"/* {self.text(ins)}: the arrive folds into the next phase barrier */"]
        raise CodegenError(f"P{tid}: no ptx lowering for {self.text(ins)!r}")

    def access(self, tid: int, ins: Instr) -> list[str]:
        p = self.ptr(tid, ins.loc)
        if "volatile" in ins.attrs:
            q = "volatile"
        elif ins.access == "plain":
            q = "weak"
        else:
            q = f"{self.sem(ins.order)}.{self.scope(ins.scope)}"
        if ins.base == "ld":
            return [_asm(f"ld.{q}.global.u32 %0, [%1];", f'"=r"({self.reg(tid, ins.reg)})',
                         f'"l"({p})')]
        v = self.operand(tid, ins)
        return [_asm(f"st.{q}.global.u32 [%0], %1;", "", f'"l"({p}), "r"({v})')]

    def rmw(self, tid: int, ins: Instr) -> list[str]:
        op, ty = PTX_ATOM[ins.op]
        v = self.operand(tid, ins)
        if ins.op == "sub":
            v = -v if isinstance(v, int) else f"-{v}"
        sem, sc = self.sem(ins.order), self.scope(ins.scope)
        p = self.ptr(tid, ins.loc)
        if "red" in ins.attrs and sem in ("relaxed", "release"):
            return [_asm(f"red.{sem}.{sc}.global.{op}.{ty} [%0], %1;", "", f'"l"({p}), "r"({v})')]
        out = self.reg(tid, ins.reg) if ins.reg else "sf_d"
        line = _asm(f"atom.{sem}.{sc}.global.{op}.{ty} %0, [%1], %2;", f'"=r"({out})',
                    f'"l"({p}), "r"({v})')
        return [line] if ins.reg else ["{ int sf_d; " + line + " (void)sf_d; }"]

    def cas(self, tid: int, ins: Instr) -> list[str]:
        e, d = self.operand(tid, ins, 0), self.operand(tid, ins, 1)
        p = self.ptr(tid, ins.loc)
        return [_asm(f"atom.{self.sem(ins.order)}.{self.scope(ins.scope)}.global.cas.b32 "
                     "%0, [%1], %2, %3;", f'"=r"({self.reg(tid, ins.reg)})',
                     f'"l"({p}), "r"({e}), "r"({d})')]

    def ptx_fence(self, ins: Instr, proxy: str | None) -> list[str]:
        if proxy == "alias":
            return [_asm("fence.proxy.alias;", "", "")]
        if proxy is not None:
            return [f"/* {self.text(ins)}: orders nothing here (generic proxy only) */"]
        if self.weaken == "relaxed":
            return ["/* fence dropped by weaken=relaxed (test-only miscompilation) */"]
        sem = "sc" if ins.order == "sc" and self.weaken != "sc-fence-as-acq_rel" else "acq_rel"
        return [_asm(f"fence.{sem}.{self.scope(ins.scope)};", "", "")]

    def prelude(self) -> list[str]:
        return super().prelude() + [
            "/* OpenCL C 1.2 + inline PTX (sm_70+, PTX ISA 6.0+): no OpenCL library calls */",
            "static inline uint sf_ctaid(void) { uint v; "
            '__asm__ __volatile__("mov.u32 %0, %%ctaid.x;" : "=r"(v)); return v; }',
            "static inline uint sf_tid(void) { uint v; "
            '__asm__ __volatile__("mov.u32 %0, %%tid.x;" : "=r"(v)); return v; }',
            "static inline int sf_add_rlx(__global int *p, int v) { int o; "
            '__asm__ __volatile__("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" '
            ': "=r"(o) : "l"(p), "r"(v) : "memory"); return o; }',
            "static inline int sf_ld_rlx(__global int *p) { int o; "
            '__asm__ __volatile__("ld.relaxed.gpu.global.u32 %0, [%1];" '
            ': "=r"(o) : "l"(p) : "memory"); return o; }',
            "#define SF_GROUP_ID() sf_ctaid()",
            "#define SF_LOCAL_ID() sf_tid()",
            '#define SF_PHASE_BARRIER() __asm__ __volatile__("bar.sync 0;" ::: "memory")',
            "#define SF_INIT_BARRIER() SF_PHASE_BARRIER()",
        ]

    def counter(self) -> tuple[str, str]:
        return "sf_add_rlx(sf_c, 1)", "sf_ld_rlx(sf_c)"

    def role_end(self, state: dict) -> list[str]:
        return []

"""The C-like kernel text shared by every front end: roles, registers, control flow, plain accesses.

A source test arrives lowered (:mod:`litmus.cfg`): per thread a list of ``ld``/``st``/``rmw``/
``cas``/``fence`` rows with ``label``/``branch``/``goto``/``assign`` rows for control flow and
register arithmetic. Each row becomes one C statement, so the kernel keeps the test's program
order and every statement's line is known (``Emitted.lines``: the source line of each row, which
the read-back's ``origin`` names). A front end (:class:`Spelling`) spells only the atomics and
fences; plain accesses are plain C (``*p = v``, no ``volatile``: a racy source is UB and the
compiler may do anything with it; the check skips such sources).

Refused (:class:`hw.BackendRefused`): address dependencies through arrays (``arr=``), barriers
(``cbar``), the PTX-only attributes (proxies, aliases), accesses other than plain/atomic, an
observed register the PTX dialect cannot name, and a front end's own limits (:meth:`refuse`).
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus import Instr, Test
from litmus.cfg import attr, parse_expr_text
from litmus.ir import prop_atoms

from ..backend import BackendRefused
from .layout import OBSERVABLE, Layout, c_name, make_layout

#: the program model's scope words (OPENCL/C: thread wg agent sys; CUDA dialect: cta gpu) -> ours
SCOPE_WORDS = {"thread": "thread", "wave": "wg", "wg": "wg", "cta": "wg", "cluster": "cluster",
               "agent": "agent", "gpu": "agent", "sys": "sys"}
C_OPS = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "&", "|", "^"}


@dataclass
class Emitted:
    """A kernel source and, per thread and row of its code, the 1-based source line (or None)."""

    text: str
    lines: list[list[int | None]]
    layout: Layout
    kernels: tuple[str, ...]


class Spelling:
    """How one front end writes the atomics and fences; subclasses fill in the hooks."""

    NAME = ""
    SUFFIX = ".cu"

    def prelude(self) -> list[str]:
        return []

    def kernel_head(self, name: str, params: list[str]) -> str:
        return f'extern "C" __global__ void {name}({", ".join(params)}) {{'

    def param(self, cname: str) -> str:
        return f"int *{cname}"

    def gid(self) -> str:
        return "threadIdx.x + blockIdx.x * blockDim.x"

    def scope(self, scope: str) -> str:
        raise NotImplementedError

    def load(self, p: str, order: str, scope: str) -> str:
        raise NotImplementedError

    def store(self, p: str, v: str, order: str, scope: str) -> str:
        raise NotImplementedError

    def rmw(self, op: str, p: str, v: str, order: str, scope: str) -> str:
        raise NotImplementedError

    def cas(self, p: str, e: str, v: str, succ: str, fail: str, scope: str) -> str:
        """A statement: strong compare-exchange of ``*p`` with expected in the lvalue ``e``."""
        raise NotImplementedError

    def fence(self, order: str, scope: str, ins: Instr) -> str:
        raise NotImplementedError

    def refuse(self, ins: Instr) -> str | None:
        return None


def _scope(ins: Instr) -> str:
    return SCOPE_WORDS.get(ins.scope or "sys", ins.scope or "sys")


def refusal_of(test: Test, sp: Spelling) -> str | None:
    """Why ``sp`` cannot emit ``test`` (None when it can)."""
    for a in prop_atoms(test.condition.prop):
        if a.thread is not None and not OBSERVABLE.match(a.name):
            return (f"the condition names register {a.name!r} of P{a.thread}: the PTX dialect "
                    f"names registers r<N> only")
    for tid, _, ins in test.instructions():
        why = None
        if ins.base in ("cbar", "barrier") or ins.is_barrier:
            why = "barriers are not emitted (a role switch cannot hold a CTA barrier)"
        elif ins.base in ("avdevice", "visdevice") or ins.base.startswith("async"):
            why = f"{ins.base} has no CUDA/OpenCL C spelling"
        elif ins.base in ("ld", "st") and ins.access not in ("plain", "atom"):
            why = f"{ins.access} accesses have no C spelling"
        elif attr(ins, "arr") is not None:
            why = "address dependencies through arrays are not emitted"
        elif any(a.startswith(("via=", "proxy=", "vloc=")) for a in ins.attrs):
            why = "aliases and proxies have no C spelling"
        elif ins.is_rmw and ins.base == "rmw" and ins.op not in ("add", "sub", "and", "or",
                                                                 "xor", "min", "max", "xchg"):
            why = f"rmw {ins.op} has no C spelling"
        elif ins.base == "fence" and attr(ins, "proxy") is not None:
            why = "proxy fences have no C spelling"
        if why is None:
            why = sp.refuse(ins)
        if why is not None:
            return f"P{tid}: {why}"
    if any(loc.lds for loc in test.locations):
        return "LDS locations are not emitted"
    return None


class _Writer:
    def __init__(self):
        self.out: list[str] = []

    def line(self, text: str) -> int:
        self.out.append(text)
        return len(self.out)


def _expr(e, regs: dict[str, str]) -> str:
    if isinstance(e, int):
        return str(e)
    if isinstance(e, str):
        return regs[e]
    op = e[0]
    if op == "!":
        return f"!{_expr(e[1], regs)}"
    if op == "neg":
        return f"-{_expr(e[1], regs)}"
    if op not in C_OPS:
        raise BackendRefused(f"expression operator {op!r} has no C spelling")
    return f"({_expr(e[1], regs)} {op} {_expr(e[2], regs)})"


def _value(ins: Instr, key: str, k: int, regs: dict[str, str]) -> str:
    text = attr(ins, key)
    if text is not None:
        return _expr(parse_expr_text(text), regs)
    return str(ins.args[k])


def emit(test: Test, sp: Spelling, per_role: bool, prefix: str = "",
         prelude: bool = True) -> Emitted:
    """The kernel source of ``test`` in spelling ``sp`` (BackendRefused when inexpressible).
    ``prefix`` goes before every kernel name and ``prelude=False`` leaves the front end's
    prelude out: a batch of tests is one source of several tests' kernels (:func:`emit_batch`)."""
    why = refusal_of(test, sp)
    if why is not None:
        raise BackendRefused(f"{sp.NAME}: {why}")
    lay = make_layout(test)
    w = _Writer()
    w.line(f"// scopefuzz ptxc: {test.name} for {sp.NAME} "
           f"({'one kernel per role' if per_role else 'one kernel, role switch'})")
    for ln in sp.prelude() if prelude else ():
        w.line(ln)
    params = [sp.param(p) for _, p in lay.params] + [sp.param("out")]
    lines: list[list[int | None]] = [[] for _ in test.threads]
    kernels: list[str] = []
    if not per_role:
        kernels.append(f"{prefix}litmus")
        w.line(sp.kernel_head(f"{prefix}litmus", params))
        w.line(f"  int gid = {sp.gid()};")
        w.line("  switch (gid) {")
    for tid, th in enumerate(test.threads):
        role = lay.roles[tid]
        ind = "    "
        if per_role:
            kernels.append(f"{prefix}P{tid}")
            w.line(sp.kernel_head(f"{prefix}P{tid}", params))
            w.line("  {")
        else:
            w.line(f"  case {role.gid}: {{  // P{tid}")
        taken = {p for _, p in lay.params} | {"out", "gid"}
        regs: dict[str, str] = {}
        for r in test.registers(tid):
            regs[r] = c_name(r, len(regs), taken)
            w.line(f"{ind}int {regs[r]} = {test.register_init(tid, r)};")
        labels: dict[str, str] = {}
        for ins in th.code:
            for key in ("label", "target"):
                lab = attr(ins, key)
                if lab is not None and lab not in labels:
                    labels[lab] = f"P{tid}_L{len(labels)}"
        for ins in th.code:
            lines[tid].append(w.line(ind + _statement(ins, sp, lay, regs, labels)))
        for j, r in enumerate(role.observed):
            w.line(f"{ind}out[{tid * lay.stride + j}] = {regs[r]};")
        if per_role:
            w.line("  }")
            w.line("}")
        else:
            w.line("    break;")
            w.line("  }")
    if not per_role:
        w.line("  }")
        w.line("}")
    return Emitted("\n".join(w.out) + "\n", lines, lay, tuple(kernels))


def _statement(ins: Instr, sp: Spelling, lay: Layout, regs: dict[str, str],
               labels: dict[str, str]) -> str:
    b = ins.base
    if b == "label":
        return f"{labels[attr(ins, 'label')]}: ;"
    if b == "goto":
        return f"goto {labels[attr(ins, 'target')]};"
    if b == "branch":
        cond = _expr(parse_expr_text(attr(ins, "cond")), regs)
        return f"if ({cond}) goto {labels[attr(ins, 'target')]};"
    if b == "assign":
        return f"{regs[ins.reg]} = {_value(ins, 'val', 0, regs)};"
    if b == "fence":
        if ins.order is None or ins.order == "rlx":
            return ";  // relaxed fence: no effect"
        return sp.fence(ins.order, _scope(ins), ins)
    p = lay.param_of(ins.loc)
    sc = _scope(ins)
    if b == "ld":
        rhs = f"*{p}" if ins.access == "plain" else sp.load(p, ins.order, sc)
        return f"{regs[ins.reg]} = {rhs};" if ins.reg else f"(void)({rhs});"
    if b == "st":
        v = _value(ins, "val", 0, regs)
        return f"*{p} = {v};" if ins.access == "plain" else sp.store(p, v, ins.order, sc)
    if b == "rmw":
        v = _value(ins, "val", 0, regs)
        call = sp.rmw(ins.op, p, v, ins.order, sc)
        return f"{regs[ins.reg]} = {call};" if ins.reg else f"(void){call};"
    if b == "cas":
        e = _value(ins, "exp", 0, regs)
        v = _value(ins, "val", 1, regs)
        stmt = sp.cas(p, "e_", v, ins.order, ins.fail_order or ins.order, sc)
        tail = f" {regs[ins.reg]} = e_;" if ins.reg else ""
        return f"{{ int e_ = {e}; {stmt}{tail} }}"
    raise BackendRefused(f"{sp.NAME}: instruction {b!r} has no C spelling")


def emit_batch(tests: list[Test], sp: Spelling, per_role: bool) -> tuple[str, list[Emitted]]:
    """One source holding every test's kernels (test i's kernels prefixed ``t<i>_``), and each
    test's :class:`Emitted` with its lines shifted to the batch text. All must be expressible."""
    head = sp.prelude()
    text = "".join(ln + "\n" for ln in head)
    offset = len(head)
    out = []
    for i, t in enumerate(tests):
        em = emit(t, sp, per_role, prefix=f"t{i}_", prelude=False)
        em.lines = [[None if ln is None else ln + offset for ln in rows] for rows in em.lines]
        offset += em.text.count("\n")
        text += em.text
        out.append(em)
    return text, out

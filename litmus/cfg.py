"""Control flow and register arithmetic for the C and Vulkan front ends, and their pre-executions.

The native AMDGPU dialect is straight-line with constant operands. The Dat3M/herd dialects are not:
C tests compute values (``atomic_store_explicit(x, r0 - 1, ...)``) and branch on them (``if (r1)``),
Vulkan tests have labels, ``beq``/``bne``/``goto`` and spin loops. Their front ends lower both to
:class:`~litmus.ir.Instr` rows with the extra bases of :data:`~litmus.ir.CFG_BASES` and these
``attrs`` entries (strings, so instructions stay hashable):

- ``val=EXPR``: the value stored / the rmw operand / the assigned value when it is not a constant
  (``st``, ``rmw``, ``assign``); ``exp=EXPR``: the expected value of a ``cas``;
- ``cond=EXPR`` and ``target=L`` of a ``branch`` (jump when EXPR is non-zero), ``target=L`` of a
  ``goto``, ``label=L`` of a ``label``.

EXPR is a prefix S-expression over integers and register names: ``(- r0 1)``, ``(== r1 r2)``.

A *pre-execution* of a thread (:func:`thread_paths`) is one path through its code together with the
value each read returned: the list of memory operations it performs (:class:`Op`) and its final
registers. Reads take their values from a finite domain per location, grown to a fixed point by
:func:`value_domains` (every value some path can write). Loops are unrolled: a path that executes
any one instruction more than ``unroll`` times is dropped, the way herd7 and Dat3M bound loops
(executions that would spin longer are not considered; a spin loop's exit is still reached by every
value that lets it exit within the bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .ir import Instr, Test

#: Default bound on how often one instruction may execute in a path (loop unrolling).
UNROLL = 3

Expr = "int | str | tuple"

BINOPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if b else 0, "%": lambda a, b: a % b if b else 0,
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
    "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
}
UNOPS = {"!": lambda a: int(not a), "neg": lambda a: -a}

RMW_APPLY = {
    "add": lambda old, v: old + v, "sub": lambda old, v: old - v, "xchg": lambda old, v: v,
    "and": lambda old, v: old & v, "or": lambda old, v: old | v, "xor": lambda old, v: old ^ v,
    "max": max, "min": min,
}


# --- expressions --------------------------------------------------------------------------------

def expr_text(e) -> str:
    """The S-expression text of an expression tree."""
    if isinstance(e, tuple):
        return "(" + " ".join([e[0]] + [expr_text(a) for a in e[1:]]) + ")"
    return str(e)


def parse_expr_text(text: str):
    """Inverse of :func:`expr_text`."""
    toks = text.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def rd():
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "(":
            op = toks[pos]
            pos += 1
            args = []
            while toks[pos] != ")":
                args.append(rd())
            pos += 1
            return (op, *args)
        try:
            return int(t)
        except ValueError:
            return t

    return rd()


def evaluate(e, regs: dict[str, int]) -> int:
    if isinstance(e, int):
        return e
    if isinstance(e, str):
        return regs.get(e, 0)
    op = e[0]
    if op in UNOPS:
        return UNOPS[op](evaluate(e[1], regs))
    return BINOPS[op](evaluate(e[1], regs), evaluate(e[2], regs))


def expr_registers(e) -> set[str]:
    if isinstance(e, str):
        return {e}
    if isinstance(e, tuple):
        out: set[str] = set()
        for a in e[1:]:
            out |= expr_registers(a)
        return out
    return set()


def attr(ins: Instr, key: str) -> str | None:
    """The value of ``key=...`` in an instruction's attrs, or None."""
    pre = key + "="
    for a in ins.attrs:
        if a.startswith(pre):
            return a[len(pre):]
    return None


def has_flag(ins: Instr, flag: str) -> bool:
    return flag in ins.attrs


def _operand(ins: Instr, key: str, default: int | None, regs: dict[str, int]) -> int:
    text = attr(ins, key)
    if text is None:
        return default
    return evaluate(parse_expr_text(text), regs)


# --- pre-executions -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Op:
    """One memory or synchronization operation of a path.

    ``kind``: ``R`` read, ``W`` write, ``U`` read-modify-write (a read of ``rval`` and a write of
    ``wval``), ``F`` fence, ``B`` control barrier, ``AV``/``VIS`` device availability/visibility
    operations. ``index`` is the instruction's row in the thread's code.
    """

    kind: str
    index: int
    instr: Instr
    loc: str | None = None
    rval: int | None = None
    wval: int | None = None


@dataclass(frozen=True)
class Path:
    ops: tuple[Op, ...]
    regs: tuple[tuple[str, int], ...]

    def reg_dict(self) -> dict[str, int]:
        return dict(self.regs)


def _labels(code: tuple[Instr, ...]) -> dict[str, int]:
    return {attr(ins, "label"): i for i, ins in enumerate(code) if ins.base == "label"}


def thread_paths(code: tuple[Instr, ...], init_regs: dict[str, int],
                 read_domain: Callable[[str], Iterable[int]], unroll: int = UNROLL,
                 limit: int = 200000) -> list[Path]:
    """Every path through ``code`` with reads returning values from ``read_domain(loc)``."""
    labels = _labels(code)
    out: list[Path] = []
    reg_names = sorted(set(init_regs) | {i.reg for i in code if i.reg})

    def run(pc: int, regs: dict[str, int], ops: list[Op], counts: dict[int, int]):
        while pc < len(code):
            ins = code[pc]
            c = counts.get(pc, 0) + 1
            if c > unroll:
                return
            counts[pc] = c
            b = ins.base
            if b in ("label",):
                pc += 1
                continue
            if b == "goto":
                pc = labels[attr(ins, "target")]
                continue
            if b == "branch":
                if _operand(ins, "cond", 0, regs):
                    pc = labels[attr(ins, "target")]
                else:
                    pc += 1
                continue
            if b == "assign":
                regs[ins.reg] = _operand(ins, "val", ins.args[0] if ins.args else 0, regs)
                pc += 1
                continue
            if b == "st":
                v = _operand(ins, "val", ins.args[0] if ins.args else 0, regs)
                ops.append(Op("W", pc, ins, ins.loc, None, v))
                pc += 1
                continue
            if b in ("ld", "rmw", "cas"):
                for v in sorted(set(read_domain(ins.loc))):
                    r2, o2 = dict(regs), list(ops)
                    if b == "ld":
                        o2.append(Op("R", pc, ins, ins.loc, v, None))
                    elif b == "rmw":
                        operand = _operand(ins, "val", ins.args[0] if ins.args else 0, regs)
                        o2.append(Op("U", pc, ins, ins.loc, v, RMW_APPLY[ins.op](v, operand)))
                    else:
                        exp = _operand(ins, "exp", ins.args[0] if ins.args else 0, regs)
                        des = _operand(ins, "val", ins.args[1] if len(ins.args) > 1 else 0, regs)
                        if v == exp:
                            o2.append(Op("U", pc, ins, ins.loc, v, des))
                        else:
                            o2.append(Op("R", pc, ins.replace(order=ins.fail_order), ins.loc,
                                         v, None))
                    if ins.reg:
                        r2[ins.reg] = v
                    run(pc + 1, r2, o2, dict(counts))
                    if len(out) > limit:
                        raise ValueError(f"more than {limit} paths in one thread")
                return
            if b == "fence":
                ops.append(Op("F", pc, ins))
            elif b == "cbar":
                ops.append(Op("B", pc, ins))
            elif b == "avdevice":
                ops.append(Op("AV", pc, ins))
            elif b == "visdevice":
                ops.append(Op("VIS", pc, ins))
            else:
                raise ValueError(f"instruction base {b!r} has no pre-execution")
            pc += 1
        final = {r: regs.get(r, 0) for r in reg_names}
        out.append(Path(tuple(ops), tuple(sorted(final.items()))))

    run(0, dict(init_regs), [], {})
    return out


def _constant_writes(test: Test) -> dict[str, set[int]]:
    """Initial values and the constants stored by ``st`` (whatever path reaches them)."""
    dom: dict[str, set[int]] = {loc.name: {loc.init} for loc in test.locations}
    for _, _, ins in test.instructions():
        if ins.base == "st" and attr(ins, "val") is None:
            dom[ins.loc].add(ins.args[0] if ins.args else 0)
    return dom


def value_domains(test: Test, unroll: int = UNROLL, rounds: int | None = None
                  ) -> dict[str, set[int]]:
    """Per location, every value a read of it can return: the fixed point of "values written".

    A value that depends on other reads is found after as many rounds as the length of its
    (po ∪ rf) derivation chain, so ``rounds`` defaults to the number of writing instructions + 1
    (at most 8); values needing longer chains (out of thin air) are not considered.
    """
    dom = _constant_writes(test)
    if rounds is None:
        rounds = min(8, 1 + sum(1 for _, _, i in test.instructions() if i.writes))
    for _ in range(rounds):
        grown = False
        for tid, th in enumerate(test.threads):
            regs = {r: test.register_init(tid, r) for r in test.registers(tid)}
            for p in thread_paths(th.code, regs, lambda loc: dom[loc], unroll):
                for op in p.ops:
                    if op.wval is not None and op.wval not in dom[op.loc]:
                        dom[op.loc].add(op.wval)
                        grown = True
        if not grown:
            return dom
    return dom


def pre_executions(test: Test, unroll: int = UNROLL) -> list[list[Path]]:
    """Per thread, its paths with reads drawn from :func:`value_domains`."""
    dom = value_domains(test, unroll)
    out = []
    for tid, th in enumerate(test.threads):
        regs = {r: test.register_init(tid, r) for r in test.registers(tid)}
        out.append(thread_paths(th.code, regs, lambda loc: dom[loc], unroll))
    return out


def iter_paths(test: Test) -> Iterator[tuple[int, Path]]:
    for tid, paths in enumerate(pre_executions(test)):
        for p in paths:
            yield tid, p

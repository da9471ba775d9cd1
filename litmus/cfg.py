"""Control flow and register arithmetic for the C and Vulkan front ends, and their thread paths.

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
from typing import Callable, Iterable

from .ir import Instr, Test, prop_atoms
from .rmw import RMW_CODES, apply_rmw

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


def _leaves(e):
    """The leaves of an expression tree: integer literals and register names."""
    if isinstance(e, tuple):
        for a in e[1:]:
            yield from _leaves(a)
    else:
        yield e


def expr_constants(e) -> set[int]:
    """The integer literals of an expression tree."""
    return {x for x in _leaves(e) if isinstance(x, int)}


def data_constants(test: Test) -> set[int]:
    """The program's constants and the condition's constants: initial values of locations and
    registers (0 for a register left out), the operands of stores, rmws, cas and assignments
    and the literals of their expressions and branch conditions, and the values the final
    condition (and a ``filter``) compare with. Models without a no-thin-air axiom take read
    values out of thin air from this set (:func:`value_domains`)."""
    out = {loc.init for loc in test.locations} | {v for _, _, v in test.reg_init} | {0}
    for _, _, ins in test.instructions():
        if ins.base in ("st", "rmw", "cas", "assign"):
            out.update(ins.args)
        for a in ins.attrs:
            k, _, v = a.partition("=")
            if k in ("val", "exp", "cond"):
                out |= expr_constants(parse_expr_text(v))
    for prop in (test.condition.prop, dict(test.meta).get("filter")):
        if prop is not None:
            out.update(a.value for a in prop_atoms(prop))
    return out


def thin_air_values(test: Test) -> set[int]:
    """The values a read may take out of thin air under a model without a no-thin-air axiom:
    :func:`data_constants`, and one value distinct from all of them (the largest magnitude
    plus one), standing for any other value: a cycle that only copies a value justifies every
    value alike, and a condition such as ``P0:r0 != 0`` needs one that no constant gives."""
    consts = data_constants(test)
    return consts | {max(abs(c) for c in consts) + 1}


def expr_registers(e) -> set[str]:
    """The register names of an expression tree."""
    return {x for x in _leaves(e) if isinstance(x, str)}


def attr(ins: Instr, key: str) -> str | None:
    """The value of ``key=...`` in an instruction's attrs, or None."""
    pre = key + "="
    for a in ins.attrs:
        if a.startswith(pre):
            return a[len(pre):]
    return None


def _operand(ins: Instr, key: str, default: int | None, regs: dict[str, int]) -> int:
    text = attr(ins, key)
    if text is None:
        return default
    return evaluate(parse_expr_text(text), regs)


# --- thread paths ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Op:
    """One memory or synchronization operation of a path.

    ``kind``: ``R`` read, ``W`` write, ``U`` read-modify-write (a read of ``rval`` and a write of
    ``wval``), ``F`` fence, ``B`` control barrier, ``AV``/``VIS`` device availability/visibility
    operations. ``index`` is the instruction's row in the thread's code. ``bar_id``: the value of
    a barrier's ``id=`` operand on this path (a register id is evaluated). ``deps`` (only when
    :func:`thread_paths` is asked for them): the positions, in the path's ops, of the reads this
    operation depends on: through the value it writes or compares (data) or through a branch
    taken or not before it (control).
    """

    kind: str
    index: int
    instr: Instr
    loc: str | None = None
    rval: int | None = None
    wval: int | None = None
    prov: frozenset = frozenset()     # write instructions the written value derives from
    bar_id: int | None = None
    deps: frozenset = frozenset()     # reads (positions in the path's ops) it depends on


@dataclass(frozen=True)
class Path:
    """A path's operations and final registers: an int, or ``("read", k)`` when the register
    holds the value of the free read ``ops[k]`` (a read whose value no expression uses: paths
    do not enumerate its value, the execution's rf gives it)."""

    ops: tuple[Op, ...]
    regs: tuple[tuple[str, object], ...]

    def reg_dict(self) -> dict[str, int]:
        return dict(self.regs)


def _labels(code: tuple[Instr, ...]) -> dict[str, int]:
    return {attr(ins, "label"): i for i, ins in enumerate(code) if ins.base == "label"}


def used_registers(code: tuple[Instr, ...]) -> set[str]:
    """Registers some expression (stored value, operand, branch condition) reads."""
    used: set[str] = set()
    for ins in code:
        for a in ins.attrs:
            k, _, v = a.partition("=")
            if k in ("val", "cond", "exp", "id"):
                used |= expr_registers(parse_expr_text(v))
    return used


def spin_loops(code: tuple[Instr, ...]) -> set[int]:
    """Indices of backward jumps that close a *side-effect-free* loop (a spin loop).

    The loop runs from the jump's target label to the jump, which ends it; its body writes no
    memory, has no barrier or device operation, and every register it writes is written before
    each of its exits. An iteration that goes round again then changes nothing a later iteration
    does not redo, so dropping it keeps the outcome, and every model here is monotone (fewer
    events, fewer constraints, fewer races): :func:`thread_paths` never takes such a jump, the
    way Dat3M cuts side-effect-free spin iterations.
    """
    labels = _labels(code)
    out = set()
    for j, ins in enumerate(code):
        if ins.base not in ("goto", "branch"):
            continue
        lo = labels.get(attr(ins, "target"))
        if lo is None or lo > j:
            continue
        body = code[lo:j + 1]
        if any(i.base in ("st", "rmw", "cas", "cbar", "avdevice", "visdevice", "assign")
               for i in body[:-1]):
            continue
        exits = [k for k in range(lo, j) if code[k].base == "branch"
                 and not lo <= labels.get(attr(code[k], "target"), -1) <= j]
        writes = [k for k in range(lo, j) if code[k].reg]
        if all(w < e for e in exits for w in writes):
            out.add(j)
    return out


def loop_body(code: tuple[Instr, ...]) -> set[int]:
    """Indices of instructions inside some loop (between a label and a backward jump to it)."""
    labels = _labels(code)
    inside = set()
    for j, ins in enumerate(code):
        if ins.base in ("goto", "branch"):
            lo = labels.get(attr(ins, "target"))
            if lo is not None and lo <= j:
                inside.update(range(lo, j + 1))
    return inside


def thread_paths(code: tuple[Instr, ...], init_regs: dict[str, int],
                 read_domain: Callable[[str], Iterable], unroll: int = UNROLL,
                 limit: int = 200000, key=None, deps: bool = False) -> list[Path]:
    """Every path through ``code`` with reads returning values from ``read_domain(loc)``.

    ``read_domain`` gives ints, or ``(value, provenance)`` pairs when ``key`` is set (then each
    write op carries in ``prov`` the set of write instructions its value derives from, with
    ``(key, index)`` for itself, and a read-modify-write outside loops never consumes a value
    derived from itself; :func:`value_domains` uses this). ``deps``: fill each op's ``deps``
    (the reads it depends on by data or control, for models with a dependency relation).

    A ``cas`` whose attrs hold ``cmov`` writes on failure too (the value it read back: PTX's
    ``atom.cas``, whose semantics is ``*a = (*a == b) ? c : *a``); otherwise a failed cas is a
    read with its failure order.
    """
    labels = _labels(code)
    spins = spin_loops(code)
    looped = loop_body(code)
    used = used_registers(code)
    out: list[Path] = []
    reg_names = sorted(set(init_regs) | {i.reg for i in code if i.reg})
    empty = frozenset()
    ctrl = "#ctrl"          # the key of the control dependencies in a path's read-deps map

    def dep(ins, keyname, regs_prov):
        text = attr(ins, keyname)
        if text is None:
            return empty
        p = empty
        for r in expr_registers(parse_expr_text(text)):
            p = p | regs_prov.get(r, empty)
        return p

    def rdeps(ins, rd, *keys):
        """The reads an op of ``ins`` depends on: its operands' and the control dependencies."""
        if not deps:
            return empty
        p = rd.get(ctrl, empty)
        for k in keys:
            p = p | dep(ins, k, rd)
        return p

    def run(pc: int, regs: dict[str, int], prov: dict, ops: list[Op], counts: dict[int, int],
            rd: dict):
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
                if pc in spins:
                    return
                pc = labels[attr(ins, "target")]
                continue
            if b == "branch":
                if deps:
                    rd[ctrl] = rdeps(ins, rd, "cond")
                if _operand(ins, "cond", 0, regs):
                    if pc in spins:
                        return
                    pc = labels[attr(ins, "target")]
                else:
                    pc += 1
                continue
            if b == "assign":
                regs[ins.reg] = _operand(ins, "val", ins.args[0] if ins.args else 0, regs)
                if key is not None:
                    prov[ins.reg] = dep(ins, "val", prov)
                if deps:
                    rd[ins.reg] = dep(ins, "val", rd)
                pc += 1
                continue
            if b == "st":
                v = _operand(ins, "val", ins.args[0] if ins.args else 0, regs)
                wp = (dep(ins, "val", prov) | {(key, pc)}) if key is not None else empty
                ops.append(Op("W", pc, ins, ins.loc, None, v, wp, deps=rdeps(ins, rd, "val")))
                pc += 1
                continue
            if b == "ld" and ins.reg not in used:
                # a free read: nothing depends on its value, so rf alone decides it later
                ops.append(Op("R", pc, ins, ins.loc, None, None, deps=rdeps(ins, rd)))
                regs[ins.reg] = ("read", len(ops) - 1)
                pc += 1
                continue
            if b in ("ld", "rmw", "cas"):
                entries = read_domain(ins.loc)
                if key is None:
                    entries = [(v, [empty]) for v in sorted(set(entries))]
                here = frozenset({len(ops)})
                for v, provs in entries:
                    if key is not None and b != "ld" and pc not in looped:
                        # an rmw cannot read a value derived from itself (it runs once)
                        provs = [q for q in provs if (key, pc) not in q]
                        if not provs:
                            continue
                    vp = min(provs, key=len)
                    r2, p2, o2, d2 = dict(regs), dict(prov), list(ops), dict(rd)
                    if b == "ld":
                        o2.append(Op("R", pc, ins, ins.loc, v, None, deps=rdeps(ins, rd)))
                    elif b == "rmw":
                        operand = _operand(ins, "val", ins.args[0] if ins.args else 0, regs)
                        wp = (vp | dep(ins, "val", prov) | {(key, pc)}) if key is not None \
                            else empty
                        o2.append(Op("U", pc, ins, ins.loc, v, apply_rmw(RMW_CODES[ins.op], v, operand),
                                     wp,
                                     deps=rdeps(ins, rd, "val")))
                    else:
                        exp = _operand(ins, "exp", ins.args[0] if ins.args else 0, regs)
                        des = _operand(ins, "val", ins.args[1] if len(ins.args) > 1 else 0, regs)
                        dd = rdeps(ins, rd, "exp", "val")
                        if v == exp or "cmov" in ins.attrs:
                            wp = (vp | dep(ins, "val", prov) | {(key, pc)}) if key is not None \
                                else empty
                            o2.append(Op("U", pc, ins, ins.loc, v, des if v == exp else v, wp,
                                         deps=dd))
                        else:
                            o2.append(Op("R", pc, ins.replace(order=ins.fail_order), ins.loc,
                                         v, None, deps=dd))
                    if ins.reg:
                        r2[ins.reg] = v
                        if key is not None:
                            p2[ins.reg] = vp
                        if deps:
                            d2[ins.reg] = here
                    run(pc + 1, r2, p2, o2, dict(counts), d2)
                    if len(out) > limit:
                        raise ValueError(f"more than {limit} paths in one thread")
                return
            if b == "fence":
                ops.append(Op("F", pc, ins, deps=rdeps(ins, rd)))
            elif b == "cbar":
                bid = _operand(ins, "id", None, regs) if attr(ins, "id") is not None else None
                ops.append(Op("B", pc, ins, bar_id=bid, deps=rdeps(ins, rd, "id")))
            elif b == "avdevice":
                ops.append(Op("AV", pc, ins))
            elif b == "visdevice":
                ops.append(Op("VIS", pc, ins))
            else:
                raise ValueError(f"instruction base {b!r} has no pre-execution")
            pc += 1
        final = {r: regs.get(r, 0) for r in reg_names}
        out.append(Path(tuple(ops), tuple(sorted(final.items()))))

    run(0, dict(init_regs), {}, [], {}, {})
    return out


def value_domains(test: Test, unroll: int = UNROLL, rounds: int = 12,
                  max_prov: int = 8, seed: bool = True,
                  thin_air: bool = False) -> dict[str, set[int]]:
    """Per location, every value a read of it can return: the fixed point of "values written".

    Each value keeps the sets of write instructions it can derive from (its provenance); a
    read-modify-write outside a loop never consumes a value derived from itself, since it runs once
    (so two ``fetch_add(x, 1)`` give x the values 0, 1, 2 and no more). Values needing a derivation
    longer than ``rounds`` steps (only out of thin air) are not considered.

    ``thin_air`` (a model without a no-thin-air axiom, ``allow thin-air`` in its model file): a
    value that flows around a cycle of rf and data dependencies (``r0 = x; y = r0`` against
    ``r1 = y; x = r1``) is written by no instruction of its own, and the model does not constrain
    it; every location's domain then starts with :func:`thin_air_values` as well, each a value
    with no derivation. A read is still given such a value only where some write of that value
    exists in the execution (the search's rf must justify it), i.e. on such a cycle.
    """
    prov: dict[str, dict[int, set[frozenset]]] = {
        loc.name: {loc.init: {frozenset()}} for loc in test.locations}
    if thin_air:
        for c in thin_air_values(test):
            for p in prov.values():
                p.setdefault(c, {frozenset()})
    # every constant a store can write, whether or not its branch is reachable from the values
    # found so far: a branch may be taken only thanks to a (po | rf) cycle (load buffering),
    # which models without a no-thin-air axiom (vulkan) allow; seed=False for models with one
    # (rc11: every value of a consistent execution derives along an acyclic po | rf)
    for tid, i, ins in test.instructions() if seed else ():
        if ins.base == "st" and attr(ins, "val") is None:
            prov[ins.loc].setdefault(ins.args[0] if ins.args else 0, set()).add(
                frozenset({(tid, i)}))
    for _ in range(rounds):
        grown = False
        for tid, th in enumerate(test.threads):
            regs = {r: test.register_init(tid, r) for r in test.registers(tid)}

            def domain(loc):
                return [(v, sorted(ps, key=len)) for v, ps in sorted(prov[loc].items())]

            for path in thread_paths(th.code, regs, domain, unroll, limit=20000, key=tid):
                for op in path.ops:
                    if op.wval is None:
                        continue
                    ps = prov[op.loc].setdefault(op.wval, set())
                    if any(p <= op.prov for p in ps) or len(ps) >= max_prov:
                        continue
                    ps.add(op.prov)
                    grown = True
        if not grown:
            break
    return {loc: set(vals) for loc, vals in prov.items()}


#: Most combinations of thread paths a test may have (beyond: ValueError, never a hang).
MAX_COMBINATIONS = 200_000


def paths_per_thread(test: Test, unroll: int = UNROLL, seed: bool = True,
                     thin_air: bool = False, deps: bool = False) -> list[list[Path]]:
    """Per thread, its paths with reads drawn from :func:`value_domains` (``deps``: with each
    op's dependencies, :func:`thread_paths`).

    Raises ValueError when the combinations of paths exceed :data:`MAX_COMBINATIONS`."""
    dom = value_domains(test, unroll, seed=seed, thin_air=thin_air)
    out = []
    for tid, th in enumerate(test.threads):
        regs = {r: test.register_init(tid, r) for r in test.registers(tid)}
        out.append(thread_paths(th.code, regs, lambda loc: dom[loc], unroll, deps=deps))
    combos = 1
    for paths in out:
        combos *= max(1, len(paths))
    if combos > MAX_COMBINATIONS:
        raise ValueError(f"{test.name}: {combos} combinations of thread paths (more than "
                         f"{MAX_COMBINATIONS}); bound the loops or the values")
    return out

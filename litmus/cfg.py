"""Control flow and register arithmetic for the C and Vulkan front ends, and their thread paths.

The native AMDGPU dialect is straight-line with constant operands. The Dat3M/herd dialects are not:
C tests compute values (``atomic_store_explicit(x, r0 - 1, ...)``) and branch on them (``if (r1)``),
Vulkan tests have labels, ``beq``/``bne``/``goto`` and spin loops. Their front ends lower both to
:class:`~litmus.ir.Instr` rows with the extra bases of :data:`~litmus.ir.CFG_BASES` and these
``attrs`` entries (strings, so instructions stay hashable):

- ``val=EXPR``: the value stored / the rmw operand / the assigned value when it is not a constant
  (``st``, ``rmw``, ``assign``); ``exp=EXPR``: the expected value of a ``cas``;
- ``unseq=ID:SIDE`` on an access: it lies in operand SIDE (0 or 1) of operator ID of a C
  expression; accesses in the two operands of one operator are unsequenced (:func:`unsequenced`);
- ``arr=NAME:LEN`` and ``off=EXPR`` on an access: an address dependency, the access goes to the
  element ``NAME[off]`` of an array of LEN locations (``NAME[0]`` .. ``NAME[LEN-1]``; ``loc`` is
  ``NAME[0]``), chosen per path (:func:`access_location`);
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

from typing import Callable, Iterable, NamedTuple

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

_HALF = 1 << 63


def wrap64(v: int) -> int:
    """``v`` as a signed 64-bit integer (two's complement wrap-around), what the oracle's and the
    backends' int64 arrays hold and what a 64-bit atomic add or register add does on hardware:
    arithmetic on in-range values (2^63-2 plus 1 plus 1) stays representable instead of
    overflowing the arrays."""
    return v if -_HALF <= v < _HALF else ((v + _HALF) & (2 * _HALF - 1)) - _HALF



# --- expressions --------------------------------------------------------------------------------

def expr_text(e) -> str:
    """The S-expression text of an expression tree."""
    if isinstance(e, tuple):
        return "(" + " ".join([e[0]] + [expr_text(a) for a in e[1:]]) + ")"
    return str(e)


def parse_expr_text(text: str):
    """Inverse of :func:`expr_text`. (Not memoized: a check decodes each thread's expressions
    once, :class:`ThreadCode`, and a campaign checks each program once, so a memo keyed by the
    text would only make a repeated check cheaper than a first one.)"""
    if "(" not in text:                 # a literal or a register name
        return _leaf(text)
    if text[0] == "(" and text[-1] == ")" and text.count("(") == 1 and text.count(")") == 1:
        toks = text[1:-1].split()       # one operator over literals and registers: (op a b)
        if toks:
            return (toks[0], *[_leaf(t) for t in toks[1:]])
    toks = text.replace("(", " ( ").replace(")", " ) ").split()
    return _read_expr(toks, 0)[0]


def _read_expr(toks: list[str], pos: int):
    """The expression starting at token ``pos`` and the position after it (a module function,
    not a closure calling itself: that would be a reference cycle left to the cyclic collector)."""
    t = toks[pos]
    pos += 1
    if t != "(":
        return _leaf(t), pos
    op = toks[pos]
    pos += 1
    args = []
    while toks[pos] != ")":
        a, pos = _read_expr(toks, pos)
        args.append(a)
    return (op, *args), pos + 1


def _leaf(t: str):
    """An integer literal as an int, anything else (a register name) as it is. Only a text
    starting with a sign, a digit or white space can be an int (what ``int`` accepts): a
    register name is told apart without raising (and catching) a ValueError."""
    if t and (t[0].isdigit() or t[0] in "+-" or t[0].isspace()):
        try:
            return int(t)
        except ValueError:
            pass
    return t


def evaluate(e, regs: dict[str, int]) -> int:
    if isinstance(e, int):
        return e
    if isinstance(e, str):
        return regs.get(e, 0)
    op = e[0]
    if op in UNOPS:
        return wrap64(UNOPS[op](evaluate(e[1], regs)))
    return wrap64(BINOPS[op](evaluate(e[1], regs), evaluate(e[2], regs)))


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
        if ins.attrs:
            f = ins.fields
            for v in (f.val, f.exp, f.cond, f.off):
                if v is not None:
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
    out: set[str] = set()
    _registers_into(e, out)
    return out


def _registers_into(e, out: set) -> None:
    if isinstance(e, tuple):
        for a in e[1:]:
            _registers_into(a, out)
    elif isinstance(e, str):
        out.add(e)


def attr(ins: Instr, key: str) -> str | None:
    """The value of ``key=...`` in an instruction's attrs, or None (the string reading, kept for
    callers from before issue 34; ``ins.fields`` gives the typed one, litmus/fields.py)."""
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

class Op(NamedTuple):
    """One memory or synchronization operation of a path.

    ``kind``: ``R`` read, ``W`` write, ``U`` read-modify-write (a read of ``rval`` and a write of
    ``wval``), ``UF`` a *free* read-modify-write (only from :func:`free_rmw_code`'s threads: its
    read's value feeds nothing but its own write, so neither is fixed; ``rval`` is None and
    ``wval`` the operand its write combines with the value read), ``F`` fence, ``B`` control barrier, ``AV``/``VIS`` device availability/visibility
    operations. ``index`` is the instruction's row in the thread's code. ``bar_id``: the value of
    a barrier's ``id=`` operand on this path (a register id is evaluated). ``deps`` (only when
    :func:`thread_paths` is asked for them): the positions, in the path's ops, of the reads this
    operation depends on: through the value it writes or compares (data), through its address
    (``off=``) or through a branch taken or not before it (control). (A named tuple, not a
    dataclass: path enumerations make many of them, and a tuple is several times cheaper to
    build.)
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


_new_op = tuple.__new__


class Path(NamedTuple):
    """A path's operations and final registers: an int, or ``("read", k)`` when the register
    holds the value of the free read ``ops[k]`` (a read whose value no expression uses: paths
    do not enumerate its value, the execution's rf gives it)."""

    ops: tuple[Op, ...]
    regs: tuple[tuple[str, object], ...]

    def reg_dict(self) -> dict[str, int]:
        return dict(self.regs)


def _labels(code: tuple[Instr, ...]) -> dict[str, int]:
    return {ins.fields.label: i for i, ins in enumerate(code) if ins.base == "label"}


def used_registers(code: tuple[Instr, ...]) -> set[str]:
    """Registers some expression (stored value, operand, branch condition) reads."""
    used: set[str] = set()
    for ins in code:
        if ins.attrs:
            f = ins.fields
            for v in (f.val, f.cond, f.exp, f.off):
                if v is not None:
                    used |= expr_registers(parse_expr_text(v))
            if isinstance(f.barrier, str):          # a register barrier id
                used |= expr_registers(parse_expr_text(f.barrier))
    return used


def unsequenced(a: Instr, b: Instr) -> bool:
    """Are two instructions of one thread unsequenced (C11 6.5p3: accesses in the two operands
    of one operator, marked ``unseq=ID:SIDE`` by the C front end)? Program order leaves such a
    pair unordered."""
    if not a.attrs or not b.attrs:
        return False
    sides = dict(a.fields.unseq)
    return any(sides.get(gid, side) != side for gid, side in b.fields.unseq)


def array_elements(ins: Instr) -> list[str]:
    """Every location an access may reach: its ``loc``, or each element of its ``arr=`` array."""
    arr = attr(ins, "arr")
    if arr is None:
        return [ins.loc]
    name, _, size = arr.rpartition(":")
    return [f"{name}[{k}]" for k in range(int(size))]


def access_location(ins: Instr, regs: dict[str, int]) -> str | None:
    """The location an access reaches with these register values: its ``loc``, or for an
    address dependency (``arr=NAME:LEN``, ``off=EXPR``) the element ``NAME[off]``; None when
    the offset falls outside the array (no location of the test: such a path is dropped,
    :func:`thread_paths`)."""
    arr = attr(ins, "arr")
    if arr is None:
        return ins.loc
    name, _, size = arr.rpartition(":")
    k = _operand(ins, "off", 0, regs)
    if not isinstance(k, int) or not 0 <= k < int(size):
        return None
    return f"{name}[{k}]"


def spin_loops(code: tuple[Instr, ...], labels: dict[str, int] | None = None) -> set[int]:
    """Indices of backward jumps that close a *side-effect-free* loop (a spin loop).

    The loop runs from the jump's target label to the jump, which ends it; its body writes no
    memory, has no barrier or device operation, and every register it writes is written before
    each of its exits. An iteration that goes round again then changes nothing a later iteration
    does not redo, so dropping it keeps the outcome, and every model here is monotone (fewer
    events, fewer constraints, fewer races): :func:`thread_paths` never takes such a jump, the
    way Dat3M cuts side-effect-free spin iterations. (``labels``: :func:`_labels` of ``code``.)
    """
    if labels is None:
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


def loop_body(code: tuple[Instr, ...], labels: dict[str, int] | None = None) -> set[int]:
    """Indices of instructions inside some loop (between a label and a backward jump to it)."""
    if labels is None:
        labels = _labels(code)
    inside = set()
    for j, ins in enumerate(code):
        if ins.base in ("goto", "branch"):
            lo = labels.get(attr(ins, "target"))
            if lo is not None and lo <= j:
                inside.update(range(lo, j + 1))
    return inside


#: what :meth:`ThreadCode.advance` returns for a path dropped by the unrolling bound or a spin
DEAD = -1
_EMPTY = frozenset()
_NO_EXPRS: dict = {}
#: simple bases that add one operation (kind) and go on
_PLAIN_OPS = {"avdevice": "AV", "visdevice": "VIS"}
#: the attrs holding an expression (:func:`parse_expr_text`)
_EXPR_KEYS = frozenset({"val", "exp", "cond", "id", "off"})
#: the key of the control dependencies in a path's read-dependency map (:class:`ThreadCode`)
CTRL = "#ctrl"


def _fail_instr(ins: Instr) -> Instr:
    """``ins.replace(order=ins.fail_order)`` (a cas read by its failure order), an Instr copied
    without dataclasses.replace's walk over the fields and keyword call."""
    if type(ins) is not Instr:
        return ins.replace(order=ins.fail_order)
    new = object.__new__(Instr)
    d = new.__dict__
    d.update(ins.__dict__)
    d["order"] = ins.fail_order
    return new


class ThreadCode:
    """One thread's code decoded once for the path enumerations: label targets, spin loops,
    loop bodies, the registers expressions read, each instruction's expressions parsed, and
    ``unseq``: whether some instruction carries an ``unseq=`` attribute (unsequenced C
    operands, :func:`unsequenced`).

    A path is run by :meth:`advance` (straight on until the next *value read*: an ``rmw``, a
    ``cas`` or a ``ld`` whose register some expression reads) and :meth:`read` (that read
    returning a given value). Both enumerations below are built on these two steps:
    :func:`thread_paths` (every value of a domain per read) and :func:`justified_paths` (values
    written earlier in a growing execution).

    With ``rd`` (a dict) the two steps also track read dependencies (:attr:`Op.deps`): per
    register the reads its value depends on, and under :data:`CTRL` those of the branches
    passed so far.
    """

    __slots__ = ("code", "labels", "spins", "looped", "used", "rows", "reg_names", "unseq",
                 "loops")

    def __init__(self, code: tuple[Instr, ...]):
        self.code = code
        rows = []
        used: set[str] = set()
        labels = {}
        jumps = []
        regs = set()
        lds = []
        unseq = False
        for i, ins in enumerate(code):
            b = ins.base
            exprs = _NO_EXPRS
            target = None
            arr = None
            if ins.attrs:
                exprs = {}
                for a in ins.attrs:
                    k, _, v = a.partition("=")
                    if k in _EXPR_KEYS:
                        e = exprs[k] = parse_expr_text(v)
                        if type(e) is str:
                            used.add(e)
                        elif type(e) is not int:
                            _registers_into(e, used)
                    elif k == "label" and b == "label":
                        labels[v] = i
                    elif k == "target":
                        target = v
                    elif k == "arr" and arr is None:
                        name, _, size = v.rpartition(":")
                        arr = (name, int(size))
                    elif k == "unseq":
                        unseq = True
            reg = ins.reg
            if reg:
                regs.add(reg)
            if b == "goto" or b == "branch":
                jumps.append(i)
            elif b == "ld":
                lds.append(i)
            rows.append((b, ins, exprs, target, _fail_instr(ins) if b == "cas" else None, arr))
        for i in jumps:
            b, ins, exprs, target, fail, arr = rows[i]
            rows[i] = (b, ins, exprs, labels[target], fail, arr)
        for i in lds:
            row = rows[i]
            if row[1].reg not in used:
                rows[i] = ("ld.free",) + row[1:]
        self.rows = rows
        self.unseq = unseq
        self.labels = labels
        # only a backward jump closes a loop (most programs' jumps go forward: an if)
        loops = self.loops = bool(jumps) and any(rows[i][3] <= i for i in jumps)
        self.spins = spin_loops(code, labels) if loops else _EMPTY
        self.looped = loop_body(code, labels) if loops else _EMPTY
        self.used = used
        self.reg_names = sorted(regs)

    def copy(self) -> "ThreadCode":
        """A copy whose rows may be changed (:func:`free_rmw_code`)."""
        new = object.__new__(ThreadCode)
        for k in ThreadCode.__slots__:
            setattr(new, k, getattr(self, k))
        new.rows = list(self.rows)
        return new

    @staticmethod
    def _operand(row, key: str, pos: int, regs: dict) -> int:
        e = row[2].get(key)
        if e is None:
            args = row[1].args
            return args[pos] if len(args) > pos else 0
        return evaluate(e, regs)

    @staticmethod
    def _dep(row, key: str, prov: dict):
        e = row[2].get(key)
        if e is None:
            return _EMPTY
        p = _EMPTY
        for r in expr_registers(e):
            p = p | prov.get(r, _EMPTY)
        return p

    def _rdeps(self, row, rd: dict | None, *keys):
        """The reads an op of ``row`` depends on: its operands' and the control dependencies."""
        if rd is None:
            return _EMPTY
        p = rd.get(CTRL, _EMPTY)
        for k in keys:
            p = p | self._dep(row, k, rd)
        return p

    def location(self, pc: int, regs: dict) -> str | None:
        """The location the access at ``pc`` reaches with these registers
        (:func:`access_location`): None when its offset falls outside its array."""
        row = self.rows[pc]
        arr = row[5]
        if arr is None:
            return row[1].loc
        e = row[2].get("off")
        k = evaluate(e, regs) if e is not None else 0
        if not isinstance(k, int) or not 0 <= k < arr[1]:
            return None
        return f"{arr[0]}[{k}]"

    def advance(self, pc: int, regs: dict, ops: list, counts: dict, unroll: int,
                prov: dict | None = None, key=None, rd: dict | None = None) -> int:
        """Run from ``pc`` (updating ``regs``, ``ops``, ``counts``, with ``key`` the
        provenance ``prov``, with ``rd`` the read dependencies) up to the next value read: its
        index, ``len(code)`` at the end, :data:`DEAD` when the path is dropped (unrolling bound,
        a spin loop going round, an address outside its array)."""
        rows = self.rows
        n = len(rows)
        # without a backward jump no instruction runs twice on a path: nothing to count
        count = self.loops or unroll < 1
        while pc < n:
            if count:
                c = counts.get(pc, 0) + 1
                if c > unroll:
                    return DEAD
                counts[pc] = c
            row = rows[pc]
            b = row[0]
            # (the commonest instructions of C programs first)
            if b == "st":
                ins = row[1]
                loc = ins.loc if row[5] is None else self.location(pc, regs)
                if loc is None:
                    return DEAD
                e = row[2].get("val")
                if e is None:
                    v = ins.args[0] if ins.args else 0
                else:
                    v = evaluate(e, regs)
                wp = (self._dep(row, "val", prov) | {(key, pc)}) if key is not None else _EMPTY
                # (ops made with tuple.__new__: an Op's own __new__ is Python code)
                ops.append(_new_op(Op, ("W", pc, ins, loc, None, v, wp, None,
                                        _EMPTY if rd is None
                                        else self._rdeps(row, rd, "val", "off"))))
                pc += 1
            elif b == "ld.free":
                # a free read: nothing depends on its value, so rf alone decides it later
                ins = row[1]
                loc = ins.loc if row[5] is None else self.location(pc, regs)
                if loc is None:
                    return DEAD
                ops.append(_new_op(Op, ("R", pc, ins, loc, None, None, _EMPTY, None,
                                        _EMPTY if rd is None else self._rdeps(row, rd, "off"))))
                regs[ins.reg] = ("read", len(ops) - 1)
                pc += 1
            elif b == "rmw.free":
                # a free rmw (free_rmw_code): its written value is left to the execution
                ins = row[1]
                ops.append(_new_op(Op, ("UF", pc, ins, ins.loc, None,
                                        self._operand(row, "val", 0, regs), _EMPTY, None,
                                        _EMPTY if rd is None
                                        else self._rdeps(row, rd, "val"))))
                if ins.reg:
                    regs[ins.reg] = ("read", len(ops) - 1)
                pc += 1
            elif b in ("ld", "rmw", "cas"):
                if row[5] is not None and self.location(pc, regs) is None:
                    return DEAD
                return pc
            elif b == "label":
                pc += 1
            elif b == "branch":
                if rd is not None:
                    rd[CTRL] = self._rdeps(row, rd, "cond")
                cond = row[2].get("cond")
                if cond is not None and evaluate(cond, regs):
                    if pc in self.spins:
                        return DEAD
                    pc = row[3]
                else:
                    pc += 1
            elif b == "goto":
                if pc in self.spins:
                    return DEAD
                pc = row[3]
            elif b == "assign":
                ins = row[1]
                regs[ins.reg] = self._operand(row, "val", 0, regs)
                if key is not None:
                    prov[ins.reg] = self._dep(row, "val", prov)
                if rd is not None:
                    rd[ins.reg] = self._dep(row, "val", rd)
                pc += 1
            elif b == "cbar":
                ins = row[1]
                e = row[2].get("id")
                ops.append(Op("B", pc, ins, None, None, None, _EMPTY,
                              evaluate(e, regs) if e is not None else None,
                              self._rdeps(row, rd, "id")))
                pc += 1
            elif b == "fence":
                ops.append(_new_op(Op, ("F", pc, row[1], None, None, None, _EMPTY, None,
                                        _EMPTY if rd is None else self._rdeps(row, rd))))
                pc += 1
            else:
                kind = _PLAIN_OPS.get(b)
                if kind is None:
                    raise ValueError(f"instruction base {b!r} has no pre-execution")
                ops.append(Op(kind, pc, row[1]))
                pc += 1
        return n

    def read(self, pc: int, v: int, regs: dict, ops: list, prov: dict | None = None,
             key=None, vp=_EMPTY, rd: dict | None = None) -> None:
        """The value read at ``pc`` (where :meth:`advance` stopped) returns ``v``: append its
        operation and set its register (``vp``: the provenance of ``v``, with ``key``; ``rd``:
        the read dependencies, as in :meth:`advance`). A ``cas`` whose attrs hold ``cmov``
        writes on failure too (the value it read back: PTX's ``atom.cas``, whose semantics is
        ``*a = (*a == b) ? c : *a``); otherwise a failed cas is a read with its failure
        order."""
        row = self.rows[pc]
        b, ins, _, _, fail, arr = row
        loc = ins.loc if arr is None else self.location(pc, regs)
        here = len(ops)
        if b == "ld":
            ops.append(_new_op(Op, ("R", pc, ins, loc, v, None, _EMPTY, None,
                                    _EMPTY if rd is None else self._rdeps(row, rd, "off"))))
        elif b == "rmw":
            operand = self._operand(row, "val", 0, regs)
            wp = (vp | self._dep(row, "val", prov) | {(key, pc)}) if key is not None else _EMPTY
            ops.append(Op("U", pc, ins, loc, v, wrap64(apply_rmw(RMW_CODES[ins.op], v, operand)), wp,
                          None, self._rdeps(row, rd, "val", "off")))
        else:
            exp = self._operand(row, "exp", 0, regs)
            dd = self._rdeps(row, rd, "exp", "val", "off")
            if v == exp or "cmov" in ins.attrs:
                des = self._operand(row, "val", 1, regs) if v == exp else v
                wp = (vp | self._dep(row, "val", prov) | {(key, pc)}) if key is not None \
                    else _EMPTY
                ops.append(Op("U", pc, ins, loc, v, des, wp, None, dd))
            else:
                ops.append(Op("R", pc, fail, loc, v, None, _EMPTY, None, dd))
        if ins.reg:
            regs[ins.reg] = v
            if key is not None:
                prov[ins.reg] = vp
            if rd is not None:
                rd[ins.reg] = frozenset((here,))

    def path(self, regs: dict, ops: list) -> Path:
        """The path ended with these operations and registers."""
        final = dict(regs)
        for r in self.reg_names:
            final.setdefault(r, 0)
        return _new_op(Path, (tuple(ops), tuple(sorted(final.items()))))


def thread_paths(code: tuple[Instr, ...], init_regs: dict[str, int],
                 read_domain: Callable[[str], Iterable], unroll: int = UNROLL,
                 limit: int = 200000, key=None, decoded: ThreadCode | None = None,
                 deps: bool = False) -> list[Path]:
    """Every path through ``code`` with reads returning values from ``read_domain(loc)``.

    ``read_domain`` gives ints, or ``(value, provenance)`` pairs when ``key`` is set (then each
    write op carries in ``prov`` the set of write instructions its value derives from, with
    ``(key, index)`` for itself, and a read-modify-write outside loops never consumes a value
    derived from itself; :func:`value_domains` uses this). ``decoded``: ``code`` already
    decoded (:class:`ThreadCode`), when the caller runs it several times. ``deps``: fill each
    op's ``deps`` (the reads it depends on by data, address or control, for models with a
    dependency relation). A path whose access falls outside its array is dropped
    (:func:`access_location`).
    """
    tc = decoded if decoded is not None else ThreadCode(code)
    out: list[Path] = []
    end = len(tc.rows)

    def run(pc: int, regs: dict, prov: dict, ops: list, counts: dict, rd):
        pc = tc.advance(pc, regs, ops, counts, unroll, prov, key, rd)
        if pc == DEAD:
            return
        if pc == end:
            out.append(tc.path(regs, ops))
            return
        b = tc.rows[pc][0]
        entries = read_domain(tc.location(pc, regs))
        if key is None:
            entries = [(v, [_EMPTY]) for v in sorted(set(entries))]
        for v, provs in entries:
            if key is not None and b != "ld" and pc not in tc.looped:
                # an rmw cannot read a value derived from itself (it runs once)
                provs = [q for q in provs if (key, pc) not in q]
                if not provs:
                    continue
            vp = min(provs, key=len)
            r2, p2, o2 = dict(regs), dict(prov), list(ops)
            d2 = dict(rd) if rd is not None else None
            tc.read(pc, v, r2, o2, p2, key, vp, d2)
            run(pc + 1, r2, p2, o2, dict(counts), d2)
            if len(out) > limit:
                raise ValueError(f"more than {limit} paths in one thread")

    try:
        run(0, dict(init_regs), {}, [], {}, {} if deps else None)
    finally:
        # run calls itself through its closure: a reference cycle holding every path until
        # the cyclic collector runs, unless the cell is emptied here
        run = None
    return out


def value_domains(test: Test, unroll: int = UNROLL, rounds: int = 12,
                  max_prov: int = 8, seed: bool = True, thin_air: bool = False,
                  decoded: list[ThreadCode] | None = None) -> dict[str, set[int]]:
    """Per location, every value a read of it can return: the fixed point of "values written".

    Each value keeps the sets of write instructions it can derive from (its provenance); a
    read-modify-write outside a loop never consumes a value derived from itself, since it runs once
    (so two ``fetch_add(x, 1)`` give x the values 0, 1, 2 and no more). Values needing a derivation
    longer than ``rounds`` steps (only out of thin air) are not considered.

    ``thin_air`` (a model without a no-thin-air axiom, ``allow thin-air`` in its model file): a
    value that flows around a cycle of rf and data dependencies (``r0 = x; y = r0`` against
    ``r1 = y; x = r1``) is written by no instruction of its own, and the model does not constrain
    it; the domain of every location some write stores a register-dependent value into then
    starts with :func:`thin_air_values` as well, each a value with no derivation (a location
    written only with constants cannot hold such a value). A read is still given such a value
    only where some write of that value exists in the execution (the search's rf must justify
    it), i.e. on such a cycle.

    ``decoded``: the threads' code already decoded (:class:`ThreadCode`, one per thread).
    """
    if decoded is None:
        decoded = [ThreadCode(th.code) for th in test.threads]
    prov: dict[str, dict[int, set[frozenset]]] = {
        loc.name: {loc.init: {frozenset()}} for loc in test.locations}
    if thin_air:
        # only a location some write stores a register-dependent value into can hold a value
        # out of thin air: every other write stores a constant, or an rmw result of constants
        # and the location's own values, which the fixpoint below derives
        tainted = {loc for _, _, ins in test.instructions()
                   if ins.base in ("st", "rmw", "cas") and attr(ins, "val") is not None
                   for loc in array_elements(ins)}
        for c in thin_air_values(test):
            for loc in tainted:
                prov[loc].setdefault(c, {frozenset()})
    # every constant a store can write, whether or not its branch is reachable from the values
    # found so far: a branch may be taken only thanks to a (po | rf) cycle (load buffering),
    # which models without a no-thin-air axiom (vulkan) allow; seed=False for models with one
    # (rc11: every value of a consistent execution derives along an acyclic po | rf)
    for tid, i, ins in test.instructions() if seed else ():
        if ins.base == "st" and attr(ins, "val") is None:
            for loc in array_elements(ins):
                prov[loc].setdefault(ins.args[0] if ins.args else 0, set()).add(
                    frozenset({(tid, i)}))
    def domain(loc):
        return [(v, sorted(ps, key=len)) for v, ps in sorted(prov[loc].items())]

    init_regs = [_init_regs(test, tid) for tid in range(len(test.threads))]
    for _ in range(rounds):
        grown = False
        for tid, th in enumerate(test.threads):
            for path in thread_paths(th.code, init_regs[tid], domain, unroll, limit=20000,
                                     key=tid, decoded=decoded[tid]):
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


#: what a memo of :func:`justified_paths` gives for a state not visited yet (None is a value)
_UNSEEN = object()

#: Most combinations of thread paths a test may have (beyond: ValueError, never a hang).
MAX_COMBINATIONS = 200_000


def _init_regs(test: Test, tid: int) -> dict[str, int]:
    """Thread ``tid``'s registers given an initial value (the others start at 0, which is what
    reading an unset register gives and what a path's final registers say of one never set)."""
    return {r: v for t, r, v in test.reg_init if t == tid}


def _reads_values(tc: ThreadCode) -> bool:
    """Does some path of the thread read a value it uses (so the value must be enumerated)?"""
    return any(row[0] in ("ld", "rmw", "cas") for row in tc.rows)


def paths_per_thread(test: Test, unroll: int = UNROLL, seed: bool = True,
                     thin_air: bool = False, deps: bool = False) -> list[list[Path]]:
    """Per thread, its paths with reads drawn from :func:`value_domains` (``deps``: with each
    op's dependencies, :func:`thread_paths`).

    Raises ValueError when the combinations of paths exceed :data:`MAX_COMBINATIONS`."""
    decoded = [ThreadCode(th.code) for th in test.threads]
    # the domains matter only to threads that read a value they use
    dom = value_domains(test, unroll, seed=seed, thin_air=thin_air, decoded=decoded) \
        if any(map(_reads_values, decoded)) else {}
    out = []
    for tid, th in enumerate(test.threads):
        out.append(thread_paths(th.code, _init_regs(test, tid), dom.__getitem__, unroll,
                                decoded=decoded[tid], deps=deps))
    combos = 1
    for paths in out:
        combos *= max(1, len(paths))
    if combos > MAX_COMBINATIONS:
        raise ValueError(f"{test.name}: {combos} combinations of thread paths (more than "
                         f"{MAX_COMBINATIONS}); bound the loops or the values")
    return out


def free_rmw_code(test: Test, decoded: list[ThreadCode] | None = None) -> list[ThreadCode] | None:
    """The threads' code with every *free* rmw marked (its row ``rmw.free``), or None when the
    test has none: for enumerations that leave the rmw's values to the execution (the rc11
    verdict's compact pre-executions, :func:`oracle.models.rc11.builder.build_compact`).

    An rmw (not a cas) is free when no expression reads its register and every access to its
    location, in every thread, is a store, a read whose value no expression uses (``ld.free``)
    or such an rmw: then no value read at that location decides a path, so a path need not fix
    what the rmw reads or writes (:meth:`ThreadCode.advance` emits a ``UF`` operation, whose
    write the execution computes from its read, as rf decides a free read's value). Where some
    value read at the location decides a path (a used load, a cas, an rmw whose result is used),
    the values written there must be known to the path enumeration, and its rmws stay as they
    are. A test with array accesses (whose locations are only known on a path) or unsequenced
    operands keeps every rmw. ``decoded``: the threads already decoded (:class:`ThreadCode`)."""
    if decoded is None:
        decoded = [ThreadCode(th.code) for th in test.threads]
    fixed: set = set()          # locations some value read at decides a path
    cands = []
    for tid, tc in enumerate(decoded):
        if tc.unseq:
            return None
        for pc, row in enumerate(tc.rows):
            b, ins = row[0], row[1]
            if row[5] is not None:
                return None     # an array access: its location depends on the path
            if b == "rmw" and ins.op in RMW_CODES and not (ins.reg and ins.reg in tc.used) \
                    and "off" not in row[2]:
                cands.append((tid, pc, ins.loc))
            elif b in ("ld", "rmw", "cas"):
                fixed.add(ins.loc)
    free = [(tid, pc) for tid, pc, loc in cands if loc not in fixed]
    if not free:
        return None
    out = list(decoded)
    for tid, pc in free:
        tc = out[tid]
        if tc is decoded[tid]:
            tc = out[tid] = tc.copy()
        tc.rows[pc] = ("rmw.free",) + tc.rows[pc][1:]
    return out


def justified_paths(test: Test, unroll: int = UNROLL, limit: int = MAX_COMBINATIONS,
                    decoded: list[ThreadCode] | None = None) -> list[tuple[Path, ...]]:
    """The combinations of one path per thread (values included) that some execution whose
    ``po | rf`` is acyclic can produce: those of models with a no-thin-air axiom (rc11).

    Such an execution can be built in an order compatible with ``po | rf``: a thread runs on
    until it reads a value it uses, and that read returns a value already written to its
    location (the initial value, a write of another thread or one of its own earlier writes).
    This explores exactly those growing executions, as tuples of the values each thread's
    reads returned so far (a thread is deterministic given them), each state once. Unlike the
    product of :func:`paths_per_thread` (every value some path can write, per read), it never
    offers a read a value that only a later event of the execution writes, so a program whose
    values circulate (``r0 = z; x = r0 - 1; ...``) gives its few justified combinations rather
    than the product of growing value domains. The result is in the order of
    :func:`paths_per_thread`'s product (per thread, by the values its reads returned).

    ``decoded``: the threads' code already decoded (:class:`ThreadCode`, one per thread).
    Raises ValueError beyond ``limit`` explored states.
    """
    if decoded is None:
        decoded = [ThreadCode(th.code) for th in test.threads]
    nthreads = len(decoded)
    memo: list[dict] = [{} for _ in range(nthreads)]
    done, block = 0, 1

    def node(tid: int, prefix: tuple):
        """Thread ``tid`` run with its value reads returning ``prefix``: None (path dropped),
        (done, path, writes) or (block, pc, location, writes, ops, regs, counts); ``writes``:
        the (location, value) pairs its operations wrote so far."""
        m = memo[tid]
        out = m.get(prefix, _UNSEEN)
        if out is not _UNSEEN:
            return out
        tc = decoded[tid]
        if prefix:
            # (made before: a state only extends a prefix it has reached. node never calls
            # itself: a recursive closure would be a reference cycle, freed only by the cyclic
            # collector, holding every run of the check until then)
            parent = m[prefix[:-1]]
            pc = parent[1]
            regs, ops, counts = dict(parent[5]), list(parent[4]), dict(parent[6])
            tc.read(pc, prefix[-1], regs, ops)
            pc += 1
        else:
            regs, ops, counts, pc = _init_regs(test, tid), [], {}, 0
        pc = tc.advance(pc, regs, ops, counts, unroll)
        if pc == DEAD:
            out = None
        else:
            writes = [(op[3], op[5]) for op in ops if op[5] is not None]       # (loc, wval)
            if pc == len(tc.rows):
                out = (done, tc.path(regs, ops), writes)
            else:
                out = (block, pc, tc.location(pc, regs), writes, ops, regs, counts)
        m[prefix] = out
        return out

    first = [node(tid, ()) for tid in range(nthreads)]
    if None not in first and all(nd[0] == done for nd in first):
        return [tuple([nd[1] for nd in first])]      # no thread reads a value it uses
    init = {loc.name: loc.init for loc in test.locations}
    start = ((),) * nthreads
    seen = {start}
    stack = [start]
    finished = []
    while stack:
        state = stack.pop()
        nodes = []
        for tid, prefix in enumerate(state):
            nd = memo[tid].get(prefix, _UNSEEN)
            if nd is _UNSEEN:
                nd = node(tid, prefix)
            if nd is None:
                break
            nodes.append(nd)
        else:
            blocked = [tid for tid, nd in enumerate(nodes) if nd[0] == block]
            if not blocked:
                finished.append(state)
                continue
            avail: dict[str, set] = {}          # the values written so far, per location
            for nd in nodes:
                for loc, v in nd[3 if nd[0] == block else 2]:
                    avail.setdefault(loc, set()).add(v)
            for tid in blocked:
                loc = nodes[tid][2]
                vals = avail.get(loc, set())
                vals.add(init[loc])
                for v in vals:
                    nxt = state[:tid] + (state[tid] + (v,),) + state[tid + 1:]
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)
            if len(seen) > limit:
                raise ValueError(f"{test.name}: more than {limit} partial executions of its thread "
                                 f"paths; bound the loops or the values")
    finished.sort()
    return [tuple([m[prefix][1] for m, prefix in zip(memo, state)]) for state in finished]

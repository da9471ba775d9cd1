"""Printer for the C dialect (and, through its hooks, the OPENCL and CUDA dialects): a
:class:`~litmus.ir.Test` read by :mod:`.parse` back as Dat3M/herd C litmus text.

The front end lowers C to the program model (litmus/cfg.py): every memory access of an
expression becomes its own row into a fresh register ``_tN``, ``if``/``while`` become
``branch``/``goto``/``label`` rows, a compare-exchange becomes five rows (C11 7.17.7.4). This
printer undoes that lowering, row pattern by row pattern, into the statements a user writes::

    C name
    "doc"
    { [x] = 0; [y] = 0; int a[2] = {0, 0}; }
    P0 (atomic_int* x, int* y) {
      *y = 1;
      atomic_store_explicit(x, 1, memory_order_release);
    }
    P1 (atomic_int* x, int* y) {
      int r0 = atomic_load_explicit(x, memory_order_acquire);
      if (r0 == 1) {
        r1 = *y;
      }
    }
    exists (P1:r0 == 1 /\\ P1:r1 == 0)

Canonical layout: every location in the init block in the test's order (arrays as
``int NAME[N] = {...}``), each thread's parameters the locations it uses in that order, every
atomic in its ``_explicit`` form with its order spelled out, braces around every body, two
spaces of indentation per level, a register declared (``int r0 = ...``) where the thread first
writes it at the top level of its body and at the top of the body otherwise.

A temporary ``_tN`` is put back into the expression that reads it, so the printed expression
lowers to the same rows in the same order (the front end numbers temporaries, labels and
unsequenced pairs as it reads, so equal text gives equal numbers). The printed text is read back
before it is returned: a test whose rows no C statement lowers to (hand-built rows, another
dialect's attributes) is refused with :class:`~litmus.dialect.PrintError` naming the thread and
row, never printed as another test.
"""

from __future__ import annotations

import re
from typing import Callable

from ...cfg import parse_expr_text
from ...dialect import PrintError
from ...ir import Instr, Location, Test
from ...lexer import ParseError
from ...printing import format_prop
from ...scopes import Placement
from .parse import FETCH_OPS, PRECEDENCE, parse_c

#: the program model's orders -> C11's names (``memory_order_consume`` reads as acquire)
ORDER_NAMES = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire",
               "rel": "memory_order_release", "acq_rel": "memory_order_acq_rel",
               "sc": "memory_order_seq_cst"}
_FETCH = {v: f"atomic_fetch_{k}_explicit" for k, v in FETCH_OPS.items()}
_FETCH["xchg"] = "atomic_exchange_explicit"

_TEMP = re.compile(r"_t\d+\Z")
_TEMP_REF = re.compile(r"\b_t\d+\b")
_ELEMENT = re.compile(r"(\w+)\[(\d+)\]\Z")
#: attributes whose values are expressions that may read temporaries
_EXPR_KEYS = ("val", "cond", "off", "exp")
#: precedence of a primary (a call, ``*x``, a name, a literal) and of a unary operator
_PRIMARY, _UNARY = 100, 50


def _attr(ins: Instr, key: str) -> str | None:
    for a in ins.attrs:
        if a.startswith(key + "="):
            return a[len(key) + 1:]
    return None


def _is_temp(name: str | None) -> bool:
    return name is not None and bool(_TEMP.match(name))


def _temp_refs(ins: Instr) -> set[str]:
    out: set[str] = set()
    for a in ins.attrs:
        key, _, value = a.partition("=")
        if key in _EXPR_KEYS:
            out.update(_TEMP_REF.findall(value))
    return out


def _unseq(ins: Instr) -> list[tuple[int, int]]:
    """The row's ``unseq=ID:SIDE`` marks, as (ID, SIDE) pairs."""
    out = []
    for a in ins.attrs:
        if a.startswith("unseq="):
            ident, _, side = a[len("unseq="):].partition(":")
            out.append((int(ident), int(side)))
    return out


def _chunks(leaves: list) -> list[list]:
    """Consecutive leaves that share an unsequencing operator (one expression each)."""
    out: list[list] = []
    for leaf in leaves:
        ids = {i for i, _ in leaf[1]}
        if out and ids & {i for i, _ in out[-1][0][1]}:
            out[-1].append(leaf)
        else:
            out.append([leaf])
    return out


def _joined(leaves: list) -> str:
    """Leaves (text, marks) of one dropped expression joined back: the outermost operator
    common to all (the highest ID, completed last) splits them into its two sides."""
    if len(leaves) == 1:
        return leaves[0][0]
    common = set.intersection(*({i for i, _ in marks} for _, marks in leaves))
    if not common:
        chunks = _chunks(leaves)
        if len(chunks) == 1:                 # marks no expression tree leaves behind
            raise Unspellable("unsequenced accesses marked across operators")
        return " && ".join(f"({_joined(c)})" for c in chunks)
    root = max(common)
    sides: tuple[list, list] = ([], [])
    for text, marks in leaves:
        side = dict(marks)[root]
        sides[side].append((text, [m for m in marks if m[0] != root]))
    if not sides[0] or not sides[1]:
        raise Unspellable(f"unsequenced accesses of operator {root} on one side only")
    return f"({_joined(sides[0])}) + ({_joined(sides[1])})"


class Unspellable(Exception):
    """A row no statement of the dialect lowers to (becomes a PrintError naming the row)."""


class CPrinter:
    """The C dialect's printer; OPENCL and CUDA override the hooks (header word, placement,
    parameter types, scope argument, fences, barriers)."""

    DIALECT = "C"
    parse: Callable[[str, str], Test] = staticmethod(parse_c)

    # -- dialect hooks ---------------------------------------------------------------------------
    def placement(self, p: Placement) -> str:
        if p != Placement():
            raise Unspellable(f"placement {p} (C threads have none)")
        return ""

    def scope_arg(self, scope: str | None) -> str:
        """The trailing scope argument of an ``_explicit`` call (C: none, every atomic is
        system scope)."""
        if scope != "sys":
            raise Unspellable(f"scope {scope!r} (C atomics are system scope)")
        return ""

    def fence(self, ins: Instr) -> str:
        if ins.attrs or ins.scope != "sys":
            raise Unspellable("a scoped or flagged fence (C has atomic_thread_fence(ORDER) only)")
        return f"atomic_thread_fence({self.order(ins.order)});"

    def barrier(self, entry: Instr, exit_: Instr) -> str:
        raise Unspellable("a barrier (C has none)")

    def param_types(self, test: Test) -> dict[str, str]:
        """Location base -> the type of the parameter naming it (C: ``atomic_int*`` when some
        access to it is atomic, ``int*`` otherwise; the front end reads both alike)."""
        atomic = {self.base_of(ins.loc) for _, _, ins in test.instructions()
                  if ins.loc is not None and ins.access == "atom"}
        return {b: ("atomic_int*" if b in atomic else "int*") for b in self.bases}

    def extra_params(self, test: Test, params: list[list[str]]) -> list[list[str]]:
        """Parameters beyond the locations each thread uses (OPENCL: what ``Test.meta``
        needs)."""
        return params

    def param(self, tid: int, base: str, ptype: str) -> str:
        """One parameter of thread ``tid``'s list."""
        return f"{ptype} {base}"

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def order(o: str | None) -> str:
        if o not in ORDER_NAMES:
            raise Unspellable(f"memory order {o!r}")
        return ORDER_NAMES[o]

    def base_of(self, loc: str) -> str:
        m = _ELEMENT.match(loc)
        return m.group(1) if m and m.group(1) in self.arrays else loc

    def locations(self, test: Test) -> list[str]:
        """The init block's declarations; fills :attr:`arrays` (base -> length) and
        :attr:`bases` (location or array names, in the test's order)."""
        self.arrays: dict[str, int] = {}
        self.bases: list[str] = []
        groups: list[tuple[str, list[Location]]] = []
        for loc in test.locations:
            if loc.lds:
                raise Unspellable(f"LDS location {loc.name!r}")
            m = _ELEMENT.match(loc.name)
            if m:
                base, k = m.group(1), int(m.group(2))
                if groups and groups[-1][0] == base and k == len(groups[-1][1]):
                    groups[-1][1].append(loc)
                    continue
                if k != 0 or base in self.arrays:
                    raise Unspellable(f"array element {loc.name!r} out of its array's order")
                self.arrays[base] = 0
                groups.append((base, [loc]))
            else:
                groups.append((loc.name, [loc]))
        out = []
        for base, locs in groups:
            self.bases.append(base)
            if base in self.arrays:
                self.arrays[base] = len(locs)
                out.append(f"int {base}[{len(locs)}] = {{{', '.join(str(l.init) for l in locs)}}};")
            else:
                out.append(f"[{base}] = {locs[0].init};")
        return out

    # -- the test --------------------------------------------------------------------------------
    def format(self, test: Test) -> str:
        try:
            text = self._format(test)
        except Unspellable as e:
            raise PrintError(f"test {test.name!r}: {e} has no {self.DIALECT} spelling") from None
        except (LookupError, ValueError, TypeError) as e:    # rows of no front end's making
            raise PrintError(f"test {test.name!r}: rows no {self.DIALECT} statement lowers to "
                             f"({type(e).__name__}: {e})") from None
        try:
            back = self.parse(text, f"<{self.DIALECT} printer>")
        except ParseError as e:
            raise PrintError(f"test {test.name!r}: its {self.DIALECT} text does not read back "
                             f"({e})") from None
        if back != test:
            raise PrintError(f"test {test.name!r}: {_difference(test, back)}: no {self.DIALECT} "
                             f"statement lowers to these rows")
        return text

    def _format(self, test: Test) -> str:
        if test.reg_init:
            raise Unspellable("register initial values")
        lines = [f"{self.DIALECT} {test.name}"]
        for d in test.doc:
            if '"' in d:
                raise Unspellable(f"doc line {d!r} with a quote")
            lines.append(f'"{d}"')
        lines.append("{ " + " ".join(self.locations(test)) + " }")
        types = self.param_types(test)
        params = []
        for th in test.threads:
            used = {self.base_of(ins.loc) for ins in th.code if ins.loc is not None}
            params.append([b for b in self.bases if b in used])
        params = self.extra_params(test, params)
        for tid, th in enumerate(test.threads):
            head = ", ".join(self.param(tid, b, types[b]) for b in params[tid])
            lines.append(f"P{tid}{self.placement(th.placement)} ({head}) {{")
            try:
                lines += _ThreadPrinter(self, th.code).lines()
            except Unspellable as e:
                raise Unspellable(f"P{tid} {e}") from None
            lines.append("}")
        lines.append(f"{test.condition.quantifier} ({format_prop(test.condition.prop, 'top')})")
        return "\n".join(lines) + "\n"


def _difference(test: Test, back: Test) -> str:
    """Where the printed text reads back differently, in words (the first differing row)."""
    for tid, (a, b) in enumerate(zip(test.threads, back.threads)):
        if a.placement != b.placement:
            return f"P{tid}'s placement {a.placement}"
        for i in range(max(len(a.code), len(b.code))):
            x = a.code[i] if i < len(a.code) else None
            y = b.code[i] if i < len(b.code) else None
            if x != y:
                what = "the end of the thread" if x is None else \
                    x.base + (f" [{' '.join(x.attrs)}]" if x.attrs else "")
                return f"P{tid} row {i}: {what}"
    for field in ("threads", "locations", "condition", "meta", "doc", "name"):
        if getattr(test, field) != getattr(back, field):
            return f"its {field}"
    return "the test"


class _ThreadPrinter:
    """One thread's rows back as statements (module doc)."""

    def __init__(self, printer: CPrinter, code: tuple[Instr, ...]):
        self.p = printer
        self.code = code
        self.i = 0
        self.out: list[str] = []
        # temporary (or register read by the next assign) -> (expression text, precedence)
        self.pending: dict[str, tuple[str, int]] = {}
        # temporary -> the address its row read (the expected-value argument of a cas)
        self.addresses: dict[str, str] = {}
        # (old, expected) temporaries of a compare-exchange -> its call, the value (== old exp)
        self.cas_values: dict[tuple[str, str], str] = {}
        self.cas_tail: set[int] = set()
        for k, ins in enumerate(code):
            if ins.base == "cas":
                self.cas_tail.update(range(k + 1, k + 4))
        self.run: list | None = None            # the leaves of a dropped expression being read
        self.seen: set[str] = set()           # registers already declared (or hoisted)
        self.hoisted: list[str] = []            # registers declared at the top of the body

    def lines(self) -> list[str]:
        self.block(lambda k: False, 1)
        if self.i != len(self.code) or self.pending or self.cas_values:
            raise Unspellable(f"row {self.i}: rows left over")
        return [f"  int {r};" for r in self.hoisted] + self.out

    def emit(self, depth: int, text: str) -> None:
        self.out.append("  " * depth + text)

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, e, top: bool = False) -> tuple[str, int]:
        """An expression tree as C (text, precedence), reading pending temporaries back in."""
        if isinstance(e, int):
            return str(e), (_PRIMARY if e >= 0 or top else _UNARY)
        if isinstance(e, str):
            if e in self.pending:
                return self.pending.pop(e)
            self.read(e)
            return e, _PRIMARY
        op = e[0]
        if op == "==" and len(e) == 3 and (e[1], e[2]) in self.cas_values:
            return self.cas_values.pop((e[1], e[2])), _PRIMARY
        if op in ("!", "neg"):
            text, prec = self.expr(e[1])
            if prec < _UNARY or text.startswith("-"):
                text = f"({text})"
            return ("!" if op == "!" else "-") + text, _UNARY
        if op not in PRECEDENCE or len(e) != 3:
            raise Unspellable(f"expression operator {op!r}")
        prec = PRECEDENCE[op]
        left, lp = self.expr(e[1])
        right, rp = self.expr(e[2])
        if lp < prec:
            left = f"({left})"
        if rp <= prec:
            right = f"({right})"
        return f"{left} {op} {right}", prec

    def value(self, ins: Instr, k: int = 0) -> str:
        """The written value or operand: ``val=`` expression or the integer argument."""
        val = _attr(ins, "val")
        if val is not None:
            return self.expr(parse_expr_text(val), top=True)[0]
        if len(ins.args) <= k:
            raise Unspellable(f"{ins.base} without its value")
        return str(ins.args[k])

    def address(self, ins: Instr) -> str:
        """The address argument of an atomic call: ``x``, ``&a[1]``, ``&a[r0 + 1]``."""
        loc = ins.loc
        if _attr(ins, "arr") is not None:
            base = self.p.base_of(loc)
            if loc != f"{base}[0]" or _attr(ins, "arr") != f"{base}:{self.p.arrays.get(base)}":
                raise Unspellable(f"address {_attr(ins, 'arr')} of {loc}")
            return f"&{base}[{self.expr(parse_expr_text(_attr(ins, 'off')), top=True)[0]}]"
        if self.p.base_of(loc) != loc:
            return "&" + loc
        return loc

    def lvalue(self, ins: Instr) -> str:
        """The place a plain access names: ``*x``, ``a[1]``, ``a[r0]``."""
        addr = self.address(ins)
        return addr[1:] if addr.startswith("&") else "*" + addr

    def access(self, ins: Instr) -> str:
        """A load or read-modify-write as the expression that reads it."""
        extra = {a.partition("=")[0] for a in ins.attrs} - {"val", "arr", "off", "unseq"}
        if extra:
            raise Unspellable(f"row {self.i}: {ins.base} [{' '.join(ins.attrs)}]")
        if ins.base == "ld" and ins.access == "plain":
            return self.lvalue(ins)
        if ins.base == "ld" and ins.access == "atom":
            return (f"atomic_load_explicit({self.address(ins)}, {self.p.order(ins.order)}"
                    f"{self.p.scope_arg(ins.scope)})")
        if ins.base == "rmw" and ins.access == "atom" and ins.op in _FETCH:
            addr = self.address(ins)
            return (f"{_FETCH[ins.op]}({addr}, {self.value(ins)}, {self.p.order(ins.order)}"
                    f"{self.p.scope_arg(ins.scope)})")
        raise Unspellable(f"row {self.i}: {ins.base}.{ins.access}")

    # -- statements ------------------------------------------------------------------------------
    def later_use(self, name: str, after: int) -> int | None:
        for k in range(after + 1, len(self.code)):
            ins = self.code[k]
            if name in _temp_refs(ins) or (not _is_temp(name) and name in self.names(ins)):
                return k
        return None

    @staticmethod
    def names(ins: Instr) -> list[str]:
        out = []
        for a in ins.attrs:
            key, _, value = a.partition("=")
            if key in _EXPR_KEYS:
                out += re.findall(r"\b[A-Za-z_]\w*\b", value)
        return out

    def inline_into_next_assign(self, reg: str) -> bool:
        """Whether the access at row ``i`` into register ``reg`` is the leftmost operand of the
        expression the next row assigns to ``reg`` (``r = *x + *y`` reads ``*x`` into ``r``)."""
        j = self.later_use(reg, self.i)
        if j is None:
            return False
        nxt = self.code[j]
        if nxt.base != "assign" or nxt.reg != reg or _attr(nxt, "val") is None:
            return False
        for k in range(self.i + 1, j):
            if not (_is_temp(self.code[k].reg) or k in self.cas_tail or
                    (self.code[k].base == "cas")):
                return False
        e = parse_expr_text(_attr(nxt, "val"))
        if self.names(nxt).count(reg) != 1 or not isinstance(e, tuple):
            return False                   # ``r = r;`` after the access is a row of its own
        if _attr(self.code[self.i], "unseq") is None and _temp_refs(nxt):
            return False                   # written apart: no operand access unsequenced with it
        while isinstance(e, tuple) and e[0] in PRECEDENCE:
            e = e[1]                       # the left spine: what the front end reads first
        return e == reg

    def block(self, stop: Callable[[int], bool], depth: int) -> None:
        while self.i < len(self.code) and not stop(self.i):
            self.statement(depth)

    def statement(self, depth: int) -> None:
        start = self.i
        try:
            self._statement(depth)
        except Unspellable as e:
            if str(e).startswith("row "):
                raise
            raise Unspellable(f"row {start}: {e}") from None

    def _statement(self, depth: int) -> None:
        ins = self.code[self.i]
        b = ins.base
        if b in ("ld", "rmw"):
            text = self.access(ins)
            reg = ins.reg
            if _is_temp(reg):
                if self.later_use(reg, self.i) is not None:
                    self.pending[reg] = (text, _PRIMARY)
                    if b == "ld" and ins.access == "plain":
                        self.addresses[reg] = self.address(ins)
                elif _attr(ins, "unseq") is not None:
                    self.i += 1
                    self.dropped_expression(text, ins, depth)
                    return
                else:
                    self.emit(depth, text + ";")
            elif self.inline_into_next_assign(reg):
                self.pending[reg] = (text, _PRIMARY)
            else:
                self.emit(depth, self.write(reg, text, depth))
            self.i += 1
            return
        if b == "st":
            self.store(ins, depth)
            self.i += 1
            return
        if b == "cas":
            self.cas(ins, depth)
            return
        if b == "assign":
            if _is_temp(ins.reg):                       # a cas's expected value from &var
                val = _attr(ins, "val")
                nxt = self.code[self.i + 1] if self.i + 1 < len(self.code) else None
                if ins.args or val is None or not re.match(r"[A-Za-z]\w*\Z", val) \
                        or nxt is None or nxt.base != "cas" or _attr(nxt, "exp") != ins.reg:
                    raise Unspellable(f"row {self.i}: assign to {ins.reg}")
                self.read(val)
                self.addresses[ins.reg] = "&" + val
                self.pending[ins.reg] = (val, _PRIMARY)
                self.i += 1
                return
            if ins.attrs and _attr(ins, "val") is None or len(ins.attrs) > 1:
                raise Unspellable(f"row {self.i}: assign [{' '.join(ins.attrs)}]")
            if _attr(ins, "val") is not None:
                self.shield_leftmost(parse_expr_text(_attr(ins, "val")))
            text = self.value(ins)
            self.emit(depth, self.write(ins.reg, text, depth))
            self.i += 1
            return
        if b == "fence":
            self.emit(depth, self.p.fence(ins))
            self.i += 1
            return
        if b == "cbar":
            if self.i + 1 >= len(self.code) or self.code[self.i + 1].base != "cbar":
                raise Unspellable(f"row {self.i}: a barrier's entry without its exit")
            self.emit(depth, self.p.barrier(ins, self.code[self.i + 1]))
            self.i += 2
            return
        if b == "branch":
            self.if_(ins, depth)
            return
        if b == "label":
            self.while_(ins, depth)
            return
        raise Unspellable(f"row {self.i}: {b}" + (f" [{' '.join(ins.attrs)}]" if ins.attrs else ""))

    def dropped_expression(self, text: str, ins: Instr, depth: int) -> None:
        """An expression statement whose value is dropped (``*x + *y;``): its accesses are
        the temporaries no row reads, and their ``unseq=ID:SIDE`` attributes are all that is
        left of its operators. The statement is rebuilt from them: operands unsequenced by one
        operator are joined by ``+`` (the value is dropped, any unsequencing operator lowers
        alike), accesses sequenced with each other become statements of their own."""
        self.run = [(text, _unseq(ins))]
        try:
            while self.i < len(self.code):
                nxt = self.code[self.i]
                if nxt.base in ("ld", "rmw", "cas") and _is_temp(nxt.reg):
                    after = self.i + 3 if nxt.base == "cas" else self.i
                    used = self.later_use(nxt.reg, after) is not None
                    if not used and _attr(nxt, "unseq") is None:
                        break                       # the next statement's
                    if nxt.base == "cas" or used:
                        self._statement(depth)      # pending, or (a cas) a leaf of the run
                    else:
                        self.run.append((self.access(nxt), _unseq(nxt)))
                        self.i += 1
                elif nxt.base == "assign" and _is_temp(nxt.reg):
                    self._statement(depth)          # a cas's expected value from &var
                else:
                    break
            leaves = self.run
        finally:
            self.run = None
        for chunk in _chunks(leaves):
            self.emit(depth, _joined(chunk) + ";")

    def read(self, reg: str) -> None:
        """A register read before any write declares it at the top of the body."""
        if not _is_temp(reg) and reg not in self.seen:
            self.seen.add(reg)
            self.hoisted.append(reg)

    def shield_leftmost(self, e) -> None:
        """``r = (*x) + 1``: the front end reads the leftmost access of an assigned expression
        straight into ``r`` (no temporary); one that went into a temporary was written in
        parentheses, so it is printed in them."""
        nested = False
        while isinstance(e, tuple) and e[0] in PRECEDENCE and (e[1:] not in self.cas_values):
            e, nested = e[1], True
        if isinstance(e, str) and _is_temp(e) and e in self.pending:
            text, _ = self.pending[e]
            self.pending[e] = (f"({text})", _PRIMARY)
        elif isinstance(e, tuple) and e[1:] in self.cas_values and nested:
            self.cas_values[e[1:]] = f"({self.cas_values[e[1:]]})"

    def write(self, reg: str, text: str, depth: int) -> str:
        """``r = text;``, declared (``int r = text;``) where a register is first written at
        the top level of the body; a first write nested in a branch or loop is declared at the
        top of the body."""
        if reg not in self.seen:
            self.seen.add(reg)
            if depth == 1:
                return f"int {reg} = {text};"
            self.hoisted.append(reg)
        return f"{reg} = {text};"

    def store(self, ins: Instr, depth: int) -> None:
        extra = {a.partition("=")[0] for a in ins.attrs} - {"val", "arr", "off", "unseq"}
        if extra:
            raise Unspellable(f"row {self.i}: st [{' '.join(ins.attrs)}]")
        if ins.access == "plain":
            place = self.lvalue(ins)
            self.emit(depth, f"{place} = {self.value(ins)};")
        elif ins.access == "atom":
            addr = self.address(ins)
            self.emit(depth, f"atomic_store_explicit({addr}, {self.value(ins)}, "
                             f"{self.p.order(ins.order)}{self.p.scope_arg(ins.scope)});")
        else:
            raise Unspellable(f"row {self.i}: st.{ins.access}")

    def cas(self, ins: Instr, depth: int) -> None:
        """``ld/assign exp; cas old; branch (== old exp) ok; st/assign exp <- old; label ok``."""
        k = self.i
        exp, old = _attr(ins, "exp"), ins.reg
        tail = self.code[k + 1:k + 4]
        extra = {a.partition("=")[0] for a in ins.attrs} - {"exp", "val", "arr", "off", "unseq"}
        if extra or exp not in self.addresses or len(tail) != 3:
            raise Unspellable(f"row {k}: cas [{' '.join(ins.attrs)}]")
        br, back, lab = tail
        cond = f"(== {old} {exp})"
        ok = _attr(br, "target")
        if not (br.base == "branch" and _attr(br, "cond") == cond and lab.base == "label"
                and _attr(lab, "label") == ok and _attr(back, "val") == old):
            raise Unspellable(f"row {k}: cas without its failure write-back")
        addr = self.address(ins)
        expected = self.addresses.pop(exp)
        self.pending.pop(exp, None)
        desired = self.value(ins, 1)
        call = (f"atomic_compare_exchange_strong_explicit({addr}, {expected}, {desired}, "
                f"{self.p.order(ins.order)}, {self.p.order(ins.fail_order)}"
                f"{self.p.scope_arg(ins.scope)})")
        self.i = k + 4
        if self.later_use(old, k + 3) is not None:
            self.cas_values[(old, exp)] = call
        elif _attr(ins, "unseq") is not None:
            if self.run is not None:
                self.run.append((call, _unseq(ins)))
            else:
                self.dropped_expression(call, ins, depth)
        else:
            self.emit(depth, call + ";")

    def condition(self, br: Instr) -> str:
        """The C condition of an ``if``/``while`` branch row (``cond=(! C)``)."""
        e = parse_expr_text(_attr(br, "cond") or "")
        if not (isinstance(e, tuple) and e[0] == "!" and len(e) == 2):
            raise Unspellable(f"row {self.i}: branch [{' '.join(br.attrs)}]")
        return self.expr(e[1], top=True)[0]

    def if_(self, br: Instr, depth: int) -> None:
        els = _attr(br, "target")
        self.emit(depth, f"if ({self.condition(br)}) {{")
        self.i += 1

        def at_else(k: int) -> bool:
            ins = self.code[k]
            if ins.base == "label" and _attr(ins, "label") == els:
                return True
            return (ins.base == "goto" and k + 1 < len(self.code)
                    and self.code[k + 1].base == "label" and _attr(self.code[k + 1], "label") == els)

        self.block(at_else, depth + 1)
        if self.i >= len(self.code):
            raise Unspellable(f"branch to {els} without its label")
        if self.code[self.i].base == "goto":
            end = _attr(self.code[self.i], "target")
            self.i += 2
            self.emit(depth, "} else {")
            self.block(lambda k: self.code[k].base == "label" and
                       _attr(self.code[k], "label") == end and k not in self.cas_tail, depth + 1)
            if self.i >= len(self.code):
                raise Unspellable(f"goto {end} without its label")
        self.i += 1
        self.emit(depth, "}")

    def while_(self, lab: Instr, depth: int) -> None:
        top = _attr(lab, "label")
        start = self.i
        self.i += 1
        before = len(self.out)
        self.block(lambda k: self.code[k].base == "branch", depth)
        if self.i >= len(self.code) or len(self.out) != before:
            raise Unspellable(f"row {start}: label {top}")
        br = self.code[self.i]
        end = _attr(br, "target")
        self.emit(depth, f"while ({self.condition(br)}) {{")
        self.i += 1
        self.block(lambda k: self.code[k].base == "goto" and _attr(self.code[k], "target") == top
                   and k + 1 < len(self.code) and self.code[k + 1].base == "label"
                   and _attr(self.code[k + 1], "label") == end, depth + 1)
        if self.i >= len(self.code):
            raise Unspellable(f"row {start}: loop {top} without its end")
        self.i += 2
        self.emit(depth, "}")


_C = CPrinter()


def format_c(test: Test) -> str:
    """The test in the C dialect (module doc); PrintError for rows no C statement lowers to."""
    return _C.format(test)


__all__ = ["CPrinter", "ORDER_NAMES", "Unspellable", "format_c"]

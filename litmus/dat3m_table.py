"""The table shape of Dat3M's assembly-like litmus dialects (Vulkan, PTX), shared by their
front ends.

Shape::

    DIALECT name
    "documentation"                             (anything up to the first '{')
    { P1:r0=0; x=0; ... }                       (the init block: items separated by ';')
    { ... }                                     (optional further blocks: a dialect's own)
     P0@...  | P1@...  ;                        (the thread header row: one placement per thread)
     instr   | instr   ;                        (rows: one cell per thread, empty cells allowed)
    filter (P1:r0 == 1)                         (optional)
    exists (P1:r0 == 1)                         (or ~exists, forall; may be left out after filter)

:class:`TableParser` reads that frame: the header, the documentation, blocks as token items,
rows of cells, operand lists, labels and jumps, and the final condition (with ``filter`` and
comparisons of two registers of one thread, which become an ``assign`` of the comparison at the
end of that thread and an atom on its result register ``_cN``). A front end subclasses it and
says what its dialect writes: :meth:`init_block`, :meth:`header_row`, :meth:`instr`, and
optionally :meth:`extra_blocks` (Vulkan's ``ssw`` block). Every malformed input is a
:class:`~litmus.lexer.ParseError` at file:line:col.
"""

from __future__ import annotations

import re

from .cfg import expr_text
from .condition import HERD, THREAD, ConditionParser
from .ir import Atom, Condition, Const, Instr, Location, Test, Thread
from .lexer import ParseError, Source, Token, TokenCursor, tokenize
from .printing import format_prop
from .scopes import Placement

REGISTER = re.compile(r"r[0-9]+\Z")
LABEL = re.compile(r"LC[0-9]+\Z")
BRANCHES = {"beq": "==", "bne": "!=", "blt": "<", "bgt": ">", "ble": "<=", "bge": ">="}


def _unquote(line: str) -> str:
    d = line.strip()
    d = d[1:] if d.startswith('"') else d
    return (d[:-1] if d.endswith('"') else d).strip()


class TableParser(TokenCursor):
    """The frame of a Dat3M table dialect; subclasses give the dialect's parts (module doc)."""

    #: header words accepted for this dialect, and the name its messages use
    HEADERS: tuple[str, ...] = ()
    DIALECT = ""
    #: what an error shows as an example header row
    HEADER_ROW_HINT = ""

    def __init__(self, text: str, path: str):
        self.src = Source(text, path)
        self.text = self.src.clean
        self.cell_pos = 0               # where the current program cell starts (for errors)
        self.locs: dict[str, Location] = {}

    def err(self, pos, reason) -> ParseError:
        return self.src.error(pos, reason)

    # -- hooks -------------------------------------------------------------------------------------
    def init_block(self) -> list[tuple[int, str, int, int]]:
        """Read the init block (fills ``self.locs``); returns the register initializations
        ``(thread, register, value, position)``."""
        raise NotImplementedError

    def extra_blocks(self) -> None:
        """Blocks between the init block and the header row (none by default)."""

    def header_row(self) -> list[Placement]:
        raise NotImplementedError

    def check_threads(self, n: int) -> None:
        """Thread numbers the extra blocks name must exist (``n`` threads)."""

    def extra_meta(self) -> tuple[list, list]:
        """(``Test.meta`` entries, marks for the ``_meta`` label) of the extra blocks."""
        return [], []

    def instr(self, cell: list[Token]) -> Instr:
        raise NotImplementedError

    # -- the whole test ----------------------------------------------------------------------------
    def parse(self) -> Test:
        m = re.compile(r"\s*(\S+)").match(self.text)
        if not m:
            raise self.err(0, f"empty file: expected a header '{self.DIALECT} <name>'")
        if m.group(1) not in self.HEADERS:
            raise self.err(m.start(1), f"expected dialect word '{self.DIALECT}', got "
                                       f"{m.group(1)!r}")
        eol = self.text.find("\n", m.end())
        eol = len(self.text) if eol < 0 else eol
        rest = self.text[m.end():eol].split()
        if not rest:
            raise self.err(m.end(), f"missing test name after {m.group(1)!r}")
        name = rest[0]
        brace = self.text.find("{", eol)
        if brace < 0:
            raise self.err(len(self.text), "expected '{' to open the init block")
        # like Dat3M, everything up to the first '{' is documentation (quotes may nest, a quoted
        # text may span lines): one entry per line, without its opening and closing quote
        doc = tuple(_unquote(line) for line in self.src.text[eol:brace].splitlines()
                    if _unquote(line))
        self.toks = tokenize(self.src, brace)
        self.k = 0
        reg_init = self.init_block()
        self.extra_blocks()
        placements = self.header_row()
        n = len(placements)
        for tid, r, _, pos in reg_init:
            if tid >= n:
                raise self.err(pos, f"register P{tid}:{r} names thread P{tid}, but the test has "
                                    f"{n} thread(s)")
        self.check_threads(n)
        codes: list[list[Instr]] = [[] for _ in range(n)]
        while not self.at_condition():
            start = self.peek()
            if start.kind == "eof":
                break
            cells = self.row()
            if len(cells) != n:
                raise self.err(start.pos, f"row has {len(cells)} cell(s), expected {n} "
                                          "(one per thread)")
            for tid, cell in enumerate(cells):
                if cell:
                    codes[tid].append(self.instr(cell))
        self.check_jumps(codes)
        regs = {tid: {i.reg for i in code if i.reg} | {r for t, r, _, _ in reg_init if t == tid}
                for tid, code in enumerate(codes)}
        extra: dict[int, list[Instr]] = {}

        def regcmp(tid, a, op, b):
            r = f"_c{sum(len(v) for v in extra.values()) + 1}"
            extra.setdefault(tid, []).append(
                Instr("assign", reg=r, attrs=(f"val={expr_text((op, a, b))}",)))
            return Atom(tid, r, "==", 1)

        filt = None
        cond = None
        cp = ConditionParser(self.src, self.toks, self.k, regs, self.locs, HERD, regcmp)
        if cp.peek().text == "filter":
            cp.next()
            filt = cp.prop()
        if cp.peek().kind != "eof":
            cond = cp.quantified()
        elif filt is None:
            raise self.err(cp.peek().pos, "missing final condition (exists, ~exists, forall or "
                                          "filter)")
        cp.end()
        meta, marks = self.extra_meta()
        if filt is not None:
            meta.append(("filter", filt))
            marks.append("filter=" + format_prop(filt))
        if marks:
            # Test.meta does not take part in equality (the oracle's cache key): a no-op label
            # at the end of P0 carries the extra blocks and the filter, so that two tests
            # differing only there never compare equal
            extra.setdefault(0, []).append(Instr("label", attrs=("label=_meta", *marks)))
        threads = tuple(Thread(p, tuple(codes[tid] + extra.get(tid, [])))
                        for tid, p in enumerate(placements))
        if cond is None:
            cond = Condition("exists", Const(True))
        return Test(name=name, locations=tuple(self.locs.values()), threads=threads,
                    condition=cond, doc=doc,
                    reg_init=tuple((t, r, v) for t, r, v, _ in reg_init), dialect=m.group(1),
                    meta=tuple(meta))

    # -- tokens ------------------------------------------------------------------------------------
    def at_condition(self) -> bool:
        t = self.peek()
        return (t.text in ("exists", "forall", "filter")
                or (t.text == "~" and self.peek(1).text == "exists"))

    # -- blocks ------------------------------------------------------------------------------------
    def items(self):
        """Items of a '{ a; b; }' block as token lists."""
        open_ = self.next()
        if open_.text != "{":
            raise self.err(open_.pos, "expected '{'")
        items, cur = [], []
        while True:
            t = self.next()
            if t.kind == "eof":
                raise self.err(open_.pos, "unterminated block: no '}' closes this '{'")
            if t.text == "}":
                if cur:
                    items.append(cur)
                if self.peek().text == ";":
                    self.next()
                return items
            if t.text == ";":
                if cur:
                    items.append(cur)
                cur = []
            else:
                cur.append(t)

    def register_item(self, item: list[Token], seen: set) -> tuple[int, str, int, int] | None:
        """``Pn:rK[ = value]`` (or ``n:rK``): (thread, register, value, position); None when the
        item is not a register initialization."""
        from .lexer import parse_int
        first = item[0]
        if not (len(item) >= 2 and item[1].text == ":"):
            return None
        m = THREAD.match(first.text)
        if first.kind == "int":
            tid = int(first.text)
        elif m:
            tid = int(m.group(1))
        else:
            raise self.err(first.pos, f"expected a thread Pn before ':', got {first.text!r}")
        if len(item) < 3 or not REGISTER.match(item[2].text):
            pos = item[2].pos if len(item) > 2 else item[1].pos + 1
            raise self.err(pos, "expected a register rK after 'Pn:'")
        value = 0
        if len(item) > 3:
            if item[3].text != "=" or len(item) != 5:
                raise self.err(item[3].pos, "expected 'Pn:rK = value'")
            value = parse_int(self.src, item[4], "initial value")
        if (tid, item[2].text) in seen:
            raise self.err(first.pos, f"register P{tid}:{item[2].text} initialized twice")
        seen.add((tid, item[2].text))
        return (tid, item[2].text, value, first.pos)

    def row(self) -> list[list[Token]]:
        start = self.peek()
        cells: list[list[Token]] = [[]]
        while self.peek().text != ";":
            t = self.next()
            if t.kind == "eof":
                raise self.err(start.pos, "row not ended by ';'")
            if t.text == "|":
                cells.append([])
            else:
                cells[-1].append(t)
        self.next()
        return cells

    def header_cells(self) -> list[tuple[int, list[Token]]]:
        """The thread header row: per thread, the tokens after ``Pn@`` (empty when no '@')."""
        start = self.peek()
        if not THREAD.match(start.text):
            raise self.err(start.pos, f"expected the thread header row {self.HEADER_ROW_HINT!r},"
                                      f" got {start.text or 'end of input'!r}")
        out = []
        for i, cell in enumerate(self.row()):
            if not cell or cell[0].text != f"P{i}":
                pos = cell[0].pos if cell else start.pos
                raise self.err(pos, f"expected thread name P{i}")
            if len(cell) > 1 and cell[1].text != "@":
                raise self.err(cell[1].pos, f"expected '@' after P{i}")
            out.append((i, cell[2:]))
        return out

    # -- operands ----------------------------------------------------------------------------------
    def value(self, t: Token):
        if t.kind == "int":
            return int(t.text)
        if t.kind == "id" and REGISTER.match(t.text):
            return t.text
        raise self.err(t.pos, f"expected a register or an integer, got {t.text!r}")

    def register(self, t: Token) -> str:
        if t.kind != "id" or not REGISTER.match(t.text):
            raise self.err(t.pos, f"expected a register rK, got {t.text!r}")
        return t.text

    def operands(self, toks: list[Token], n, what: str) -> list[Token]:
        ops = []
        k = 0
        while k < len(toks):
            ops.append(toks[k])
            k += 1
            if k < len(toks):
                if toks[k].text != ",":
                    raise self.err(toks[k].pos, f"expected ',' between the operands of {what}")
                k += 1
                if k == len(toks):
                    raise self.err(toks[k - 1].pos, f"missing operand after ',' in {what}")
        if len(ops) not in ((n,) if isinstance(n, int) else n):
            want = n if isinstance(n, int) else " or ".join(map(str, n))
            raise self.err(toks[0].pos if toks else self.cell_pos,
                           f"{what} takes {want} operand(s), got {len(ops)}")
        return ops

    def mnemonic(self, cell: list[Token]) -> tuple[Token, list[Token], list[Token]]:
        """``head.mod.mod operands``: (head token, modifier tokens, operand tokens)."""
        first = cell[0]
        parts = [first]
        k = 1
        while k < len(cell) and cell[k].text == ".":
            if k + 1 >= len(cell) or cell[k + 1].kind != "id":
                raise self.err(cell[k].pos + 1, "expected a modifier after '.'")
            parts.append(cell[k + 1])
            k += 2
        return first, parts[1:], cell[k:]

    # -- control flow ------------------------------------------------------------------------------
    def control(self, cell: list[Token]) -> Instr | None:
        """A label ``LCnn:``, ``goto LCnn`` or ``bXX a, b, LCnn`` (None for anything else)."""
        first = cell[0]
        if first.kind == "id" and LABEL.match(first.text) and len(cell) == 2 \
                and cell[1].text == ":":
            return Instr("label", attrs=(f"label={first.text}",))
        if first.text == "goto":
            (lab,) = self.operands(cell[1:], 1, "goto")
            if not LABEL.match(lab.text):
                raise self.err(lab.pos, f"expected a label LCnn, got {lab.text!r}")
            return Instr("goto", attrs=(f"target={lab.text}",))
        if first.text in BRANCHES and (len(cell) < 2 or cell[1].text != "."):
            a, b, lab = self.operands(cell[1:], 3, first.text)
            if not LABEL.match(lab.text):
                raise self.err(lab.pos, f"expected a label LCnn, got {lab.text!r}")
            cond = (BRANCHES[first.text], self.value(a), self.value(b))
            return Instr("branch", attrs=(f"cond={expr_text(cond)}", f"target={lab.text}"))
        return None

    def check_jumps(self, codes):
        for tid, code in enumerate(codes):
            labels = [i.fields.label for i in code if i.base == "label"]
            dup = {lab for lab in labels if labels.count(lab) > 1}
            if dup:
                raise self.err(self.cell_pos,
                               f"P{tid}: label {sorted(dup)[0]} defined twice")
            for i in code:
                if i.base in ("goto", "branch"):
                    target = i.fields.target
                    if target not in labels:
                        raise self.err(self._label_pos(target),
                                       f"P{tid}: jump to undefined label {target}")

    def _label_pos(self, label: str) -> int:
        for t in self.toks:
            if t.text == label:
                return t.pos
        return 0

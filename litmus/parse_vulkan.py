"""Front end for litmus tests in the Dat3M ``Vulkan`` dialect (the VULKAN conformance suite).

Shape::

    Vulkan name                                 (also VULKAN, vulkan)
    "documentation"
    { P1:r0=0; x=0; y aliases x; }              (registers, locations, aliases of a location)
    { ssw 0 1; }                                (optional: system-synchronizes-with thread pairs)
     P0@sg 0, wg 0, qf 0   | P1@sg 1, wg 0, qf 0 ;
     st.av.dv.sc0 x, 1     | ld.atom.acq.wg.sc0.semsc0 r0, y ;
     ...
    filter (P1:r0 == 1)                         (optional)
    exists (P1:r0 == 1)                         (or ~exists, forall; may be left out after filter)

Instructions (one per cell; modifiers in any order): ``ld`` / ``st`` with ``atom`` (atomic),
``av``/``vis`` (non-atomic, made available / visible at the scope), ``nonpriv``, an order
(``acq`` ``rel`` ``acq_rel``), a scope (``sg`` ``wg`` ``qf`` ``dv``), a storage class ``sc0``..``sc3``,
storage-class semantics ``semsc0``..``semsc3``, ``semav``, ``semvis``; ``rmw`` (operation ``add``
``sub`` ``mul`` ``div`` ``and`` ``or`` ``xor``, exchange when left out); ``membar`` (a memory
barrier); ``cbar INST[, ID[, QUORUM]]`` (a control barrier: INST names the dynamic instance, ID and
QUORUM make it a named barrier that completes once QUORUM threads reach it); ``avdevice``,
``visdevice``; labels ``LC00:``, ``goto LC00``, ``beq|bne|blt|bgt|ble|bge a, b, LC01``;
``add|sub|mul|div|and|or|xor rK, a, b``.

Lowering to :class:`~litmus.ir.Instr`: ``scope`` keeps the Vulkan word; ``attrs`` holds the storage
class, semantics flags, ``nonpriv`` (atomic, av and vis accesses are non-private too), ``vloc=NAME``
when an access goes through an alias, and the cbar's ``inst=``, ``id=``, ``quorum=``. Placement:
``sg`` → wave, ``wg`` → workgroup, ``qf`` → agent. ``ssw`` pairs and the ``filter`` go into
``Test.meta`` (``("ssw", ((0, 1), ...))``, ``("filter", prop)``). A condition comparing two registers
of one thread (``P0:r1 == P0:r2``) becomes an ``assign`` of the comparison at the end of that
thread and an atom on its result register ``_cN``.
"""

from __future__ import annotations

import re

from .cfg import expr_text
from .condition import HERD, THREAD, ConditionParser
from .ir import Atom, Condition, Const, Instr, Location, Test, Thread
from .lexer import ParseError, Source, Token, TokenCursor, parse_int, tokenize
from .printer import format_prop
from .scopes import Placement

HEADERS = ("Vulkan", "VULKAN", "vulkan")
SCOPES = ("sg", "wg", "qf", "dv")
ORDERS = ("acq", "rel", "acq_rel")
STORAGE = ("sc0", "sc1", "sc2", "sc3")
SEMSC = ("semsc0", "semsc1", "semsc2", "semsc3")
RMW_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "and": "and", "or": "or",
           "xor": "xor"}
LOCAL_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and": "&", "or": "|", "xor": "^"}
BRANCHES = {"beq": "==", "bne": "!=", "blt": "<", "bgt": ">", "ble": "<=", "bge": ">="}
REGISTER = re.compile(r"r[0-9]+\Z")
LABEL = re.compile(r"LC[0-9]+\Z")


class _VParser(TokenCursor):
    def __init__(self, text: str, path: str):
        self.src = Source(text, path)
        self.text = self.src.clean
        self.cell_pos = 0               # where the current program cell starts (for errors)

    def err(self, pos, reason) -> ParseError:
        return self.src.error(pos, reason)

    def parse(self) -> Test:
        m = re.compile(r"\s*(\S+)").match(self.text)
        if not m:
            raise self.err(0, "empty file: expected a header 'Vulkan <name>'")
        if m.group(1) not in HEADERS:
            raise self.err(m.start(1), f"expected dialect word 'Vulkan', got {m.group(1)!r}")
        eol = self.text.find("\n", m.end())
        eol = len(self.text) if eol < 0 else eol
        rest = self.text[m.end():eol].split()
        if not rest:
            raise self.err(m.end(), f"missing test name after {m.group(1)!r}")
        name = rest[0]
        # skip anything up to the first '{' (quoted documentation, like Dat3M)
        brace = self.text.find("{", eol)
        if brace < 0:
            raise self.err(len(self.text), "expected '{' to open the init block")
        # like Dat3M, everything up to the first '{' is documentation (quotes may nest)
        doc = tuple(line.strip()[1:-1] if line.strip().startswith('"') else line.strip()
                    for line in self.src.text[eol:brace].splitlines() if line.strip())
        self.toks = tokenize(self.src, brace)
        self.k = 0
        self.locs: dict[str, Location] = {}
        self.alias: dict[str, str] = {}
        reg_init = self.init_block()
        ssw = self.ssw_block()
        placements = self.header_row()
        n = len(placements)
        for tid, r, _, pos in reg_init:
            if tid >= n:
                raise self.err(pos, f"register P{tid}:{r} names thread P{tid}, but the test has "
                                    f"{n} thread(s)")
        for a, b, pos in ssw:
            if a >= n or b >= n:
                raise self.err(pos, f"ssw names thread P{max(a, b)}, but the test has {n}")
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
        meta = []
        marks = []
        if ssw:
            meta.append(("ssw", tuple((a, b) for a, b, _ in ssw)))
            marks.append("ssw=" + ",".join(f"{a}>{b}" for a, b, _ in ssw))
        if filt is not None:
            meta.append(("filter", filt))
            marks.append("filter=" + format_prop(filt))
        if marks:
            # Test.meta does not take part in equality (the oracle's cache key): a no-op label
            # at the end of P0 carries the ssw pairs and the filter, so that two tests differing
            # only there never compare equal
            extra.setdefault(0, []).append(Instr("label", attrs=("label=_meta", *marks)))
        threads = tuple(Thread(p, tuple(codes[tid] + extra.get(tid, [])))
                        for tid, p in enumerate(placements))
        if cond is None:
            cond = Condition("exists", Const(True))
        return Test(name=name, locations=tuple(self.locs.values()), threads=threads,
                    condition=cond, doc=doc,
                    reg_init=tuple((t, r, v) for t, r, v, _ in reg_init), dialect=m.group(1),
                    meta=tuple(meta))

    # -- tokens ----------------------------------------------------------------------------------
    def at_condition(self) -> bool:
        t = self.peek()
        return (t.text in ("exists", "forall", "filter")
                or (t.text == "~" and self.peek(1).text == "exists"))

    # -- blocks ----------------------------------------------------------------------------------
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

    def init_block(self):
        reg_init = []
        seen_regs = set()
        for item in self.items():
            first = item[0]
            if len(item) >= 2 and item[1].text == ":":
                m = THREAD.match(first.text)
                if first.kind == "int":
                    tid = int(first.text)
                elif m:
                    tid = int(m.group(1))
                else:
                    raise self.err(first.pos, f"expected a thread Pn before ':', got "
                                              f"{first.text!r}")
                if len(item) < 3 or not REGISTER.match(item[2].text):
                    pos = item[2].pos if len(item) > 2 else item[1].pos + 1
                    raise self.err(pos, "expected a register rK after 'Pn:'")
                value = 0
                if len(item) > 3:
                    if item[3].text != "=" or len(item) != 5:
                        raise self.err(item[3].pos, "expected 'Pn:rK = value'")
                    value = parse_int(self.src, item[4], "initial value")
                if (tid, item[2].text) in seen_regs:
                    raise self.err(first.pos, f"register P{tid}:{item[2].text} initialized twice")
                seen_regs.add((tid, item[2].text))
                reg_init.append((tid, item[2].text, value, first.pos))
                continue
            if first.kind != "id" or REGISTER.match(first.text):
                raise self.err(first.pos, f"expected a location name, got {first.text!r}")
            if len(item) == 3 and item[1].text == "aliases":
                target = item[2]
                if target.text not in self.locs:
                    raise self.err(target.pos, f"alias of undeclared location {target.text!r}")
                if first.text in self.locs or first.text in self.alias:
                    raise self.err(first.pos, f"location {first.text!r} declared twice")
                self.alias[first.text] = target.text
                continue
            value = 0
            if len(item) > 1:
                if item[1].text != "=" or len(item) != 3:
                    raise self.err(item[1].pos, f"expected '{first.text} = value' or "
                                                f"'{first.text} aliases y'")
                value = parse_int(self.src, item[2], "initial value")
            if first.text in self.locs or first.text in self.alias:
                raise self.err(first.pos, f"location {first.text!r} declared twice")
            self.locs[first.text] = Location(first.text, value)
        return reg_init

    def ssw_block(self):
        if self.peek().text != "{":
            return []
        out = []
        for item in self.items():
            if item[0].text != "ssw" or len(item) != 3:
                raise self.err(item[0].pos, "expected 'ssw <thread> <thread>'")
            a = parse_int(self.src, item[1], "thread id")
            b = parse_int(self.src, item[2], "thread id")
            out.append((a, b, item[0].pos))
        return out

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

    def header_row(self) -> list[Placement]:
        start = self.peek()
        if not THREAD.match(start.text):
            raise self.err(start.pos, f"expected the thread header row 'P0@sg 0, wg 0, qf 0 | ...',"
                                      f" got {start.text or 'end of input'!r}")
        out = []
        for i, cell in enumerate(self.row()):
            if not cell or cell[0].text != f"P{i}":
                pos = cell[0].pos if cell else start.pos
                raise self.err(pos, f"expected thread name P{i}")
            levels = {}
            k = 1
            if len(cell) > 1:
                if cell[1].text != "@":
                    raise self.err(cell[1].pos, f"expected '@' after P{i}")
                k = 2
                while k < len(cell):
                    lv = cell[k]
                    if lv.text not in ("sg", "wg", "qf"):
                        raise self.err(lv.pos, f"bad placement: unknown level {lv.text!r} "
                                               "(expected sg, wg or qf)")
                    if k + 1 >= len(cell):
                        raise self.err(lv.pos, f"bad placement: missing id after {lv.text!r}")
                    levels[lv.text] = parse_int(self.src, cell[k + 1], f"{lv.text} id")
                    k += 2
                    if k < len(cell):
                        if cell[k].text != ",":
                            raise self.err(cell[k].pos, "bad placement: expected ','")
                        k += 1
            out.append(Placement(wave=levels.get("sg", i), wg=levels.get("wg", 0),
                                 agent=levels.get("qf", 0)))
        return out

    # -- instructions ----------------------------------------------------------------------------
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

    def location(self, t: Token) -> tuple[str, tuple[str, ...]]:
        if t.kind != "id" or REGISTER.match(t.text):
            raise self.err(t.pos, f"expected a location, got {t.text!r}")
        if t.text in self.alias:
            return self.alias[t.text], (f"vloc={t.text}",)
        if t.text not in self.locs:              # like Dat3M: undeclared locations start at 0
            self.locs[t.text] = Location(t.text, 0)
        return t.text, ()

    def operands(self, toks: list[Token], n: int, what: str) -> list[Token]:
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

    def instr(self, cell: list[Token]) -> Instr:
        first = cell[0]
        self.cell_pos = first.pos
        if first.kind == "id" and LABEL.match(first.text) and len(cell) == 2 \
                and cell[1].text == ":":
            return Instr("label", attrs=(f"label={first.text}",))
        if first.kind != "id":
            raise self.err(first.pos, f"expected an instruction, got {first.text!r}")
        parts = [first]
        k = 1
        while k < len(cell) and cell[k].text == ".":
            if k + 1 >= len(cell) or cell[k + 1].kind != "id":
                raise self.err(cell[k].pos + 1, "expected a modifier after '.'")
            parts.append(cell[k + 1])
            k += 2
        head = first.text
        mods = parts[1:]
        ops = cell[k:]
        if head in ("avdevice", "visdevice"):
            self.operands(ops, 0, head)
            if mods:
                raise self.err(mods[0].pos, f"{head} takes no modifiers")
            return Instr(head)
        if head == "goto":
            (lab,) = self.operands(ops, 1, "goto")
            if not LABEL.match(lab.text):
                raise self.err(lab.pos, f"expected a label LCnn, got {lab.text!r}")
            return Instr("goto", attrs=(f"target={lab.text}",))
        if head in BRANCHES:
            a, b, lab = self.operands(ops, 3, head)
            if not LABEL.match(lab.text):
                raise self.err(lab.pos, f"expected a label LCnn, got {lab.text!r}")
            cond = (BRANCHES[head], self.value(a), self.value(b))
            return Instr("branch", attrs=(f"cond={expr_text(cond)}", f"target={lab.text}"))
        if head in LOCAL_OPS and not mods:
            r, a, b = self.operands(ops, 3, head)
            return Instr("assign", reg=self.register(r),
                         attrs=(f"val={expr_text((LOCAL_OPS[head], self.value(a), self.value(b)))}",))
        if head not in ("ld", "st", "rmw", "membar", "cbar"):
            raise self.err(first.pos, f"unknown instruction {head!r}")
        f = {"atom": False, "av": False, "vis": False, "nonpriv": False, "order": None,
             "scope": None, "sc": None, "semsc": [], "semav": False, "semvis": False, "op": None}
        for t in mods:
            m = t.text
            if m in ("atom", "av", "vis", "nonpriv", "semav", "semvis"):
                key = m
                if f[key]:
                    raise self.err(t.pos, f"duplicate modifier {m!r}")
                f[key] = True
            elif m in ORDERS:
                if f["order"]:
                    raise self.err(t.pos, f"two memory orders ({f['order']} and {m})")
                f["order"] = m
            elif m in SCOPES:
                if f["scope"]:
                    raise self.err(t.pos, f"two scopes ({f['scope']} and {m})")
                f["scope"] = m
            elif m in STORAGE:
                if f["sc"]:
                    raise self.err(t.pos, f"two storage classes ({f['sc']} and {m})")
                f["sc"] = m
            elif m in SEMSC:
                if m in f["semsc"]:
                    raise self.err(t.pos, f"duplicate modifier {m!r}")
                f["semsc"].append(m)
            elif m in RMW_OPS and head == "rmw":
                if f["op"]:
                    raise self.err(t.pos, "two rmw operations")
                f["op"] = RMW_OPS[m]
            else:
                raise self.err(t.pos, f"unknown modifier {m!r} for {head!r}")

        def reject(keys, why):
            for key in keys:
                if f[key]:
                    pos = next(t.pos for t in mods if t.text == key or
                               (key == "order" and t.text in ORDERS) or
                               (key == "sc" and t.text in STORAGE) or
                               (key == "scope" and t.text in SCOPES) or
                               (key == "semsc" and t.text in SEMSC))
                    raise self.err(pos, f"{head}: {why}")

        sems = tuple(sorted(f["semsc"])) + (("semav",) if f["semav"] else ()) + \
            (("semvis",) if f["semvis"] else ())
        if head in ("ld", "st", "rmw"):
            if f["sc"] is None:
                raise self.err(first.pos, f"{head} needs a storage class (sc0 .. sc3)")
            if head == "rmw" and not f["atom"]:
                raise self.err(first.pos, "rmw must be atomic (rmw.atom...)")
            if f["atom"]:
                reject(["av", "vis", "nonpriv"], "an atomic access takes no av/vis/nonpriv")
                if f["scope"] is None:
                    raise self.err(first.pos, f"an atomic {head} needs a scope (sg wg qf dv)")
            else:
                reject(["order"], "a non-atomic access takes no memory order")
                reject(["semsc", "semav", "semvis"], "a non-atomic access takes no semantics")
                if head == "ld":
                    reject(["av"], "a load cannot be 'av' (use vis)")
                if head == "st":
                    reject(["vis"], "a store cannot be 'vis' (use av)")
                if (f["av"] or f["vis"]) and f["scope"] is None:
                    raise self.err(first.pos, f"{head}.av/.vis needs a scope (sg wg qf dv)")
                if not (f["av"] or f["vis"]) and f["scope"]:
                    reject(["scope"], "a plain access takes no scope")
            if f["order"] and f["order"] != "rel" and head == "st":
                reject(["order"], "a store can only be 'rel'")
            if f["order"] and f["order"] != "acq" and head == "ld":
                reject(["order"], "a load can only be 'acq'")
            access = "atom" if f["atom"] else ("av" if f["av"] else
                                               ("vis" if f["vis"] else "plain"))
            nonpriv = f["atom"] or f["av"] or f["vis"] or f["nonpriv"]
            attrs = (f["sc"],) + sems + (("nonpriv",) if nonpriv else ())
            if head == "ld":
                r, x = self.operands(ops, 2, "ld")
                loc, va = self.location(x)
                return Instr("ld", access=access, order=f["order"], scope=f["scope"],
                             reg=self.register(r), loc=loc, attrs=attrs + va)
            if head == "st":
                x, v = self.operands(ops, 2, "st")
                loc, va = self.location(x)
                val = self.value(v)
                if isinstance(val, int):
                    return Instr("st", access=access, order=f["order"], scope=f["scope"], loc=loc,
                                 args=(val,), attrs=attrs + va)
                return Instr("st", access=access, order=f["order"], scope=f["scope"], loc=loc,
                             attrs=attrs + va + (f"val={val}",))
            r, x, v = self.operands(ops, 3, "rmw")
            loc, va = self.location(x)
            val = self.value(v)
            extra = () if isinstance(val, int) else (f"val={val}",)
            return Instr("rmw", access="atom", order=f["order"] or "rlx", scope=f["scope"],
                         op=f["op"] or "xchg", reg=self.register(r), loc=loc,
                         args=(val,) if isinstance(val, int) else (), attrs=attrs + va + extra)
        reject(["atom", "av", "vis", "nonpriv", "sc"], "a barrier takes no access modifiers")
        if f["scope"] is None:
            raise self.err(first.pos, f"{head} needs a scope (sg wg qf dv)")
        if head == "membar":
            if f["order"] is None:
                raise self.err(first.pos, "membar needs an order (acq, rel or acq_rel)")
            self.operands(ops, 0, "membar") if ops else None
            return Instr("fence", order=f["order"], scope=f["scope"], attrs=sems)
        # cbar INST[, ID[, QUORUM]]
        vals = self.operands(ops, (1, 2, 3), "cbar")
        if vals[0].kind != "int":
            raise self.err(vals[0].pos, f"expected a barrier instance number, got "
                                        f"{vals[0].text!r}")
        attrs = sems + (f"inst={vals[0].text}",)
        if len(vals) > 1:
            attrs += (f"id={self.value(vals[1])}",)
        if len(vals) > 2:
            q = self.value(vals[2])
            if not isinstance(q, int) or q < 1:
                raise self.err(vals[2].pos, "the quorum must be a positive integer")
            attrs += (f"quorum={q}",)
        return Instr("cbar", order=f["order"], scope=f["scope"], attrs=attrs)

    def check_jumps(self, codes):
        for tid, code in enumerate(codes):
            labels = [i.attrs[0][6:] for i in code if i.base == "label"]
            dup = {lab for lab in labels if labels.count(lab) > 1}
            if dup:
                raise self.err(self.cell_pos,
                               f"P{tid}: label {sorted(dup)[0]} defined twice")
            for i in code:
                if i.base in ("goto", "branch"):
                    target = [a for a in i.attrs if a.startswith("target=")][0][7:]
                    if target not in labels:
                        raise self.err(self._label_pos(target),
                                       f"P{tid}: jump to undefined label {target}")

    def _label_pos(self, label: str) -> int:
        for t in self.toks:
            if t.text == label:
                return t.pos
        return 0


def parse_vulkan(text: str, path: str = "<string>") -> Test:
    """Parse a test in the Vulkan dialect; raises :class:`ParseError` (``path:line:col: reason``)."""
    return _VParser(text, path).parse()

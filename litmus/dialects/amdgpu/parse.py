"""Parser for the native AMDGPU litmus dialect (LITMUS.md).

The file is read in the order the format lays it out: header, quoted documentation, init block,
thread table (a header row of placements, then one instruction per thread per row), final
condition. Every malformed input raises :class:`~litmus.lexer.ParseError` naming the file, line and
column and giving a one-line reason.
"""

from __future__ import annotations

import re

from ...condition import ConditionParser, Spelling, is_condition_start, thread_number
from ...ir import (ACCESSES, BARRIER_IDS, CAS_FAIL_ORDERS, FENCE_ORDERS, LOAD_ORDERS, NAMED_BARRIERS,
                 ORDERS, RMW_OPS, RMW_ORDERS, STORE_ORDERS, Condition, Instr, Location, Test,
                 Thread, cas_default_fail)
from ...lexer import ParseError, Source, Token, parse_int, tokenize
from ...scopes import LEVELS, SCOPES, Placement

REGISTER = re.compile(r"r[0-9]+\Z")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: Spellings from other tools, so the error can say which keyword was meant.
SCOPE_ALIASES = {"workgroup": "wg", "wavefront": "wave", "system": "sys", "device": "agent",
                 "singlethread": "thread", "subgroup": "wave", "sg": "wave", "dv": "agent",
                 "gpu": "agent", "cta": "wg", "block": "wg", "grid": "agent", "qf": "agent"}
ORDER_ALIASES = {"relaxed": "rlx", "acquire": "acq", "release": "rel", "seq_cst": "sc",
                 "monotonic": "rlx", "acqrel": "acq_rel", "acq_rel_": "acq_rel"}

#: Mnemonic bases whose name has two parts.
TWO_PART = {"async": ("ld", "mark", "wait"), "bar": ("signal", "wait", "init", "join", "leave")}
ONE_PART = ("ld", "st", "rmw", "cas", "fence", "barrier")

#: Operand shapes: r = register, x = location, v = integer.
OPERANDS = {
    "ld": "rx", "st": "xv", "rmw": "rxv", "cas": "rxvv", "fence": "", "async.ld": "xx",
    "async.mark": "", "async.wait": "v", "barrier": "", "bar.signal": "v", "bar.wait": "v",
    "bar.init": "vv", "bar.join": "v", "bar.leave": "",
}
OPERAND_NAMES = {
    "ld": "r, x", "st": "x, v", "rmw": "r, x, v", "cas": "r, x, expected, desired",
    "async.ld": "lds, x", "async.wait": "N", "bar.signal": "B", "bar.wait": "B",
    "bar.init": "B, K", "bar.join": "B",
}


def is_register(name: str) -> bool:
    return bool(REGISTER.match(name))


#: the condition's spellings (litmus/condition.py): registers are rK
SPELLING = Spelling(atom_hint="Pn:rK == v or x == v", thread_hint="Pn", register=is_register,
                    register_hint="a register rK")


_NON_SPACE = re.compile(r"\S")


class _Parser:
    def __init__(self, text: str, path: str):
        self.src = Source(text, path)
        self.text = self.src.clean

    def err(self, pos: int, reason: str) -> ParseError:
        return self.src.error(pos, reason)

    # -- layout ----------------------------------------------------------------------------------
    def skip_ws(self, i: int) -> int:
        """The first non-space offset at or after ``i`` (one regex step: a blanked comment of
        megabytes is skipped at C speed)."""
        m = _NON_SPACE.search(self.text, i)
        return m.start() if m else len(self.text)

    def parse(self) -> Test:
        i = self.skip_ws(0)
        if i >= len(self.text):
            raise self.err(i, "empty file: expected a header 'AMDGPU <name>'")
        m = re.compile(r"\S+").match(self.text, i)
        word = m.group()
        if word != "AMDGPU":
            raise self.err(i, f"expected dialect word 'AMDGPU', got {word!r}")
        i = m.end()
        eol = self.text.find("\n", i)
        eol = len(self.text) if eol < 0 else eol
        j = self.skip_ws_line(i, eol)
        if j >= eol:
            raise self.err(j, "missing test name after 'AMDGPU'")
        m = re.compile(r"\S+").match(self.text, j)
        name = m.group()
        k = self.skip_ws_line(m.end(), eol)
        if k < eol:
            raise self.err(k, f"unexpected text after the test name: {self.text[k:eol].strip()!r}")
        i = eol

        # quoted documentation lines
        doc = []
        i = self.skip_ws(i)
        while i < len(self.text) and self.text[i] == '"':
            j = self.text.find('"', i + 1)
            doc.append(self.src.text[i + 1:j])
            i = self.skip_ws(j + 1)

        # init block
        if i >= len(self.text) or self.text[i] != "{":
            raise self.err(i, "expected '{' to open the init block")
        close = self.text.find("}", i + 1)
        if close < 0:
            raise self.err(i, "unterminated init block: no '}' closes this '{'")
        locations, reg_init, reg_init_pos = self.parse_init(i + 1, close)

        # thread table and condition
        toks = tokenize(self.src, close + 1)
        placements, codes, k = self.parse_table(toks, locations)
        nthreads = len(placements)
        for (tid, reg), pos in reg_init_pos.items():
            if tid >= nthreads:
                raise self.err(pos, f"register P{tid}:{reg} names thread P{tid}, "
                                    f"but the test has {nthreads} thread(s)")
        threads = tuple(Thread(p, tuple(c)) for p, c in zip(placements, codes))
        test_regs = {tid: set(th.registers()) | {r for t, r, _ in reg_init if t == tid}
                     for tid, th in enumerate(threads)}
        condition = self.parse_condition(toks, k, test_regs, locations)
        return Test(name=name, locations=tuple(locations.values()), threads=threads,
                    condition=condition, doc=tuple(doc), reg_init=tuple(reg_init))

    def skip_ws_line(self, i: int, eol: int) -> int:
        m = _NON_SPACE.search(self.text, i, eol)
        return m.start() if m else max(i, eol)

    # -- init block ------------------------------------------------------------------------------
    def parse_init(self, start: int, end: int):
        toks = tokenize(self.src, start, end)
        locations: dict[str, Location] = {}
        reg_init: list[tuple[int, str, int]] = []
        reg_pos: dict[tuple[int, str], int] = {}
        k = 0
        while toks[k].kind != "eof":
            if toks[k].text == ";":
                k += 1
                continue
            item_start = toks[k]
            item = []
            while toks[k].kind != "eof" and toks[k].text != ";":
                item.append(toks[k])
                k += 1
            if toks[k].kind == "eof" and item:
                raise self.err(toks[k].pos, "init item not ended by ';'")
            self.parse_init_item(item, item_start, locations, reg_init, reg_pos)
        return locations, reg_init, reg_pos

    def parse_init_item(self, item: list[Token], first: Token, locations, reg_init, reg_pos):
        # register: Pn:rK = v   or   n:rK = v
        if len(item) >= 3 and item[1].text == ":":
            t = item[0]
            tid = thread_number(t)
            if tid is None:
                raise self.err(t.pos, f"expected a thread name Pn before ':', got {t.text!r}")
            r = item[2]
            if not is_register(r.text):
                raise self.err(r.pos, f"expected a register rK after '{t.text}:', got {r.text!r}")
            value = self.init_value(item[3:], r)
            if (tid, r.text) in reg_pos:
                raise self.err(t.pos, f"register P{tid}:{r.text} initialized twice")
            reg_pos[(tid, r.text)] = t.pos
            reg_init.append((tid, r.text, value))
            return
        lds = False
        rest = item
        if item[0].text == "lds":
            lds = True
            rest = item[1:]
            if not rest:
                raise self.err(item[0].pos, "expected an LDS location name after 'lds'")
        name_tok = rest[0]
        if name_tok.kind != "id":
            raise self.err(name_tok.pos, f"expected a location name, got {name_tok.text!r}")
        if is_register(name_tok.text):
            raise self.err(name_tok.pos, f"register name {name_tok.text!r} used as a location; "
                                         "locations may not be named rK")
        if name_tok.text in ("lds", "exists", "forall", "true", "false"):
            raise self.err(name_tok.pos, f"{name_tok.text!r} is a keyword, not a location name")
        if name_tok.text in locations:
            raise self.err(name_tok.pos, f"location {name_tok.text!r} declared twice")
        value = self.init_value(rest[1:], name_tok)
        locations[name_tok.text] = Location(name_tok.text, value, lds)

    def init_value(self, rest: list[Token], after: Token) -> int:
        if not rest:
            return 0
        if rest[0].text != "=":
            raise self.err(rest[0].pos, f"expected '=' or ';' after {after.text!r}, "
                                        f"got {rest[0].text!r}")
        if len(rest) < 2:
            raise self.err(rest[0].pos + 1, "expected an integer value after '='")
        value = parse_int(self.src, rest[1], "initial value")
        if len(rest) > 2:
            raise self.err(rest[2].pos, f"unexpected {rest[2].text!r} in the init block "
                                        "(missing ';'?)")
        return value

    # -- thread table ----------------------------------------------------------------------------
    def rows(self, toks: list[Token], k: int):
        """Split tokens from ``k`` into rows of cells until the condition keyword."""
        while True:
            t = toks[k]
            if t.kind == "eof":
                raise self.err(t.pos, "missing final condition (exists, ~exists or forall)")
            if is_condition_start(toks, k):
                return
            start = t
            cells: list[list[Token]] = [[]]
            while toks[k].text != ";":
                if toks[k].kind == "eof":
                    raise self.err(start.pos, "row not ended by ';'")
                if toks[k].text == "|":
                    cells.append([])
                else:
                    cells[-1].append(toks[k])
                k += 1
            k += 1
            yield start, cells, k

    def parse_table(self, toks: list[Token], locations: dict[str, Location]):
        rows = self.rows(toks, 0)
        try:
            head_tok, head_cells, k = next(rows)
        except StopIteration:
            raise self.err(toks[0].pos, "missing thread table: expected a row 'P0 | P1 ... ;'")
        placements = [self.parse_placement(cell, i, head_tok) for i, cell in enumerate(head_cells)]
        n = len(placements)
        codes: list[list[Instr]] = [[] for _ in range(n)]
        for start, cells, k in rows:
            if len(cells) != n:
                raise self.err(start.pos, f"row has {len(cells)} cell(s), expected {n} "
                                          f"(one per thread)")
            for tid, cell in enumerate(cells):
                if cell:
                    codes[tid].append(self.parse_instr(cell, locations, tid))
        # the generator stopped at the condition: find where
        k = 0
        while not is_condition_start(toks, k):
            k += 1
        return placements, codes, k

    def parse_placement(self, cell: list[Token], index: int, row: Token) -> Placement:
        if not cell:
            raise self.err(row.pos, f"empty thread name in the header row (expected P{index})")
        t = cell[0]
        if t.text != f"P{index}":
            raise self.err(t.pos, f"expected thread name P{index}, got {t.text!r}")
        if len(cell) == 1:
            return Placement()
        if cell[1].text != "@":
            raise self.err(cell[1].pos, f"expected '@' or '|' after {t.text}, got {cell[1].text!r}")
        levels: dict[str, int] = {}
        k = 2
        while True:
            if k >= len(cell):
                raise self.err(cell[-1].pos + len(cell[-1].text),
                               "bad placement: expected a level (wave, wg, cluster, agent)")
            lv = cell[k]
            if lv.text not in LEVELS:
                raise self.err(lv.pos, f"bad placement: unknown level {lv.text!r} "
                                       "(expected wave, wg, cluster or agent)")
            if lv.text in levels:
                raise self.err(lv.pos, f"bad placement: level {lv.text!r} given twice")
            if k + 1 >= len(cell):
                raise self.err(lv.pos + len(lv.text), f"bad placement: missing id after {lv.text!r}")
            idt = cell[k + 1]
            ident = parse_int(self.src, idt, f"{lv.text} id")
            if ident < 0:
                raise self.err(idt.pos, f"bad placement: negative {lv.text} id {ident}")
            levels[lv.text] = ident
            k += 2
            if k == len(cell):
                break
            if cell[k].text != ",":
                raise self.err(cell[k].pos, f"bad placement: expected ',' between levels, "
                                            f"got {cell[k].text!r}")
            k += 1
        return Placement(wave=levels.get("wave"), wg=levels.get("wg"),
                         cluster=levels.get("cluster", 0), agent=levels.get("agent", 0))

    # -- instructions ----------------------------------------------------------------------------
    def parse_instr(self, cell: list[Token], locations: dict[str, Location], tid: int) -> Instr:
        first = cell[0]
        if first.kind != "id":
            raise self.err(first.pos, f"expected an instruction, got {first.text!r}")
        # mnemonic: id ('.' id)*
        parts = [first]
        k = 1
        while k < len(cell) and cell[k].text == ".":
            if k + 1 >= len(cell) or cell[k + 1].kind not in ("id",):
                pos = cell[k + 1].pos if k + 1 < len(cell) else cell[k].pos + 1
                raise self.err(pos, "expected a modifier after '.'")
            parts.append(cell[k + 1])
            k += 2
        mnemonic = ".".join(p.text for p in parts)
        self.mnemonic_pos = first.pos
        head = parts[0].text
        if head in TWO_PART:
            if len(parts) < 2 or parts[1].text not in TWO_PART[head]:
                raise self.err(first.pos, f"unknown mnemonic {mnemonic!r}")
            base = f"{head}.{parts[1].text}"
            mods = parts[2:]
        elif head in ONE_PART:
            base = head
            mods = parts[1:]
        else:
            raise self.err(first.pos, f"unknown mnemonic {head!r}")
        fields = self.modifiers(base, mods, mnemonic)
        operands = self.operands(cell[k:], base, first, mnemonic)
        return self.build(base, fields, operands, locations, tid, first)

    def modifiers(self, base: str, mods: list[Token], mnemonic: str) -> dict:
        f: dict = {"access": None, "orders": [], "scope": None, "noav": False, "op": None}
        seen_pos: dict[str, Token] = {}

        def once(kind: str, tok: Token):
            if kind in seen_pos:
                raise self.err(tok.pos, f"duplicate {kind} modifier {tok.text!r} in {mnemonic!r}")
            seen_pos[kind] = tok

        for tok in mods:
            m = tok.text
            if m in SCOPES:
                once("scope", tok)
                f["scope"] = m
                f["scope_tok"] = tok
            elif m in ORDERS:
                if base == "cas":
                    if len(f["orders"]) == 2:
                        raise self.err(tok.pos, f"duplicate order modifier {m!r} in {mnemonic!r} "
                                                "(cas takes a success and a failure order)")
                else:
                    once("order", tok)
                f["orders"].append(tok)
            elif m in ("atom", "vis", "av", "vol"):
                once("access", tok)
                f["access"] = tok
            elif m == "noav":
                once("noav", tok)
                f["noav"] = tok
            elif m in RMW_OPS:
                once("rmw operation", tok)
                f["op"] = tok
            elif m in SCOPE_ALIASES:
                raise self.err(tok.pos, f"unknown scope {m!r} (did you mean {SCOPE_ALIASES[m]!r}? "
                                        f"scopes: {' '.join(SCOPES)})")
            elif m in ORDER_ALIASES:
                raise self.err(tok.pos, f"unknown order {m!r} (did you mean {ORDER_ALIASES[m]!r}?)")
            else:
                raise self.err(tok.pos, f"unknown modifier {m!r} in {mnemonic!r}")
        self.check_fit(base, f, mnemonic, mods[0] if mods else None)
        return f

    def check_fit(self, base: str, f: dict, mnemonic: str, first: Token) -> None:
        def bad(tok: Token, why: str = ""):
            raise self.err(tok.pos, f"modifier {tok.text!r} does not fit {mnemonic!r}"
                                    + (f": {why}" if why else ""))

        access = f["access"].text if f["access"] else None
        orders, scope_tok = f["orders"], f["scope"]
        if f["op"] is not None and base != "rmw":
            bad(f["op"], "only rmw takes an operation")
        if base in ("ld", "st"):
            allowed = ("atom", "vis", "vol") if base == "ld" else ("atom", "av", "vol")
            if access is not None and access not in allowed:
                hint = "use ld.vis" if access == "av" else "use st.av"
                bad(f["access"], hint)
            if orders and access != "atom":
                bad(orders[0], "only atomic accesses take an order")
            if orders:
                ok = LOAD_ORDERS if base == "ld" else STORE_ORDERS
                if orders[0].text not in ok:
                    kind = "load" if base == "ld" else "store"
                    bad(orders[0], f"a {kind} takes one of {' '.join(ok)}")
            if f["scope"] is not None and access not in ("atom", "vis", "av"):
                raise self.err(f["scope_tok"].pos,
                               f"modifier {f['scope']!r} does not fit {mnemonic!r}: only atomic, "
                               "ld.vis and st.av accesses take a scope")
            if f["noav"] and access != "atom":
                bad(f["noav"], "only atomics and fences take .noav")
        elif base in ("rmw", "cas"):
            if f["access"] is not None:
                bad(f["access"], f"{base} is always atomic")
            if base == "rmw" and f["op"] is None:
                raise self.err(self.mnemonic_pos, f"{mnemonic!r} needs an operation: "
                                                  f"rmw.OP with OP one of {' '.join(RMW_OPS)}")
            if base == "rmw" and orders and orders[0].text not in RMW_ORDERS:
                bad(orders[0])
            if base == "cas" and len(orders) == 2 and orders[1].text not in CAS_FAIL_ORDERS:
                bad(orders[1], f"a cas failure order is one of {' '.join(CAS_FAIL_ORDERS)}")
        elif base == "fence":
            if f["access"] is not None:
                bad(f["access"])
            if orders and orders[0].text not in FENCE_ORDERS:
                bad(orders[0], f"a fence takes one of {' '.join(FENCE_ORDERS)}")
        else:
            for key in ("access", "noav", "op"):
                if f[key]:
                    bad(f[key], f"{base} takes no modifiers")
            if orders:
                bad(orders[0], f"{base} takes no modifiers")
            if f["scope"] is not None:
                raise self.err(f["scope_tok"].pos, f"modifier {f['scope']!r} does not fit "
                                                          f"{mnemonic!r}: {base} takes no modifiers")

    def operands(self, toks: list[Token], base: str, first: Token, mnemonic: str) -> list[Token]:
        ops: list[Token] = []
        shape = OPERANDS[base]
        k = 0
        while k < len(toks):
            t = toks[k]
            if t.kind not in ("id", "int"):
                raise self.err(t.pos, f"unexpected {t.text!r} in the operands of {mnemonic!r}")
            ops.append(t)
            k += 1
            if k < len(toks):
                if toks[k].text != ",":
                    raise self.err(toks[k].pos, f"expected ',' between operands of {mnemonic!r}, "
                                                f"got {toks[k].text!r}")
                k += 1
                if k == len(toks):
                    raise self.err(toks[k - 1].pos, f"missing operand after ',' in {mnemonic!r}")
        if len(ops) != len(shape):
            names = OPERAND_NAMES.get(base, "")
            want = f"{len(shape)} operand(s) ({names})" if shape else "no operands"
            pos = ops[len(shape)].pos if len(ops) > len(shape) else first.pos
            raise self.err(pos, f"{base!r} takes {want}, got {len(ops)}")
        return ops

    def register(self, tok: Token) -> str:
        if tok.kind != "id" or not is_register(tok.text):
            raise self.err(tok.pos, f"expected a register (rK), got {tok.text!r}")
        return tok.text

    def location(self, tok: Token, locations: dict[str, Location]) -> Location:
        if tok.kind != "id":
            raise self.err(tok.pos, f"expected a location, got {tok.text!r}")
        if is_register(tok.text) and tok.text not in locations:
            raise self.err(tok.pos, f"register {tok.text!r} used as a location")
        if tok.text not in locations:
            raise self.err(tok.pos, f"undeclared location {tok.text!r} (declare it in the init block)")
        return locations[tok.text]

    def build(self, base: str, f: dict, ops: list[Token], locations, tid: int,
              first: Token) -> Instr:
        orders = [t.text for t in f["orders"]]
        scope = f["scope"]
        noav = bool(f["noav"])
        access = f["access"].text if f["access"] else None
        if base == "ld":
            reg = self.register(ops[0])
            loc = self.location(ops[1], locations).name
            acc = access or "plain"
            order = (orders[0] if orders else "rlx") if acc == "atom" else None
            sc = (scope or "sys") if acc in ("atom", "vis") else None
            return Instr("ld", access=acc, order=order, scope=sc, noav=noav, reg=reg, loc=loc)
        if base == "st":
            loc = self.location(ops[0], locations).name
            val = parse_int(self.src, ops[1], "value to store")
            acc = access or "plain"
            order = (orders[0] if orders else "rlx") if acc == "atom" else None
            sc = (scope or "sys") if acc in ("atom", "av") else None
            return Instr("st", access=acc, order=order, scope=sc, noav=noav, loc=loc, args=(val,))
        if base == "rmw":
            reg = self.register(ops[0])
            loc = self.location(ops[1], locations).name
            val = parse_int(self.src, ops[2], "rmw operand")
            return Instr("rmw", access="atom", order=orders[0] if orders else "rlx",
                         scope=scope or "sys", noav=noav, op=f["op"].text, reg=reg, loc=loc,
                         args=(val,))
        if base == "cas":
            reg = self.register(ops[0])
            loc = self.location(ops[1], locations).name
            exp = parse_int(self.src, ops[2], "expected value")
            des = parse_int(self.src, ops[3], "desired value")
            order = orders[0] if orders else "rlx"
            fail = orders[1] if len(orders) == 2 else cas_default_fail(order)
            return Instr("cas", access="atom", order=order, fail_order=fail, scope=scope or "sys",
                         noav=noav, reg=reg, loc=loc, args=(exp, des))
        if base == "fence":
            if not orders:
                raise self.err(first.pos, "a fence needs an order: fence.acq, fence.rel, "
                                          "fence.acq_rel or fence.sc")
            return Instr("fence", order=orders[0], scope=scope or "sys", noav=noav)
        if base == "async.ld":
            dst = self.location(ops[0], locations)
            src = self.location(ops[1], locations)
            if not dst.lds:
                raise self.err(ops[0].pos, f"async.ld copies into LDS: {dst.name!r} is a global "
                                           "location (declare it 'lds')")
            if src.lds:
                raise self.err(ops[1].pos, f"async.ld copies from global memory: {src.name!r} "
                                           "is an LDS location")
            return Instr("async.ld", loc=src.name, lds=dst.name)
        if base == "async.mark":
            return Instr("async.mark")
        if base == "async.wait":
            n = parse_int(self.src, ops[0], "mark count")
            if n < 0:
                raise self.err(ops[0].pos, f"async.wait count must be >= 0, got {n}")
            return Instr("async.wait", args=(n,))
        if base == "barrier":
            return Instr("barrier")
        if base in ("bar.signal", "bar.wait"):
            b = parse_int(self.src, ops[0], "barrier id")
            if b not in BARRIER_IDS:
                raise self.err(ops[0].pos, f"unknown barrier id {b} (-1 workgroup, -3 cluster, "
                                           "1..16 named)")
            return Instr(base, args=(b,))
        if base in ("bar.init", "bar.join"):
            b = parse_int(self.src, ops[0], "barrier id")
            if b not in NAMED_BARRIERS:
                raise self.err(ops[0].pos, f"{base} takes a named barrier id 1..16, got {b}")
            if base == "bar.init":
                cnt = parse_int(self.src, ops[1], "expected count")
                return Instr(base, args=(b, cnt))
            return Instr(base, args=(b,))
        if base == "bar.leave":
            return Instr("bar.leave")
        raise self.err(first.pos, f"unknown mnemonic {base!r}")

    # -- condition -------------------------------------------------------------------------------
    def parse_condition(self, toks, k, regs: dict[int, set[str]], locations) -> Condition:
        cp = ConditionParser(self.src, toks, k, regs, locations, SPELLING)
        cond = cp.quantified()
        cp.end()
        return cond


def parse_amdgpu(text: str, path: str = "<string>") -> Test:
    """Parse a test in the AMDGPU dialect; raises :class:`ParseError` on malformed input."""
    return _Parser(text, path).parse()

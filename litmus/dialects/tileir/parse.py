"""Front end for litmus tests in the ``TILEIR`` dialect (CUDA Tile IR token graphs; docs/tileir.md).

Shape (LITMUS.md's column layout, with tiles and tokens)::

    TILEIR MP+relacq.device
    "documentation"
    { x[0..1] = 0; f = 0; P1:r0 = 0; }          (tiles of elements, scalars, registers)
     P0@block 0, device 0                        | P1@block 1, device 0                    ;
     t0 = store weak [x[0], x[1]], [1, 1]        | [r0], t2 = load acquire device [f]      ;
     t1 = store release device [f], [1] token=t0 | [r1, r2], t3 = load weak [x[0], x[1]] token=t2 ;
    exists (P1:r0 == 1 /\\ P1:r1 == 0)

- Init: ``x[A..B] = v`` declares the elements ``x[A]`` .. ``x[B]`` of tile ``x``; ``y = v`` a
  scalar; ``Pn:rK = v`` a register's initial value (registers start at 0).
- Placement: ``Pn@block B, device D`` (a tile block, one thread of the model; ``device`` defaults
  to 0, a left-out ``block`` is a block of its own). Two threads may not be the same block.
- Cells (one op per cell; ``ADDRS`` is a tile of element addresses, possibly aliased, ``[x[0], y]``;
  ``REGS`` one register per lane; value tiles are integer lists of the same length):

  ``tK = make_token`` · ``tK = join_tokens tA, tB[, ...]`` ·
  ``tK = store SEM [SCOPE] ADDRS, VALS`` ·
  ``REGS, tK = load SEM [SCOPE] ADDRS`` ·
  ``REGS, tK = atomic_rmw MODE SEM SCOPE ADDRS, ARGS`` ·
  ``REGS, tK = atomic_cas SEM SCOPE ADDRS, CMPS, VALS``

  each memory op optionally followed by ``mask [1, 0, ...]`` (lanes left out do nothing; their
  register keeps its initial value) and ``token=tJ`` (the input token). SEM is one of
  ``weak relaxed acquire release acq_rel`` and SCOPE ``tile_block`` (also ``tl_blk``) ``device``
  ``sys``, accepted per op as the Tile IR verifier does (litmus/tileir.py). MODE is one of
  ``add and or xor max min xchg``. Tokens are ``tK`` and registers ``rK``; each is defined once per
  block, and a token is used only after its definition in the same block (SSA).
- Condition: LITMUS.md's, with element locations written ``x[0]``.

Every malformed input is a ParseError at file:line:col.
"""

from __future__ import annotations

import re

from ...condition import ConditionParser, Spelling, is_condition_start
from ...ir import Location, Test, Thread
from ...lexer import ParseError, Source, Token, TokenCursor, parse_int, tokenize
from ...scopes import Placement
from .ops import (BASE_OF, HEADER, MEMORY_OPS, RMW_MODES, SCOPES, SEMS, TileOp,
                     element_name, verify_sem)

REGISTER = re.compile(r"r[0-9]+\Z")
TOKEN = re.compile(r"t[0-9]+\Z")
SCOPE_WORDS = {"tile_block": "tile_block", "tl_blk": "tile_block", "device": "device", "sys": "sys"}
SPELLING = Spelling(atom_hint="Pn:rK == v or x[0] == v", thread_hint="Pn",
                    register=lambda s: bool(REGISTER.match(s)), register_hint="a register rK")
MAX_TILE = 64


class _Cursor(TokenCursor):
    def __init__(self, src: Source, toks: list[Token]):
        self.src, self.toks, self.k = src, toks, 0

    def err(self, t: Token, reason: str) -> ParseError:
        return self.src.error(t.pos, reason)

    def expect(self, text: str, what: str | None = None) -> Token:
        t = self.next()
        if t.text != text:
            raise self.err(t, f"expected {what or repr(text)}, got {t.text or 'end of cell'!r}")
        return t

    def accept(self, text: str) -> bool:
        if self.peek().text == text:
            self.next()
            return True
        return False

    def ident(self, what: str) -> Token:
        t = self.next()
        if t.kind != "id":
            raise self.err(t, f"expected {what}, got {t.text or 'end of cell'!r}")
        return t

    def bracketed(self, item, what: str) -> list:
        """``[ITEM, ITEM, ...]`` (at least one item)."""
        self.expect("[", f"'[' starting {what}")
        out = [item()]
        while self.accept(","):
            out.append(item())
        t = self.next()
        if t.text != "]":
            raise self.err(t, f"expected ',' or ']' in {what}, got {t.text or 'end of cell'!r}")
        return out


class _TileParser:
    def __init__(self, text: str, path: str):
        self.src = Source(text, path)
        self.text = self.src.clean

    def err(self, pos: int, reason: str) -> ParseError:
        return self.src.error(pos, reason)

    # -- the frame -------------------------------------------------------------------------------
    def parse(self) -> Test:
        m = re.compile(r"\s*(\S+)").match(self.text)
        if not m:
            raise self.err(0, f"empty file: expected a header '{HEADER} <name>'")
        if m.group(1) != HEADER:
            raise self.err(m.start(1), f"expected dialect word {HEADER!r}, got {m.group(1)!r}")
        eol = self.text.find("\n", m.end())
        eol = len(self.text) if eol < 0 else eol
        rest = self.text[m.end():eol].split()
        if not rest:
            raise self.err(m.end(), f"missing test name after {HEADER!r}")
        if len(rest) > 1:
            raise self.err(self.text.index(rest[1], m.end()), "unexpected text after the test name")
        name = rest[0]
        pos, doc = eol, []
        while True:
            d = re.compile(r"\s*\"([^\"]*)\"").match(self.src.text, pos)
            if not d:
                break
            doc.append(d.group(1))
            pos = d.end()
        b = re.compile(r"\s*(\S)").match(self.text, pos)
        if not b or b.group(1) != "{":
            raise self.err(b.start(1) if b else len(self.text), "expected the init block '{'")
        close = self.text.find("}", b.end())
        if close < 0:
            raise self.err(b.start(1), "unterminated init block '{'")
        self.locations: dict[str, Location] = {}
        self.tiles: set[str] = set()
        reg_init = self.init(b.end(), close)
        cond_at = self.condition_start(close + 1)
        threads = self.table(close + 1, cond_at)
        for tid, reg, _ in reg_init:
            if tid >= len(threads):
                raise self.err(self._reg_pos[(tid, reg)], f"register init names unknown thread P{tid}")
        regs = {tid: set(th.registers()) | {r for t, r, _ in reg_init if t == tid}
                for tid, th in enumerate(threads)}
        toks = self.condition_tokens(cond_at)
        cp = ConditionParser(self.src, toks, 0, regs, self.locations, SPELLING)
        cond = cp.quantified()
        cp.end()
        return Test(name, tuple(self.locations.values()), tuple(threads), cond, tuple(doc),
                    tuple(reg_init), dialect=HEADER)

    # -- init ------------------------------------------------------------------------------------
    def init(self, start: int, end: int) -> tuple:
        toks = tokenize(self.src, start, end)
        c = _Cursor(self.src, toks)
        reg_init = []
        self._reg_pos = {}
        while c.peek().kind != "eof":
            if c.accept(";"):
                continue
            t = c.next()
            if c.peek().text == ":":                       # Pn:rK = v
                m = re.match(r"P([0-9]+)\Z", t.text)
                if not m:
                    raise c.err(t, f"expected a thread Pn before ':', got {t.text!r}")
                c.next()
                r = c.ident("a register rK")
                if not REGISTER.match(r.text):
                    raise c.err(r, f"expected a register rK, got {r.text!r}")
                c.expect("=", "'=' and the register's initial value")
                key = (int(m.group(1)), r.text)
                if key in self._reg_pos:
                    raise c.err(t, f"register P{key[0]}:{key[1]} initialized twice")
                self._reg_pos[key] = t.pos
                reg_init.append((key[0], key[1], parse_int(self.src, c.next(), "initial value")))
                continue
            if t.kind != "id" or REGISTER.match(t.text) or TOKEN.match(t.text):
                raise c.err(t, f"expected a location or tile name (not a register rK or token "
                               f"tK), got {t.text!r}")
            names = [t.text]
            if c.peek().text == "[":                       # x[A..B] or x[A]
                c.next()
                lo = parse_int(self.src, c.next(), "element index")
                hi = lo
                if c.accept("."):
                    c.expect(".", "'..' in an element range")
                    hi = parse_int(self.src, c.next(), "element index")
                c.expect("]", "']' closing the element range")
                if lo < 0 or hi < lo or hi - lo >= MAX_TILE:
                    raise c.err(t, f"bad element range {lo}..{hi} of tile {t.text!r} (0 <= A <= B, "
                                   f"at most {MAX_TILE} elements)")
                if t.text in self.locations:
                    raise c.err(t, f"{t.text!r} is a scalar location, not a tile")
                self.tiles.add(t.text)
                names = [element_name(t.text, i) for i in range(lo, hi + 1)]
            elif t.text in self.tiles:
                raise c.err(t, f"{t.text!r} is a tile: declare its elements as {t.text}[A..B]")
            value = 0
            if c.accept("="):
                value = parse_int(self.src, c.next(), "initial value")
            for n in names:
                if n in self.locations:
                    raise c.err(t, f"location {n!r} declared twice")
                self.locations[n] = Location(n, value)
            nt = c.peek()
            if nt.kind != "eof" and nt.text != ";":
                raise c.err(nt, f"expected ';' after the declaration of {t.text!r}, got {nt.text!r}")
        return tuple(reg_init)

    # -- the thread table ------------------------------------------------------------------------
    def condition_start(self, pos: int) -> int:
        toks = tokenize(self.src, pos)
        for k in range(len(toks) - 1):
            if is_condition_start(toks, k) and (k == 0 or toks[k - 1].text == ";"):
                return toks[k].pos
        raise self.err(toks[-1].pos, "expected a final condition (exists, ~exists or forall)")

    def rows(self, start: int, end: int) -> list[list[tuple[int, int]]]:
        """The table's rows, each a list of cells ``(start, end)`` (offsets into the text)."""
        out, row, cell = [], [], start
        for i in range(start, end):
            ch = self.text[i]
            if ch == "|":
                row.append((cell, i))
                cell = i + 1
            elif ch == ";":
                row.append((cell, i))
                out.append(row)
                row, cell = [], i + 1
        if self.text[cell:end].strip():
            raise self.err(cell + len(self.text[cell:end]) - len(self.text[cell:end].lstrip()),
                           "table row not ended by ';'")
        return out

    def table(self, start: int, end: int) -> list[Thread]:
        rows = self.rows(start, end)
        if not rows:
            raise self.err(start, "expected the thread table (a row 'P0@block 0 | P1@block 1 ;')")
        heads = [self.placement(a, b, k) for k, (a, b) in enumerate(rows[0])]
        seen = {}
        for k, p in enumerate(heads):
            if p.wg is not None:
                key = (p.agent, p.wg)
                if key in seen:
                    raise self.err(rows[0][k][0] + len(self.text[rows[0][k][0]:rows[0][k][1]]) -
                                   len(self.text[rows[0][k][0]:rows[0][k][1]].lstrip()),
                                   f"P{k} is the same tile block as P{seen[key]} (block {p.wg}, "
                                   f"device {p.agent}): a tile block is one thread")
                seen[key] = k
        code: list[list[TileOp]] = [[] for _ in heads]
        self._tokens = [dict() for _ in heads]
        self._regs = [set() for _ in heads]
        for row in rows[1:]:
            if len(row) != len(heads):
                raise self.err(row[0][0] + 1 if row else start,
                               f"row has {len(row)} cells, the table has {len(heads)} threads")
            for tid, (a, b) in enumerate(row):
                toks = tokenize(self.src, a, b)
                if toks[0].kind == "eof":
                    continue
                code[tid].append(self.op(_Cursor(self.src, toks), tid))
        return [Thread(p, tuple(c)) for p, c in zip(heads, code)]

    def placement(self, a: int, b: int, k: int) -> Placement:
        c = _Cursor(self.src, tokenize(self.src, a, b))
        t = c.next()
        if t.text != f"P{k}":
            raise c.err(t, f"expected thread name P{k}, got {t.text or 'an empty cell'!r}")
        block, device = None, 0
        if c.accept("@"):
            seen = set()
            while True:
                w = c.ident("'block' or 'device'")
                if w.text not in ("block", "device") or w.text in seen:
                    raise c.err(w, f"expected 'block B' or 'device D' (each once), got {w.text!r}")
                seen.add(w.text)
                v = parse_int(self.src, c.next(), f"{w.text} id")
                if v < 0:
                    raise c.err(w, f"{w.text} id must be >= 0")
                if w.text == "block":
                    block = v
                else:
                    device = v
                if not c.accept(","):
                    break
        if c.peek().kind != "eof":
            raise c.err(c.peek(), f"unexpected {c.peek().text!r} in the placement of P{k}")
        return Placement(wg=block, agent=device)

    # -- one op ----------------------------------------------------------------------------------
    def op(self, c: _Cursor, tid: int) -> TileOp:
        first = c.peek()
        regs: list[str] = []
        if first.text == "[":
            regs = [r.text for r in c.bracketed(lambda: self.new_register(c, tid), "the result registers")]
            c.expect(",", "',' and the op's result token")
        tok = c.ident("the result token tK")
        if not TOKEN.match(tok.text):
            raise c.err(tok, f"expected a token name tK, got {tok.text!r}")
        if tok.text in self._tokens[tid]:
            raise c.err(tok, f"token {tok.text} defined twice in P{tid}")
        c.expect("=", "'='")
        name = c.ident("an op (load, store, atomic_rmw, atomic_cas, make_token, join_tokens)")
        kind = name.text
        if kind not in MEMORY_OPS and kind not in ("make_token", "join_tokens"):
            raise c.err(name, f"unknown op {kind!r} (expected load, store, atomic_rmw, atomic_cas, "
                              f"make_token or join_tokens)")
        results = kind in ("load", "atomic_rmw", "atomic_cas")
        if results and not regs:
            raise c.err(first, f"{kind} returns a tile: write '[rA, ...], {tok.text} = {kind} ...'")
        if not results and regs:
            raise c.err(first, f"{kind} returns no tile, only a token")
        if kind == "make_token":
            self.end(c)
            self._tokens[tid][tok.text] = tok.pos
            return TileOp("token", opname=kind, token=tok.text)
        if kind == "join_tokens":
            ins = [self.use_token(c, tid)]
            while c.accept(","):
                ins.append(self.use_token(c, tid))
            if len(ins) < 2:
                raise c.err(name, "join_tokens expects two or more tokens")
            self.end(c)
            self._tokens[tid][tok.text] = tok.pos
            return TileOp("token", opname=kind, token=tok.text, token_in=tuple(ins))
        mode = None
        if kind == "atomic_rmw":
            m = c.ident(f"an atomic_rmw mode ({', '.join(RMW_MODES)})")
            if m.text not in RMW_MODES:
                raise c.err(m, f"unknown atomic_rmw mode {m.text!r} (expected {', '.join(RMW_MODES)})")
            mode = m.text
        s = c.ident(f"a memory ordering ({', '.join(SEMS)})")
        if s.text not in SEMS:
            raise c.err(s, f"unknown memory ordering {s.text!r} (expected {', '.join(SEMS)})")
        scope = None
        if c.peek().text in SCOPE_WORDS:
            scope = SCOPE_WORDS[c.next().text]
        problem = verify_sem(kind, s.text, scope)
        if problem:
            raise c.err(s, problem)
        addrs = [a for a in c.bracketed(lambda: self.address(c), "the address tile")]
        cmps: list[int] = []
        vals: list[int] = []
        if kind in ("store", "atomic_rmw", "atomic_cas"):
            c.expect(",", "',' and a value tile")
            first_vals = c.bracketed(lambda: parse_int(self.src, c.next(), "value"), "a value tile")
            if kind == "atomic_cas":
                c.expect(",", "',' and the tile of new values")
                cmps = first_vals
                vals = c.bracketed(lambda: parse_int(self.src, c.next(), "value"), "a value tile")
            else:
                vals = first_vals
        n = len(addrs)
        for what, tile in (("value", vals), ("compare", cmps)):
            if tile and len(tile) != n:
                raise c.err(name, f"the {what} tile has {len(tile)} lanes, the address tile {n}")
        if regs and len(regs) != n:
            raise c.err(first, f"{len(regs)} result registers for {n} lanes")
        mask: tuple[bool, ...] = ()
        token_in: tuple[str, ...] = ()
        while c.peek().kind != "eof":
            w = c.next()
            if w.text == "mask" and not mask:
                bits = c.bracketed(lambda: parse_int(self.src, c.next(), "mask bit"), "the mask")
                if len(bits) != n or any(b not in (0, 1) for b in bits):
                    raise c.err(w, f"the mask needs {n} bits, each 0 or 1")
                mask = tuple(bool(b) for b in bits)
            elif w.text == "token" and not token_in:
                c.expect("=", "'=' after 'token'")
                token_in = (self.use_token(c, tid),)
            else:
                raise c.err(w, f"unexpected {w.text!r} (expected 'mask [...]' or 'token=tK', "
                               f"each once)")
        self._tokens[tid][tok.text] = tok.pos
        return TileOp(BASE_OF[kind], opname=kind, sem=s.text, scope=scope, op=mode,
                      addrs=tuple(addrs), vals=tuple(vals), cmps=tuple(cmps), regs=tuple(regs),
                      mask=mask, token=tok.text, token_in=token_in)

    def end(self, c: _Cursor) -> None:
        if c.peek().kind != "eof":
            raise c.err(c.peek(), f"unexpected {c.peek().text!r} at the end of the op")

    def new_register(self, c: _Cursor, tid: int) -> Token:
        r = c.ident("a register rK")
        if not REGISTER.match(r.text):
            raise c.err(r, f"expected a register rK, got {r.text!r}")
        if r.text in self._regs[tid]:
            raise c.err(r, f"register {r.text} written twice in P{tid} (each register is written once)")
        self._regs[tid].add(r.text)
        return r

    def use_token(self, c: _Cursor, tid: int) -> str:
        t = c.ident("a token tK")
        if t.text not in self._tokens[tid]:
            if TOKEN.match(t.text):
                raise c.err(t, f"token {t.text} is not defined earlier in P{tid} (tokens flow "
                               f"forward within one tile block)")
            raise c.err(t, f"expected a token tK, got {t.text!r}")
        return t.text

    def address(self, c: _Cursor) -> str:
        t = c.ident("an element address x[i] or a scalar location")
        name = t.text
        if c.peek().text == "[":
            c.next()
            i = parse_int(self.src, c.next(), "element index")
            c.expect("]", "']' after the element index")
            name = element_name(t.text, i)
        if name not in self.locations:
            if t.text in self.tiles and name != t.text:
                raise c.err(t, f"element {name} is outside the declared tile {t.text}")
            if t.text in self.tiles:
                raise c.err(t, f"{t.text!r} is a tile: name an element, {t.text}[i]")
            raise c.err(t, f"undeclared location {name!r}")
        return name

    # -- condition -------------------------------------------------------------------------------
    def condition_tokens(self, pos: int) -> list[Token]:
        """The condition's tokens, element locations ``x [ 0 ]`` merged into one token ``x[0]``."""
        toks = tokenize(self.src, pos)
        out: list[Token] = []
        k = 0
        while k < len(toks):
            t = toks[k]
            if (t.kind == "id" and k + 3 < len(toks) and toks[k + 1].text == "["
                    and toks[k + 2].kind == "int" and toks[k + 3].text == "]"):
                out.append(Token("id", element_name(t.text, int(toks[k + 2].text)), t.pos))
                k += 4
                continue
            out.append(t)
            k += 1
        return out


def parse_tileir(text: str, path: str = "<string>") -> Test:
    """Parse a ``TILEIR`` litmus test (see the module docstring)."""
    return _TileParser(text, path).parse()

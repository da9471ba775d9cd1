"""Front end for C11 litmus tests in the herd7/Dat3M ``C`` dialect (the RC11 suite's format).

Shape::

    C name
    { [x] = 0; [y] = 1; }                      (also ``x = 0;`` and ``int x = 0;``)
    P0 (atomic_int* x, volatile int* y) {      (parameters name the locations a thread uses)
      *y = 1;                                  (plain accesses through ``*p``)
      atomic_store_explicit(x, 1, memory_order_release);
      int r1 = atomic_load_explicit(x, memory_order_acquire) + *y;
      if (r1 == 2) { ... } else { ... }
      while (atomic_load_explicit(x, memory_order_acquire) == 0) { }
    }
    exists (0:r1=1 /\\ x=1)                    (or ``~exists``, ``forall``)

Arrays: ``atomic_int y[2] = {0, 0};`` in the init block declares the locations ``y[0]`` and
``y[1]`` (a thread parameter ``atomic_int* y`` then points at ``y[0]``); an address is ``y``,
``&y``, ``y + e``, ``&y[e]`` or ``(y + e)``, and ``y[e]`` / ``*(y + e)`` are plain accesses. An
offset that depends on a register is an address dependency: the element is chosen per path
(litmus/cfg.py, the ``arr=``/``off=`` attributes).

Calls: ``atomic_load[_explicit]``, ``atomic_store[_explicit]``, ``atomic_fetch_{add,sub,and,or,
xor,max,min}[_explicit]`` (max and min are OpenCL C's), ``atomic_exchange[_explicit]``, ``atomic_compare_exchange_{strong,weak}
[_explicit]`` and ``atomic_thread_fence``. Expressions are lowered left to right: every memory
access in an expression becomes its own instruction into a fresh register ``_tN`` and the pure rest
becomes an ``assign`` (litmus/cfg.py); the accesses of the two operands of an operator other than
``&&``/``||`` are unsequenced (C11 6.5p3), i.e. unordered by po (the ``unseq=`` attribute). A compare-exchange follows C11 (7.17.7.4) as herd7 models
it: a plain read of ``*expected``, an atomic read of ``*obj``; when equal an rmw writing
``desired`` (success order), otherwise a read with the failure order and a plain write of the
value read into ``*expected``; its value is 1 on success, 0 on failure. ``expected`` may also be
the address of a local variable (``&e``): the failure then assigns the variable. A failure
order of ``release``/``acq_rel`` (not allowed by C11 7.17.7.4, but in the OPENCL suite) means its
load part, ``relaxed``/``acquire``. ``(void)`` before
an expression statement is accepted and ignored. The weak form is read as
the strong one (no spurious failure). Accesses are non-atomic unless made through an ``atomic_*``
call; the memory order names are C11's. A thread parameter is a register holding an address:
the condition may name it (``0:x=0``), and such an atom is false (``!=``: true), as in herd7.

:class:`CParser` is also the base of the OpenCL front end (litmus/dialects/opencl/parse.py), which adds
placements, address spaces, memory scopes, fences with flags and barriers through its hooks.
"""

from __future__ import annotations

import re

from ...cfg import expr_text
from ...condition import HERD, THREAD, ConditionParser
from ...ir import Instr, Location, Test, Thread
from ...lexer import ParseError, Source, Token, TokenCursor, parse_int, tokenize
from ...scopes import Placement

ORDERS = {"memory_order_relaxed": "rlx", "memory_order_consume": "acq",
          "memory_order_acquire": "acq", "memory_order_release": "rel",
          "memory_order_acq_rel": "acq_rel", "memory_order_seq_cst": "sc"}
FETCH_OPS = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor",
             "max": "max", "min": "min"}     # fetch_max/min: OpenCL C (6.15.12.7)
TYPE_WORDS = {"int", "atomic_int", "volatile", "const", "unsigned", "long", "char", "short",
              "_Atomic", "intptr_t", "atomic_bool", "bool", "atomic_long", "uint32_t",
              "int32_t", "atomic_uint"}

#: instruction bases that access memory
ACCESS_BASES = ("ld", "st", "rmw", "cas")

#: binary operator precedence (higher binds tighter)
PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7,
              ">": 7, ">=": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9}


class CSource(Source):
    """Source text of a C test: ``(*`` directly followed by a name or ``(`` (``(*p)``,
    ``if (*x == 1)``, ``(*(y + r0))``) is a dereference in parentheses, not a comment; herd's
    comments ``(* ... *)`` start with a blank after ``(*``."""

    DEREF = re.compile(r"\(\*(?=[A-Za-z_(])")

    def _strip_comments(self) -> str:
        original = self.text
        self.text = self.DEREF.sub("(\x00", original)
        try:
            clean = super()._strip_comments()
        finally:
            self.text = original
        return clean.replace("(\x00", "(*")


class CParser(TokenCursor):
    #: the header word of the dialect
    DIALECT = "C"
    #: what the order-only atomics (``atomic_load(x)``) and every ``_explicit`` call act at
    DEFAULT_SCOPE = "sys"

    def __init__(self, text: str, path: str):
        self.src = CSource(text, path)
        self.text = self.src.clean
        self.ntemp = 0
        self.nlabel = 0
        self.nunseq = 0
        self.arrays: dict[str, int] = {}     # array name -> its length (elements NAME[k])

    def err(self, pos: int, reason: str) -> ParseError:
        return self.src.error(pos, reason)

    # -- token stream ----------------------------------------------------------------------------
    def expect(self, text: str, what: str = "") -> Token:
        t = self.next()
        if t.text != text:
            shown = t.text if t.kind != "eof" else "end of input"
            raise self.err(t.pos, f"expected {text!r}{what}, got {shown!r}")
        return t

    def ident(self, what: str) -> Token:
        t = self.next()
        if t.kind != "id":
            shown = t.text if t.kind != "eof" else "end of input"
            raise self.err(t.pos, f"expected {what}, got {shown!r}")
        return t

    # -- file ------------------------------------------------------------------------------------
    def parse(self) -> Test:
        m = re.compile(r"\s*(\S+)").match(self.text)
        if not m:
            raise self.err(0, f"empty file: expected a header '{self.DIALECT} <name>'")
        if m.group(1) != self.DIALECT:
            raise self.err(m.start(1), f"expected dialect word {self.DIALECT!r}, got "
                                       f"{m.group(1)!r}")
        eol = self.text.find("\n", m.end())
        eol = len(self.text) if eol < 0 else eol
        name = self.text[m.end():eol].strip()
        if not name:
            raise self.err(m.end(), f"missing test name after {self.DIALECT!r}")
        name = name.split()[0]
        i = eol
        while True:                       # quoted documentation
            j = re.compile(r"\s*").match(self.text, i).end()
            if j < len(self.text) and self.text[j] == '"':
                i = self.text.find('"', j + 1) + 1
            else:
                break
        doc = tuple(d.strip('"') for d in re.findall(r'"[^"]*"', self.src.text[eol:i]))
        self.toks = tokenize(self.src, i)
        self.k = 0
        self.locs: dict[str, Location] = {}
        self.init_block()
        threads = []
        regsets: dict[int, set[str]] = {}
        pointers: dict[int, set[str]] = {}
        while THREAD.match(self.peek().text) and self.peek(1).text in ("(", "@"):
            t = self.next()
            tid = int(THREAD.match(t.text).group(1))
            if tid != len(threads):
                raise self.err(t.pos, f"expected thread P{len(threads)}, got {t.text}")
            placement = self.placement(t)
            code = self.thread(tid)
            threads.append(Thread(placement, tuple(code)))
            regsets[tid] = {i.reg for i in code if i.reg}
            pointers[tid] = set(self.params)
        if not threads:
            t = self.peek()
            raise self.err(t.pos, f"expected a thread 'P0 (...) {{ ... }}', got "
                                  f"{t.text or 'end of input'!r}")
        cp = ConditionParser(self.src, self.toks, self.k, regsets, self.locs, HERD,
                             pointers=pointers)
        cond = cp.quantified()
        cp.end()
        return Test(name=name, locations=tuple(self.locs.values()), threads=tuple(threads),
                    condition=cond, doc=doc, dialect=self.DIALECT, meta=self.meta())

    # -- dialect hooks (the OpenCL front end overrides them) -------------------------------------
    def placement(self, t: Token) -> Placement:
        """The placement written after the thread name (C has none: ``P0 (...)``)."""
        if self.peek().text == "@":
            raise self.err(self.peek().pos, f"{self.DIALECT} threads have no placement "
                                            f"('{t.text}@...')")
        return Placement()

    def meta(self) -> tuple:
        """Dialect facts for the model builders (``Test.meta``)."""
        return ()

    def param_type(self) -> list[Token]:
        """The type words of a thread parameter (before its name)."""
        words = []
        while self.peek().text in TYPE_WORDS or self.peek().text == "*":
            words.append(self.next())
        return words

    def declare_param(self, name: Token, words: list[Token]) -> None:
        """Record a thread parameter's type (C: nothing to record)."""

    def scoped(self, fn: Token, spans: list, n: int, explicit: bool) -> tuple[list, str]:
        """The arguments of an atomic call taking ``n`` of them, and its scope (C: none; every
        atomic acts at system scope)."""
        if len(spans) != n:
            raise self.err(fn.pos, f"{fn.text} takes {n} argument(s), got {len(spans)}")
        return spans, self.DEFAULT_SCOPE

    def extra_statement(self, code: list[Instr]) -> bool:
        """A dialect statement at the current token (appended to ``code``), or False."""
        return False

    def extra_call(self, fn: Token, spans: list, code: list[Instr], statement: bool):
        """A dialect function call (its value, or 0 for a statement), or None when unknown."""
        return None

    def init_block(self):
        self.expect("{", " to open the init block")
        while self.peek().text != "}":
            t = self.peek()
            if t.kind == "eof":
                raise self.err(t.pos, "unterminated init block: no '}'")
            if t.text == ";":
                self.next()
                continue
            while self.peek().text in TYPE_WORDS or self.peek().text == "*":
                self.next()
            if self.peek().text == "[":
                self.next()
                n = self.ident("a location name")
                self.expect("]", " after the location name")
            else:
                n = self.ident("a location name")
            if self.peek().text == ":":
                raise self.err(n.pos, f"register initial values are not supported in "
                                      f"{self.DIALECT} tests")
            if n.text in self.locs or n.text in self.arrays:
                raise self.err(n.pos, f"location {n.text!r} declared twice")
            if self.peek().text == "[":
                self.array_decl(n)
            else:
                value = 0
                if self.peek().text == "=":
                    self.next()
                    value = parse_int(self.src, self.next(), "initial value")
                self.locs[n.text] = Location(n.text, value)
            if self.peek().text not in (";", "}"):
                raise self.err(self.peek().pos, f"expected ';' after the init of {n.text!r}, "
                                                f"got {self.peek().text!r}")
        self.next()

    def array_decl(self, n: Token) -> None:
        """``NAME[N] = {v0, v1, ...}`` (or ``NAME[N]``): locations ``NAME[0]`` .. ``NAME[N-1]``."""
        self.next()
        size_tok = self.next()
        size = parse_int(self.src, size_tok, "array length")
        if size < 1:
            raise self.err(size_tok.pos, f"array {n.text!r} needs a positive length")
        self.expect("]", " after the array length")
        values: list[int] = []
        if self.peek().text == "=":
            self.next()
            self.expect("{", " to open the array's initial values")
            while self.peek().text != "}":
                if len(values) == size:
                    raise self.err(self.peek().pos, f"more than {size} initial values for "
                                                    f"{n.text}[{size}]")
                values.append(parse_int(self.src, self.next(), "array element value"))
                if self.peek().text == ",":
                    self.next()
                elif self.peek().text != "}":
                    raise self.err(self.peek().pos, f"expected ',' or '}}' in the initial values "
                                                    f"of {n.text!r}, got {self.peek().text!r}")
            self.next()
        self.arrays[n.text] = size
        for k in range(size):
            name = f"{n.text}[{k}]"
            self.locs[name] = Location(name, values[k] if k < len(values) else 0)

    def thread(self, tid: int) -> list[Instr]:
        self.expect("(")
        self.params: set[str] = set()
        while self.peek().text != ")":
            words = self.param_type()
            n = self.ident("a parameter name")
            if not words:
                raise self.err(n.pos, f"parameter {n.text!r} has no type")
            if n.text in self.params:
                raise self.err(n.pos, f"parameter {n.text!r} named twice")
            self.params.add(n.text)
            if n.text not in self.locs and n.text not in self.arrays:
                self.locs[n.text] = Location(n.text, 0)
            self.declare_param(n, words)
            if self.peek().text == ",":
                self.next()
            elif self.peek().text != ")":
                raise self.err(self.peek().pos, f"expected ',' or ')' in the parameter list, "
                                                f"got {self.peek().text!r}")
        self.next()
        self.vars: set[str] = set()
        code: list[Instr] = []
        self.block(code)
        return code

    # -- statements ------------------------------------------------------------------------------
    def block(self, code: list[Instr]):
        self.expect("{", " to open a block")
        while self.peek().text != "}":
            if self.peek().kind == "eof":
                raise self.err(self.peek().pos, "unterminated block: missing '}'")
            self.statement(code)
        self.next()

    def statement(self, code: list[Instr]):
        t = self.peek()
        if t.text == ";":
            self.next()
            return
        if t.text == "{":
            self.block(code)
            return
        if self.extra_statement(code):
            return
        if t.text == "(" and self.peek(1).text == "void" and self.peek(2).text == ")":
            self.k += 3                               # (void) expr;  -- the value is dropped
            self.expr(code, statement=True)
            self.expect(";", " after the statement")
            return
        if t.text == "if":
            self.next()
            self.expect("(", " after 'if'")
            cond = self.expr(code)
            self.expect(")", " to close the if condition")
            els = self.new_label()
            end = self.new_label()
            code.append(Instr("branch", attrs=(f"cond={expr_text(('!', cond))}",
                                               f"target={els}")))
            self.body(code)
            if self.peek().text == "else":
                self.next()
                code.append(Instr("goto", attrs=(f"target={end}",)))
                code.append(Instr("label", attrs=(f"label={els}",)))
                self.body(code)
                code.append(Instr("label", attrs=(f"label={end}",)))
            else:
                code.append(Instr("label", attrs=(f"label={els}",)))
            return
        if t.text == "while":
            # top: cond; branch !cond -> end; body; goto top; end  (cfg bounds the unrolling)
            self.next()
            top, end = self.new_label(), self.new_label()
            code.append(Instr("label", attrs=(f"label={top}",)))
            self.expect("(", " after 'while'")
            cond = self.expr(code)
            self.expect(")", " to close the while condition")
            code.append(Instr("branch", attrs=(f"cond={expr_text(('!', cond))}",
                                               f"target={end}")))
            self.body(code)
            code.append(Instr("goto", attrs=(f"target={top}",)))
            code.append(Instr("label", attrs=(f"label={end}",)))
            return
        if t.text in ("for", "do", "goto", "return", "switch"):
            raise self.err(t.pos, f"'{t.text}' is not supported in {self.DIALECT} litmus tests "
                                  "(if/else and while only)")
        if t.text in TYPE_WORDS:                     # declaration
            while self.peek().text in TYPE_WORDS:
                self.next()
            n = self.ident("a variable name")
            self.declare(n)
            if self.peek().text == "=":
                self.next()
                self.assign_to(n.text, code)
            self.expect(";", " after the declaration")
            return
        if t.kind == "id" and self.peek(1).text == "=":
            n = self.next()
            if n.text in self.params:
                raise self.err(n.pos, f"cannot assign to parameter {n.text!r} (write *{n.text})")
            if n.text not in self.vars:
                raise self.err(n.pos, f"assignment to undeclared variable {n.text!r}")
            self.next()
            self.assign_to(n.text, code)
            self.expect(";", " after the assignment")
            return
        if t.text == "*" or (t.kind == "id" and t.text in self.params
                             and self.peek(1).text == "["):
            # a plain store *p = e, *(y + e) = v, y[e] = v -- or an expression statement
            save, addr_code = self.k, []
            loc, aattrs = self.lvalue(addr_code)
            if self.peek().text == "=":
                self.next()
                code.extend(addr_code)
                v = self.expr(code)
                code.append(self.store(loc, v, "plain", None, aattrs))
                self.expect(";", " after the store")
                return
            self.k = save
        self.expr(code, statement=True)
        self.expect(";", " after the statement")

    def body(self, code):
        if self.peek().text == "{":
            self.block(code)
        else:
            self.statement(code)

    def declare(self, n: Token):
        if n.text in self.params:
            raise self.err(n.pos, f"variable {n.text!r} shadows a parameter")
        if n.text.startswith("_"):
            raise self.err(n.pos, f"variable names may not start with '_' ({n.text!r})")
        self.vars.add(n.text)

    def new_label(self) -> str:
        self.nlabel += 1
        return f"_L{self.nlabel}"

    def temp(self) -> str:
        self.ntemp += 1
        return f"_t{self.ntemp}"

    def assign_to(self, reg: str, code: list[Instr]):
        """``reg = expr``: a single access goes straight into ``reg``, the rest via ``assign``."""
        start = len(code)
        e = self.expr(code, dest=reg)
        if e == reg and len(code) > start and code[-1].reg == reg:
            return
        code.append(self.assign(reg, e))

    @staticmethod
    def assign(reg: str, e) -> Instr:
        if isinstance(e, int):
            return Instr("assign", reg=reg, args=(e,))
        return Instr("assign", reg=reg, attrs=(f"val={expr_text(e)}",))

    def store(self, loc: str, v, access: str, order: str | None, aattrs: tuple = (),
              scope: str | None = None) -> Instr:
        scope = scope if order else None
        if isinstance(v, int):
            return Instr("st", access=access, order=order, scope=scope, loc=loc, args=(v,),
                         attrs=aattrs)
        return Instr("st", access=access, order=order, scope=scope, loc=loc,
                     attrs=(f"val={expr_text(v)}",) + aattrs)

    # -- addresses -------------------------------------------------------------------------------
    def base(self, t: Token) -> str:
        """A parameter named as the base of an address."""
        if t.kind != "id":
            raise self.err(t.pos, f"expected a location (a parameter), got {t.text!r}")
        if t.text not in self.params:
            raise self.err(t.pos, f"{t.text!r} is not a parameter of this thread")
        return t.text

    def element(self, t: Token, offset) -> tuple[str, tuple]:
        """The location at ``base + offset`` and the address attributes of an access to it:
        ``()`` for a fixed location; ``arr=NAME:LEN`` and ``off=EXPR`` for an element chosen by
        a register (an address dependency; litmus/cfg.py picks the element per path)."""
        name = self.base(t)
        size = self.arrays.get(name)
        if size is None:
            if offset != 0:
                raise self.err(t.pos, f"{name!r} is not an array: no address arithmetic on it")
            return name, ()
        if isinstance(offset, int):
            if not 0 <= offset < size:
                raise self.err(t.pos, f"element {offset} is outside {name}[{size}]")
            return f"{name}[{offset}]", ()
        return f"{name}[0]", (f"arr={name}:{size}", f"off={expr_text(offset)}")

    def address(self, code) -> tuple[str, tuple]:
        """An address: ``x``, ``&x``, ``&y[e]``, ``y + e``, ``y - e`` or ``(address)``."""
        t = self.peek()
        if t.text == "(":
            self.next()
            out = self.address(code)
            self.expect(")", " to close the address")
            return out
        if t.text == "&":
            self.next()
            n = self.next()
            if self.peek().text == "[":
                return self.element(n, self.index(code))
            return self.element(n, 0)
        n = self.next()
        nxt = self.peek()
        if nxt.text in ("+", "-"):
            self.next()
            off = self.expr(code, PRECEDENCE["+"] + 1)
            off = (-off if isinstance(off, int) else ("neg", off)) if nxt.text == "-" else off
            return self.element(n, off)
        if nxt.kind == "int" and nxt.text[0] in "+-":    # "y+1" lexed as y, +1
            return self.element(n, self.expr(code, PRECEDENCE["+"] + 1))
        return self.element(n, 0)

    def index(self, code):
        """``[e]`` after an array name: the element's offset."""
        self.expect("[")
        off = self.expr(code)
        self.expect("]", " to close the index")
        return off

    def lvalue(self, code) -> tuple[str, tuple]:
        """``*address`` or ``y[e]``: the location a plain access names."""
        t = self.next()
        if t.text == "*":
            if self.peek().text == "(":
                return self.address(code)
            return self.element(self.next(), 0)
        return self.element(t, self.index(code))

    # -- expressions (accesses become instructions; the result is a pure expression) ------------
    def expr(self, code, minprec: int = 1, dest: str | None = None, statement: bool = False):
        start = len(code)
        left = self.unary(code, dest, statement)
        while True:
            t = self.peek()
            op = t.text
            if op in ("&", "|") and self.peek(1).text == op and self.peek(1).pos == t.pos + 1:
                op = op * 2
            if t.kind == "int" and t.text[0] in "+-":     # "r0-1" lexed as r0, -1
                op = t.text[0]
            prec = PRECEDENCE.get(op)
            if prec is None or prec < minprec:
                return left
            if t.kind == "int":
                self.toks[self.k] = Token("int", t.text[1:], t.pos + 1)
            else:
                self.next()
                if op in ("&&", "||"):
                    self.next()
            mid = len(code)
            right = self.expr(code, prec + 1)
            if op not in ("&&", "||"):
                self.unsequence(code, start, mid)
            if isinstance(left, int) and isinstance(right, int):
                from ...cfg import BINOPS
                left = BINOPS[op](left, right)
            else:
                left = (op, left, right)

    def unsequence(self, code: list[Instr], start: int, mid: int) -> None:
        """The memory accesses of an operator's two operands (``code[start:mid]`` and
        ``code[mid:]``) are unsequenced (C11 6.5p3: "Except as specified later, side effects and
        value computations of subexpressions are unsequenced"; ``&&`` and ``||`` sequence
        theirs): each gets an ``unseq=ID:SIDE`` attribute and po leaves such pairs unordered
        (litmus/cfg.py: :func:`~litmus.cfg.unsequenced`)."""
        sides = ([i for i in range(start, mid) if code[i].base in ACCESS_BASES],
                 [i for i in range(mid, len(code)) if code[i].base in ACCESS_BASES])
        if not sides[0] or not sides[1]:
            return
        self.nunseq += 1
        for side, rows in enumerate(sides):
            for i in rows:
                code[i] = code[i].replace(attrs=code[i].attrs + (f"unseq={self.nunseq}:{side}",))

    def unary(self, code, dest=None, statement=False):
        t = self.peek()
        if t.text == "!":
            self.next()
            return ("!", self.unary(code))
        if t.text == "-":
            self.next()
            a = self.unary(code)
            return -a if isinstance(a, int) else ("neg", a)
        if t.text == "(":
            self.next()
            e = self.expr(code)
            self.expect(")", " to close '('")
            return e
        if t.text == "*" or (t.kind == "id" and t.text in self.params
                             and self.peek(1).text == "["):
            loc, aattrs = self.lvalue(code)
            reg = dest or self.temp()
            code.append(Instr("ld", access="plain", reg=reg, loc=loc, attrs=aattrs))
            return reg
        if t.kind == "int":
            self.next()
            return int(t.text)
        if t.kind == "id" and self.peek(1).text == "(":
            return self.call(code, dest, statement)
        if t.kind == "id":
            self.next()
            if t.text in self.params:
                raise self.err(t.pos, f"pointer {t.text!r} used as a value (write *{t.text})")
            if t.text not in self.vars:
                raise self.err(t.pos, f"undeclared variable {t.text!r}")
            return t.text
        shown = t.text if t.kind != "eof" else "end of input"
        raise self.err(t.pos, f"expected an expression, got {shown!r}")

    def args(self) -> list:
        self.expect("(")
        groups: list[list[Token]] = []
        if self.peek().text == ")":
            self.next()
            return groups
        while True:
            start = self.k
            depth = 0
            while not (depth == 0 and self.peek().text in (",", ")")):
                t = self.next()
                if t.kind == "eof":
                    raise self.err(t.pos, "unterminated call: missing ')'")
                depth += {"(": 1, ")": -1}.get(t.text, 0)
            groups.append((start, self.k))
            if self.next().text == ")":
                return groups

    def in_span(self, span, parse):
        """Run ``parse()`` over the tokens of one argument; it must use them all."""
        save = self.k
        self.k = span[0]
        if span[0] == span[1]:
            raise self.err(self.peek().pos, "empty argument")
        out = parse()
        if self.k != span[1]:
            raise self.err(self.peek().pos, f"unexpected {self.peek().text!r} in an argument")
        self.k = save
        return out

    def sub_expr(self, code, span):
        """Parse the tokens of one argument as an expression."""
        return self.in_span(span, lambda: self.expr(code))

    def arg_loc(self, code, span) -> tuple[str, tuple]:
        """An address argument: the location and its address attributes (:meth:`element`)."""
        return self.in_span(span, lambda: self.address(code))

    def arg_order(self, span) -> str:
        a, b = span
        t = self.toks[a]
        if b - a != 1 or t.text not in ORDERS:
            raise self.err(t.pos, f"expected a memory order (memory_order_relaxed ...), got "
                                  f"{t.text!r}")
        return ORDERS[t.text]

    def expected_var(self, span) -> str | None:
        """``&e`` naming a local variable (a compare-exchange's expected value), or None."""
        a, b = span
        if b - a == 2 and self.toks[a].text == "&" and self.toks[a + 1].text in self.vars:
            return self.toks[a + 1].text
        return None

    def call(self, code, dest, statement):
        fn = self.next()
        name = fn.text
        spans = self.args()
        explicit = name.endswith("_explicit")
        base = name[:-len("_explicit")] if explicit else name
        extra = self.extra_call(fn, spans, code, statement)
        if extra is not None:
            return extra

        def args(n_plain, n_explicit):
            return self.scoped(fn, spans, n_explicit if explicit else n_plain, explicit)

        def order(sp, i):
            return self.arg_order(sp[i]) if explicit else "sc"

        if base == "atomic_thread_fence":
            if len(spans) != 1:
                raise self.err(fn.pos, f"{name} takes 1 argument(s), got {len(spans)}")
            o = self.arg_order(spans[0])
            if not statement:
                raise self.err(fn.pos, "atomic_thread_fence has no value")
            if o != "rlx":
                code.append(Instr("fence", order=o, scope="sys"))
            return 0
        if base == "atomic_load":
            sp, scope = args(1, 2)
            loc, aattrs = self.arg_loc(code, sp[0])
            o = order(sp, 1)
            if o not in ("rlx", "acq", "sc"):
                raise self.err(fn.pos, f"a load cannot have order {o}")
            reg = dest or self.temp()
            code.append(Instr("ld", access="atom", order=o, scope=scope, reg=reg, loc=loc,
                              attrs=aattrs))
            return reg
        if base == "atomic_store":
            sp, scope = args(2, 3)
            loc, aattrs = self.arg_loc(code, sp[0])
            v = self.sub_expr(code, sp[1])
            o = order(sp, 2)
            if o not in ("rlx", "rel", "sc"):
                raise self.err(fn.pos, f"a store cannot have order {o}")
            if not statement:
                raise self.err(fn.pos, "atomic_store has no value")
            code.append(self.store(loc, v, "atom", o, aattrs, scope))
            return 0
        if base.startswith("atomic_fetch_") and base[len("atomic_fetch_"):] in FETCH_OPS \
                or base == "atomic_exchange":
            sp, scope = args(2, 3)
            op = "xchg" if base == "atomic_exchange" else FETCH_OPS[base[len("atomic_fetch_"):]]
            loc, aattrs = self.arg_loc(code, sp[0])
            v = self.sub_expr(code, sp[1])
            o = order(sp, 2)
            reg = dest or self.temp()
            attrs = (() if isinstance(v, int) else (f"val={expr_text(v)}",)) + aattrs
            code.append(Instr("rmw", access="atom", order=o, scope=scope, op=op, reg=reg,
                              loc=loc, args=(v,) if isinstance(v, int) else (), attrs=attrs))
            return reg
        if base in ("atomic_compare_exchange_strong", "atomic_compare_exchange_weak"):
            sp, scope = args(3, 5)
            loc, aattrs = self.arg_loc(code, sp[0])
            var = self.expected_var(sp[1])
            exp_loc, exp_attrs = (None, ()) if var else self.arg_loc(code, sp[1])
            des = self.sub_expr(code, sp[2])
            o = order(sp, 3)
            # C11 7.17.7.4 forbids a release failure order; a failure performs only a load, so
            # such an order means its load part (release -> relaxed, acq_rel -> acquire), as
            # Dat3M reads the OPENCL suite's CT_wsq tests
            fo = {"rel": "rlx", "acq_rel": "acq"}.get(order(sp, 4), order(sp, 4))
            e = self.temp()
            old = self.temp()
            if var:                      # expected in a local variable: its value now
                code.append(self.assign(e, var))
            else:
                code.append(Instr("ld", access="plain", reg=e, loc=exp_loc, attrs=exp_attrs))
            attrs = [f"exp={e}"]
            if not isinstance(des, int):
                attrs.append(f"val={expr_text(des)}")
            code.append(Instr("cas", access="atom", order=o, fail_order=fo, scope=scope,
                              reg=old, loc=loc, args=(0, des if isinstance(des, int) else 0),
                              attrs=tuple(attrs) + aattrs))
            ok = self.new_label()
            code.append(Instr("branch", attrs=(f"cond={expr_text(('==', old, e))}",
                                               f"target={ok}")))
            if var:                      # failure: the value read goes into the variable
                code.append(self.assign(var, old))
            else:
                code.append(Instr("st", access="plain", loc=exp_loc,
                                  attrs=(f"val={old}",) + exp_attrs))
            code.append(Instr("label", attrs=(f"label={ok}",)))
            res = ("==", old, e)
            if dest:
                code.append(self.assign(dest, res))
                return dest
            return res
        raise self.err(fn.pos, f"unknown function {name!r}")


def parse_c(text: str, path: str = "<string>") -> Test:
    """Parse a test in the C dialect; raises :class:`ParseError` (``path:line:col: reason``)."""
    return CParser(text, path).parse()

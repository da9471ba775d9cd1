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

Calls: ``atomic_load[_explicit]``, ``atomic_store[_explicit]``, ``atomic_fetch_{add,sub,and,or,
xor}[_explicit]``, ``atomic_exchange[_explicit]``, ``atomic_compare_exchange_{strong,weak}
[_explicit]`` and ``atomic_thread_fence``. Expressions are lowered left to right: every memory
access in an expression becomes its own instruction into a fresh register ``_tN`` and the pure rest
becomes an ``assign`` (litmus/cfg.py). A compare-exchange follows C11 (7.17.7.4) as herd7 models
it: a plain read of ``*expected``, an atomic read of ``*obj``; when equal an rmw writing
``desired`` (success order), otherwise a read with the failure order and a plain write of the
value read into ``*expected``; its value is 1 on success, 0 on failure. The weak form is read as
the strong one (no spurious failure). Accesses are non-atomic unless made through an ``atomic_*``
call; the memory order names are C11's.
"""

from __future__ import annotations

import re

from .cfg import expr_text
from .condition import HERD, THREAD, ConditionParser
from .ir import Instr, Location, Test, Thread
from .lexer import ParseError, Source, Token, TokenCursor, parse_int, tokenize
from .scopes import Placement

ORDERS = {"memory_order_relaxed": "rlx", "memory_order_consume": "acq",
          "memory_order_acquire": "acq", "memory_order_release": "rel",
          "memory_order_acq_rel": "acq_rel", "memory_order_seq_cst": "sc"}
FETCH_OPS = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor"}
TYPE_WORDS = {"int", "atomic_int", "volatile", "const", "unsigned", "long", "char", "short",
              "_Atomic", "intptr_t", "atomic_bool", "bool", "atomic_long", "uint32_t",
              "int32_t", "atomic_uint"}

#: binary operator precedence (higher binds tighter)
PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7,
              ">": 7, ">=": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9}


class CSource(Source):
    """Source text of a C test: ``(*p)`` is a dereference in parentheses, not a comment."""

    DEREF = re.compile(r"\(\*(?=[A-Za-z_][A-Za-z0-9_]*\s*\))")

    def _strip_comments(self) -> str:
        original = self.text
        self.text = self.DEREF.sub("(\x00", original)
        try:
            clean = super()._strip_comments()
        finally:
            self.text = original
        return clean.replace("(\x00", "(*")


class _CParser(TokenCursor):
    def __init__(self, text: str, path: str):
        self.src = CSource(text, path)
        self.text = self.src.clean
        self.ntemp = 0
        self.nlabel = 0

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
            raise self.err(0, "empty file: expected a header 'C <name>'")
        if m.group(1) != "C":
            raise self.err(m.start(1), f"expected dialect word 'C', got {m.group(1)!r}")
        eol = self.text.find("\n", m.end())
        eol = len(self.text) if eol < 0 else eol
        name = self.text[m.end():eol].strip()
        if not name:
            raise self.err(m.end(), "missing test name after 'C'")
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
        while THREAD.match(self.peek().text) and self.peek(1).text == "(":
            t = self.next()
            tid = int(THREAD.match(t.text).group(1))
            if tid != len(threads):
                raise self.err(t.pos, f"expected thread P{len(threads)}, got {t.text}")
            code = self.thread(tid)
            threads.append(Thread(Placement(), tuple(code)))
            regsets[tid] = {i.reg for i in code if i.reg}
        if not threads:
            t = self.peek()
            raise self.err(t.pos, f"expected a thread 'P0 (...) {{ ... }}', got "
                                  f"{t.text or 'end of input'!r}")
        cp = ConditionParser(self.src, self.toks, self.k, regsets, self.locs, HERD)
        cond = cp.quantified()
        cp.end()
        return Test(name=name, locations=tuple(self.locs.values()), threads=tuple(threads),
                    condition=cond, doc=doc, dialect="C")

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
                raise self.err(n.pos, "register initial values are not supported in C tests")
            value = 0
            if self.peek().text == "=":
                self.next()
                value = parse_int(self.src, self.next(), "initial value")
            if n.text in self.locs:
                raise self.err(n.pos, f"location {n.text!r} declared twice")
            self.locs[n.text] = Location(n.text, value)
            if self.peek().text not in (";", "}"):
                raise self.err(self.peek().pos, f"expected ';' after the init of {n.text!r}, "
                                                f"got {self.peek().text!r}")
        self.next()

    def thread(self, tid: int) -> list[Instr]:
        self.expect("(")
        self.params: set[str] = set()
        while self.peek().text != ")":
            seen_type = False
            while self.peek().text in TYPE_WORDS or self.peek().text == "*":
                self.next()
                seen_type = True
            n = self.ident("a parameter name")
            if not seen_type:
                raise self.err(n.pos, f"parameter {n.text!r} has no type")
            self.params.add(n.text)
            if n.text not in self.locs:
                self.locs[n.text] = Location(n.text, 0)
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
            raise self.err(t.pos, f"'{t.text}' is not supported in C litmus tests "
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
        if t.kind == "id" and self.peek(1).text == "=" and self.peek(2).text != "=":
            n = self.next()
            if n.text in self.params:
                raise self.err(n.pos, f"cannot assign to parameter {n.text!r} (write *{n.text})")
            if n.text not in self.vars:
                raise self.err(n.pos, f"assignment to undeclared variable {n.text!r}")
            self.next()
            self.assign_to(n.text, code)
            self.expect(";", " after the assignment")
            return
        if t.text == "*" and self.peek(1).kind == "id" and self.peek(2).text == "=" \
                and self.peek(3).text != "=":
            self.next()
            loc = self.location(self.next())
            self.next()
            v = self.expr(code)
            code.append(self.store(loc, v, "plain", None))
            self.expect(";", " after the store")
            return
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

    @staticmethod
    def store(loc: str, v, access: str, order: str | None) -> Instr:
        if isinstance(v, int):
            return Instr("st", access=access, order=order, scope="sys" if order else None,
                         loc=loc, args=(v,))
        return Instr("st", access=access, order=order, scope="sys" if order else None, loc=loc,
                     attrs=(f"val={expr_text(v)}",))

    def location(self, t: Token) -> str:
        if t.kind != "id":
            raise self.err(t.pos, f"expected a location (a parameter), got {t.text!r}")
        if t.text not in self.params:
            raise self.err(t.pos, f"{t.text!r} is not a parameter of this thread")
        return t.text

    # -- expressions (accesses become instructions; the result is a pure expression) ------------
    def expr(self, code, minprec: int = 1, dest: str | None = None, statement: bool = False):
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
            right = self.expr(code, prec + 1)
            if isinstance(left, int) and isinstance(right, int):
                from .cfg import BINOPS
                left = BINOPS[op](left, right)
            else:
                left = (op, left, right)

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
        if t.text == "*":
            self.next()
            loc = self.location(self.next())
            reg = dest or self.temp()
            code.append(Instr("ld", access="plain", reg=reg, loc=loc))
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

    def sub_expr(self, code, span):
        """Parse the tokens of one argument as an expression."""
        save = self.k
        self.k = span[0]
        e = self.expr(code)
        if self.k != span[1]:
            raise self.err(self.peek().pos, f"unexpected {self.peek().text!r} in an argument")
        self.k = save
        return e

    def arg_loc(self, span) -> str:
        a, b = span
        if b - a == 2 and self.toks[a].text == "&":
            return self.location(self.toks[a + 1])
        if b - a != 1:
            raise self.err(self.toks[a].pos, "expected a location (a parameter) as argument")
        return self.location(self.toks[a])

    def arg_order(self, span) -> str:
        a, b = span
        t = self.toks[a]
        if b - a != 1 or t.text not in ORDERS:
            raise self.err(t.pos, f"expected a memory order (memory_order_relaxed ...), got "
                                  f"{t.text!r}")
        return ORDERS[t.text]

    def call(self, code, dest, statement):
        fn = self.next()
        name = fn.text
        spans = self.args()
        explicit = name.endswith("_explicit")
        base = name[:-len("_explicit")] if explicit else name

        def want(n):
            if len(spans) != n:
                raise self.err(fn.pos, f"{name} takes {n} argument(s), got {len(spans)}")

        def order(i):
            return self.arg_order(spans[i]) if explicit else "sc"

        if base == "atomic_thread_fence":
            want(1)
            o = self.arg_order(spans[0])
            if not statement:
                raise self.err(fn.pos, "atomic_thread_fence has no value")
            if o != "rlx":
                code.append(Instr("fence", order=o, scope="sys"))
            return 0
        if base == "atomic_load":
            want(2 if explicit else 1)
            loc = self.arg_loc(spans[0])
            o = order(1)
            if o not in ("rlx", "acq", "sc"):
                raise self.err(fn.pos, f"a load cannot have order {o}")
            reg = dest or self.temp()
            code.append(Instr("ld", access="atom", order=o, scope="sys", reg=reg, loc=loc))
            return reg
        if base == "atomic_store":
            want(3 if explicit else 2)
            loc = self.arg_loc(spans[0])
            v = self.sub_expr(code, spans[1])
            o = order(2)
            if o not in ("rlx", "rel", "sc"):
                raise self.err(fn.pos, f"a store cannot have order {o}")
            if not statement:
                raise self.err(fn.pos, "atomic_store has no value")
            code.append(self.store(loc, v, "atom", o))
            return 0
        if base.startswith("atomic_fetch_") and base[len("atomic_fetch_"):] in FETCH_OPS \
                or base == "atomic_exchange":
            want(3 if explicit else 2)
            op = "xchg" if base == "atomic_exchange" else FETCH_OPS[base[len("atomic_fetch_"):]]
            loc = self.arg_loc(spans[0])
            v = self.sub_expr(code, spans[1])
            o = order(2)
            reg = dest or self.temp()
            attrs = () if isinstance(v, int) else (f"val={expr_text(v)}",)
            code.append(Instr("rmw", access="atom", order=o, scope="sys", op=op, reg=reg, loc=loc,
                              args=(v,) if isinstance(v, int) else (), attrs=attrs))
            return reg
        if base in ("atomic_compare_exchange_strong", "atomic_compare_exchange_weak"):
            want(5 if explicit else 3)
            loc = self.arg_loc(spans[0])
            exp_loc = self.arg_loc(spans[1])
            des = self.sub_expr(code, spans[2])
            o = order(3)
            fo = order(4)
            if fo not in ("rlx", "acq", "sc"):
                raise self.err(fn.pos, f"a compare-exchange failure order cannot be {fo}")
            e = self.temp()
            old = self.temp()
            code.append(Instr("ld", access="plain", reg=e, loc=exp_loc))
            attrs = [f"exp={e}"]
            if not isinstance(des, int):
                attrs.append(f"val={expr_text(des)}")
            code.append(Instr("cas", access="atom", order=o, fail_order=fo, scope="sys", reg=old,
                              loc=loc, args=(0, des if isinstance(des, int) else 0),
                              attrs=tuple(attrs)))
            ok = self.new_label()
            code.append(Instr("branch", attrs=(f"cond={expr_text(('==', old, e))}",
                                               f"target={ok}")))
            code.append(Instr("st", access="plain", loc=exp_loc, attrs=(f"val={old}",)))
            code.append(Instr("label", attrs=(f"label={ok}",)))
            res = ("==", old, e)
            if dest:
                code.append(self.assign(dest, res))
                return dest
            return res
        raise self.err(fn.pos, f"unknown function {name!r}")


def parse_c(text: str, path: str = "<string>") -> Test:
    """Parse a test in the C dialect; raises :class:`ParseError` (``path:line:col: reason``)."""
    return _CParser(text, path).parse()

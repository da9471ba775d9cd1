"""The final condition of a litmus test, for every dialect (LITMUS.md "Condition").

``exists P``, ``~exists P`` or ``forall P`` where the proposition ``P`` combines atoms with
``/\\``, ``\\/``, ``~`` and parentheses (and ``true``/``false``). An atom compares an observable
with a value: a register of a thread (``P1:r0``, or ``1:r0``) or a location (``x``), with ``==``,
``=`` or ``!=``.

Dialects differ in a few spellings, declared per front end as a :class:`Spelling`: the Dat3M/herd
dialects (C, Vulkan) also write ``not``, ``[x]`` for a location, constants on either side
(``exists 0 == 0``) and comparisons of two registers of one thread (handed to the front end,
which turns them into an atom over a fresh register); AMDGPU's registers are ``rK``. Every
malformed condition is a :class:`~litmus.lexer.ParseError` at file:line:col.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .ir import And, Atom, Condition, Const, Location, Not, Or
from .lexer import ParseError, Source, Token, TokenCursor, parse_int

THREAD = re.compile(r"P([0-9]+)\Z")
QUANTIFIERS = ("exists", "~exists", "forall")


@dataclass(frozen=True)
class Spelling:
    """What one dialect accepts in its condition, and the examples its errors show."""

    atom_hint: str                      # e.g. "Pn:rK == v or x == v"
    thread_hint: str                    # what may stand before ':' ("Pn", "0 or P0")
    #: a register name check and how errors call such names (None: any identifier)
    register: Callable[[str], bool] | None = None
    register_hint: str = "a register"
    not_words: tuple[str, ...] = ("~",)
    #: Dat3M/herd comparisons: constants and ``[x]`` on either side, register == register
    comparisons: bool = False


#: the Dat3M/herd dialects (C, Vulkan)
HERD = Spelling(atom_hint="0:r1=1, P0:r1 == 1 or x=1", thread_hint="0 or P0",
                not_words=("~", "not"), comparisons=True)


def thread_number(t: Token) -> int | None:
    """The thread a token names before ':' (``P1`` or ``1``), or None."""
    if t.kind == "int" and int(t.text) >= 0:
        return int(t.text)
    m = THREAD.match(t.text)
    return int(m.group(1)) if m else None


def is_condition_start(toks: list[Token], k: int) -> bool:
    """Does a quantifier (``exists``, ``~exists``, ``forall``) start at token ``k``?"""
    t = toks[k]
    return t.text in ("exists", "forall") or \
        (t.text == "~" and k + 1 < len(toks) and toks[k + 1].text == "exists")


class ConditionParser(TokenCursor):
    """Parse a condition from token ``k`` of ``toks`` (from :func:`litmus.lexer.tokenize`).

    ``regs`` maps each thread to the registers it has; ``locs`` are the declared locations.
    ``regcmp(tid, a, op, b)`` (comparing dialects) turns ``Pn:a op Pn:b`` into an atom.
    ``pointers`` maps a thread to its pointer registers (C/OpenCL thread parameters: each holds
    a location's address, as in herd7 and Dat3M); an address equals no integer, so an atom
    comparing one with a constant is decided here (``==`` false, ``!=`` true)."""

    def __init__(self, src: Source, toks: list[Token], k: int, regs: dict[int, set[str]],
                 locs: dict[str, Location], spelling: Spelling, regcmp=None,
                 pointers: dict[int, set[str]] | None = None):
        self.src, self.toks, self.k, self.regs, self.locs = src, toks, k, regs, locs
        self.sp = spelling
        self.regcmp = regcmp
        self.pointers = pointers or {}

    def err(self, pos: int, reason: str) -> ParseError:
        return self.src.error(pos, reason)

    # -- the whole condition ---------------------------------------------------------------------
    def quantified(self) -> Condition:
        """``exists P`` / ``~exists P`` / ``forall P``."""
        t = self.peek()
        if is_condition_start(self.toks, self.k):
            q = "~exists" if t.text == "~" else t.text
            self.k += 2 if t.text == "~" else 1
        else:
            raise self.err(t.pos, f"expected a final condition (exists, ~exists or forall), "
                                  f"got {t.text or 'end of input'!r}")
        if self.peek().kind == "eof":
            raise self.err(self.peek().pos, f"expected a proposition after {q!r}")
        return Condition(q, self.prop())

    def end(self) -> None:
        """Nothing may follow the condition."""
        if self.peek().kind != "eof":
            raise self.err(self.peek().pos, f"unexpected {self.peek().text!r} after the final "
                                            "condition")

    # -- propositions ----------------------------------------------------------------------------
    def prop(self):
        args = [self.conj()]
        while self.peek().text == "\\/":
            self.next()
            args.append(self.conj())
        return args[0] if len(args) == 1 else Or(tuple(args))

    def conj(self):
        args = [self.unary()]
        while self.peek().text == "/\\":
            self.next()
            args.append(self.unary())
        return args[0] if len(args) == 1 else And(tuple(args))

    def unary(self):
        t = self.peek()
        if t.text in self.sp.not_words:
            self.next()
            with self.nest(self.src, "the final condition"):
                return Not(self.unary())
        if t.text == "(":
            self.next()
            with self.nest(self.src, "the final condition"):
                p = self.prop()
            c = self.next()
            if c.text != ")":
                raise self.err(c.pos if c.kind != "eof" else t.pos,
                               "unbalanced '(' in the final condition")
            return p
        if t.text in ("true", "false"):
            self.next()
            return Const(t.text == "true")
        return self.atom()

    # -- atoms -----------------------------------------------------------------------------------
    def location(self, t: Token) -> tuple[None, str]:
        name = t.text
        if self.sp.comparisons and self.peek().text == "[" and self.peek(2).text == "]" \
                and self.peek(1).kind == "int":          # an array element: y[1]
            self.k += 3
            name = f"{name}[{int(self.toks[self.k - 2].text)}]"
        if name not in self.locs:
            if self.sp.register is not None and self.sp.register(name):
                raise self.err(t.pos, f"register {name!r} needs a thread: write Pn:{name}")
            raise self.err(t.pos, f"the condition names undeclared location {name!r}")
        if self.locs[name].lds:
            raise self.err(t.pos, f"LDS location {name!r} is not observable in the condition")
        return None, name

    def operand(self):
        """A register ``(tid, name)``, a location ``(None, name)`` or (comparing dialects) an
        int, with its first token."""
        t = self.next()
        if t.kind == "eof":
            raise self.err(t.pos, f"expected an atom ({self.sp.atom_hint}) in the final condition")
        if self.peek().text == ":":
            tid = thread_number(t)
            if tid is None:
                raise self.err(t.pos, f"expected a thread ({self.sp.thread_hint}) before ':', "
                                      f"got {t.text!r}")
            self.next()
            r = self.next()
            if tid not in self.regs:
                raise self.err(t.pos, f"the condition names unknown thread P{tid}")
            if r.kind != "id" or (self.sp.register is not None and not self.sp.register(r.text)):
                raise self.err(r.pos, f"expected {self.sp.register_hint} after '{t.text}:', "
                                      f"got {r.text!r}")
            if r.text in self.pointers.get(tid, ()) and r.text not in self.regs[tid]:
                return (tid, r.text, "address"), t
            if r.text not in self.regs[tid]:
                raise self.err(r.pos, f"the condition names unknown register P{tid}:{r.text} "
                                      f"(P{tid} never writes it)")
            return (tid, r.text), t
        if t.kind == "id":
            return self.location(t), t
        if self.sp.comparisons and t.kind == "int":
            return int(t.text), t
        if self.sp.comparisons and t.text == "[":
            n = self.next()
            c = self.next()
            if n.kind != "id" or c.text != "]":
                raise self.err(t.pos, "expected [location] in the final condition")
            return self.location(n), t
        raise self.err(t.pos, f"expected an atom ({self.sp.atom_hint}), got {t.text!r}")

    def atom(self):
        left, lt = self.operand()
        op = self.next()
        if op.text not in ("=", "==", "!="):
            raise self.err(op.pos, f"expected '=', '==' or '!=' in the condition, got "
                                   f"{op.text or 'end of input'!r}")
        cmp = "!=" if op.text == "!=" else "=="
        if not self.sp.comparisons:
            value = parse_int(self.src, self.next(), "value in the condition")
            return Atom(left[0], left[1], cmp, value)
        right, rt = self.operand()
        if isinstance(left, int):
            left, right, lt, rt = right, left, rt, lt
        if isinstance(left, int):            # two constants (Dat3M's "exists 0==0")
            return Const((left == right) == (cmp == "=="))
        if len(left) == 3 or (isinstance(right, tuple) and len(right) == 3):   # an address
            if isinstance(right, int):
                return Const(cmp == "!=")
            raise self.err(rt.pos, "comparing a pointer register with another observable is "
                                   "not supported")
        if isinstance(right, int):
            return Atom(left[0], left[1], cmp, right)
        if self.regcmp is None or left[0] is None or right[0] != left[0]:
            raise self.err(rt.pos, "comparing two observables is supported only between two "
                                   "registers of one thread")
        return self.regcmp(left[0], left[1], cmp, right[1])

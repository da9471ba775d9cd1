"""The relational model language: parse a model file and compile it to a flat op array.

A model is data. Everything is a binary relation over the events of one candidate execution; a
*set* is its identity relation (so ``R ; rf`` restricts rf's domain to reads, and ``R & A`` is set
intersection). Syntax (our own, in the spirit of herd's cat)::

    # comment to end of line
    let NAME = EXPR                  definition
    fix NAME = EXPR                  least fixpoint: NAME may occur in EXPR (must be monotone)
    acyclic EXPR as NAME             checks: the candidate is inconsistent when one fails
    irreflexive EXPR as NAME
    empty EXPR as NAME
    flag empty|nonempty EXPR as NAME a flag (e.g. racy) raised when the condition holds

    EXPR, loosest first:  a | b   union;   a \\ b  difference;   a & b  intersection;
                          a ; b   sequence;  ~a  complement (univ \\ a);
                          postfix a+ a* a? a^-1 (closures, inverse);
                          [a] identity on dom(a);  dom(a) ran(a) prod(a, b) (dom(a) x dom(b));
                          id univ 0 and names (base relations/sets from the event builder,
                          dynamic ones from the search: rf co Rdef Rundef, or earlier lets).

:func:`compile_model` turns the statements into a :class:`Program`: ``ops`` is an ``int32[k, 4]``
array ``(opcode, dst, a, b)`` over numbered slots, evaluated by :mod:`oracle.engine` for every
candidate execution without recompiling anything (``prelude``: the ops that depend on static
relations only, run once per pre-execution; the per-candidate ops ordered by the checks' demand,
dead ones dropped, see :func:`_schedule`); the AST is kept for the pure-Python reference
evaluator (:mod:`oracle.reference`) and explanations.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .errors import OracleError

# --- opcodes (shared with engine.py) -------------------------------------------------------------
COPY, UNION, INTER, DIFF, SEQ, INV, PLUS, STAR, OPT, DOM, RAN, PROD, ZERO, ID, UNIV, \
    FIXSTART, FIXEND, ACYCLIC, IRREFL, EMPTY, FLAG_EMPTY, FLAG_NONEMPTY = range(22)
#: ``a ; b`` where the compiler knows ``b`` (SEQ_RD) or ``a`` (SEQ_LD) is a subset of id (a
#: restriction ``[S]``): a mask on the columns or rows instead of a relational product.
SEQ_RD, SEQ_LD = 22, 23

CHECK_KINDS = ("acyclic", "irreflexive", "empty")

#: Names the candidate search fills in for every candidate (slots 0..3, in this order).
DYNAMIC = ("rf", "co", "Rdef", "Rundef")

MODELS_DIR = os.path.join(os.path.dirname(__file__), "models")

_TOKEN = re.compile(r"\s*(?:(#[^\n]*)|(\^-1)|([A-Za-z_][A-Za-z0-9_\-']*)|(0)|(.))", re.S)


# --- AST -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    op: str                     # name, union, diff, inter, seq, compl, plus, star, opt, inv,
    args: tuple = ()            # restrict, dom, ran, prod, id, univ, zero
    name: str | None = None


@dataclass(frozen=True)
class Stmt:
    kind: str                   # let, fix, acyclic, irreflexive, empty, flag
    name: str
    expr: Node
    line: int
    negate: bool = False        # flag nonempty


@dataclass
class Program:
    """A compiled model: statements (AST) plus the flat op array and slot map."""

    name: str
    stmts: list[Stmt]
    ops: np.ndarray
    slots: dict[str, int]       # name -> slot (base names and lets)
    base: list[str]             # base names the event builder must provide, by slot
    checks: list[str]           # check index -> name
    flags: list[str]            # flag index -> name
    nslots: int = 0
    check_stmts: list[Stmt] = field(default_factory=list)
    prelude: np.ndarray | None = None   # ops over static slots only, run once per pre-execution


# --- parsing -------------------------------------------------------------------------------------
class _Lexer:
    def __init__(self, text: str, path: str):
        self.toks: list[tuple[str, int, int]] = []   # (token, line, col)
        self.path = path
        pos = 0
        line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        import bisect
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                break
            pos = m.end()
            if m.group(1) is not None:
                continue
            tok = m.group(2) or m.group(3) or m.group(4) or m.group(5)
            if tok is None or tok.isspace():
                continue
            start = m.start(2) if m.group(2) else m.start(3) if m.group(3) else \
                m.start(4) if m.group(4) else m.start(5)
            ln = bisect.bisect_right(line_starts, start)
            self.toks.append((tok, ln, start - line_starts[ln - 1] + 1))
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def where(self) -> tuple[int, int]:
        if self.i < len(self.toks):
            return self.toks[self.i][1], self.toks[self.i][2]
        return (self.toks[-1][1], self.toks[-1][2]) if self.toks else (1, 1)

    def error(self, reason: str) -> OracleError:
        ln, col = self.where()
        return OracleError(f"{self.path}:{ln}:{col}: {reason}")

    def take(self, expect: str | None = None) -> str:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of model, expected {expect or 'more'}")
        if expect is not None and tok != expect:
            raise self.error(f"expected {expect!r}, found {tok!r}")
        self.i += 1
        return tok


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-']*\Z")
KEYWORDS = {"let", "fix", "acyclic", "irreflexive", "empty", "flag", "as", "nonempty"}


def parse_model(text: str, path: str = "<model>") -> list[Stmt]:
    lx = _Lexer(text, path)
    stmts = []
    while lx.peek() is not None:
        ln, _ = lx.where()
        kw = lx.take()
        if kw in ("let", "fix"):
            name = lx.take()
            if not _NAME.match(name) or name in KEYWORDS:
                lx.i -= 1
                raise lx.error(f"expected a name after {kw!r}, found {name!r}")
            lx.take("=")
            stmts.append(Stmt(kw, name, _expr(lx), ln))
        elif kw in CHECK_KINDS:
            e = _expr(lx)
            lx.take("as")
            stmts.append(Stmt(kw, lx.take(), e, ln))
        elif kw == "flag":
            mode = lx.take()
            if mode not in ("empty", "nonempty"):
                lx.i -= 1
                raise lx.error(f"expected 'empty' or 'nonempty' after 'flag', found {mode!r}")
            e = _expr(lx)
            lx.take("as")
            stmts.append(Stmt("flag", lx.take(), e, ln, negate=(mode == "nonempty")))
        else:
            lx.i -= 1
            raise lx.error(f"expected let, fix, acyclic, irreflexive, empty or flag, found {kw!r}")
    return stmts


def _expr(lx) -> Node:          # union (loosest)
    n = _diff(lx)
    while lx.peek() == "|":
        lx.take()
        n = Node("union", (n, _diff(lx)))
    return n


def _diff(lx) -> Node:
    n = _inter(lx)
    while lx.peek() == "\\":
        lx.take()
        n = Node("diff", (n, _inter(lx)))
    return n


def _inter(lx) -> Node:
    n = _seq(lx)
    while lx.peek() == "&":
        lx.take()
        n = Node("inter", (n, _seq(lx)))
    return n


def _seq(lx) -> Node:
    n = _unary(lx)
    while lx.peek() == ";":
        lx.take()
        n = Node("seq", (n, _unary(lx)))
    return n


def _unary(lx) -> Node:
    if lx.peek() == "~":
        lx.take()
        return Node("compl", (_unary(lx),))
    n = _atom(lx)
    while lx.peek() in ("+", "*", "?", "^-1"):
        t = lx.take()
        n = Node({"+": "plus", "*": "star", "?": "opt", "^-1": "inv"}[t], (n,))
    return n


def _atom(lx) -> Node:
    t = lx.peek()
    if t == "(":
        lx.take()
        n = _expr(lx)
        lx.take(")")
        return n
    if t == "[":
        lx.take()
        n = _expr(lx)
        lx.take("]")
        return Node("restrict", (n,))
    if t == "0":
        lx.take()
        return Node("zero")
    if t in ("dom", "ran", "prod") and lx.i + 1 < len(lx.toks) and lx.toks[lx.i + 1][0] == "(":
        lx.take()
        lx.take("(")
        a = _expr(lx)
        if t == "prod":
            lx.take(",")
            b = _expr(lx)
            lx.take(")")
            return Node("prod", (a, b))
        lx.take(")")
        return Node(t, (a,))
    if t in ("id", "univ"):
        lx.take()
        return Node(t)
    if t is not None and _NAME.match(t) and t not in KEYWORDS:
        lx.take()
        return Node("name", name=t)
    raise lx.error(f"expected a relation, found {t!r}" if t else "expected a relation")


# --- compiling to ops -----------------------------------------------------------------------------
_UNARY = {"plus": PLUS, "star": STAR, "opt": OPT, "inv": INV, "dom": DOM, "ran": RAN,
          "restrict": DOM}
_BINARY = {"union": UNION, "diff": DIFF, "inter": INTER, "seq": SEQ, "prod": PROD}


def compile_model(stmts: list[Stmt], name: str = "<model>", path: str = "<model>") -> Program:
    slots: dict[str, int] = {n: i for i, n in enumerate(DYNAMIC)}
    base: list[str] = list(DYNAMIC)
    ops: list[tuple[int, int, int, int]] = []
    defined: set[str] = set(DYNAMIC)
    nslots = [len(DYNAMIC)]
    checks: list[str] = []
    flags: list[str] = []
    check_stmts: list[Stmt] = []
    const_slots: dict[str, int] = {}

    def new() -> int:
        nslots[0] += 1
        return nslots[0] - 1

    def ref(n: str, line: int) -> int:
        if n in slots:
            return slots[n]
        # an undefined name is a base relation/set the event builder must provide
        s = new()
        slots[n] = s
        base.append(n)
        defined.add(n)
        return s

    memo: dict[tuple[int, int, int], int] = {}

    def op(code: int, a: int = 0, b: int = 0) -> int:
        """Emit one pure op, or reuse the slot of an identical one (common subexpressions).
        Reuse across a fixpoint loop is sound: the loop's last iteration computed every
        intermediate slot from the final value of the loop variable."""
        key = (code, a, b)
        if key in memo:
            return memo[key]
        d = new()
        ops.append((code, d, a, b))
        memo[key] = d
        return d

    def emit(node: Node, line: int) -> int:
        if node.op == "name":
            return ref(node.name, line)
        if node.op in ("zero", "id", "univ"):
            return op({"zero": ZERO, "id": ID, "univ": UNIV}[node.op])
        if node.op == "compl":
            return op(DIFF, emit(Node("univ"), line), emit(node.args[0], line))
        if node.op in _UNARY:
            return op(_UNARY[node.op], emit(node.args[0], line))
        if node.op in _BINARY:
            a = emit(node.args[0], line)
            b = emit(node.args[1], line)
            if node.op == "prod":
                return op(PROD, op(DOM, a), op(DOM, b))
            return op(_BINARY[node.op], a, b)
        raise OracleError(f"{path}:{line}:1: unknown expression {node.op}")

    for st in stmts:
        if st.kind == "let":
            if st.name in slots and st.name in DYNAMIC:
                raise OracleError(f"{path}:{st.line}:1: cannot redefine {st.name!r}")
            s = emit(st.expr, st.line)
            slots[st.name] = s
        elif st.kind == "fix":
            if st.name in slots:
                raise OracleError(f"{path}:{st.line}:1: {st.name!r} is already defined")
            target = new()
            slots[st.name] = target
            start = len(ops)
            ops.append((FIXSTART, target, 0, 0))
            body = emit(st.expr, st.line)
            ops.append((FIXEND, target, body, start))
        else:
            s = emit(st.expr, st.line)
            if st.kind == "flag":
                ops.append((FLAG_NONEMPTY if st.negate else FLAG_EMPTY, s, len(flags), 0))
                flags.append(st.name)
            else:
                ops.append(({"acyclic": ACYCLIC, "irreflexive": IRREFL, "empty": EMPTY}[st.kind],
                            s, len(checks), 0))
                checks.append(st.name)
                check_stmts.append(st)
    prelude, main = _specialize(*_schedule(*_hoist(_licm(ops))))
    arr = np.array(main, dtype=np.int32).reshape(-1, 4)
    pre = np.array(prelude, dtype=np.int32).reshape(-1, 4)
    return Program(name, stmts, arr, slots, base, checks, flags, nslots[0], check_stmts, pre)


def _licm(ops):
    """Move the ops of a fixpoint body that do not depend on the loop variable in front of the
    loop, so each iteration recomputes only what changes."""
    out = []
    i = 0
    while i < len(ops):
        code, d, a, b = ops[i]
        if code != FIXSTART:
            out.append(ops[i])
            i += 1
            continue
        end = next(j for j in range(i + 1, len(ops)) if ops[j][0] == FIXEND and ops[j][1] == d)
        variant = {d}
        inv, body = [], []
        for (c2, d2, a2, b2) in ops[i + 1:end]:
            reads = () if c2 in (ZERO, ID, UNIV) else \
                (a2, b2) if c2 in (UNION, INTER, DIFF, SEQ, PROD) else (a2,)
            if any(x in variant for x in reads):
                variant.add(d2)
                body.append((c2, d2, a2, b2))
            else:
                inv.append((c2, d2, a2, b2))
        out.extend(inv)
        start = len(out)
        out.append((FIXSTART, d, 0, 0))
        out.extend(body)
        fe = ops[end]
        out.append((FIXEND, fe[1], fe[2], start))
        i = end + 1
    return out


def _hoist(ops):
    """Split ops into a *prelude* (inputs all static: base relations and constants, outside any
    fixpoint loop), run once per pre-execution, and the per-candidate rest. Jump targets of
    fixpoint loops are renumbered for the shorter array."""
    dynamic = set(range(len(DYNAMIC)))
    prelude, main = [], []
    in_loop = 0
    remap = {}
    for idx, (code, d, a, b) in enumerate(ops):
        if code == FIXSTART:
            in_loop += 1
            remap[idx] = len(main)
            main.append((code, d, a, b))
            dynamic.add(d)
            continue
        if code == FIXEND:
            in_loop -= 1
            main.append((code, d, a, remap[b]))
            dynamic.add(d)
            continue
        if code in (ACYCLIC, IRREFL, EMPTY, FLAG_EMPTY, FLAG_NONEMPTY):
            main.append((code, d, a, b))
            continue
        inputs = {ZERO: (), ID: (), UNIV: ()}.get(code)
        if inputs is None:
            inputs = (a, b) if code in (UNION, INTER, DIFF, SEQ, PROD) else (a,)
        if in_loop or any(x in dynamic for x in inputs):
            dynamic.add(d)
            main.append((code, d, a, b))
        else:
            prelude.append((code, d, a, b))
    return prelude, main


def _reads(op):
    """The slots an op ``(code, dst, a, b)`` reads (a check or flag reads its dst column)."""
    code, d, a, b = op
    if code in (ACYCLIC, IRREFL, EMPTY, FLAG_EMPTY, FLAG_NONEMPTY):
        return (d,)
    if code in (ZERO, ID, UNIV, FIXSTART):
        return ()
    if code in (UNION, INTER, DIFF, SEQ, PROD):
        return (a, b)
    return (a,)


def _schedule(prelude, main):
    """Order the per-candidate ops by demand and drop dead ones. The checks and flags keep their
    order; in front of each goes what it needs that is not computed yet (in the original order, a
    fixpoint loop as one unit), so a candidate that fails a check never computes what only later
    checks need (e.g. r1..r4 when may-see fails). Ops that no check or flag needs, and prelude ops
    that nothing left needs, are dropped."""
    units = []                                   # (first, last) index ranges of main
    i = 0
    while i < len(main):
        if main[i][0] == FIXSTART:
            end = next(j for j in range(i + 1, len(main))
                       if main[j][0] == FIXEND and main[j][3] == i)
            units.append((i, end))
            i = end + 1
        else:
            units.append((i, i))
            i += 1
    producer = {}                                # slot -> unit writing it
    reads = []
    sinks = (ACYCLIC, IRREFL, EMPTY, FLAG_EMPTY, FLAG_NONEMPTY)
    for u, (lo, hi) in enumerate(units):
        written = {main[k][1] for k in range(lo, hi + 1) if main[k][0] not in sinks}
        for x in written:
            producer[x] = u
        reads.append({x for k in range(lo, hi + 1) for x in _reads(main[k]) if x not in written})
    done: set[int] = set()
    order: list[int] = []

    def need(u, acc):
        stack = [u]
        while stack:
            v = stack.pop()
            if v in acc or v in done:
                continue
            acc.add(v)
            stack.extend(producer[x] for x in reads[v] if x in producer)

    for u, (lo, hi) in enumerate(units):
        if main[lo][0] in sinks:
            acc: set[int] = set()
            need(u, acc)
            order.extend(sorted(acc))
            done |= acc
    out = []
    for u in order:
        lo, hi = units[u]
        start = len(out)
        for k in range(lo, hi + 1):
            code, d, a, b = main[k]
            out.append((code, d, a, start) if code == FIXEND else (code, d, a, b))
    # prelude: keep what the per-candidate ops (or other kept prelude ops) read
    wanted = {x for op in out for x in _reads(op)}
    keep = []
    for op in reversed(prelude):
        if op[1] in wanted:
            keep.append(op)
            wanted.update(_reads(op))
    return keep[::-1], out


def _specialize(prelude, main):
    """Turn ``a ; b`` into SEQ_RD / SEQ_LD where ``b`` / ``a`` is known to be a subset of id:
    the result of dom, ran, id or 0, or built from such by &, \\ (left operand), |, ;, + and
    ^-1. (Base sets are identity relations too, but the compiler cannot tell them from base
    relations.) Runs last: the other passes only know the opcodes of the language."""
    diag: set[int] = set()
    out = []
    for ops in (prelude, main):
        new = []
        for code, d, a, b in ops:
            if code == SEQ and b in diag:
                code = SEQ_RD
            elif code == SEQ and a in diag:
                code = SEQ_LD
            if code in (DOM, RAN, ID, ZERO) or \
                    (code == INTER and (a in diag or b in diag)) or \
                    (code == DIFF and a in diag) or \
                    (code in (UNION, SEQ_RD, SEQ_LD) and a in diag and b in diag) or \
                    (code in (PLUS, INV, COPY) and a in diag):
                diag.add(d)
            new.append((code, d, a, b))
        out.append(new)
    return out[0], out[1]


@lru_cache(maxsize=None)
def load_model(name: str) -> Program:
    """Load ``oracle/models/NAME`` (or a path to a model file), parse and compile it once."""
    path = name if os.sep in name or os.path.exists(name) and os.path.isfile(name) \
        else os.path.join(MODELS_DIR, name, name + ".model")
    if not os.path.isfile(path):
        known = sorted(f for f in os.listdir(MODELS_DIR)
                       if os.path.isfile(os.path.join(MODELS_DIR, f, f + ".model")))
        raise OracleError(f"unknown model {name!r} (available: {', '.join(known)})")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return compile_model(parse_model(text, path), os.path.basename(path), path)

"""The relational model language: parse a model file and compile it to a flat op array.

A model is data. Everything is a binary relation over the events of one candidate execution; a
*set* is its identity relation (so ``R ; rf`` restricts rf's domain to reads, and ``R & A`` is set
intersection). Syntax (our own, in the spirit of herd's cat)::

    # comment to end of line
    include "FILE"                   the statements of another model file, in place
    let NAME = EXPR                  definition
    let NAME(P1, P2, ...) = EXPR     parameterised definition, used as NAME(E1, E2, ...)
    fix NAME = EXPR                  least fixpoint: NAME may occur in EXPR (must be monotone)
    acyclic EXPR as NAME             checks: the candidate is inconsistent when one fails
    irreflexive EXPR as NAME
    empty EXPR as NAME
    flag empty|nonempty EXPR as NAME a flag (e.g. racy) raised when the condition holds
    allow PROPERTY                   a declared property of the model, for the event builder
                                     (PROPERTIES: ``thin-air``, ``failed-cas-write``)

    EXPR, loosest first:  a | b   union;   a \\ b  difference;   a & b  intersection;
                          a ; b   sequence;  ~a  complement (univ \\ a);
                          postfix a+ a* a? a^-1 (closures, inverse);
                          [a] identity on dom(a);  dom(a) ran(a) prod(a, b) (dom(a) x dom(b));
                          id univ 0 and names (base relations/sets from the event builder,
                          dynamic ones from the search: rf co Rdef Rundef, or earlier lets).

``include`` looks for FILE next to the including file, then in the shared library directory
``oracle/models/`` (where ``prelude.model`` holds definitions several models use); a file that
includes itself, directly or not, or a file that is not there is an error at the ``include``.
A parameterised definition is expanded where it is called, at compile time (its parameters are
replaced by the argument expressions; hash-consing then shares what the expansions have in
common); its body sees the parameters and the names defined before it.

:func:`compile_model` turns the statements into a :class:`Program`: ``ops`` is an ``int32[k, 4]``
array ``(opcode, dst, a, b)`` over numbered slots, evaluated by :mod:`oracle.engine` for every
candidate execution without recompiling anything (``prelude``: the ops that depend on static
relations only, run once per pre-execution; the per-candidate ops ordered by the checks' demand,
dead ones dropped, see :func:`_schedule`); the AST is kept for explanations
(:mod:`oracle.explanation`, which reads every node's value from its slot: ``node_slots``) and
the pure-Python reference evaluator of the tests (``tests/reference.py``).
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

_TOKEN = re.compile(r"\s*(?:(#[^\n]*)|(\^-1)|([A-Za-z_][A-Za-z0-9_\-']*)|(0)|(\"[^\"\n]*\")|(.))",
                    re.S)


# --- AST -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    op: str                     # name, union, diff, inter, seq, compl, plus, star, opt, inv,
    args: tuple = ()            # restrict, dom, ran, prod, id, univ, zero, call (name: callee)
    name: str | None = None
    #: (path, line, col) of the node's first token, for errors; not part of its value
    at: tuple | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Stmt:
    kind: str                   # let, fix, acyclic, irreflexive, empty, flag
    name: str
    expr: Node
    line: int
    negate: bool = False        # flag nonempty
    params: tuple = ()          # a parameterised let: its parameter names
    path: str = "<model>"       # the file the statement comes from (includes keep their own)
    col: int = 1

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


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
    base_at: dict = field(default_factory=dict)   # base name -> file:line:col of its first use
    #: id of each AST node of ``stmts`` -> the slot holding its value (after evaluation, for the
    #: nodes the checks need up to the one that failed): what explanations decompose
    node_slots: dict = field(default_factory=dict)
    allow: frozenset = frozenset()      # declared properties (``allow``), see PROPERTIES
    #: per check: True when it can fail on a partial candidate (:func:`monotonicity`); the search
    #: runs those checks (``prefix_ops``: they and what they need, in order) after every choice
    monotone: tuple = ()
    prefix_ops: np.ndarray | None = None
    #: the checks ``empty Rdef \ X`` whose ``X`` only grows with rf and Rdef and does not depend
    #: on co or Rundef (:func:`upper_checks`), and ``upper_ops``: they and what they need, the
    #: check's difference reading slot ``Rundef`` in place of ``Rdef`` (the search evaluates them
    #: on an over-approximation of every completion of a partial execution, the reads it has
    #: given a value in ``Rundef``)
    upper: tuple = ()
    upper_ops: np.ndarray | None = None


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
            g = next((k for k in range(2, 7) if m.group(k) is not None), None)
            if g is None or m.group(g).isspace():
                continue
            tok, start = m.group(g), m.start(g)
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

    def at(self) -> tuple:
        return (self.path, *self.where())

    def next_is(self, tok: str) -> bool:
        return self.i + 1 < len(self.toks) and self.toks[self.i + 1][0] == tok

    def take(self, expect: str | None = None) -> str:
        tok = self.peek()
        if tok is None:
            raise self.error(f"unexpected end of model, expected {expect or 'more'}")
        if expect is not None and tok != expect:
            raise self.error(f"expected {expect!r}, found {tok!r}")
        self.i += 1
        return tok


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-']*\Z")
KEYWORDS = {"let", "fix", "acyclic", "irreflexive", "empty", "flag", "as", "nonempty", "include",
            "allow"}
#: names with a meaning of their own in expressions: not usable as parameter names
BUILTINS = {"dom", "ran", "prod", "id", "univ"}

#: Properties a model may declare with ``allow``, read by the event builders.
PROPERTIES = {
    # The model has no no-thin-air axiom: a value that flows around a cycle of rf and data
    # dependencies is not constrained by it, so the builder enumerates such read values over the
    # program's constants and the condition's constants (litmus/cfg.py: value_domains).
    "thin-air": "read values out of thin air",
    # A failed compare-and-swap writes back the value it read (the builder gives it a write
    # event; Tile IR's reading of atomic_cas, oracle/models/tileir).
    "failed-cas-write": "a failed cas writes the value it read",
}


def parse_model(text: str, path: str = "<model>", _including: tuple = ()) -> list[Stmt]:
    """The statements of a model file, with every ``include`` replaced by the included file's
    statements (see the module docstring for where files are looked up)."""
    lx = _Lexer(text, path)
    stmts = []
    while lx.peek() is not None:
        ln, col = lx.where()
        kw = lx.take()
        if kw == "include":
            stmts.extend(_include(lx, path, _including))
        elif kw in ("let", "fix"):
            name = lx.take()
            if not _NAME.match(name) or name in KEYWORDS:
                lx.i -= 1
                raise lx.error(f"expected a name after {kw!r}, found {name!r}")
            params = _params(lx, name) if kw == "let" and lx.peek() == "(" else ()
            lx.take("=")
            stmts.append(Stmt(kw, name, _expr(lx), ln, params=params, path=path, col=col))
        elif kw in CHECK_KINDS:
            e = _expr(lx)
            lx.take("as")
            stmts.append(Stmt(kw, lx.take(), e, ln, path=path, col=col))
        elif kw == "allow":
            name = lx.take()
            if name not in PROPERTIES:
                lx.i -= 1
                raise lx.error(f"unknown property {name!r} after 'allow' (known: "
                               f"{', '.join(sorted(PROPERTIES))})")
            stmts.append(Stmt("allow", name, Node("zero"), ln, path=path, col=col))
        elif kw == "flag":
            mode = lx.take()
            if mode not in ("empty", "nonempty"):
                lx.i -= 1
                raise lx.error(f"expected 'empty' or 'nonempty' after 'flag', found {mode!r}")
            e = _expr(lx)
            lx.take("as")
            stmts.append(Stmt("flag", lx.take(), e, ln, negate=(mode == "nonempty"), path=path,
                              col=col))
        else:
            lx.i -= 1
            raise lx.error(f"expected include, let, fix, acyclic, irreflexive, empty, flag or allow, "
                           f"found {kw!r}")
    return stmts


def _params(lx, name: str) -> tuple:
    """``(P1, P2, ...)`` after ``let NAME``: distinct names, at least one."""
    lx.take("(")
    params: list[str] = []
    while True:
        p = lx.peek()
        if p is None or not _NAME.match(p) or p in KEYWORDS or p in BUILTINS:
            raise lx.error(f"expected a parameter name of {name!r}, found {p!r}" if p else
                           f"expected a parameter name of {name!r}")
        if p in params:
            raise lx.error(f"parameter {p!r} of {name!r} is named twice")
        params.append(lx.take())
        if lx.peek() != ",":
            break
        lx.take(",")
    lx.take(")")
    return tuple(params)


def _include(lx, path: str, including: tuple) -> list[Stmt]:
    """The statements of the file named after ``include`` (the lexer is past the keyword)."""
    where = lx.error
    tok = lx.peek()
    if tok is None or not (tok.startswith('"') and tok.endswith('"') and len(tok) >= 2):
        raise where(f"expected a file name in double quotes after 'include', found {tok!r}"
                    if tok else "expected a file name in double quotes after 'include'")
    name = tok[1:-1]
    here = os.path.dirname(os.path.abspath(path)) if path != "<model>" else None
    dirs = [d for d in (here, MODELS_DIR) if d is not None]
    found = next((os.path.join(d, name) for d in dirs if name and
                  os.path.isfile(os.path.join(d, name))), None)
    if found is None:
        raise where(f"included file {name!r} not found (looked in "
                    f"{', '.join(dict.fromkeys(dirs))})")
    real = os.path.realpath(found)
    chain = including + (os.path.realpath(path),) if path != "<model>" else including
    if real in chain:
        cycle = " -> ".join(os.path.basename(p) for p in chain[chain.index(real):] + (real,))
        raise where(f"include cycle: {cycle}")
    lx.take()
    try:
        with open(found, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise where(f"cannot read included file {found}: {e}") from None
    return parse_model(text, found, chain)


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
        at = lx.at()
        lx.take()
        if lx.peek() != "(":
            return Node("name", name=t, at=at)
        lx.take("(")                        # a call of a parameterised definition
        args = [_expr(lx)]
        while lx.peek() == ",":
            lx.take()
            args.append(_expr(lx))
        lx.take(")")
        return Node("call", tuple(args), name=t, at=at)
    raise lx.error(f"expected a relation, found {t!r}" if t else "expected a relation")


# --- compiling to ops -----------------------------------------------------------------------------
_UNARY = {"plus": PLUS, "star": STAR, "opt": OPT, "inv": INV, "dom": DOM, "ran": RAN,
          "restrict": DOM}
_BINARY = {"union": UNION, "diff": DIFF, "inter": INTER, "seq": SEQ, "prod": PROD}


def _err(at, default: str, reason: str) -> OracleError:
    where = f"{at[0]}:{at[1]}:{at[2]}" if at else default
    return OracleError(f"{where}: {reason}")


def expand(stmts: list[Stmt]) -> list[Stmt]:
    """The statements with every call of a parameterised definition replaced by its body (the
    parameters bound to the argument expressions) and the parameterised definitions dropped.

    A body sees its parameters and the names defined before it: a name it uses that is defined
    (again) between the definition and a call would make the call mean something else than the
    definition says, and is an error, as are calls with the wrong number of arguments, calls of
    names that take no parameters, and parameterised definitions used without arguments."""
    funcs: dict[str, tuple[Stmt, dict]] = {}
    version: dict[str, int] = {}

    def free(node: Node, bound: tuple, acc: set) -> set:
        """The names a body uses but does not bind, called definitions included."""
        if (node.op == "name" and node.name not in bound) or node.op == "call":
            acc.add(node.name)
        for x in node.args:
            free(x, bound, acc)
        return acc

    def sub(node: Node, env: dict, st: Stmt) -> Node:
        if node.op == "name":
            if node.name in env:
                return env[node.name]
            if node.name in funcs:
                f = funcs[node.name][0]
                raise _err(node.at, st.where, f"{node.name!r} takes {len(f.params)} "
                           f"argument(s): call it as {node.name}({', '.join(f.params)})")
            return node
        args = tuple(sub(x, env, st) for x in node.args)
        if node.op != "call":
            return Node(node.op, args, node.name, node.at)
        hit = funcs.get(node.name)
        if hit is None and node.name == st.name and st.params:
            raise _err(node.at, st.where, f"{node.name!r} calls itself: a parameterised "
                       f"definition cannot be recursive (use fix)")
        if hit is None:
            raise _err(node.at, st.where, f"{node.name!r} is not a parameterised definition "
                       f"(define it with 'let {node.name}(...) = ...' before calling it)")
        f, captured = hit
        if len(args) != len(f.params):
            raise _err(node.at, st.where, f"{node.name!r} takes {len(f.params)} argument(s) "
                       f"({', '.join(f.params)}), given {len(args)}")
        for x, v in captured.items():
            if version.get(x, 0) != v:
                raise _err(node.at, st.where, f"{node.name!r} (defined at {f.where}) uses "
                           f"{x!r}, which is defined again after it")
        return sub(f.expr, dict(zip(f.params, args)), f)

    out = []
    for st in stmts:
        if st.params:
            if st.name in DYNAMIC:
                raise OracleError(f"{st.where}: cannot redefine {st.name!r}")
            # check the body now (calls, arities), whatever the arguments will be; the
            # definition is not visible in its own body
            funcs.pop(st.name, None)
            sub(st.expr, {p: Node("name", name=p) for p in st.params}, st)
            body_names = free(st.expr, st.params, set())
            funcs[st.name] = (st, {x: version.get(x, 0) for x in body_names})
            version[st.name] = version.get(st.name, 0) + 1
            continue
        e = sub(st.expr, {}, st)
        out.append(Stmt(st.kind, st.name, e, st.line, st.negate, (), st.path, st.col))
        if st.kind in ("let", "fix"):
            funcs.pop(st.name, None)
            version[st.name] = version.get(st.name, 0) + 1
    return out


def compile_model(stmts: list[Stmt], name: str = "<model>", path: str = "<model>") -> Program:
    stmts = expand(stmts)
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

    base_at: dict[str, str] = {}

    def ref(n: str, where: str) -> int:
        if n in slots:
            return slots[n]
        # an undefined name is a base relation/set the event builder must provide
        s = new()
        slots[n] = s
        base.append(n)
        base_at[n] = where
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

    def const(code: int) -> int | None:
        """The slot of constant 0/id/univ if it was emitted already."""
        return memo.get((code, 0, 0))

    def fold(code: int, a: int, b: int) -> int | None:
        """Identities with the constants 0, id and univ (what parameterised definitions leave
        when an argument is one of them): the slot that the op would equal, or None."""
        zero, ident, univ = const(ZERO), const(ID), const(UNIV)
        if code == UNION:
            return b if a == zero else a if b == zero else None
        if code == INTER:
            if zero is not None and zero in (a, b):
                return zero
            return b if a == univ else a if b == univ else None
        if code == SEQ:
            if zero is not None and zero in (a, b):
                return zero
            return b if a == ident else a if b == ident else None
        if code == DIFF:
            return a if b == zero else None
        if code == DOM and a == univ:
            return op(ID)
        return None

    node_slots: dict[int, int] = {}

    def emit(node: Node, line: int) -> int:
        s = _emit(node, line)
        node_slots[id(node)] = s
        return s

    def _emit(node: Node, line: int) -> int:
        if node.op == "name":
            return ref(node.name, f"{node.at[0]}:{node.at[1]}:{node.at[2]}" if node.at
                       else f"{path}:{line}:1")
        if node.op in ("zero", "id", "univ"):
            return op({"zero": ZERO, "id": ID, "univ": UNIV}[node.op])
        if node.op == "compl":
            return op(DIFF, emit(Node("univ"), line), emit(node.args[0], line))
        if node.op in _UNARY:
            a = emit(node.args[0], line)
            hit = fold(_UNARY[node.op], a, 0)
            return hit if hit is not None else op(_UNARY[node.op], a)
        if node.op in _BINARY:
            a = emit(node.args[0], line)
            b = emit(node.args[1], line)
            if node.op == "prod":
                return op(PROD, op(DOM, a), op(DOM, b))
            hit = fold(_BINARY[node.op], a, b)
            return hit if hit is not None else op(_BINARY[node.op], a, b)
        raise _err(node.at, f"{path}:{line}:1", f"unknown expression {node.op}")

    allow = frozenset(st.name for st in stmts if st.kind == "allow")
    for st in stmts:
        if st.kind == "allow":
            continue
        if st.kind == "let":
            if st.name in slots and st.name in DYNAMIC:
                raise OracleError(f"{st.where}: cannot redefine {st.name!r}")
            s = emit(st.expr, st.line)
            slots[st.name] = s
        elif st.kind == "fix":
            if st.name in slots:
                raise OracleError(f"{st.where}: {st.name!r} is already defined")
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
    mono = monotonicity(prelude, main, len(checks))
    prefix = np.array(_prefix_ops(main, mono), dtype=np.int32).reshape(-1, 4)
    upper = upper_checks(prelude, main, len(checks), mono)
    uops = _prefix_ops(main, upper)
    for k, (code, d, a, b) in enumerate(uops):
        if code == DIFF and a == _RDEF and any(o[0] == EMPTY and o[1] == d and upper[o[2]]
                                               for o in uops):
            uops[k] = (code, d, _RUNDEF, b)
    return Program(name, stmts, arr, slots, base, checks, flags, nslots[0], check_stmts, pre,
                   base_at, node_slots, allow, tuple(mono), prefix, tuple(upper),
                   np.array(uops, dtype=np.int32).reshape(-1, 4))


# --- monotonicity: which checks can fail on a partial candidate ----------------------------------
#
# The search builds a candidate one choice at a time (a read's source, a write's place in co), so
# the dynamic relations only grow: rf, co, Rdef and Rundef of a partial candidate are subsets of
# those of every candidate extending it. A relation computed from them by unions, intersections,
# sequences, closures, inverses, dom/ran/prod, and differences whose right side does not grow, is
# then a subset of its value in every extension too ("up"); a check of such a relation (acyclic,
# irreflexive, empty) that fails on the partial candidate fails on every extension, so the search
# may abandon it. A difference with a growing right side (``R \ ran(lo)``, ``~hb``) shrinks
# ("down") and mixing both directions gives no guarantee: such checks run on complete candidates
# only (the AMDGPU read-value rules, Vulkan's immediate-co release sequences).
CONST, UP, DOWN, MIXED = 0, 1, 2, 3


def _join(x: int, y: int) -> int:
    return x | y


def _flip(x: int) -> int:
    return {CONST: CONST, UP: DOWN, DOWN: UP, MIXED: MIXED}[x]


def monotonicity(prelude, main, nchecks: int) -> list[bool]:
    """Per check (by index): does its relation only grow as the dynamic slots grow (or never
    change)?"""
    out, _ = _directions(prelude, main, nchecks, range(len(DYNAMIC)))
    return out


_RF, _CO, _RDEF, _RUNDEF = range(4)          # the slots of DYNAMIC


def upper_checks(prelude, main, nchecks: int, mono: list[bool]) -> list[bool]:
    """Per check: is it ``empty Rdef \\ X`` (not already a prefix check) with ``X`` growing with
    rf and Rdef (or constant) and independent of co and Rundef?

    Such a check can fail on a partial execution too, evaluated on its *upper graph*: the rf
    edges chosen so far plus every candidate source of every read not yet given one, those reads
    in Rdef. Every completion's rf and Rdef are subsets of the upper graph's, so its ``X`` is a
    subset of the upper ``X``; a read given a value so far that is outside the upper ``X`` is
    outside every completion's ``X``, and the check fails on each of them."""
    _, rd = _directions(prelude, main, nchecks, (_RF, _RDEF))
    _, cu = _directions(prelude, main, nchecks, (_CO, _RUNDEF))
    writer = {d: (code, a, b) for code, d, a, b in main
              if code not in (ACYCLIC, IRREFL, EMPTY, FLAG_EMPTY, FLAG_NONEMPTY)}
    out = [False] * nchecks
    for code, d, a, b in main:
        if code != EMPTY or mono[a] or d not in writer:
            continue
        wc, x, y = writer[d]
        if wc == DIFF and x == _RDEF and rd.get(y, CONST) in (CONST, UP) and \
                cu.get(y, CONST) == CONST:
            out[a] = True
    return out


def _directions(prelude, main, nchecks: int, dynamic) -> tuple[list[bool], dict]:
    """How every slot changes as the ``dynamic`` slots grow (the others held fixed): CONST, UP,
    DOWN or MIXED per slot, and per check whether its relation only grows (or never changes).
    Fixpoint loops are iterated until their variable's direction is stable."""
    mono = {s: (UP if s in dynamic else CONST) for s in range(len(DYNAMIC))}
    for code, d, a, b in prelude:
        mono[d] = CONST

    def run(lo, hi):
        pc = lo
        while pc < hi:
            code, d, a, b = main[pc]
            if code == FIXSTART:
                end = next(j for j in range(pc + 1, len(main))
                           if main[j][0] == FIXEND and main[j][3] == pc)
                mono[d] = CONST
                while True:
                    before = mono[d]
                    run(pc + 1, end)
                    mono[d] = _join(before, mono.get(main[end][2], CONST))
                    if mono[d] == before:
                        break
                pc = end + 1
                continue
            if code in (UNION, INTER, SEQ, SEQ_RD, SEQ_LD, PROD):
                mono[d] = _join(mono.get(a, CONST), mono.get(b, CONST))
            elif code == DIFF:
                mono[d] = _join(mono.get(a, CONST), _flip(mono.get(b, CONST)))
            elif code in (ZERO, ID, UNIV):
                mono[d] = CONST
            elif code in (INV, PLUS, STAR, OPT, DOM, RAN, COPY):
                mono[d] = mono.get(a, CONST)
            elif code in (ACYCLIC, IRREFL, EMPTY):
                out[a] = mono.get(d, CONST) in (CONST, UP)
            pc += 1

    out = [False] * nchecks
    run(0, len(main))
    return out, mono


def _prefix_ops(main, mono: list[bool]) -> list:
    """The ops of the checks that can fail on a partial candidate (``mono``) and of what they
    need, in the order of ``main`` (flags and the other checks dropped)."""
    units = []
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
    producer = {}
    sinks = (ACYCLIC, IRREFL, EMPTY, FLAG_EMPTY, FLAG_NONEMPTY)
    for u, (lo, hi) in enumerate(units):
        for k in range(lo, hi + 1):
            if main[k][0] not in sinks:
                producer[main[k][1]] = u
    keep: set[int] = set()
    stack = [u for u, (lo, hi) in enumerate(units)
             if main[lo][0] in (ACYCLIC, IRREFL, EMPTY) and mono[main[lo][2]]]
    while stack:
        u = stack.pop()
        if u in keep:
            continue
        keep.add(u)
        lo, hi = units[u]
        written = {main[k][1] for k in range(lo, hi + 1) if main[k][0] not in sinks}
        for k in range(lo, hi + 1):
            for x in _reads(main[k]):
                if x not in written and x in producer:
                    stack.append(producer[x])
    out = []
    for u in sorted(keep):
        lo, hi = units[u]
        start = len(out)
        for k in range(lo, hi + 1):
            code, d, a, b = main[k]
            out.append((code, d, a, start) if code == FIXEND else (code, d, a, b))
    return out


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
    if code in (UNION, INTER, DIFF, SEQ, PROD, SEQ_RD, SEQ_LD):
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
    """The compiled model of a registered unit (``oracle/models/NAME/NAME.model``, checked
    against the unit's declared vocabulary: :mod:`oracle.registry`) or of a model file given by
    its path (a name with a directory separator or ending in ``.model``; no vocabulary to
    check), parsed and compiled once."""
    if os.sep not in name and not name.endswith(".model"):
        from .registry import get
        unit = get(name)
        prog = _load_file(unit.model_file)
        undeclared = [n for n in prog.base[len(DYNAMIC):] if n not in unit.vocabulary]
        if undeclared:
            n = undeclared[0]
            raise OracleError(f"{prog.base_at[n]}: {n!r} is not in the vocabulary of model "
                              f"{unit.name} (declared in oracle/models/{unit.name}/__init__.py)")
        return prog
    if not os.path.isfile(name):
        raise OracleError(f"model file {name} not found")
    return _load_file(name)


def _load_file(path: str) -> Program:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    name = os.path.basename(path)
    return compile_model(parse_model(text, path), name[:-len(".model")] if
                         name.endswith(".model") else name, path)

"""The numba op-array evaluator against the pure-Python AST evaluator on random relations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle.engine import eval_ops
from oracle.errors import OracleError
from oracle.events import Event, PreExecution
from oracle.lang import compile_model, parse_model
from reference import Evaluator

UNARY = ("+", "*", "?", "^-1")


def run(prog, slots, n, full):
    """The engine's order: the static prelude once, then the per-candidate ops."""
    eval_ops(slots, prog.prelude, n, full)
    return eval_ops(slots, prog.ops, n, full)


@st.composite
def exprs(draw, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(("a", "b", "c", "id", "[a]", "dom(b)", "ran(c)", "0",
                                     "prod(a, c)", "~a")))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return "(" + draw(exprs(depth - 1)) + ")" + draw(st.sampled_from(UNARY))
    op = draw(st.sampled_from(("|", "&", "\\", ";")))
    return "(" + draw(exprs(depth - 1)) + f" {op} " + draw(exprs(depth - 1)) + ")"


rels = st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20)


@settings(max_examples=150, deadline=None)
@given(exprs(), rels, rels, rels, st.integers(1, 8))
def test_ops_match_python_semantics(expr, a, b, c, n):
    a = {(p, q) for (p, q) in a if p < n and q < n}
    b = {(p, q) for (p, q) in b if p < n and q < n}
    c = {(p, q) for (p, q) in c if p < n and q < n}
    prog = compile_model(parse_model(f"let r = {expr}\nempty r as never\n"))
    slots = np.zeros((prog.nslots, n), np.uint64)
    for name, rel in (("a", a), ("b", b), ("c", c)):
        if name in prog.slots:
            for p, q in rel:
                slots[prog.slots[name], p] |= np.uint64(1) << np.uint64(q)
    full = np.uint64((1 << n) - 1)
    run(prog, slots, n, full)
    got = {(p, q) for p in range(n) for q in range(n)
           if int(slots[prog.slots["r"], p]) >> q & 1}
    pe = PreExecution([Event("e", 0) for _ in range(n)])
    want = Evaluator(pe, {"a": a, "b": b, "c": c}).ev(prog.stmts[0].expr)
    assert got == want, expr


def test_fixpoint_computes_transitive_closure():
    prog = compile_model(parse_model("fix t = a | t ; a\nlet p = a+\nempty t \\ p as x\n"
                                     "empty p \\ t as y\n"))
    n = 5
    slots = np.zeros((prog.nslots, n), np.uint64)
    for p, q in [(0, 1), (1, 2), (2, 3), (3, 1)]:
        slots[prog.slots["a"], p] |= np.uint64(1) << np.uint64(q)
    failed, _ = run(prog, slots, n, np.uint64(31))
    assert failed == -1


def test_checks_fail_in_order():
    prog = compile_model(parse_model("irreflexive a as first\nacyclic a as second\n"))
    slots = np.zeros((prog.nslots, 3), np.uint64)
    for p, q in [(0, 1), (1, 0)]:
        slots[prog.slots["a"], p] |= np.uint64(1) << np.uint64(q)
    assert run(prog, slots, 3, np.uint64(7))[0] == 1       # acyclic fails
    slots[prog.slots["a"], 2] |= np.uint64(1) << np.uint64(2)
    assert run(prog, slots, 3, np.uint64(7))[0] == 0       # irreflexive fails first


def test_flags_do_not_reject():
    prog = compile_model(parse_model("flag nonempty a as racy\nflag empty a as quiet\n"))
    slots = np.zeros((prog.nslots, 2), np.uint64)
    slots[prog.slots["a"], 0] = np.uint64(2)
    failed, flags = run(prog, slots, 2, np.uint64(3))
    assert failed == -1 and flags == 1


@pytest.mark.parametrize("text, where", [
    ("let = a", "1:5"),
    ("let x = (a | b\nempty x as y", "2:1"),
    ("acyclic a", "1:9"),
    ("frob a", "1:1"),
    ("let x = a ;; b", "1:12"),
    ("flag maybe a as f", "1:6"),
])
def test_model_syntax_errors_name_line_and_column(text, where):
    with pytest.raises(OracleError, match=f"m:{where}: "):
        parse_model(text, "m")


def test_ops_are_scheduled_by_demand_and_dead_ones_dropped():
    """What only a later check needs comes after the earlier check; an unused let is not
    computed at all (per candidate or in the prelude)."""
    from oracle.lang import EMPTY, SEQ
    prog = compile_model(parse_model("let dead = rf ; a ; b\nlet later = co ; b\n"
                                     "let first = rf ; a\nlet unused = a ; b\n"
                                     "empty first as c1\nempty later as c2\n"))
    ops = [tuple(int(x) for x in op) for op in prog.ops]
    c1 = next(i for i, op in enumerate(ops) if op[0] == EMPTY and op[2] == 0)
    later = next(i for i, op in enumerate(ops) if op[1] == prog.slots["later"])
    assert later > c1
    assert not any(op[1] == prog.slots["dead"] for op in ops)
    assert not any(int(op[1]) == prog.slots["unused"] for op in prog.prelude)
    assert sum(op[0] == SEQ for op in ops) == 2


def test_products_with_restrictions_become_masks():
    """``r ; [S]`` and ``[S] ; r`` compile to column / row masks (the random-expression test above
    checks their values against the reference); a product of two base names stays a product."""
    from oracle.lang import SEQ, SEQ_LD, SEQ_RD
    prog = compile_model(parse_model("let x = rf ; [a]\nlet y = [a] ; rf\nlet z = rf ; b\n"
                                     "empty x | y | z as c\n"))
    code = {prog.slots[k]: int(op[0]) for k in ("x", "y", "z") for op in prog.ops
            if op[1] == prog.slots[k]}
    assert code == {prog.slots["x"]: SEQ_RD, prog.slots["y"]: SEQ_LD, prog.slots["z"]: SEQ}
    n = 3
    slots = np.zeros((prog.nslots, n), np.uint64)
    slots[prog.slots["a"], 1] = np.uint64(0b010)            # a = {1}: [a] = {(1, 1)}
    slots[0, 0], slots[0, 1] = np.uint64(0b110), np.uint64(0b101)   # rf = {(0,1),(0,2),(1,0),(1,2)}
    run(prog, slots, n, np.uint64(7))
    rows = lambda k: [int(v) for v in slots[prog.slots[k]]]
    assert rows("x") == [0b010, 0, 0]                       # rf pairs ending in 1
    assert rows("y") == [0, 0b101, 0]                       # rf pairs starting at 1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 64), st.lists(st.tuples(st.integers(0, 63), st.integers(0, 63)),
                                    max_size=80))
def test_cycle_detection_matches_the_closure(n, pairs):
    """The acyclic check (peeling events nothing points to) says "cycle" exactly when the
    transitive closure has a reflexive pair."""
    from oracle.engine import _closure, _has_cycle
    m = np.zeros(n, np.uint64)
    for p, q in pairs:
        if p < n and q < n:
            m[p] |= np.uint64(1) << np.uint64(q)
    closed = m.copy()
    _closure(closed, n)
    want = any(int(closed[i]) >> i & 1 for i in range(n))
    assert _has_cycle(m, n) == want

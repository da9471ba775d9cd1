"""Incremental model evaluation (:func:`oracle.engine.eval_inc`) against from-scratch evaluation.

The search evaluates a model on a sequence of candidates that differ in a few dynamic slots
(rf co Rdef Rundef); ``eval_inc`` recomputes only the ops whose inputs changed. On every step of
a random sequence of dynamic contents it must give exactly what :func:`oracle.engine.eval_ops`
gives on a fresh copy: the same first failed check, the same flags, and the same value in every
slot written by an op before that check (all slots when no check fails).
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings, strategies as st

from oracle.engine import eval_inc, eval_ops, inc_state
from oracle.lang import ACYCLIC, DYNAMIC, FLAG_EMPTY, MODELS_DIR, compile_model, parse_model

DYN = DYNAMIC          # rf co Rdef Rundef: slots 0..3


def _flagged(text: str) -> str:
    """The model with every (one-line) check turned into a flag: evaluation never stops early, so
    every op runs on every candidate and the flag bits carry the checks' outcomes."""
    return re.sub(r"^(acyclic|irreflexive|empty) (.*?) as (\S+)$", _as_flag, text, flags=re.M)


def _as_flag(m) -> str:
    kind, expr, name = m.groups()
    if kind == "empty":
        return f"flag nonempty {expr} as {name}"
    if kind == "irreflexive":
        return f"flag nonempty id & ({expr}) as {name}"
    return f"flag nonempty id & ({expr})+ as {name}"


def _model_text(name: str) -> str:
    with open(f"{MODELS_DIR}/{name}/{name}.model", encoding="utf-8") as f:
        return f.read()


#: A closure of rf and a fixpoint over it, read by checks together with dynamic slots that do
#: not change when rf does: when rf returns to an earlier value, those checks must run again
#: only because what they read from the closure's side changed.
HUB_MODEL = """
let h = (a | rf)+
let c1 = h ; b
let c2 = c1 | h^-1
fix v = c2 | v ; h
let c3 = v \\ h
let c4 = [c3] ; c1
empty Rdef & c3 as k1
flag nonempty co & c4 as f1
irreflexive c2 ; Rundef as k2
empty (co ; c1) & Rdef as k3
"""

SMALL_ATOMS = ("rf", "co", "Rdef", "Rundef", "a", "b", "id", "[a]", "0", "~rf")


@st.composite
def small_exprs(draw, depth=3, var=None):
    atoms = SMALL_ATOMS + ((var,) if var else ())
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(atoms))
    if draw(st.integers(0, 2)) == 0:
        return "(" + draw(small_exprs(depth - 1, var)) + ")" + draw(st.sampled_from(("+", "*", "?",
                                                                                   "^-1")))
    op = draw(st.sampled_from(("|", "&", "\\", ";")))
    return "(" + draw(small_exprs(depth - 1, var)) + f" {op} " + draw(small_exprs(depth - 1, var)) + ")"


@st.composite
def small_models(draw):
    """A few lets, a monotone fixpoint over them, checks and flags in a random order."""
    lines = []
    names = []
    for i in range(draw(st.integers(1, 3))):
        lines.append(f"let l{i} = {draw(small_exprs())}")
        names.append(f"l{i}")
    base = draw(st.sampled_from(names + ["rf", "co"]))
    step = draw(st.sampled_from(names + ["rf", "co", "a"]))
    lines.append(f"fix v = {base} | v ; {step}")
    names.append("v")
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("acyclic", "irreflexive", "empty", "flag empty",
                                     "flag nonempty")))
        e = draw(st.sampled_from(names)) if draw(st.booleans()) else draw(small_exprs(2))
        lines.append(f"{kind} {e} as c{i}")
    return "\n".join(lines) + "\n"


def _rel(draw, n):
    return [draw(st.integers(0, (1 << n) - 1)) for _ in range(n)]


@st.composite
def cases(draw):
    choice = draw(st.sampled_from(("small", "hub", "hub", "amdgpu", "amdgpu-flags", "rc11-flags",
                                   "vulkan-flags")))
    if choice == "small":
        text = draw(small_models())
    elif choice == "hub":
        text = HUB_MODEL
    else:
        model, _, flags = choice.partition("-")
        text = _model_text(model)
        if flags:
            text = _flagged(text)
    n = draw(st.integers(1, 7))
    sparse = draw(st.booleans())
    # static slots: random relations, sparse or dense
    prog = compile_model(parse_model(text, choice), choice)
    static = {}
    for name in prog.base[len(DYN):]:
        rows = _rel(draw, n)
        if sparse:
            rows = [r & draw(st.integers(0, (1 << n) - 1)) for r in rows]
        static[name] = rows
    # a walk over dynamic contents: one-bit changes and jumps back to an earlier candidate (as
    # the search's last digit cycles)
    first = [_rel(draw, n) for _ in DYN]
    steps = draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3), st.integers(0, n - 1),
                                    st.integers(0, n - 1), st.integers(0, 99)),
                          min_size=1, max_size=16))
    return choice, prog, n, static, first, steps


def _fresh_slots(prog, n, static):
    slots = np.zeros((prog.nslots, n), np.uint64)
    for name, rows in static.items():
        slots[prog.slots[name], :] = np.array(rows, np.uint64)
    full = np.uint64((1 << n) - 1)
    eval_ops(slots, prog.prelude, n, full)
    return slots, full


def _check_pc(ops, failed):
    for pc in range(ops.shape[0]):
        if ACYCLIC <= ops[pc, 0] < FLAG_EMPTY and ops[pc, 2] == failed:
            return pc
    raise AssertionError(f"no check {failed}")


@settings(max_examples=120, deadline=None)
@given(cases())
def test_incremental_equals_from_scratch(case):
    choice, prog, n, static, first, steps = case
    base, full = _fresh_slots(prog, n, static)
    inc = base.copy()
    memo = inc_state(prog.ops, inc.shape[0], inc.shape[1])
    dyn = [list(r) for r in first]
    history = [[list(r) for r in dyn]]
    for kind, slot, i, j, back in [(9, 0, 0, 0, 0)] + steps:
        if kind <= 2 and len(history) > 1:          # back to the candidate before
            dyn = [list(r) for r in history[-2]]
        elif kind == 3:                             # back to any earlier candidate
            dyn = [list(r) for r in history[back % len(history)]]
        elif kind <= 8:                             # one pair of rf (mostly) added or removed
            dyn[0 if slot < 2 else slot][i] ^= 1 << j
        history.append([list(r) for r in dyn])
        for s in range(len(DYN)):
            inc[s, :] = np.array(dyn[s], np.uint64)
        scratch = base.copy()
        scratch[:len(DYN)] = inc[:len(DYN)]
        want = eval_ops(scratch, prog.ops, n, full)
        got = eval_inc(inc, prog.ops, n, full, memo)
        assert (int(got[0]), int(got[1])) == (int(want[0]), int(want[1])), choice
        upto = prog.ops.shape[0] if want[0] < 0 else _check_pc(prog.ops, want[0])
        for pc in range(upto):
            d = prog.ops[pc, 1]
            assert np.array_equal(inc[d], scratch[d]), (choice, pc)


def test_skipped_check_repeats_its_failure():
    """A check that failed and whose input did not change fails again without running; the ops
    after it, never reached, run once the check passes."""
    prog = compile_model(parse_model("empty rf & a as first\nlet t = co+\nempty t & id as second\n"))
    n = 3
    slots = np.zeros((prog.nslots, n), np.uint64)
    slots[prog.slots["a"], 0] = np.uint64(0b010)           # (0, 1) in a
    full = np.uint64(7)
    eval_ops(slots, prog.prelude, n, full)
    memo = inc_state(prog.ops, slots.shape[0], slots.shape[1])
    slots[0, 0] = np.uint64(0b010)                          # rf (0, 1): first fails
    slots[1, 0], slots[1, 1] = np.uint64(0b010), np.uint64(0b001)   # co cycle 0 -> 1 -> 0
    assert eval_inc(slots, prog.ops, n, full, memo)[0] == 0
    slots[1, 2] = np.uint64(0b001)                          # co changes, rf does not
    assert eval_inc(slots, prog.ops, n, full, memo)[0] == 0
    slots[0, 0] = np.uint64(0)                              # first passes: second sees the cycle
    assert eval_inc(slots, prog.ops, n, full, memo)[0] == 1
    slots[1, 1] = np.uint64(0)                              # no cycle any more
    assert eval_inc(slots, prog.ops, n, full, memo)[0] == -1

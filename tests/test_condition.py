"""litmus/condition.py: the one condition parser, with each dialect's spellings (AMDGPU, C,
Vulkan). Expected conditions and error positions are written out by hand."""

from __future__ import annotations

import pytest

from litmus import ParseError, parse
from litmus.ir import And, Atom, Condition, Const, Not, Or

AMD = """AMDGPU t
{ x = 0; }
 P0      | P1       ;
 st x, 1 | ld r0, x ;
COND
"""

C = """C t
{ [x] = 0; }
P0 (atomic_int* x) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
}
P1 (atomic_int* x) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
COND
"""

VK = """Vulkan t
{ x = 0; }
 P0@sg 0, wg 0, qf 0 | P1@sg 0, wg 1, qf 0 ;
 st.sc0 x, 1         | ld.sc0 r0, x        ;
                     | ld.sc0 r1, x        ;
COND
"""


def cond(template: str, text: str) -> Condition:
    return parse(template.replace("COND", text)).condition


def error_at(template: str, text: str):
    """(line, col, reason) of the error; the condition is on the template's COND line."""
    with pytest.raises(ParseError) as e:
        parse(template.replace("COND", text), "t.litmus")
    return e.value.line, e.value.col, e.value.reason


COND_LINE = {"AMD": 5, "C": 10, "VK": 6}


# --- what each dialect accepts -------------------------------------------------------------------
def test_amdgpu_connectives_precedence_and_spellings():
    # /\ binds tighter than \/; = is ==; ~ negates; true/false constants
    assert cond(AMD, "exists (P1:r0 == 1 /\\ ~(x = 1) \\/ true)") == Condition(
        "exists", Or((And((Atom(1, "r0", "==", 1), Not(Atom(None, "x", "==", 1)))), Const(True))))
    assert cond(AMD, "~exists (1:r0 != 0)") == Condition("~exists", Atom(1, "r0", "!=", 0))
    assert cond(AMD, "forall (false \\/ x == 1)") == Condition(
        "forall", Or((Const(False), Atom(None, "x", "==", 1))))


def test_herd_dialects_also_write_not_brackets_constants_on_the_left_and_constant_atoms():
    assert cond(C, "exists (1 = 1:r0 /\\ not [x] = 0)") == Condition(
        "exists", And((Atom(1, "r0", "==", 1), Not(Atom(None, "x", "==", 0)))))
    assert cond(C, "exists 0 == 0") == Condition("exists", Const(True))
    assert cond(C, "exists (0 != 0)") == Condition("exists", Const(False))
    assert cond(VK, "exists (P1:r0 == 1 \\/ not x == 1)") == Condition(
        "exists", Or((Atom(1, "r0", "==", 1), Not(Atom(None, "x", "==", 1)))))


def test_vulkan_register_comparison_becomes_an_atom_over_a_fresh_register():
    t = parse(VK.replace("COND", "exists (P1:r0 == P1:r1)"))
    assert t.condition == Condition("exists", Atom(1, "_c1", "==", 1))
    # ... which P1 computes last: _c1 = (r0 == r1)
    assert t.threads[1].code[-1].base == "assign" and t.threads[1].code[-1].reg == "_c1"
    # C has no such lowering: the same comparison is an error there
    line, col, reason = error_at(C, "exists (P1:r0 == P1:r1)")
    assert (line, col) == (10, len("exists (P1:r0 == ") + 1)
    assert reason == "comparing two observables is supported only between two registers of one thread"


# --- errors: file:line:col and the dialect's examples --------------------------------------------
@pytest.mark.parametrize("template, key, text, needle, reason", [
    (AMD, "AMD", "exists (r0 == 1)", "r0", "register 'r0' needs a thread: write Pn:r0"),
    (AMD, "AMD", "exists (P1:x == 1)", "x ==", "expected a register rK after 'P1:', got 'x'"),
    (AMD, "AMD", "exists (P1:r0 == y)", "y)", "expected an integer value in the condition, got 'y'"),
    (AMD, "AMD", "exists (1 == P1:r0)", "1 ==", "expected an atom (Pn:rK == v or x == v), got '1'"),
    (AMD, "AMD", "exists (not P1:r0 == 1)", "not", "the condition names undeclared location 'not'"),
    (AMD, "AMD", "exists (P1:r0 == 1) extra", "extra", "unexpected 'extra' after the final condition"),
    (AMD, "AMD", "exists (P1:r0 == 1", "(", "unbalanced '(' in the final condition"),
    (AMD, "AMD", "exists (P5:r0 == 1)", "P5", "the condition names unknown thread P5"),
    (AMD, "AMD", "exists (P1:r3 == 1)", "r3",
     "the condition names unknown register P1:r3 (P1 never writes it)"),
    (AMD, "AMD", "exists (x < 1)", "<", "expected '=', '==' or '!=' in the condition, got '<'"),
    (C, "C", "exists (x == y)", "y", "the condition names undeclared location 'y'"),
    (C, "C", "exists ([x] == 1:r0)", "1:r0",
     "comparing two observables is supported only between two registers of one thread"),
    (C, "C", "exists (Q1:r0 == 1)", "Q1", "expected a thread (0 or P0) before ':', got 'Q1'"),
    (C, "C", "exists (1:r0 == 1 /\\ )", ")", "expected an atom (0:r1=1, P0:r1 == 1 or x=1), got ')'"),
    (C, "C", "exists", None, "expected a proposition after 'exists'"),
    (VK, "VK", "exists (P1:r0 == 1) extra", "extra", "unexpected 'extra' after the final condition"),
])
def test_errors_name_line_col(template, key, text, needle, reason):
    line, col, got = error_at(template, text)
    # needle None: the error is at the end of the input, the start of the line after COND
    want = (COND_LINE[key], text.index(needle) + 1) if needle else (COND_LINE[key] + 1, 1)
    assert (line, col, got) == (*want, reason)

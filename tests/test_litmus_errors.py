"""Malformed input: one ParseError naming file:line:col and a one-line reason, never anything else."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus import ParseError, format_test, parse

from litmus_strategies import litmus_tests

GOOD = """AMDGPU T
{
  x = 0; y = 0;
  lds a = 0;
}
 P0@wg 0            | P1@wg 1             ;
 st x, 1            | ld.atom.agent r0, y ;
 fence.rel.agent    | fence.acq.agent     ;
 st.atom.agent y, 1 | ld r1, x            ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def error_of(text: str) -> ParseError:
    with pytest.raises(ParseError) as e:
        parse(text, "t.litmus")
    return e.value


def position(text: str, needle: str, start: int = 0) -> tuple[int, int]:
    """1-based line and column of the first occurrence of needle at or after ``start``."""
    idx = text.index(needle, start)
    line = text.count("\n", 0, idx) + 1
    col = idx - (text.rfind("\n", 0, idx) + 1) + 1
    return line, col


# (mutation of GOOD, text at which the error must point, words the reason must contain)
CASES = [
    ("st.atom.agent y, 1", "stt.atom.agent y, 1", "stt", "unknown mnemonic"),
    ("st.atom.agent y, 1", "st.atom.acq.agent y, 1", "acq", "does not fit"),
    ("ld.atom.agent r0, y", "ld.atom.workgroup r0, y", "workgroup", "unknown scope"),
    ("ld.atom.agent r0, y", "ld.atom.agnt r0, y", "agnt", "unknown modifier"),
    ("fence.rel.agent   ", "fence.rel.agent.wg", "wg", "duplicate scope"),
    ("ld r1, x", "ld r1, r2", "r2", "register 'r2' used as a location"),
    ("ld r1, x", "ld r1, z", "z", "undeclared location"),
    (" st x, 1            |", " st x, 1            | nop |", " st x, 1 ", "3 cell(s), expected 2"),
    ("P1@wg 1", "P1@wp 1", "wp", "bad placement"),
    ("P1@wg 1", "P1@wg one", "one", "integer"),
    ("P1:r1 == 0", "P1:r7 == 0", "r7", "unknown register"),
    ("P1:r1 == 0", "P3:r1 == 0", "P3", "unknown thread"),
    ("st x, 1 ", "st x, q ", "q", "integer"),
    ("x = 0;", "x = zero;", "zero", "integer"),
    ("P0@wg 0", "P1@wg 0", "P1@wg 0", "expected thread name P0"),
    ("ld.atom.agent r0, y", "ld.atom.agent.noav.noav r0, y", "noav r0", "duplicate noav"),
    ("ld r1, x", "ld.av r1, x", "av", "does not fit"),
    ("ld.atom.agent r0, y", "ld.atom r0, y, 7", "7", "takes 2 operand"),
    ("fence.rel.agent   ", "fence.agent       ", "fence", "needs an order"),
]


@pytest.mark.parametrize("old,new,at,reason", CASES, ids=[c[3] for c in CASES])
def test_error_names_position_and_reason(old, new, at, reason):
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    e = error_of(text)
    line, col = position(text, at, text.index(new))
    if at.startswith(" "):          # row errors point at the row's first token
        col += 1
    assert (e.line, e.col) == (line, col), str(e)
    assert reason in e.reason
    assert str(e).startswith(f"t.litmus:{line}:{col}: ")
    assert "\n" not in str(e)


def test_unterminated_comment_points_at_its_start():
    text = GOOD.replace("exists", "(* open\nexists")
    e = error_of(text)
    assert (e.line, e.col) == position(text, "(*")
    assert "unterminated comment" in e.reason


def test_unterminated_init_block():
    text = GOOD.replace("}", "", 1)
    e = error_of(text)
    assert (e.line, e.col) == (2, 1)
    assert "unterminated init block" in e.reason


def test_unterminated_quote():
    text = GOOD.replace("{", '"doc without end\n{', 1)
    e = error_of(text)
    assert (e.line, e.col) == (2, 1) and "unterminated quoted" in e.reason


def test_missing_condition_and_row_terminator():
    e = error_of(GOOD.split("exists")[0])
    assert "missing final condition" in e.reason
    e = error_of(GOOD.replace("ld r1, x            ;", "ld r1, x"))
    assert "not ended by ';'" in e.reason


def test_comments_are_ignored_everywhere():
    text = GOOD.replace("st x, 1            |", "st x, 1 (* data *) |").replace(
        "exists", "// the weak outcome\nexists")
    assert parse(text) == parse(GOOD)


def test_herd_condition_spelling_accepted():
    t = parse(GOOD.replace("(P1:r0 == 1 /\\ P1:r1 == 0)", "(1:r0=1 /\\ 1:r1=0)"))
    assert t == parse(GOOD)


def _mutate(text: str, rnd, kind: str) -> str:
    if not text:
        return text
    i = rnd.randrange(len(text))
    j = rnd.randrange(len(text))
    if kind == "delete":
        return text[:i] + text[i + 1:]
    if kind == "duplicate":
        return text[:i] + text[i] + text[i:]
    if kind == "swap":
        i, j = min(i, j), max(i, j)
        if i == j:
            return text
        return text[:i] + text[j] + text[i + 1:j] + text[i] + text[j + 1:]
    toks = re.findall(r"\s+|[A-Za-z0-9_]+|.", text)
    a, b = rnd.randrange(len(toks)), rnd.randrange(len(toks))
    if kind == "token-delete":
        del toks[a]
    elif kind == "token-duplicate":
        toks.insert(a, toks[a])
    else:
        toks[a], toks[b] = toks[b], toks[a]
    return "".join(toks)


@given(litmus_tests(max_threads=3, max_instrs=3), st.randoms(use_true_random=False),
       st.lists(st.sampled_from(["delete", "duplicate", "swap", "token-delete",
                                 "token-duplicate", "token-swap"]), min_size=1, max_size=3))
@settings(max_examples=300)
def test_mangled_files_raise_only_parse_errors_inside_the_file(t, rnd, kinds):
    text = format_test(t)
    for k in kinds:
        text = _mutate(text, rnd, k)
    try:
        parse(text, "m.litmus")
    except ParseError as e:
        lines = text.split("\n")
        assert 1 <= e.line <= len(lines)
        assert 1 <= e.col <= len(lines[e.line - 1]) + 1
        assert e.reason and "\n" not in e.reason

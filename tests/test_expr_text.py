"""``litmus.cfg.parse_expr_text`` reads back what ``expr_text`` writes: on random expression trees
(literals, register names, unary and binary operators, nested or not: the one-operator shortcut
and the general reader), and a leaf is an int exactly where Python's ``int`` reads one (the reader
no longer asks ``int`` and catches its ValueError for every register name)."""

from hypothesis import given
from hypothesis import strategies as st

from litmus.cfg import BINOPS, UNOPS, _leaf, expr_text, parse_expr_text

LEAVES = st.one_of(st.integers(-10**12, 10**12),
                   st.from_regex(r"[a-z_][a-z0-9_]{0,4}", fullmatch=True))


def trees(depth=3):
    if depth == 0:
        return LEAVES
    sub = trees(depth - 1)
    return st.one_of(
        LEAVES,
        st.tuples(st.sampled_from(sorted(UNOPS)), sub),
        st.tuples(st.sampled_from(sorted(BINOPS)), sub, sub))


@given(trees())
def test_parse_reads_back_expr_text(e):
    assert parse_expr_text(expr_text(e)) == e


def test_one_operator_and_nested_by_hand():
    assert parse_expr_text("(! r1)") == ("!", "r1")
    assert parse_expr_text("(+ r0 -1)") == ("+", "r0", -1)
    assert parse_expr_text("(== (+ r0 1) 2)") == ("==", ("+", "r0", 1), 2)
    assert parse_expr_text("r2") == "r2"
    assert parse_expr_text("-7") == -7


def reference_leaf(t: str):
    try:
        return int(t)
    except ValueError:
        return t


@given(st.one_of(st.text(max_size=6), st.integers().map(str),
                 st.sampled_from(["+4", " 7", "\t-3", "1_000", "0x10", "r0", "-", "+", "",
                                  "٣", "²", "5 "])))
def test_leaf_is_an_int_exactly_where_int_reads_one(t):
    got, want = _leaf(t), reference_leaf(t)
    assert got == want and type(got) is type(want)

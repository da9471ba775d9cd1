"""litmus.expected: the one reader of expected.csv (LITMUS.md's Ok/No/Undef, Dat3M's 1/0 and
its -DR data-race suites), on hand-written files."""

from __future__ import annotations

import pytest

from litmus.expected import race_verdict, read_expected
from litmus.lexer import ParseError


def write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_litmus_md_form(tmp_path):
    t = read_expected(write(tmp_path, "expected.csv",
                            "mp/MP+a.litmus,Ok\n\n# a comment\n./sb/SB.litmus,No\nx\\y.litmus,Undef\n"))
    assert [(e.path, e.verdict, e.written, e.line) for e in t.rows] == [
        ("mp/MP+a.litmus", "Ok", "Ok", 1), ("sb/SB.litmus", "No", "No", 4),
        ("x/y.litmus", "Undef", "Undef", 5)]
    assert t.by_path() == {"mp/MP+a.litmus": "Ok", "sb/SB.litmus": "No", "x/y.litmus": "Undef"}
    assert not t.race


def test_dat3m_form_with_a_header(tmp_path):
    t = read_expected(write(tmp_path, "expected/C11.csv", "file,result\nC11/a.litmus,1\nC11/b.litmus,0\n"))
    assert [(e.path, e.verdict, e.written) for e in t.rows] == [
        ("C11/a.litmus", "Ok", "1"), ("C11/b.litmus", "No", "0")]
    assert not t.race


def test_data_race_suites_compare_the_racy_flag(tmp_path):
    t = read_expected(write(tmp_path, "VULKAN-DR.csv", "V/a.litmus,1\nV/b.litmus,0\n"))
    assert t.race
    assert race_verdict(["racy"]) == "No" and race_verdict([]) == "Ok"
    assert [e.verdict for e in t.rows] == ["Ok", "No"]


def test_lookup_relative_to_the_csv_its_parent_or_by_suffix(tmp_path):
    t = read_expected(write(tmp_path, "suite/expected/S.csv",
                            "expected/here.litmus,Ok\nT/x.litmus,No\ndeep/z.litmus,Undef\n"))
    # relative to the CSV's directory's parent (Dat3M's layout: expected/ next to the suites)
    assert t.lookup(str(tmp_path / "suite" / "T" / "x.litmus")) == "No"
    # or to its own directory: suite/expected/here.litmus is listed as expected/here.litmus
    # relative to the parent
    assert t.lookup(str(tmp_path / "suite" / "expected" / "here.litmus")) == "Ok"
    # elsewhere: the longest listed path that is a suffix of the file's path
    assert t.lookup(str(tmp_path / "other" / "deep" / "z.litmus")) == "Undef"
    assert t.lookup(str(tmp_path / "other" / "z.litmus")) is None


@pytest.mark.parametrize("text, where, reason", [
    ("a.litmus,Ok\nb.litmus\n", (2, 1), "expected 'path,verdict'"),
    ("a.litmus,Ok\nbb.litmus,Maybe\n", (2, 11), "verdict 'Maybe' is not Ok, No, Undef, 1 or 0"),
    ("a.litmus,Ok\nb.litmus, 2\n", (2, 10), "verdict ' 2' is not Ok, No, Undef, 1 or 0"),
])
def test_malformed_rows_name_file_line_col(tmp_path, text, where, reason):
    p = write(tmp_path, "expected.csv", text)
    with pytest.raises(ParseError) as e:
        read_expected(p)
    assert (e.value.path, e.value.line, e.value.col, e.value.reason) == (str(p), *where, reason)


def test_unreadable_file(tmp_path):
    with pytest.raises(ParseError) as e:
        read_expected(tmp_path / "missing.csv")
    assert (e.value.line, e.value.col) == (1, 1) and e.value.reason.startswith("cannot read")
    p = tmp_path / "bin.csv"
    p.write_bytes(b"a.litmus,\xff\n")
    with pytest.raises(ParseError, match=r"1:1: not UTF-8"):
        read_expected(p)

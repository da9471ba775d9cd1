"""Format checks of the hand-derived corpora (corpora/classic, av, async, barrier; ptx in the
PTX dialect, tileir in the TILEIR dialect).

The corpora are the oracle's independent expectations, so they must be readable by every tool
(LITMUS.md), stored in canonical layout (``scopefuzz fmt --check``), listed one-for-one in their
directory's ``expected.csv``, and each must carry a quoted doc line that states its verdict and the
reason for it (docs/corpora.md, "Derivation conventions"). Comparing the verdicts with the oracle
is the oracle's test, not this one.
"""

from __future__ import annotations

import pathlib
import re

import pytest

import litmus.expected
from litmus import ParseError, format_test, parse, parse_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
DIRS = ("classic", "av", "async", "barrier", "ptx", "tileir")
DIALECT = {"ptx": "PTX", "tileir": "TILEIR"}
VERDICTS = ("Ok", "No", "Undef")

#: The word a doc line starts with, and the verdicts it may stand for. "Allowed"/"Forbidden"
#: describe the condition's outcome of an `exists` test; "Ok"/"No"/"Undef" name the verdict.
DOC_WORDS = {"Allowed": ("Ok",), "Forbidden": ("No",), "Ok": ("Ok",), "No": ("No",),
             "Undef": ("Undef",)}
DOC_LINE = re.compile(r"(Allowed|Forbidden|Ok|No|Undef): (.{20,})\Z")


def read_expected(directory: pathlib.Path) -> dict[str, str]:
    """``expected.csv`` through litmus.expected, plus the corpora's stricter rules: LITMUS.md's
    verdict words (not Dat3M's 1/0), relative ``.litmus`` paths, each listed once, no header."""
    path = directory / "expected.csv"
    table = litmus.expected.read_expected(path)
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(table.rows) == len([ln for ln in lines if ln.strip()]), f"{path}: a header line"
    for e in table.rows:
        assert e.written in VERDICTS, f"{path}:{e.line}: verdict {e.written!r} is not one of {VERDICTS}"
        assert lines[e.line - 1].count(",") == 1, f"{path}:{e.line}: expected 'path,VERDICT'"
        assert e.path.endswith(".litmus"), f"{path}:{e.line}: {e.path!r} is not a .litmus path"
        assert not lines[e.line - 1].startswith("/") and ".." not in e.parts, f"{path}:{e.line}"
        assert e.path not in out, f"{path}:{e.line}: {e.path} listed twice"
        out[e.path] = e.verdict
    return out


def litmus_paths(directory: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*.litmus"))


def all_tests() -> list[tuple[str, str]]:
    return [(d, rel) for d in DIRS if (CORPORA / d).is_dir() for rel in litmus_paths(CORPORA / d)]


@pytest.mark.parametrize("name", DIRS)
def test_directory_exists_and_is_nonempty(name):
    directory = CORPORA / name
    assert directory.is_dir(), f"missing corpus directory {directory}"
    assert litmus_paths(directory), f"{directory} holds no *.litmus files"


@pytest.mark.parametrize("name", DIRS)
def test_expected_csv_lists_exactly_the_files(name):
    directory = CORPORA / name
    expected = read_expected(directory)
    files = set(litmus_paths(directory))
    assert sorted(set(expected) - files) == [], "listed in expected.csv but no such file"
    assert sorted(files - set(expected)) == [], "file not listed in expected.csv"


@pytest.mark.parametrize("name", DIRS)
def test_test_names_are_unique_within_a_corpus(name):
    stems = [pathlib.PurePosixPath(rel).stem for rel in litmus_paths(CORPORA / name)]
    dupes = sorted({s for s in stems if stems.count(s) > 1})
    assert dupes == []


@pytest.mark.parametrize("directory,rel", all_tests(), ids=lambda v: v)
def test_corpus_file(directory, rel):
    base = CORPORA / directory
    path = base / rel
    test = parse_file(path)                       # raises ParseError with file:line:col
    assert test.dialect == DIALECT.get(directory, "AMDGPU")
    text = path.read_text(encoding="utf-8")
    assert format_test(test) == text, f"{path}: not in canonical layout (run scopefuzz fmt)"
    assert test.name == path.stem, f"{path}: header names {test.name!r}"
    assert test.doc, f"{path}: no quoted doc line giving the verdict's reason"
    m = DOC_LINE.match(test.doc[0])
    assert m, (f"{path}: first doc line must be '<Allowed|Forbidden|Ok|No|Undef>: <reason>', "
               f"got {test.doc[0]!r}")
    verdict = read_expected(base)[rel]
    assert verdict in DOC_WORDS[m.group(1)], (
        f"{path}: doc says {m.group(1)!r} but expected.csv says {verdict}")
    if m.group(1) in ("Allowed", "Forbidden"):
        assert test.condition.quantifier == "exists", (
            f"{path}: 'Allowed'/'Forbidden' describe exists tests; say Ok/No for "
            f"{test.condition.quantifier}")


def test_a_file_out_of_canonical_layout_is_detected(tmp_path):
    """The canonical-layout check above is not vacuous: a hand-spaced file differs."""
    src = ('AMDGPU T\n"Forbidden: a reason long enough to pass."\n{ x = 0; }\n'
           "P0 ;\nst.atom x, 1 ;\nexists (x == 0)\n")
    test = parse(src, "T.litmus")
    assert format_test(test) != src
    assert format_test(parse(format_test(test))) == format_test(test)


def test_a_malformed_file_is_reported_with_a_position(tmp_path):
    bad = tmp_path / "bad.litmus"
    bad.write_text('AMDGPU bad\n"x"\n{ x = 0; }\nP0 ;\nst.bogus x, 1 ;\nexists (x == 0)\n')
    with pytest.raises(ParseError) as e:
        parse_file(bad)
    assert re.match(rf"{re.escape(str(bad))}:\d+:\d+: ", str(e.value))


def test_docs_table_matches_the_corpora():
    """docs/corpora.md states each directory's size and verdict split; keep it true."""
    doc = (ROOT / "docs" / "corpora.md").read_text(encoding="utf-8")
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
            for m in re.finditer(r"^\| `(\w+)/` \| (\d+) \| (\d+) / (\d+) / (\d+) \|", doc, re.M)}
    assert sorted(rows) == sorted(DIRS)
    for name in DIRS:
        verdicts = list(read_expected(CORPORA / name).values())
        actual = (len(verdicts),) + tuple(verdicts.count(v) for v in VERDICTS)
        assert rows[name] == actual, f"docs/corpora.md says {rows[name]} for {name}/, actual {actual}"

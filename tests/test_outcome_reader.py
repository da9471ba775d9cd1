"""One outcome reader for the command line (issue 17 item 8): the printed form and the condition form.

``scopefuzz`` prints outcomes as ``P1:r0=0; x=1;`` (:func:`litmus.format_outcome`); ``explain
--outcome`` must take that text back, as well as a proposition in the condition syntax.
"""

from __future__ import annotations

import pytest

import litmus
from fuzz.cli import main
from litmus.ir import And, Atom
from litmus.outcome import read_outcome

MP = """AMDGPU MP
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                 ;
 st x, 1                | ld.atom.acq.agent r0, y ;
 st.atom.rel.agent y, 1 | ld r1, x                ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


@pytest.fixture
def mp():
    return litmus.parse(MP)


def _atoms(prop):
    return sorted(((a.thread, a.name, a.op, a.value) for a in (prop.args if isinstance(prop, And)
                                                               else (prop,))),
                  key=lambda t: (t[0] is None, t[0] or 0, t[1]))


def test_printed_form_reads_as_a_conjunction(mp):
    printed = litmus.format_outcome({"P1:r0": 1, "P1:r1": 0, "x": 1, "y": 1})
    assert printed == "P1:r0=1; P1:r1=0; x=1; y=1;"
    assert _atoms(read_outcome(mp, printed)) == [(1, "r0", "==", 1), (1, "r1", "==", 0),
                                                 (None, "x", "==", 1), (None, "y", "==", 1)]


def test_undef_positions_are_left_free(mp):
    assert _atoms(read_outcome(mp, "P1:r0=1; P1:r1=undef;")) == [(1, "r0", "==", 1)]


def test_condition_form_and_herd_spelling(mp):
    want = [(1, "r0", "==", 1), (1, "r1", "==", 0)]
    assert _atoms(read_outcome(mp, "P1:r0 == 1 /\\ P1:r1 == 0")) == want
    assert _atoms(read_outcome(mp, "exists (P1:r0 == 1 /\\ P1:r1 == 0)")) == want
    assert read_outcome(mp, "1:r0=1") == Atom(1, "r0", "==", 1)


@pytest.mark.parametrize("text, why", [
    ("P1:r9=0;", "unknown register P1:r9"),
    ("P1:r0=zero;", "expected items like"),
    ("z=1;", "undeclared location 'z'"),
    ("P1:r0 == 1 /\\ (", "expected an atom"),
])
def test_bad_outcomes_are_one_line_errors(mp, text, why):
    with pytest.raises(litmus.ParseError) as e:
        read_outcome(mp, text)
    assert str(e.value).startswith("--outcome:1:") and why in str(e.value)


def test_explain_takes_its_own_printed_form(tmp_path, capsys):
    f = tmp_path / "mp.litmus"
    f.write_text(MP)
    assert main(["explain", str(f), "--outcome", "P1:r0 == 1 /\\ P1:r1 == 0"]) == 0
    by_condition = capsys.readouterr().out
    assert main(["explain", str(f), "--outcome", "P1:r0=1; P1:r1=0;"]) == 0
    by_printed = capsys.readouterr().out
    # the first line echoes the outcome as given; the explanation itself is the same
    assert "is FORBIDDEN by model amdgpu" in by_printed.splitlines()[0]
    assert by_printed.splitlines()[1:] == by_condition.splitlines()[1:]

"""Explanations name the failed check and a witness built from the model's relations."""

from __future__ import annotations

import litmus
import oracle

SB_SC = """AMDGPU SB+sc
{ x = 0; y = 0; }
 P0                | P1                ;
 st.atom.sc x, 1   | st.atom.sc y, 1   ;
 ld.atom.sc r0, y  | ld.atom.sc r0, x  ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""
CORR = """AMDGPU CoRR
{ x = 0; }
 P0           | P1            ;
 st.atom x, 1 | ld.atom r0, x ;
              | ld.atom r1, x ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
MP = """AMDGPU MP
{ x = 0; y = 0; }
 P0               | P1                 ;
 st x, 1          | ld.atom r0, y      ;
 fence.rel        | fence.acq          ;
 st.atom y, 1     | ld r1, x           ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_sb_sc_cycle_witness():
    ex = oracle.explain(litmus.parse(SB_SC), "P0:r0 == 0 /\\ P1:r0 == 0")
    assert not ex.allowed
    text = ex.text()
    assert "fails 'sc' (acyclic)" in text
    # the psc cycle: both writes po-before the reads, reads fr-before the other writes
    line = next(ln for ln in text.splitlines() if "fails 'sc'" in ln)
    assert line.count("-po->") == 2 and line.count("-fr->") == 2


def test_corr_coherence_witness():
    text = oracle.explain(litmus.parse(CORR), "P1:r0 == 1 /\\ P1:r1 == 0").text()
    assert "fails 'coherence'" in text
    line = next(ln for ln in text.splitlines() if "fails 'coherence'" in ln)
    assert "-po->" in line and "-fr->" in line and "-rf->" in line


def test_mp_may_see_witness_shows_location_order():
    text = oracle.explain(litmus.parse(MP), "P1:r0 == 1 /\\ P1:r1 == 0").text()
    assert "fails 'may-see'" in text
    assert "-lo->" in text          # the initial write is hidden: init lo W x lo R x


def test_allowed_outcome_shows_an_execution():
    ex = oracle.explain(litmus.parse(MP), {"P1:r0": 0})
    assert ex.allowed
    assert "ALLOWED" in ex.text() and "consistent" in ex.text()


def test_svg_draws_threads_and_edges():
    svg = oracle.explain(litmus.parse(SB_SC), "P0:r0 == 0 /\\ P1:r0 == 0").svg()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert ">P0<" in svg and ">P1<" in svg
    assert ">fr<" in svg and ">po<" in svg


BARRIER_MP = """AMDGPU barrier-mp
{ x = 0; }
 P0@wave 0, wg 0  | P1@wave 1, wg 0   ;
 st x, 1          | barrier           ;
 fence.rel.wg     | fence.acq.wg      ;
 barrier          | ld r0, x          ;
exists (P1:r0 == 0)
"""


def test_explain_shows_barrier_phases():
    ex = oracle.explain(litmus.parse(BARRIER_MP), "P1:r0 == 0")
    assert not ex.allowed
    text = ex.text()
    assert "P0 B.arrive -1 -> P1 B.wait -1" in text
    assert "P1 B.arrive -1 -> P0 B.wait -1" in text
    assert ">bxb<" in ex.svg()


# --- the engine-backed candidates against the independent reference evaluator -------------------
from hypothesis import given, settings  # noqa: E402

import reference  # noqa: E402
from oracle.check import pre_executions  # noqa: E402
from oracle.explanation import candidates  # noqa: E402
from oracle.lang import load_model  # noqa: E402
from oracle.registry import get as get_unit  # noqa: E402
from test_oracle_props import programs  # noqa: E402


def _summary(c):
    return None if c is None else (c.src, c.co, c.val, c.failed,
                                   c.witness if isinstance(c.witness, (list, type(None)))
                                   else sorted(c.witness), c.outcome())


@settings(max_examples=40, deadline=None)
@given(programs(max_instrs=4))
def test_explained_candidates_are_the_reference_candidates(text):
    """Every candidate explain() looks at, in the same order, with the same values, first
    failing check and witness (a cycle or the offending pairs) as the pure-Python reference
    evaluation of the model's AST."""
    test = litmus.parse(text)
    unit, prog = get_unit("amdgpu"), load_model("amdgpu")
    for pe in pre_executions(unit, test):
        got = [_summary(c) for c in candidates(pe, prog, unit.hints)]
        want = [_summary(c) for c in reference.candidates(pe, prog)]
        assert got == want, text

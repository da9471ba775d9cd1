"""The upper checks (``oracle.lang.upper_checks``, ``oracle.explore._eval_upper``).

- Which checks qualify, derived by hand from the model files: in the AMDGPU model
  ``undefined-read`` (``empty Rdef \\ defd``: ``defd`` grows with rf and Rdef, ignores co and
  Rundef) and nothing else; ``defined-read`` (``empty Rundef & defd``) is a prefix check; the
  other models have no check of that form.
- The upper checks prune only inconsistent executions: searched with them forced on and off
  (bounding off, so that every consistent execution is visited either way), every pre-execution
  of every AMDGPU corpus file and of generated AMDGPU programs gives the same outcome rows, the
  same number of consistent executions and the same flags, with no more model evaluations.
- On a campaign program whose reads are mostly undef by rule 3 (rmws and atomics on one location
  across non-inclusive scopes), the upper checks cut the model evaluations to under a
  hundredth.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

import litmus
from litmus.dialects import litmus_files, parse_file
from oracle.check import pre_executions
from oracle.hints import COHERENCE_HINTS
from oracle.lang import load_model
from oracle.pack import options, search_pe
from oracle.registry import get as get_unit
from test_judge import BUDGET_PROGRAMS
from test_oracle_props import programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_upper_checks_of_each_model():
    amd = load_model("amdgpu")
    assert [c for c, u in zip(amd.checks, amd.upper) if u] == ["undefined-read"]
    assert dict(zip(amd.checks, amd.monotone))["defined-read"]
    assert amd.upper_ops.shape[0] > 0
    for name in ("rc11", "c11", "vulkan", "opencl", "ptx", "tileir"):
        prog = load_model(name)
        assert not any(prog.upper) and prog.upper_ops.shape[0] == 0, name


def _search(pe, upper: bool):
    unit = get_unit("amdgpu")
    st, ns, cands, cons, fl, _, _ = search_pe(
        pe, load_model("amdgpu"), unit.hints,
        options(pe.n, len(pe.observables), bound=False, upper=upper,
                hints=bool(unit.hints & COHERENCE_HINTS)))
    assert ns >= 0
    return {tuple(r) for r in st[:ns].tolist()}, int(cons), int(fl), int(cands)


def assert_upper_prunes_only_inconsistent(test):
    for pe in pre_executions(get_unit("amdgpu"), test):
        on, off = _search(pe, True), _search(pe, False)
        assert on[:3] == off[:3], test.name
        assert on[3] <= off[3], test.name


def test_corpus_files_search_the_same_with_and_without_upper_checks():
    n = 0
    for path in litmus_files([os.path.join(ROOT, "corpora")]):
        try:
            t = parse_file(path)
        except litmus.ParseError:
            continue
        if t.dialect != "AMDGPU":
            continue
        try:
            pre_executions(get_unit("amdgpu"), t)
        except Exception:
            continue                        # refused programs (too big, bad input)
        assert_upper_prunes_only_inconsistent(t)
        n += 1
    assert n > 200


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(max_instrs=6, threads=(2, 4)))
def test_generated_programs_search_the_same_with_and_without_upper_checks(text):
    assert_upper_prunes_only_inconsistent(litmus.parse(text))


def test_upper_checks_cut_a_mostly_undef_program():
    t = litmus.parse(BUDGET_PROGRAMS[0])
    pe = min(pre_executions(get_unit("amdgpu"), t), key=lambda p: p.n)   # the cheapest path
    on, off = _search(pe, True)[3], _search(pe, False)[3]
    assert off > 100_000 and on * 100 < off

"""The oracle against the hand-derived verdicts of every corpus directory (``corpora/*/``,
``expected.csv``): what ``scopefuzz check --expect corpora/D/expected.csv corpora/D`` compares,
one test per file. The expectations were derived by hand from the seeds (docs/corpora.md), never
from the oracle, so a disagreement is a finding against one or the other."""

from __future__ import annotations

import pytest

import oracle
from conftest import CORPORA
from litmus import parse_file

DIRS = sorted(p.parent.name for p in CORPORA.glob("*/expected.csv"))


def _cases():
    out = []
    for d in DIRS:
        for line in (CORPORA / d / "expected.csv").read_text(encoding="utf-8").split():
            rel, verdict = line.split(",")
            out.append((d, rel, verdict))
    return out


CASES = _cases()


def test_every_corpus_directory_has_expectations():
    assert {"classic", "av", "async", "barrier", "mutants", "thinair"} <= set(DIRS)
    for d in DIRS:
        listed = {rel for dd, rel, _ in CASES if dd == d}
        files = {p.relative_to(CORPORA / d).as_posix() for p in (CORPORA / d).rglob("*.litmus")}
        assert listed == files, d


@pytest.mark.parametrize("d, rel, verdict", CASES, ids=[f"{d}/{rel}" for d, rel, _ in CASES])
def test_oracle_verdict_matches_the_hand_derived_one(d, rel, verdict):
    res = oracle.check(parse_file(str(CORPORA / d / rel)))
    assert res.verdict == verdict, f"ub: {res.ub}; states: {res.states[:4]}"

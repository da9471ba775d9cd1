"""The search budget campaigns use: past it a one-line OracleError, within it the same answer."""

import pytest

import litmus
import oracle
from conftest import CORPORA


def test_budget_exhausted_is_a_one_line_error_and_never_cached():
    path = sorted((CORPORA / "classic").rglob("IRIW*.litmus"))[0]
    t = litmus.parse_file(path)
    oracle.clear_cache()
    with pytest.raises(oracle.OracleError) as e:
        oracle.check(t, budget=3)
    assert "search budget of 3 steps and evaluations exhausted" in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(oracle.OracleError):       # the failure was not cached as a result
        oracle.check(t, budget=3)


def test_generous_budget_gives_the_unbounded_answer():
    for path in sorted((CORPORA / "classic").rglob("*.litmus"))[:40]:
        t = litmus.parse_file(path)
        oracle.clear_cache()
        bounded = oracle.check(t, budget=10**7)
        oracle.clear_cache()
        free = oracle.check(t)
        assert (bounded.verdict, bounded.states) == (free.verdict, free.states), path.name

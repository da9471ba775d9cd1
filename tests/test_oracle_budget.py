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


def test_a_small_pre_execution_past_the_whole_try_is_searched_whole_again(monkeypatch):
    """Every pre-execution is first searched within ``QUERY_WHOLE_STEPS``; the estimate is asked
    only when that runs out, and a small one (at most ``SPLIT_ABOVE`` candidates) is then
    searched whole within the check's budget, never split: the same answer, candidates and
    consistent executions as a search that was never stopped, and a budget below its need
    still exhausts it."""
    import importlib
    search = importlib.import_module("oracle.search")
    from oracle.check import pre_executions
    from oracle.registry import get
    tests = []
    for path in sorted((CORPORA / "classic").rglob("*.litmus"))[:30]:
        t = litmus.parse_file(path)
        model = litmus.DEFAULT_MODEL[t.dialect]
        if all(search.estimate(pe) <= search.SPLIT_ABOVE for pe in pre_executions(get(model), t)):
            tests.append(t)
    assert len(tests) >= 10
    free = []
    for t in tests:
        oracle.clear_cache()
        free.append(oracle.check(t))
    calls = []
    real = search.search_pe

    def counted(pe, prog, hints, opt=None, attrs=None):
        calls.append(opt[1])        # max_steps (opt: an Options or its plain tuple)
        return real(pe, prog, hints, opt, attrs)

    monkeypatch.setattr(search, "QUERY_WHOLE_STEPS", 1)
    monkeypatch.setattr(search, "search_pe", counted)
    monkeypatch.setattr(search, "_split", lambda *a: pytest.fail("a small pre-execution split"))
    for t, want in zip(tests, free):
        oracle.clear_cache()
        got = oracle.check(t, full=True)        # (not capped at check.LAZY_AFTER: no limit)
        assert (got.verdict, got.states, got.flags, got.ub, got.candidates, got.consistent) == \
            (want.verdict, want.states, want.flags, want.ub, want.candidates, want.consistent)
    # each pre-execution: the whole try of one step, then the search without a limit
    assert calls[:2] == [1, -1] and calls.count(1) == calls.count(-1)
    # without full=True the second search is the lazy first try's, capped at LAZY_AFTER steps
    calls.clear()
    oracle.clear_cache()
    assert oracle.check(tests[0]).verdict == free[0].verdict
    assert calls[:2] == [1, importlib.import_module("oracle.check").LAZY_AFTER]
    oracle.clear_cache()
    with pytest.raises(oracle.OracleError, match="budget of 3 steps"):
        oracle.check(tests[0], budget=3)

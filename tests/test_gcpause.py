"""``oracle.gcpause.paused`` and its use by ``oracle.check`` / ``oracle.allows``: the cyclic collector
is off while the oracle works and exactly as it was afterwards (on stays on, off stays off), also
when the work raises."""

import gc
import importlib

import pytest

import oracle
from litmus import parse
from oracle.errors import OracleError
from oracle.gcpause import paused

SB = """C SB
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  int r0 = atomic_load_explicit(y, memory_order_relaxed);
}
P1 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(y, 1, memory_order_relaxed);
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (0:r0=0 /\\ 1:r0=0)
"""


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_turns_the_collector_off_and_back_on(collector_on):
    with paused():
        assert not gc.isenabled()
        with paused():                      # nested: still off, and the outer pause restores
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_paused_leaves_a_collector_that_was_off_off(collector_on):
    gc.disable()
    with paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_paused_restores_the_collector_when_the_block_raises(collector_on):
    with pytest.raises(ValueError):
        with paused():
            raise ValueError("boom")
    assert gc.isenabled()


def test_check_and_allows_run_with_the_collector_off_and_restore_it(collector_on, monkeypatch):
    check_module = importlib.import_module("oracle.check")   # (oracle.check: the function)
    query_module = importlib.import_module("oracle.query")
    seen = []
    real_pre = check_module.pre_executions

    def spy(unit, test):
        seen.append(gc.isenabled())
        return real_pre(unit, test)

    monkeypatch.setattr(check_module, "pre_executions", spy)
    monkeypatch.setattr(query_module, "pre_executions", spy)
    test = parse(SB)
    oracle.clear_cache()
    res = oracle.check(test, "rc11")
    assert res.verdict == "Ok"              # store buffering: allowed under rc11 (relaxed)
    oracle.clear_cache()
    assert oracle.allows(test, {"P0:r0": 0, "P1:r0": 0}, "rc11")
    assert seen == [False, False]           # both built their pre-executions with it off
    assert gc.isenabled()


def test_check_restores_the_collector_when_it_raises(collector_on, monkeypatch):
    check_module = importlib.import_module("oracle.check")

    def broken(unit, test):
        raise OracleError("a builder failed")

    monkeypatch.setattr(check_module, "pre_executions", broken)
    oracle.clear_cache()
    with pytest.raises(OracleError):
        oracle.check(parse(SB), "rc11")
    assert gc.isenabled()


# load buffering through a branch and data dependency: its read values are enumerated (a value
# read the branch uses, nested expressions), under rc11 by justified_paths, under c11 by the value
# domains' thread paths
LB_DEP = """C LB+branch
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  if (r0 + 1 == 2) {
    atomic_store_explicit(y, r0 * 2 + 1, memory_order_relaxed);
  }
}
P1 (atomic_int* x, atomic_int* y) {
  int r1 = atomic_load_explicit(y, memory_order_relaxed);
  atomic_store_explicit(x, 1, memory_order_relaxed);
}
exists (0:r0=1 /\\ 1:r1=3)
"""


@pytest.mark.parametrize("model, verdict", [("rc11", "No"), ("c11", "Ok")])
def test_a_check_leaves_no_cyclic_garbage(collector_on, model, verdict):
    """Everything a check allocates is freed by reference counting: no reference cycle (a
    recursive closure holding the thread paths, say) is left for the collector. rc11 forbids the
    outcome (it needs a po | rf cycle), c11 allows it (no no-thin-air axiom)."""
    test = parse(LB_DEP)
    oracle.clear_cache()
    oracle.check(test, model)               # imports, compiled code, model tables: made once
    oracle.clear_cache()
    gc.collect()
    gc.disable()
    res = oracle.check(test, model)
    assert res.verdict == verdict
    oracle.clear_cache()
    del res
    assert gc.collect() == 0

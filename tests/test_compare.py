"""fuzz.compare: observed against allowed, the one comparison every harness part uses (run --json,
the campaign, the minimizer, the pytest plugin, reports, bench). Expectations worked out by hand."""

from __future__ import annotations

import json

import litmus
from fuzz.compare import compare, reached
from fuzz.run import run_one
from hw import Histogram
from oracle import Result

# the model allows r0=0 with x=1, and r0=1 with x=anything (undef)
RESULT = Result("m", "Ok", [{"P0:r0": 0, "x": 1}, {"P0:r0": 1, "x": "undef"}])


def _hist(counts: dict) -> Histogram:
    h = Histogram(["P0:r0", "x"])
    for k, n in counts.items():
        h.add(k, n)
    return h


def test_rows_flags_and_counts():
    h = _hist({(0, 1): 5, (1, 7): 3, (0, 2): 2, (2, 1): 1})
    c = compare(RESULT, h, litmus.parse(TEST).condition)       # exists (P0:r0 == 1)
    assert [(r.outcome, r.count, r.allowed, r.witness) for r in c.rows] == [
        ({"P0:r0": 0, "x": 1}, 5, True, False),
        ({"P0:r0": 1, "x": 7}, 3, True, True),               # undef x matches 7
        ({"P0:r0": 0, "x": 2}, 2, False, False),
        ({"P0:r0": 2, "x": 1}, 1, False, False)]
    assert (c.total, c.forbidden, c.witnesses, c.condition_observed) == (11, 3, 3, True)
    assert c.forbidden_outcomes() == [({"P0:r0": 0, "x": 2}, 2), ({"P0:r0": 2, "x": 1}, 1)]
    assert c.histogram()[2] == {"outcome": {"P0:r0": 0, "x": 2}, "count": 2, "allowed": False}


def test_forall_witnesses_are_the_refuting_outcomes():
    cond = litmus.parse(TEST.replace("exists (P0:r0 == 1)", "forall (P0:r0 == 1)")).condition
    c = compare(RESULT, _hist({(0, 1): 4, (1, 1): 6}), cond)
    assert (c.witnesses, c.condition_observed, c.forbidden) == (4, True, 0)


def test_nothing_observed():
    c = compare(RESULT, _hist({}), litmus.parse(TEST).condition)
    assert (c.rows, c.total, c.forbidden, c.witnesses, c.condition_observed) == ((), 0, 0, 0, False)


def test_reached_counts_allowed_states_some_outcome_matches():
    assert reached(RESULT, _hist({(1, 5): 1})) == (1, 2)
    assert reached(RESULT, _hist({(1, 5): 1, (0, 1): 2})) == (2, 2)
    assert reached(RESULT, _hist({(0, 2): 9})) == (0, 2)


TEST = """AMDGPU T
{ x = 0; }
 P0          ;
 ld r0, x    ;
 st x, 1     ;
exists (P0:r0 == 1)
"""


class _Replay:
    """A backend that returns a fixed histogram (what run_one does with it is under test)."""

    name = "replay"

    def __init__(self, counts):
        self.counts = counts

    def run(self, test, iterations, seed=0):
        h = Histogram(test.observables())
        for k, n in self.counts.items():
            h.add(k, n)
        return h


def test_run_json_object_is_the_comparison():
    # the oracle allows only r0=0, x=1 for this single-threaded test; (1, 1) and (0, 0) are
    # forbidden, and (1, 1) witnesses the condition
    test = litmus.parse(TEST)
    obj = run_one(_Replay({(0, 1): 7, (1, 1): 2, (0, 0): 1}), test, "t.litmus", 10, 0)
    assert obj["histogram"] == [
        {"outcome": {"P0:r0": 0, "x": 1}, "count": 7, "allowed": True},
        {"outcome": {"P0:r0": 1, "x": 1}, "count": 2, "allowed": False},
        {"outcome": {"P0:r0": 0, "x": 0}, "count": 1, "allowed": False}]
    assert (obj["iterations"], obj["forbidden"], obj["witnesses"], obj["condition_observed"]) == \
        (10, 3, 2, True)
    json.dumps(obj)

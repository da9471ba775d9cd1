"""Observed against allowed: the one place that compares a backend's histogram with the model.

``oracle.check(test)`` gives what the memory model allows (a ``Result``), ``backend.run(test, ...)``
what a backend showed (a :class:`hw.Histogram`); :func:`compare` puts the two side by side, once, for
everything that needs the comparison: ``scopefuzz run`` (its ``--json`` objects, DESIGN.md), the
campaign (is a program a finding, on the backend and on the baseline), the minimizer's predicate,
the pytest plugin's items, the finding records that the reports render, and ``scopefuzz bench``
(:func:`reached`: how many of the allowed states a backend showed).

An observed outcome is concrete; it is *allowed* when some allowed state matches it (an undef
position matches any value) and *forbidden* otherwise. It is a *witness* when it satisfies the
test's condition the way :func:`litmus.condition_holds` says (for ``exists``, the proposition; for
``forall``, its negation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence

from litmus.ir import Condition
from litmus.outcome import condition_holds, matches

from hw.backend import Histogram


class Allows(Protocol):
    """What the comparison needs from the oracle's result: does the model allow an observed
    outcome? (``oracle.Result`` provides it, as does the SC oracle of the tests' fakes.)"""

    def allows(self, observed: Mapping[str, int]) -> bool: ...


class AllowedStates(Allows, Protocol):
    """A result that also lists the allowed states (outcomes with undef positions)."""

    states: Sequence[dict]


@dataclass(frozen=True)
class Row:
    """One observed outcome: how often, whether the model allows it, whether it witnesses the
    test's condition."""

    outcome: dict[str, int]
    count: int
    allowed: bool
    witness: bool


@dataclass(frozen=True)
class Comparison:
    """A histogram judged against the allowed outcomes, row by row (most frequent first)."""

    rows: tuple[Row, ...]

    @property
    def total(self) -> int:
        """Iterations (or schedules) that produced an outcome."""
        return sum(r.count for r in self.rows)

    @property
    def forbidden(self) -> int:
        """Iterations whose outcome the model forbids."""
        return sum(r.count for r in self.rows if not r.allowed)

    @property
    def witnesses(self) -> int:
        """Iterations whose outcome satisfies the test's condition."""
        return sum(r.count for r in self.rows if r.witness)

    @property
    def condition_observed(self) -> bool:
        return any(r.witness for r in self.rows)

    def forbidden_outcomes(self) -> list[tuple[dict[str, int], int]]:
        """(outcome, count) of every forbidden outcome, most frequent first."""
        return [(r.outcome, r.count) for r in self.rows if not r.allowed]

    def histogram(self) -> list[dict]:
        """The rows as ``run --json`` and ``finding.json`` write them:
        ``[{"outcome": {...}, "count": n, "allowed": bool}, ...]``."""
        return [{"outcome": r.outcome, "count": r.count, "allowed": r.allowed} for r in self.rows]


def compare(result: Allows, histogram: Histogram, condition: Condition) -> Comparison:
    """Judge every outcome of ``histogram`` by ``result`` (allowed or forbidden) and by the test's
    ``condition`` (witness or not). A result with ``allows_many`` (``oracle.judge.Judge``: the
    oracle searches for the observed outcomes only) is asked once for all of them."""
    rows = list(histogram.outcomes())
    many = getattr(result, "allows_many", None)
    ok = many([o for o, _ in rows]) if many is not None else [result.allows(o) for o, _ in rows]
    return Comparison(tuple(Row(o, n, a, condition_holds(condition, o))
                            for (o, n), a in zip(rows, ok)))



def reached(result: AllowedStates, histogram: Histogram) -> tuple[int, int]:
    """(allowed states that some observed outcome matches, allowed states): how much of what the
    model allows a backend showed (a state with undef positions is reached by any outcome that
    matches it)."""
    observed = [o for o, _ in histogram.outcomes()]
    count = getattr(result.states, "count_matched", None)     # oracle.states.States: arrays
    if count is not None:
        return count(observed), len(result.states)
    hit = sum(1 for s in result.states if any(matches(s, o) for o in observed))
    return hit, len(result.states)


__all__ = ["Allows", "AllowedStates", "Comparison", "Row", "compare", "reached"]

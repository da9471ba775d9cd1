"""The backend interface (DESIGN.md, "Backends"): ``Backend.run(test, iterations, seed) -> Histogram``.

A backend runs a litmus test many times and counts the observed outcomes. Outcomes are tuples of
ints in the order of ``test.observables()`` (every register of every thread, then every global
location), so counting needs no per-iteration dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from litmus import Test


class BackendError(Exception):
    """A backend could not run a test (unsupported construct, build failure, device error, hang).

    The message is one line; campaigns record it and go on.
    """


class BackendRefused(BackendError):
    """The backend cannot express this test at all (e.g. a construct its compiler lacks): not a
    failure of the backend; campaigns count such programs as refused."""


@dataclass
class Histogram:
    """Observed outcomes of one test on one backend: outcome tuple -> count."""

    observables: list[str]
    counts: dict[tuple[int, ...], int] = field(default_factory=dict)
    params: dict = field(default_factory=dict)   # backend parameters recorded with the result
    seconds: float = 0.0

    def add(self, outcome: tuple[int, ...], n: int = 1) -> None:
        self.counts[outcome] = self.counts.get(outcome, 0) + n

    def merge(self, other: "Histogram") -> None:
        if other.observables != self.observables:
            raise ValueError("histograms over different observables")
        for k, v in other.counts.items():
            self.add(k, v)
        self.seconds += other.seconds

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def outcomes(self) -> Iterator[tuple[dict[str, int], int]]:
        """(outcome as {observable: value}, count), most frequent first."""
        for key, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])):
            yield dict(zip(self.observables, key)), n


class Backend:
    """Base class of backends. Subclasses set ``name`` and implement :meth:`run`."""

    name: str = "?"

    def run(self, test: Test, iterations: int, seed: int = 0) -> Histogram:
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    def close(self) -> None:
        """Release devices or threads held by the backend."""

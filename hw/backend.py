"""The backend contract (DESIGN.md, "Backends"): ``Backend.run(test, iterations, seed) -> Histogram``.

A backend runs a litmus test many times and counts the observed outcomes. Outcomes are tuples of
ints in the order of ``test.observables()`` (every register of every thread, then every global
location), so counting needs no per-iteration dicts.

The contracts are :class:`typing.Protocol` s: :class:`Backend` (what every backend provides),
:class:`ExhaustiveBackend` (a backend that can also enumerate every scheduling of a small test, the
simulator's ``--exhaustive`` mode), :class:`EvidenceBackend` (a backend that can show what it ran,
for findings) and :class:`BackendFactory` (what ``hw.FAMILIES`` names). A
backend states the contract it meets by subclassing the Protocol (which also gives it the default
``describe``/``close``); the harness asks ``isinstance(b, ExhaustiveBackend)``, never ``hasattr``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Protocol, runtime_checkable

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


@runtime_checkable
class Backend(Protocol):
    """A backend: runs a test ``iterations`` times and counts the outcomes.

    ``name`` is the backend name that selects it (``sim:acq-no-inv``, ``opencl:0:0``); ``run`` is
    deterministic for a seed where the device allows it and raises :class:`BackendError` (one
    line) for a test it cannot run.
    """

    name: str
    #: the test dialects this backend runs (the header word of their files)
    dialects: tuple[str, ...] = ("AMDGPU",)

    def why_not(self, dialect: str) -> str:
        """One line: why this backend does not run tests of ``dialect``."""
        return f"{self.name} has no kernels for {dialect} tests"

    def run(self, test: Test, iterations: int, seed: int = 0) -> Histogram:
        """Observed outcomes of ``iterations`` runs of ``test``."""
        ...

    def describe(self) -> str:
        """One line naming the backend and what it runs on."""
        return self.name

    def close(self) -> None:
        """Release devices or threads held by the backend."""


@runtime_checkable
class ExhaustiveBackend(Backend, Protocol):
    """A backend that can also run every scheduling of a (small) test (``run --exhaustive``)."""

    def explore(self, test: Test, max_schedules: int) -> tuple[Histogram, bool]:
        """Every scheduling up to ``max_schedules``, counted per outcome (counts are schedules),
        and whether the exploration was complete."""
        ...


@runtime_checkable
class EvidenceBackend(Backend, Protocol):
    """A backend that can say what it ran for a test, for a finding's report (the ``isa``
    backend: the OpenCL source, the clang command line and each thread's annotated machine code)."""

    def evidence(self, test: Test) -> str:
        """Markdown describing what ran for ``test`` (starts with a ``##`` heading)."""
        ...


#: What a backend may declare it can run (:class:`CapableBackend`); fuzz strategies draw only
#: programs within it. A backend without ``capabilities()`` runs everything its dialect has.
CAPABILITIES: dict[str, str] = {
    "av": "ld.vis / st.av on global memory",
    "noav": "the .noav MMRA on atomics and fences",
    "asyncmark": "async.mark / async.wait (asyncmark waits)",
    "lds-dma": "async.ld: LDS DMA from global memory",
    "lds": "LDS locations",
    "split-barriers": "bar.signal / bar.wait on the workgroup barrier",
    "cluster-barrier": "bar.signal / bar.wait on the cluster barrier",
    "named-barriers": "bar.init / bar.join / bar.leave and named barrier ids",
    "cas": "compare-exchange",
    "lanes": "several threads as lanes of one wave",
    "wave64": "64-lane waves",
    "tgsplit": "the waves of a workgroup on different CUs",
}


@runtime_checkable
class CapableBackend(Backend, Protocol):
    """A backend that declares what it can express (not probed: a table per target), so that
    a campaign draws only programs it can run instead of journaling them as refused."""

    def capabilities(self) -> frozenset[str]:
        """The names of :data:`CAPABILITIES` this backend has."""
        ...


@runtime_checkable
class BatchBackend(Backend, Protocol):
    """A backend that prepares many tests at once (the ``isa`` backend compiles them in one
    clang-22 call); a campaign hands it each batch of programs before running them."""

    def prepare(self, tests: list[Test]) -> None:
        """Get ready to run ``tests`` (best effort: a test it cannot prepare fails in ``run``).
        A backend whose ``prepare_overlaps`` attribute is true accepts ``cancel=`` (a
        ``threading.Event``) and may be called from a background thread while it runs other
        tests (the campaign overlaps the next batch's preparation with this one's runs)."""
        ...


@runtime_checkable
class CulpritBackend(Backend, Protocol):
    """A backend that can name the machine instruction at fault in a finding (the ``isa``
    backend), so that findings are grouped by it (fuzz/buckets.py)."""

    def culprit(self, test: Test, reads: list[tuple[int, int]]) -> dict | None:
        """``{"kind", "signature", ...}`` for a forbidden outcome of ``test`` the model blames on
        ``reads`` (thread, litmus instruction index); None when the backend cannot tell."""
        ...


class BackendFactory(Protocol):
    """What ``hw.FAMILIES`` names per backend family: ``factory(spec)`` with the part of the
    backend name after ``family:`` (None when there is none)."""

    def __call__(self, spec: str | None) -> Backend: ...

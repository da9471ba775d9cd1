"""Declared contracts: what code outside the oracle may rely on (``typing.Protocol`` s).

- :class:`OracleResult`: what :func:`oracle.check` returns (:class:`oracle.check.Result` is the
  implementation; :class:`oracle.judge.Judge` provides the same, each answer computed on
  demand); the harness (run, campaigns, minimizer, reports, the pytest plugin) reads
  these fields and nothing else.
- :class:`ConformanceModel`: what ``benchmarks/conformance.py`` and the conformance tests need
  from a model (:class:`oracle.registry.ModelUnit` is the implementation): its name, the
  dialects it reads, the Dat3M suites it is measured on and how each is compared, where a
  suite's expected verdicts are, and its Python reference (the fallback decider that
  ``--reference`` runs alone).

Both are ``runtime_checkable``: ``isinstance`` checks that the members exist (tests do).
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, runtime_checkable


@runtime_checkable
class OracleResult(Protocol):
    """The allowed outcomes of one test under one model."""

    model: str                  # the model that decided
    verdict: str                # "Ok" | "No" | "Undef" (LITMUS.md)
    #: every allowed outcome (observable -> int or litmus.UNDEF), distinct, column after column
    #: by value, undef after every value: a read-only sequence of dicts (oracle.states.States,
    #: which builds each dict when it is read; list() it for a list)
    states: Sequence[dict]
    flags: list[str]            # flags the model raised (e.g. "racy", "reference-partial")
    ub: list[str]               # reasons the program has undefined behaviour (static)
    candidates: int             # candidate executions evaluated
    consistent: int             # of which consistent
    seconds: float

    def allows(self, observed: dict) -> bool:
        """Does some allowed state match the concrete observed outcome (undef matches any)?"""
        ...

    @property
    def all_undef(self) -> bool:
        """Is every allowed state undef at every observable (or is there none)?"""
        ...


@runtime_checkable
class ConformanceModel(Protocol):
    """A model measured on conformance suites (shared/conformance, docs/conformance.md)."""

    name: str
    dialects: tuple[str, ...]
    #: suite name -> "verdict" (1 = the condition's verdict is Ok) or "race" (1 = no consistent
    #: execution is racy)
    suites: dict[str, str]
    #: Test, stop="verdict"|"race" -> OracleResult, deciding without the engine (the model in
    #: Python, its reference); None if none
    fallback: Callable | None

    def expected_csv(self, conformance_dir: str, suite: str) -> str:
        """The path of ``suite``'s expected verdicts (``path,1|0`` rows)."""
        ...

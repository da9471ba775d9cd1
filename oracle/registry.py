"""Model units: each memory model registers itself here (name, dialects, builder, vocabulary).

A *model unit* is one folder ``oracle/models/<name>/``: the model file ``<name>.model`` (the
relational language of :mod:`oracle.lang`), the event graph builder that turns a test into
pre-executions, and its ``__init__.py``, which calls :func:`register` with a :class:`ModelUnit`
declaring

- ``sets`` / ``relations``: the vocabulary the builder provides. Loading the model checks the
  model file against it: a name the file uses that is not declared is an error at the name's
  first use (file:line:col); a declared name that a built pre-execution lacks is an error too;
- ``hints``: which of the engine's search hints (:data:`oracle.hints.HINTS`) the builder gives;
  the engine uses those and no others;
- optionally a ``fallback`` deciding the verdict and flags of a program over 64 events whose search
  the engine cannot finish within :data:`oracle.check.FALLBACK_AFTER` steps (the Vulkan
  suite's cross-workgroup barrier programs), the conformance ``suites`` it is measured on, the
  relations explanations draw as one edge, the flags that mean undefined behaviour
  (``ub_flags``), and a ``size_check`` run on a test before any search (a builder whose
  limit a test's text already shows it is over: AMDGPU), and a ``compact`` builder for verdicts
  alone (fewer pre-executions where the builder enumerates values no path depends on: rc11).

A folder may register several units (variants of one model reading a switch differently, e.g.
``tileir`` and ``tileir-nochain``), each with its own model file ``<name>.model`` in that folder.

The units are found by listing ``oracle/models/`` (a subfolder with an ``__init__.py``) and
imported on first use (:func:`get` imports the folder of that name alone, so a check loads its
own model only); nothing else names them. The default model of each dialect is
:data:`litmus.dialects.DEFAULT_MODEL` (litmus imports no oracle code); :func:`check_defaults`
checks that every default names a unit that reads that dialect.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from typing import Callable

from .errors import OracleError
from .hints import HINTS

MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


@dataclass(frozen=True)
class ModelUnit:
    """One memory model: see the module docstring."""

    name: str
    dialects: tuple[str, ...]
    build: Callable                 # Test -> list[PreExecution]
    sets: frozenset
    relations: frozenset
    hints: frozenset = frozenset()
    #: conformance suite (``expected/<SUITE>.csv`` in shared/conformance) -> "verdict" | "race"
    suites: dict = field(default_factory=dict)
    #: relations an explanation shows as one labelled edge, and names shown as another's label
    edges: tuple[str, ...] = ()
    aliases: dict = field(default_factory=dict)
    directory: str = ""
    #: flags of the model file that mean undefined behaviour (Tile IR: ``racy``): a consistent
    #: execution raising one makes the verdict ``Undef``, and ``ub`` names the flag and the pair
    #: of events that raised it (oracle/ubflags.py)
    ub_flags: tuple[str, ...] = ()
    #: Test, stop="verdict"|"race" -> Result: the same model in Python (its reference), deciding
    #: what the engine cannot finish (see the module docstring); None if none
    fallback: Callable | None = None
    #: Test -> None: a bound the builder's limit puts on a test of its dialects before any search
    #: (raises :class:`~oracle.errors.TooManyEvents`; AMDGPU: instructions plus locations over
    #: 64, a straight-line program's lower bound on its events); None if none
    size_check: Callable | None = None
    #: Test, most -> pre-executions for a verdict alone, or None where the builder's serve as
    #: well (it makes at most ``most``): fewer ones with the same consistent executions and
    #: outcomes but other candidate counts (rc11: rmws whose values decide no path left to the
    #: search, :func:`oracle.models.rc11.builder.build_compact`); None if the unit has none
    compact: Callable | None = None

    @property
    def model_file(self) -> str:
        return os.path.join(self.directory, f"{self.name}.model")

    @property
    def vocabulary(self) -> frozenset:
        return self.sets | self.relations

    def expected_csv(self, conformance_dir: str, suite: str) -> str:
        """Where ``suite``'s expected verdicts are (Dat3M's layout: ``expected/<SUITE>.csv``)."""
        if suite not in self.suites:
            raise OracleError(f"model {self.name} is not measured on suite {suite!r} "
                              f"(its suites: {', '.join(sorted(self.suites)) or 'none'})")
        return os.path.join(conformance_dir, "expected", f"{suite}.csv")


_UNITS: dict[str, ModelUnit] = {}


def register(unit: ModelUnit) -> ModelUnit:
    """Record a unit (called by ``oracle/models/<name>/__init__.py``); checks its declaration."""
    where = f"oracle/models/{unit.name}/__init__.py"
    unknown = sorted(unit.hints - HINTS.keys())
    if unknown:
        raise OracleError(f"{where}: unknown search hint(s) {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(HINTS))})")
    for h in sorted(unit.hints):
        kind = HINTS[h][0]
        if h not in (unit.sets if kind == "set" else unit.relations):
            raise OracleError(f"{where}: hint {h!r} must also be declared as a {kind} the "
                              f"builder provides")
    for req in ("R", "W"):
        if req not in unit.sets:
            raise OracleError(f"{where}: the search needs the set {req!r} in the vocabulary")
    if not os.path.isfile(unit.model_file):
        raise OracleError(f"{where}: model file {unit.model_file} is missing")
    _UNITS[unit.name] = unit
    return unit


def _discover() -> None:
    for d in sorted(os.listdir(MODELS_DIR)):
        if d not in _UNITS and os.path.isfile(os.path.join(MODELS_DIR, d, "__init__.py")):
            importlib.import_module(f"oracle.models.{d}")


def _load(name: str) -> None:
    """Import the unit in folder ``name`` only (a check needs its own model, not all of them)."""
    if name.isidentifier() and os.path.isfile(os.path.join(MODELS_DIR, name, "__init__.py")):
        importlib.import_module(f"oracle.models.{name}")


def names() -> list[str]:
    _discover()
    return sorted(_UNITS)


def get(name: str) -> ModelUnit:
    """The unit registered as ``name``; an unknown name is an :class:`OracleError`."""
    unit = _UNITS.get(name)
    if unit is None:
        _load(name)
        unit = _UNITS.get(name)
    if unit is None:                    # registered by a folder of another name
        _discover()
        unit = _UNITS.get(name)
    if unit is None:
        raise OracleError(f"unknown model {name!r} (available: {', '.join(names())})")
    return unit


def for_dialect(dialect: str) -> list[ModelUnit]:
    """The units that read tests of ``dialect``."""
    _discover()
    return [u for u in _UNITS.values() if dialect in u.dialects]


def check_defaults(defaults: dict[str, str]) -> list[str]:
    """Problems with a dialect -> default model table: a default that is registered but does
    not read the dialect, or a registered unit's dialect whose default is another unit that
    does not exist. Dialects with no model yet (their default not registered) are fine."""
    _discover()
    out = []
    for dialect, model in defaults.items():
        unit = _UNITS.get(model)
        if unit is not None and dialect not in unit.dialects:
            out.append(f"default model {model!r} of {dialect} does not read {dialect}")
    for unit in _UNITS.values():
        for d in unit.dialects:
            if d not in defaults:
                out.append(f"dialect {d} of model {unit.name!r} has no default model")
    return out

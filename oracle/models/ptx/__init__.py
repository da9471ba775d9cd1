"""The PTX 7.5 model unit (with proxies), for tests in the PTX dialect (docs/conformance.md).

``ptx.model`` is the model (it includes ``ptx-relations.model`` and ``ptx-axioms.model``, which
``oracle/models/ptx60`` shares); :mod:`.builder` turns PTX tests into pre-executions (one per
combination of thread paths, barrier outcome and Fence-SC order).
"""

import os as _os

from oracle.registry import ModelUnit, register

from .builder import RELS, SETS, build

UNIT = register(ModelUnit(
    name="ptx",
    dialects=("PTX",),
    build=build,
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    # co: every write, the initial one first; coherence pruning on uniform locations (builder doc)
    hints=frozenset({"CO", "IW", "CohR", "incl", "cohord"}),
    suites={"PTXv7_5": "verdict"},
    edges=("po", "rf", "co", "synchronizes", "rmw"),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
))

"""The RC11 model unit (repaired C11, for tests in the C dialect; docs/conformance.md).

``rc11.model`` is the model; :mod:`.builder` turns C tests into pre-executions (one per
combination of thread paths). The same model in Python, the tests' independent reference, is
``tests/reference_rc11.py``.
"""

import os as _os

from oracle.registry import ModelUnit, register

from .builder import RELS, SETS, build



UNIT = register(ModelUnit(
    name="rc11",
    dialects=("C",),
    build=build,
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    # reads always read a write (C has no undef) and are coherent; po is part of every hb; the
    # final reads read the co-last write (rc11.model: empty stale_final)
    hints=frozenset({"CO", "IW", "nrf", "CohR", "cohord", "CoLast"}),
    suites={"RC11": "verdict"},
    edges=("po", "sb", "rf", "co", "fr", "sw", "rmw"),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
))

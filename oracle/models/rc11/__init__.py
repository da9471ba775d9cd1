"""The RC11 model unit (repaired C11, for tests in the C dialect; docs/conformance.md).

``rc11.model`` is the model; :mod:`.builder` turns C tests into pre-executions (one per
combination of thread paths). :mod:`.reference` is the same model in Python, written independently of the engine: the tests'
reference, and the fallback that decides the verdict and flags of a program over 64 events whose
search the engine cannot finish (:func:`oracle.check.check`). :func:`.builder.build_compact` gives a
verdict fewer pre-executions where rmws' values decide no path (``ModelUnit.compact``).
"""

import os as _os

from oracle.registry import ModelUnit, register

from .builder import RELS, SETS, build, build_compact


def _fallback(test, stop=None):
    """The Python version of the model (imported on first use: most programs never need it)."""
    from .reference import check
    return check(test, stop=stop)


def _compact(test, most):
    """:func:`.builder.build_compact` (``ModelUnit.compact``)."""
    return build_compact(test, most=most)


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
    fallback=_fallback,
    compact=_compact,
))

"""The Vulkan memory model unit (for tests in the Vulkan dialect; docs/conformance.md).

``vulkan.model`` is the model; :mod:`.builder` turns Vulkan tests into pre-executions (one per
combination of thread paths and control-barrier variant). :mod:`.reference` (with
:mod:`.reference_static`) is the same model in Python, written independently of the engine: the
tests' reference, and the fallback that decides the verdict and flags of a program over 64 events whose
search the engine cannot finish (:func:`oracle.check.check`).
"""

import os as _os

from oracle.models import with_declared_properties
from oracle.registry import ModelUnit, register

from .builder import RELS, SETS
from .builder import build as _build_with

build = with_declared_properties("vulkan", _build_with)


def _fallback(test, stop=None):
    """The Python version of the model (imported on first use: most programs never need it)."""
    from .reference import check
    return check(test, stop=stop)


UNIT = register(ModelUnit(
    name="vulkan",
    dialects=("Vulkan", "VULKAN"),
    build=build,
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    # the final reads read the co-last write (vulkan.model: empty stale_final)
    hints=frozenset({"CO", "IW", "CoLast"}),
    suites={"VULKAN": "verdict", "VULKAN-DR": "race"},
    edges=("po", "rf", "co", "fr", "sw", "rmw"),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
    fallback=_fallback,
))

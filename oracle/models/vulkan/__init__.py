"""The Vulkan memory model unit (for tests in the Vulkan dialect; docs/conformance.md).

``vulkan.model`` is the model; :mod:`.builder` turns Vulkan tests into pre-executions (one per
combination of thread paths and control-barrier variant) from the static relations of
:mod:`.static`. The same model in Python, the tests' independent reference, is
``tests/reference_vulkan.py``.
"""

import os as _os

from oracle.registry import ModelUnit, register

from .builder import RELS, SETS
from .builder import build as _build_with

_ALLOW: list = []


def build(test):
    """The builder, given the model file's declared properties (``allow thin-air``)."""
    if not _ALLOW:
        from oracle.lang import load_model
        _ALLOW.append(load_model("vulkan").allow)
    return _build_with(test, allow=_ALLOW[0])


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
))

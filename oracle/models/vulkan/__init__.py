"""The Vulkan memory model unit (for tests in the Vulkan dialect; docs/conformance.md).

``vulkan.model`` is the model; :mod:`.builder` turns Vulkan tests into pre-executions (one per
combination of thread paths and control-barrier variant); :mod:`.fallback` is the same model in
Python over bit sets, which decides programs over the engine's 64 events.
"""

import os as _os

from oracle.models import with_declared_properties
from oracle.registry import ModelUnit, register

from . import fallback
from .builder import RELS, SETS
from .builder import build as _build_with

build = with_declared_properties("vulkan", _build_with)


UNIT = register(ModelUnit(
    name="vulkan",
    dialects=("Vulkan", "VULKAN"),
    build=build,
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    hints=frozenset({"CO", "IW"}),
    fallback=fallback.check,
    suites={"VULKAN": "verdict", "VULKAN-DR": "race"},
    edges=("po", "rf", "co", "fr", "sw", "rmw"),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
))

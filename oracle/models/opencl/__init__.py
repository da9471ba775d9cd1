"""The OpenCL model unit (Batty, Donaldson, Wickerson, "Overhauling SC atomics in C11 and
OpenCL", POPL 2016), for tests in the OPENCL dialect (docs/conformance.md, docs/opencl.md).

``opencl.model`` is the model; :mod:`.builder` turns OPENCL tests into pre-executions (the C
builder's events plus regions, scopes and barrier fences).
"""

import os as _os

from oracle.models import with_declared_properties
from oracle.registry import ModelUnit, register

from .builder import RELS, SETS
from .builder import build as _build_with

build = with_declared_properties("opencl", _build_with)


UNIT = register(ModelUnit(
    name="opencl",
    # CUDA (litmus/parse_cuda.py): scoped C++ read with block=wg, device=agent, system=all
    # devices, the scoped-C++ model of Lustig et al. ASPLOS 2019 (docs/compilers.md)
    dialects=("OPENCL", "CUDA"),
    build=build,
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    # coherence binds atomic locations and hb only, and sb is in no hb for a generic-space
    # location: per-location coherence pruning would be unsound; nrf only holds where the
    # location has a region, and the builder gives it only there
    hints=frozenset({"CO", "IW", "nrf"}),
    suites={"OPENCL": "verdict", "OPENCL-DR": "race"},
    edges=("po", "sb", "rf", "co", "fr", "rmw", "syncbar"),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
))

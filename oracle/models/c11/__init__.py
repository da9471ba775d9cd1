"""The C11 model unit (Batty et al. POPL 2011 with the simplified SC axiom of Batty, Donaldson,
Wickerson, POPL 2016: the C11 the RC11 paper starts from), for tests in the C dialect
(``scopefuzz check --model c11``; rc11 stays the C dialect's default; docs/conformance.md).

``c11.model`` is the model; the event graph builder is rc11's (:mod:`oracle.models.rc11.builder`),
run with the model file's declared properties: c11 has no no-thin-air axiom, so reads may take
values that only a (po | rf) cycle or thin air justifies.
"""

import os as _os

from oracle.models import with_declared_properties
from oracle.models.rc11 import UNIT as _RC11
from oracle.models.rc11.builder import build as _build_with
from oracle.registry import ModelUnit, register

build = with_declared_properties("c11", _build_with)


UNIT = register(ModelUnit(
    name="c11",
    dialects=("C",),
    build=build,
    sets=_RC11.sets,
    relations=_RC11.relations,
    # C11's coherence (irreflexive (rf^-1)? ; mo ; rf? ; hb and rf ; hb, with po in hb) gives
    # irreflexive hb ; eco for every read: the same pruning as rc11 is sound
    hints=_RC11.hints,
    suites={"C11": "verdict"},
    edges=("po", "sb", "rf", "co", "fr", "sw", "rmw"),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
))

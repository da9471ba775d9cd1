"""The Tile IR model units, for tests in the TILEIR dialect (docs/tileir.md).

``tileir.model`` is the default reading of CUDA Tile IR's chapter 7 with its missing 7.7/7.8
reconstructed (``tileir-relations.model``, ``tileir-hb.model``, ``tileir-axioms.model``, shared
by every variant). Each rule the seed does not state is an assumption with a switch; a variant
unit flips one of them:

- ``tileir-nochain``: observation does not extend through rmw chains [A3];
- ``tileir-patterns``: PTX's release/acquire patterns (an op then a strong same-location access
  in token order) [A4];
- ``tileir-cause``: coherence and causality use PTX's causality (observation ; hb) [A8];
- ``tileir-casnowrite``: a failed atomic_cas lane does not write [A2] (the model file's
  ``allow failed-cas-write``, read by the builder).

Races are undefined behaviour: the model's ``racy`` flag is a UB flag (verdict ``Undef``, the
racing pair in ``ub``).
"""

import os as _os

from oracle.registry import ModelUnit, register

from .builder import RELS, SETS
from .builder import build as _build_with

VARIANTS = ("tileir", "tileir-nochain", "tileir-patterns", "tileir-cause", "tileir-casnowrite")
_ALLOW: dict = {}


def _builder(name: str):
    def build(test):
        """The builder, given the variant's declared properties (``allow failed-cas-write``)."""
        if name not in _ALLOW:
            from oracle.lang import load_model
            _ALLOW[name] = load_model(name).allow
        return _build_with(test, failed_cas_writes="failed-cas-write" in _ALLOW[name])
    return build


UNITS = {name: register(ModelUnit(
    name=name,
    dialects=("TILEIR",),
    build=_builder(name),
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    hints=frozenset({"CO", "IW", "Indep"}),
    edges=("tko", "rf", "co", "fr", "sw", "rmw"),
    ub_flags=("racy",),
    directory=_os.path.dirname(_os.path.abspath(__file__)),
)) for name in VARIANTS}
UNIT = UNITS["tileir"]

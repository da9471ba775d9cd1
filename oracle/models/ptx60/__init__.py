"""The PTX 6.0 model unit (no proxies), for tests in the PTX dialect without aliases, proxies and
proxy fences (docs/conformance.md).

``ptx60.model`` shares its relations and axioms with ``oracle/models/ptx`` (by ``include``);
the builder is the ptx unit's, refusing what PTX 6.0 does not have.
"""

import functools
import os as _os

from oracle.models.ptx import UNIT as _PTX
from oracle.models.ptx.builder import build as _build
from oracle.registry import ModelUnit, register

UNIT = register(ModelUnit(
    name="ptx60",
    dialects=_PTX.dialects,
    build=functools.partial(_build, proxies=False, model="ptx60"),
    sets=_PTX.sets,
    relations=_PTX.relations,
    hints=_PTX.hints,
    suites={"PTXv6_0": "verdict"},
    edges=_PTX.edges,
    directory=_os.path.dirname(_os.path.abspath(__file__)),
))

"""The AMDGPU memory model unit (DESIGN.md "The AMDGPU model").

``amdgpu.model`` is the model; :mod:`.builder` turns AMDGPU-dialect tests into pre-executions
(one pass over the instructions, then :mod:`.static`'s numba pass for the relations; barrier
schedules from :mod:`.barriers`). The vocabulary below is the builder's, in its mask and matrix
order (:data:`.static.SETS`, :data:`.static.RELS`).
"""

import os as _os

from litmus.jitcache import guard as _guard

_HERE = _os.path.dirname(_os.path.abspath(__file__))
#: static.py's compiled code embeds the engine's helpers and the event columns (litmus/jitcache.py)
_guard(_HERE, ["static.py", "../../engine.py", "../../events.py"])

from oracle.registry import ModelUnit, register  # noqa: E402

from .builder import build  # noqa: E402
from .size import check_size  # noqa: E402
from .static import RELS, SETS  # noqa: E402

UNIT = register(ModelUnit(
    name="amdgpu",
    dialects=("AMDGPU",),
    build=build,
    sets=frozenset(SETS),
    relations=frozenset(RELS),
    # every read is in UndefOK or in CohR (rule 2 always defines it, so per-location coherence
    # holds); a read in CohA reading a write in CohA with inclusive scopes is, if defined,
    # defined by rule 2 (coherent too); cohord = po | ini | fin | aso is part of every hb
    hints=frozenset({"CO", "IW", "UndefOK", "Indep", "nrf", "CohR", "CohA", "CohRmw",
                     "cohord", "incl"}),
    edges=("po", "rf", "co", "fr", "sw", "rmw", "lo", "ini", "fin", "av", "vis", "bsw", "bxb",
           "aso", "poa"),
    aliases={"rf2": "rf", "co2": "co", "fr2": "fr"},
    directory=_HERE,
    size_check=check_size,
))

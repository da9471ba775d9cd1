"""The source families of the compilers campaign (CUDA, C, OPENCL) share one draw (the CUDA
draw of :mod:`fuzz.cuda_strategies`, spelled per dialect by :mod:`fuzz.c_strategies`);
:func:`source_family` builds the family of one spelling."""

from __future__ import annotations

from ..c_strategies import draw_source, render_source
from ..cuda_strategies import smaller
from . import ProgramFamily


def source_family(dialect: str, source: str) -> ProgramFamily:
    """The family of source dialect ``dialect`` (``source``: its ``--source`` name)."""

    def draw(seed: int, index: int, features=None, near_miss: float = 0.5):
        return draw_source(seed, index, source)

    def render(prog) -> str:
        return render_source(prog, source)

    return ProgramFamily(dialect=dialect, loop="compile", draw=draw,
                         features=(source,), parse_features=lambda text: frozenset((source,)),
                         render=render, smaller=smaller)

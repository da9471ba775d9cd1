"""The PTX program family: :mod:`fuzz.ptx_strategies` (``scopefuzz fuzz --model ptx``)."""

from __future__ import annotations

from ..ptx_strategies import PTX_FEATURES, draw_program, parse_ptx_features
from . import ProgramFamily

#: the program a PTX campaign runs before its clock starts
WARM_UP_PTX = """PTX warm-up
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

FAMILY = ProgramFamily(dialect="PTX", loop="backend", draw=draw_program, features=PTX_FEATURES,
                       parse_features=parse_ptx_features, warm_up=lambda: WARM_UP_PTX)

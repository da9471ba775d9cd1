"""The AMDGPU program family: :mod:`fuzz.strategies` (``scopefuzz fuzz --backend B``, the
default), features narrowed to what the backend declares it can express."""

from __future__ import annotations

from oracle.deadline import WARM_UP_TEST

from ..strategies import FEATURES, draw_program, for_backend, parse_features
from . import ProgramFamily


def _warm_up() -> str:
    return WARM_UP_TEST


FAMILY = ProgramFamily(dialect="AMDGPU", loop="backend", draw=draw_program, features=FEATURES,
                       parse_features=parse_features, narrow=for_backend, warm_up=_warm_up)

"""The TILEIR program family: :mod:`fuzz.tileir_strategies`, the token-graph programs of the
strict-weakening campaign (``scopefuzz fuzz --against ptx``, docs/tileir.md). It has no
features: ``features`` and ``near_miss`` are accepted and ignored."""

from __future__ import annotations

from ..tileir_strategies import draw_tileir
from . import ProgramFamily


def draw(seed: int, index: int, features=None, near_miss: float = 0.5):
    """Program ``index`` of the weakening campaign with seed ``seed``."""
    return draw_tileir(seed, index)


FAMILY = ProgramFamily(dialect="TILEIR", loop="weakening", draw=draw,
                       hint="Tile IR programs: fuzz --against ptx, docs/tileir.md")

"""A planted flaw for the strict-weakening campaign's tests, usable in worker processes.

The ``tileir-sc`` unit is the tileir model plus SC over token order (``acyclic tko | rf | co |
fr``): stronger than PTX, so SB is a counterexample. :class:`PlantedWeakeningCampaign` is a
:class:`fuzz.weakening_campaign.WeakeningCampaign` whose program 1, 4, 7, ... is SB (the others the
TILEIR family's draws), registering the unit in its own process first: the workers of a
``--jobs N`` campaign are fresh interpreters (spawn) that import this module by name.
"""

from __future__ import annotations

import dataclasses
import os

from conftest import CORPORA

NAME = "tileir-sc"
SC_MODEL = """include "tileir.model"
# a planted flaw: Tile IR made sequentially consistent over token order, stronger than PTX
acyclic tko | rf | co | fr as sc
"""
SB = CORPORA / "tileir" / "SB+rlx.device.xblock.litmus"


def register_planted(directory: str) -> str:
    """Write the unit's model files under ``directory`` and register it (idempotent)."""
    from oracle import registry
    from oracle.lang import load_model
    from oracle.models.tileir import UNIT
    registry.names()                  # every unit imported and registered before the copy
    if NAME in registry._UNITS:
        return NAME
    d = os.path.join(directory, NAME)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(UNIT.directory):
        if f.endswith(".model"):
            with open(os.path.join(UNIT.directory, f)) as src, \
                    open(os.path.join(d, f), "w") as dst:
                dst.write(src.read())
    with open(os.path.join(d, f"{NAME}.model"), "w") as f:
        f.write(SC_MODEL)
    load_model.cache_clear()
    registry.register(dataclasses.replace(UNIT, name=NAME, directory=d))
    return NAME


def planted_family():
    """The TILEIR family with SB at every program ``i % 3 == 1``."""
    from litmus import parse_file
    from fuzz import programs
    sb = parse_file(str(SB))
    tile = programs.family("TILEIR")

    def draw(seed, i, features=None, near_miss=0.5):
        return dataclasses.replace(sb, name=f"sb-{i}") if i % 3 == 1 else tile.draw(seed, i)
    return dataclasses.replace(tile, draw=draw)


def model_home(config) -> str:
    """Where a campaign's processes keep the unit's files (beside the campaign directory)."""
    root = config.findings_root or config.out
    return os.path.join(os.path.dirname(os.path.abspath(root)), "planted-model")


from fuzz.weakening_campaign import ParallelWeakeningCampaign, WeakeningCampaign  # noqa: E402


class PlantedWeakeningCampaign(WeakeningCampaign):
    def __init__(self, config, **kw):
        register_planted(model_home(config))
        super().__init__(config, **kw)
        self.family = planted_family()


class PlantedParallelCampaign(ParallelWeakeningCampaign):
    shard_campaign = PlantedWeakeningCampaign

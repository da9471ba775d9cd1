"""``scopefuzz bench`` section ``scaling``: the oracle's time per program size beside herd7's
figures, from ``benchmarks/scaling.py`` (issue 16's families)."""

from __future__ import annotations

from . import script_figures


def run(args):
    return script_figures("scaling", args)

"""``scopefuzz bench`` section ``oracle``: figures from ``benchmarks/bench_oracle.py``."""

from __future__ import annotations

from . import script_figures


def run(args):
    return script_figures("bench_oracle", args)

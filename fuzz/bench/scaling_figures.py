"""``scopefuzz bench`` section ``scaling``: the oracle's time per program size beside herd7's
figures, from ``benchmarks/scaling.py`` (issue 16's families)."""

from __future__ import annotations

import importlib.util

from . import ROOT, BenchError

SCRIPT = ROOT / "benchmarks" / "scaling.py"


def run(args):
    if not SCRIPT.is_file():
        raise BenchError(f"{SCRIPT}: benchmark script not found (run from a source checkout)")
    spec = importlib.util.spec_from_file_location("scaling", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.figures(quick=args.quick)

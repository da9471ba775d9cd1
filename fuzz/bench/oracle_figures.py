"""``scopefuzz bench`` section ``oracle``: figures from ``benchmarks/bench_oracle.py``."""

from __future__ import annotations

import importlib.util

from . import ROOT, BenchError

SCRIPT = ROOT / "benchmarks" / "bench_oracle.py"


def run(args):
    if not SCRIPT.is_file():
        raise BenchError(f"{SCRIPT}: benchmark script not found (run from a source checkout)")
    spec = importlib.util.spec_from_file_location("bench_oracle", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.figures(quick=args.quick)

"""The oracle's ``scopefuzz bench`` section: figures from ``benchmarks/bench_oracle.py``."""

from __future__ import annotations

import importlib.util
import os

from .errors import OracleError

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks",
                      "bench_oracle.py")


def run(args):
    if not os.path.isfile(SCRIPT):
        raise OracleError(f"{SCRIPT}: benchmark script not found (run from a source checkout)")
    spec = importlib.util.spec_from_file_location("bench_oracle", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.figures(quick=getattr(args, "quick", False))

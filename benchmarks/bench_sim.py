"""Simulator throughput and weakness: randomized iterations/s per test size, and the fraction of
allowed states the correct simulator reaches in exhaustive mode.

Run: ``.venv/bin/python benchmarks/bench_sim.py [--quick]`` or ``scopefuzz bench --only sim``.
The figures are computed in ``fuzz/bench/sim_figures.py``; this script only prints them.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzz.bench import print_rows, sim_figures as bench  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="1 million iterations per figure (not 4) and no corpus pass")
    args = ap.parse_args()
    print_rows(bench.run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""OpenCL runner throughput: instances/s on the default OpenCL device (PoCL on this machine).

Run: ``.venv/bin/python benchmarks/bench_opencl.py [--quick]`` or ``scopefuzz bench --only opencl``.
Measures ``Backend.run`` end to end (launches, read-back, outcome counting; the kernel build is
excluded by a warm-up run) for a 2-thread test (SB) and a 4-thread test (IRIW), and how often the
weak outcome showed. The figures are in ``hw/opencl/bench.py``; this script only prints them.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from hw.opencl import bench  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 million instances per figure, not 10")
    args = ap.parse_args()
    for label, value, unit in bench.run(args):
        v = f"{value:,.1f}" if isinstance(value, float) else f"{value}"
        print(f"  {label:<58} {v:>14} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

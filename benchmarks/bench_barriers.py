"""Time ``oracle.barriers.enumerate_schedules`` on the corpus programs that use barriers.

Prints the mean and worst microseconds per program (best of ``--reps`` timings per program) and
the number of programs. Figures are reported, never asserted (tests do not time anything).

    .venv/bin/python benchmarks/bench_barriers.py [--reps N] [DIR ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import litmus  # noqa: E402
from oracle.models.amdgpu import UNIT as AMDGPU  # noqa: E402
from oracle.models.amdgpu.barriers import enumerate_schedules  # noqa: E402


def barrier_tests(dirs):
    """Parsed AMDGPU corpus tests with at least one barrier instruction, with their file names."""
    out = []
    for f in litmus.litmus_files(dirs):
        t = litmus.parse_file(f)
        if t.dialect in AMDGPU.dialects and any(ins.is_barrier for _, _, ins in t.instructions()):
            out.append((f, t))
    return out


def time_one(test, reps: int) -> float:
    """Best of ``reps`` wall-clock timings of one enumeration, in microseconds."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        enumerate_schedules(test)
        best = min(best, time.perf_counter() - t0)
    return best * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--verbose", action="store_true", help="one line per program")
    ap.add_argument("dirs", nargs="*", default=[os.path.join(ROOT, "corpora")])
    args = ap.parse_args(argv)
    tests = barrier_tests(args.dirs)
    if not tests:
        print("no barrier programs found")
        return 1
    for _, t in tests:            # warm up (imports, first-call costs)
        enumerate_schedules(t)
    times = [(time_one(t, args.reps), f) for f, t in tests]
    if args.verbose:
        for us, f in sorted(times, reverse=True):
            print(f"{us:9.1f} us  {os.path.relpath(f, ROOT)}")
    us = [x for x, _ in times]
    worst = max(times)
    print(f"barrier programs: {len(us)}; enumerate_schedules mean {sum(us) / len(us):.1f} us, "
          f"worst {worst[0]:.1f} us ({os.path.relpath(worst[1], ROOT)}), best of {args.reps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

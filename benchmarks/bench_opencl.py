"""OpenCL runner throughput: instances/s on the default OpenCL device (PoCL on this machine).

Run: ``.venv/bin/python benchmarks/bench_opencl.py [--quick]`` or ``scopefuzz bench --only opencl``;
``--soak N`` instead runs the fuzzer's seeded programs on the device against the oracle.
Measures ``Backend.run`` end to end (launches, read-back, outcome counting; the kernel build is
excluded by a warm-up run) for a 2-thread test (SB) and a 4-thread test (IRIW), and how often the
weak outcome showed. The figures are in ``fuzz/bench/opencl_figures.py``; this script only prints them.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzz.bench import print_rows, opencl_figures as bench  # noqa: E402


def soak(n: int, seed: int, iterations: int) -> None:
    """Run the fuzzer's seeded programs ``0..n-1`` (every feature) on the default device and count
    observed outcomes the oracle forbids (expected: none)."""
    import time

    import litmus
    import oracle
    from fuzz.compare import compare
    from fuzz.strategies import FEATURES, draw_program
    from hw.opencl.codegen import barrier_problem
    from hw.opencl.runner import OpenCLBackend

    backend = OpenCLBackend(None)
    stats = {"programs": n, "run": 0, "undef": 0, "refused": 0, "oracle errors": 0,
             "with a forbidden outcome": 0}
    t0 = time.perf_counter()
    todo = []
    for i in range(n):
        t = draw_program(seed, i, frozenset(FEATURES))
        try:
            res = oracle.check(t)
        except oracle.OracleError:
            stats["oracle errors"] += 1
            continue
        if res.verdict == "Undef":
            stats["undef"] += 1
        elif barrier_problem(t):
            stats["refused"] += 1
        else:
            todo.append((t, res))
    backend.prepare([t for t, _ in todo])
    for t, res in todo:
        h = backend.run(t, iterations, 1)
        stats["run"] += 1
        bad = compare(res, h, t.condition).forbidden_outcomes()
        if bad:
            stats["with a forbidden outcome"] += 1
            print(f"FORBIDDEN {litmus.format_outcome(bad[0][0])} in:\n{litmus.format_test(t)}")
    for k, v in stats.items():
        print(f"  soak: {k:<40} {v:>8}")
    print(f"  soak: {iterations} instances each, {time.perf_counter() - t0:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 million instances per figure, not 10")
    ap.add_argument("--soak", type=int, metavar="N", default=0,
                    help="instead: run the fuzzer's seeded programs 0..N-1 against the oracle")
    ap.add_argument("--seed", type=int, default=99, help="campaign seed of the soak programs")
    ap.add_argument("--iterations", type=int, default=20000, help="instances per soak program")
    args = ap.parse_args()
    if args.soak:
        soak(args.soak, args.seed, args.iterations)
        return 0
    print_rows(bench.run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

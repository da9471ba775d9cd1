"""Throughput of compile + read back (programs/s, one worker), empty and warm compile cache.

    python -m hw.ptxc.bench [--compiler SPEC] [--limit N] FILE|DIR...

Runs every program the front end can express once with an empty cache (a fresh temporary cache
folder, nothing in memory), then again from the disk cache in a fresh process state (memo
cleared: what a new campaign worker sees), then from the in-process memo. Prints programs/s for
each and the median and worst seconds per program.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hw.ptxc.bench")
    ap.add_argument("--compiler", default="clang-cuda")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="scopefuzz-ptxc-bench-")
    os.environ["SCOPEFUZZ_ISA_CACHE"] = tmp          # before hw.isa's cache_dir() is first read
    from litmus.dialects import litmus_files, parse_file

    from . import compile_test, parse_spec, refusal, toolchain
    c = parse_spec(a.compiler)
    tests = []
    for f in litmus_files(a.paths):
        try:
            t = parse_file(f)
        except Exception:
            continue
        if refusal(t, c) is None:
            tests.append(t)
    if a.limit:
        tests = tests[:a.limit]
    if not tests:
        print("no program to compile", file=sys.stderr)
        return 2
    toolchain.version(c.name)                       # the --version probe, once, outside timing
    for label, clear in (("empty cache", True), ("warm disk cache", True),
                         ("warm memo", False)):
        if clear:
            toolchain.clear_memo()
        times = []
        t0 = time.perf_counter()
        for t in tests:
            s = time.perf_counter()
            compile_test(t, c)
            times.append(time.perf_counter() - s)
        total = time.perf_counter() - t0
        print(f"{c.spec()} {label}: {len(tests)} programs in {total:.2f} s = "
              f"{len(tests) / total:.1f} programs/s; per program median "
              f"{statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

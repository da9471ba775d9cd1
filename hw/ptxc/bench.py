"""Throughput of compile + read back (programs/s, one worker), empty and warm compile cache.

    python -m hw.ptxc.bench [--compiler SPEC] [--limit N] [--batch N] FILE|DIR...

Runs every program the front end can express once with an empty cache (a fresh temporary cache
folder, nothing in memory), then again from the disk cache in a fresh process state (memo
cleared: what a new campaign worker sees), then from the in-process memo. Prints programs/s for
each and the median and worst seconds per program. ``--batch N``: the empty-cache run compiles
N programs per compiler run (:func:`hw.ptxc.compile_many`: one translation unit, kernels side
by side) and prints seconds per batch instead of per program (no warm runs).

Besides wall-clock programs/s it prints programs per CPU second (this process and the compilers
it ran, user + system): on a shared machine the wall clock measures the load as much as the
compiler, while the CPU figure is what one worker on an idle core would do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from litmus.dialects import litmus_files, parse_file

from . import compile_many, compile_test, parse_spec, refusal, toolchain


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hw.ptxc.bench")
    ap.add_argument("--compiler", default="clang-cuda")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="scopefuzz-ptxc-bench-")
    os.environ["SCOPEFUZZ_ISA_CACHE"] = tmp          # before hw.isa's cache_dir() is first read

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
    # (a batch's cache entry is the whole batch's: the warm runs, one program at a time, are
    # measured without --batch)
    for label, clear in (("empty cache", True),) + ((("warm disk cache", True),
                                                     ("warm memo", False)) if a.batch == 1 else ()):
        if clear:
            toolchain.clear_memo()
        batch = a.batch if label == "empty cache" else 1
        times = []
        c0 = _cpu()
        t0 = time.perf_counter()
        errors = 0
        for k in range(0, len(tests), batch):
            s = time.perf_counter()
            if batch == 1:
                compile_test(tests[k], c)
            else:
                errors += sum(isinstance(r, Exception) for r in
                              compile_many(tests[k:k + batch], c))
            times.append(time.perf_counter() - s)
        total = time.perf_counter() - t0
        cpu = _cpu() - c0
        per = "program" if batch == 1 else f"batch of {batch}"
        print(f"{c.spec()} {label}: {len(tests)} programs in {total:.2f} s = "
              f"{len(tests) / total:.1f} programs/s ({len(tests) / cpu:.1f} per CPU s); per {per} "
              f"median {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms"
              + (f"; {errors} not read back" if errors else ""), flush=True)
    return 0


def _cpu() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


if __name__ == "__main__":
    sys.exit(main())

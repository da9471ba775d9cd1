"""Fence-SC order in the PTX model: check time and peak memory where fence.sc abound.

    PYTHONPATH=. python benchmarks/bench_fence_sc.py [--programs 20] [--compiler clang-cuda:sm_90,O2]
        [--skip-compiled] [--file F.litmus ...]

Prints (one process; CPU time beside wall, the machine is shared):
- IRIW with 6 fence.sc (one before every access, as clang emits seq_cst; 13 morally strong
  cross-thread pairs) at .cta/.gpu/.sys: verdict, pre-executions, seconds;
- per compiled 4-thread program (programs 0, 1, ... of seed 0 with 4 threads, as
  benchmarks/bench_ptxc.py draws them): the judge's check time (source + PTX model), the PTX
  side's pre-executions and its largest count of Fence-SC orders of one combination of paths;
  then the median and worst;
- per ``--file``: the PTX-model check of that test (``--states``-like: the full state set);
- the process's peak RSS.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time


def _clock(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _orders(test) -> tuple[int, int]:
    """(pre-executions, most Fence-SC orders of one combination of paths) of a PTX test."""
    import itertools
    from litmus.cfg import paths_per_thread
    from oracle.models.path_executions import build_combination
    from oracle.models.ptx import builder
    most = 0
    memo = builder._Memo(test)
    for combo in itertools.product(*paths_per_thread(test, seed=False, deps=True)):
        st = builder._Static(test, build_combination(test, combo), builder._path_deps(combo), memo)
        most = max(most, len(st.fence_sc_orders()))
    return len(builder.build(test)), most


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_fence_sc")
    ap.add_argument("--programs", type=int, default=20)
    ap.add_argument("--compiler", default="clang-cuda:sm_90,O2")
    ap.add_argument("--skip-compiled", action="store_true")
    ap.add_argument("--file", action="append", default=[])
    a = ap.parse_args(argv)
    os.environ.setdefault("SCOPEFUZZ_VERDICT_CACHE", "off")
    from litmus import parse, parse_file
    from oracle import check
    from oracle.check import clear_cache
    from oracle.errors import OracleError
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from test_ptx_fence_sc import _iriw
    check(parse(_iriw("gpu", False), "warm.litmus"), "ptx", full=True)     # JIT warm-up
    for scope in ("cta", "gpu", "sys"):
        t = parse(_iriw(scope, True), f"IRIW+6fence.sc.{scope}.litmus")
        clear_cache()
        try:
            r, wall, cpu = _clock(lambda: check(t, "ptx", full=True))
            n, most = _orders(t)
            print(f"IRIW+6 fence.sc.{scope}: {r.verdict}, {len(r.states)} states, {n} "
                  f"pre-executions (at most {most} Fence-SC orders per combination): "
                  f"{wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU", flush=True)
        except OracleError as e:
            print(f"IRIW+6 fence.sc.{scope}: oracle error: {e}", flush=True)
    for f in a.file:
        t = parse_file(f)
        clear_cache()
        try:
            r, wall, cpu = _clock(lambda: check(t, "ptx", full=True))
            print(f"{f}: {r.verdict}, {len(r.states)} states: {wall:.2f} s wall, {cpu:.2f} s CPU",
                  flush=True)
        except OracleError as e:
            print(f"{f}: oracle error: {e}", flush=True)
    if not a.skip_compiled:
        import hw.ptxc as ptxc
        from fuzz.compilers import judge
        from fuzz.cuda_strategies import draw, render
        comp = ptxc.parse_spec(a.compiler)
        why = ptxc.available(comp)
        if why:
            print(f"{comp.spec()} not available: {why}")
        else:
            walls, cpus, i = [], [], 0
            while len(walls) < a.programs and i < 400:
                p = draw(0, i)
                i += 1
                if len(p.threads) != 4:
                    continue
                t = parse(render(p), "b.litmus")
                try:
                    c = ptxc.compile_test(t, comp)
                    clear_cache()
                    _, wall, cpu = _clock(lambda: judge(t, c.test))
                    n, most = _orders(c.test)
                except Exception as e:      # noqa: BLE001 (not judged: not timed)
                    print(f"program {i - 1}: not judged: {str(e).splitlines()[0][:120]}")
                    continue
                walls.append(wall)
                cpus.append(cpu)
                print(f"program {i - 1} ({p.name}): {wall * 1000:.1f} ms wall, "
                      f"{cpu * 1000:.1f} ms CPU; PTX: {n} pre-executions, at most {most} "
                      f"Fence-SC orders per combination", flush=True)
            if walls:
                print(f"check of a compiled 4-thread program ({len(walls)}): median "
                      f"{statistics.median(walls) * 1000:.1f} ms, worst {max(walls) * 1000:.1f} "
                      f"ms wall; CPU median {statistics.median(cpus) * 1000:.1f} ms, worst "
                      f"{max(cpus) * 1000:.1f} ms")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A/B of the PTX builder inside the compilers check: judge() CPU time per compiled 4-thread
program (clang-cuda sm_90 O2, programs of fuzz/cuda_strategies.py seed 0) with another
builder module swapped in, interleaved program by program, and every verdict compared.

    git show 9291d74:oracle/models/ptx/builder.py > /tmp/old_builder.py
    PYTHONPATH=. python benchmarks/ptx_builder_ab.py --old /tmp/old_builder.py [--programs 20]

CPU time (time.process_time), not the wall clock: on the shared machine the load changes
faster than one program's check. Exits 1 if a verdict or an extra outcome differs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="ptx_builder_ab")
    ap.add_argument("--old", required=True, help="path of the other builder.py")
    ap.add_argument("--programs", type=int, default=20)
    ap.add_argument("--compiler", default="clang-cuda:sm_90,O2")
    a = ap.parse_args(argv)
    import hw.ptxc as ptxc
    from fuzz.compilers import judge
    from fuzz.cuda_strategies import draw, render
    from litmus import parse
    from oracle.registry import get as get_unit
    spec = importlib.util.spec_from_file_location("old_ptx_builder", a.old)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    check_mod = importlib.import_module("oracle.check")
    unit = get_unit("ptx")
    new_build = unit.build
    builds = (("old", lambda t, **k: old.build(t, **k)), ("new", new_build))
    comp = ptxc.parse_spec(a.compiler)
    progs, i = [], 0
    while len(progs) < a.programs and i < 1000:
        p = draw(0, i)
        i += 1
        if len(p.threads) != 4:
            continue
        t = parse(render(p), "b.litmus")
        try:
            progs.append((p.name, t, ptxc.compile_test(t, comp).test))
        except Exception:      # noqa: BLE001 (not compiled or not read back: not timed)
            continue
    if not progs:
        print("no program compiled")
        return 2
    judge(progs[0][1], progs[0][2])          # the engine's load, outside timing
    cpu = {"old": [], "new": []}
    same = True
    for name, t, ct in progs:
        got = []
        for label, b in builds:
            object.__setattr__(unit, "build", b)
            check_mod.clear_cache()
            p0 = time.process_time()
            try:
                v = judge(t, ct)
                res = (v.status, v.extra)
            except Exception as e:     # noqa: BLE001 (an oracle error is a result too)
                res = ("error", str(e).splitlines()[0])
            cpu[label].append(time.process_time() - p0)
            got.append(res)
        object.__setattr__(unit, "build", new_build)
        same &= got[0] == got[1]
        print(f"{name:24s} old {cpu['old'][-1] * 1000:8.1f} ms  new {cpu['new'][-1] * 1000:8.1f} "
              f"ms  {got[1][0]}{'' if got[0] == got[1] else '  DIFFERS'}", flush=True)
    for label, v in cpu.items():
        print(f"{label}: median {statistics.median(v) * 1000:.1f} ms CPU, worst "
              f"{max(v) * 1000:.1f} ms CPU ({len(v)} programs)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

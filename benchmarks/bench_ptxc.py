"""Compilers in the loop: time-to-find per PTX mutant, campaign throughput, check time.

    PYTHONPATH=. python benchmarks/bench_ptxc.py [--compiler clang-cuda:sm_90,O2] [--seconds 60]
        [--programs 40] [--mutants a,b]

Prints (one worker, this machine):
- per mutant: seconds from an empty start (programs 0, 1, ... of seed 0) to the first program
  whose compiled PTX escapes the source model, or "not found in S s";
- campaign programs/s with an empty compile cache (a fresh SCOPEFUZZ_ISA_CACHE folder) and warm
  (the same programs again);
- the check time (fuzz.compilers.judge) of compiled 4-thread programs: median and worst.
Campaign time-to-find includes compiles; the mutants are edits on the PTX (hw/ptxc/mutants.py)
so a mutant is only findable where the compiler's PTX has the instruction it edits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench_ptxc")
    ap.add_argument("--compiler", default="clang-cuda:sm_90,O2")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--mutants", default="")
    a = ap.parse_args(argv)
    os.environ["SCOPEFUZZ_ISA_CACHE"] = tempfile.mkdtemp(prefix="scopefuzz-bench-ptxc-")
    import hw.ptxc as ptxc
    from litmus import parse
    from fuzz.compilers import judge
    from fuzz.compilers_campaign import CompileConfig, CompilerCampaign, backend_name
    from fuzz.findings import load_findings
    from fuzz.cuda_strategies import draw, render
    from hw.ptxc.mutants import MUTANTS
    comp = ptxc.parse_spec(a.compiler)
    why = ptxc.available(comp)
    if why:
        print(f"{comp.spec()} not available: {why}")
        return 2
    def campaign(mutant=None, **kw):
        out = tempfile.mkdtemp(prefix="scopefuzz-bench-ptxc-out-")
        cfg = CompileConfig(backend=backend_name(comp.spec(), mutant), out=out, seed=0,
                            features=frozenset({"cuda"}), minimize_seconds=0, **kw)
        return CompilerCampaign(cfg), out
    # throughput: empty cache, then warm (a campaign of the main machinery: journal, findings)
    for label in ("empty cache", "warm cache"):
        camp, _ = campaign(programs=a.programs, time=None)
        t0 = time.monotonic()
        st = camp.run()
        dt = time.monotonic() - t0
        print(f"throughput {label}: {st.programs} programs in {dt:.1f} s = "
              f"{st.programs / dt:.2f} programs/s ({st.findings} findings, "
              f"{st.errors} errors)")
    # check time of compiled 4-thread programs (judge only; compiles are cached)
    times = []
    i = 0
    while len(times) < 20 and i < 400:
        p = draw(0, i)
        i += 1
        if len(p.threads) != 4:
            continue
        t = parse(render(p), "b.litmus")
        try:
            c = ptxc.compile_test(t, comp)
            t0 = time.perf_counter()
            judge(t, c.test)
            times.append(time.perf_counter() - t0)
        except Exception:      # noqa: BLE001 (a program the oracle cannot judge: not timed)
            continue
    if times:
        print(f"check of a compiled 4-thread program: median {statistics.median(times) * 1000:.1f} "
              f"ms, worst {max(times) * 1000:.1f} ms ({len(times)} programs)")
    names = [m for m in (a.mutants.split(",") if a.mutants else MUTANTS) if m]
    for m in names:
        camp, out = campaign(m, time=a.seconds, max_findings=1)
        st = camp.run()
        firsts = [r["first"]["t"] for r in load_findings(out)
                  if not (r.get("baseline") or {}).get("forbidden")]
        found = (f"found after {min(firsts):.1f} s ({st.programs} programs)"
                 if firsts else f"not found in {a.seconds:.0f} s")
        print(f"mutant {m}: {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Compilers in the loop: time-to-find per PTX mutant, campaign throughput, check time.

    PYTHONPATH=. python benchmarks/bench_ptxc.py [--compiler clang-cuda:sm_90,O2] [--seconds 60]
        [--programs 40] [--mutants a,b] [--seeds N] [--skip-throughput]

Prints (one worker, this machine):
- per mutant and seed 0..N-1: seconds from scratch (an empty compile cache folder, the
  in-process compile memo and the oracle's result cache cleared; programs 0, 1, ... of the
  seed) to the first program whose compiled PTX escapes the source model, or "not found in S
  s"; then the median and worst over the seeds;
- campaign programs/s with an empty compile cache (a fresh SCOPEFUZZ_ISA_CACHE folder) and warm
  (the same programs again), and the CPU ms per program (this process and its finished children:
  the compilers, the oracle's child processes), which the load of a shared machine does not move;
- the check time (fuzz.compilers.judge) of compiled 4-thread programs: median and worst, wall
  clock and CPU time (the machine is shared: CPU time is what an idle core would take);
- per mutant also the programs drawn and the CPU seconds (this process and the compilers).
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
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--skip-throughput", action="store_true",
                    help="only the check time and the mutants")
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
    def campaign(mutant=None, seed=0, **kw):
        out = tempfile.mkdtemp(prefix="scopefuzz-bench-ptxc-out-")
        cfg = CompileConfig(backend=backend_name(comp.spec(), mutant), out=out, seed=seed,
                            features=frozenset({"cuda"}), minimize_seconds=0, **kw)
        return CompilerCampaign(cfg), out
    # throughput: empty cache, then warm (a campaign of the main machinery: journal, findings)
    for label in (() if a.skip_throughput else ("empty cache", "warm cache")):
        camp, _ = campaign(programs=a.programs, time=None)
        t0, c0 = time.monotonic(), _cpu()
        st = camp.run()
        dt, cpu = time.monotonic() - t0, _cpu() - c0
        print(f"throughput {label}: {st.programs} programs in {dt:.1f} s = "
              f"{st.programs / dt:.2f} programs/s ({st.findings} findings, "
              f"{st.errors} errors); CPU {cpu * 1000 / max(st.programs, 1):.1f} ms/program "
              f"(this process and the compilers) = {st.programs / max(cpu, 1e-9):.1f} "
              f"programs per CPU second")
    # check time of compiled 4-thread programs (judge only; compiles are cached)
    times, cpus = [], []
    i = 0
    while len(times) < 20 and i < 400:
        p = draw(0, i)
        i += 1
        if len(p.threads) != 4:
            continue
        t = parse(render(p), "b.litmus")
        try:
            c = ptxc.compile_test(t, comp)
            t0, p0 = time.perf_counter(), time.process_time()
            judge(t, c.test)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - p0)
        except Exception:      # noqa: BLE001 (a program the oracle cannot judge: not timed)
            continue
    if times:
        print(f"check of a compiled 4-thread program: median {statistics.median(times) * 1000:.1f} "
              f"ms, worst {max(times) * 1000:.1f} ms ({len(times)} programs); CPU time median "
              f"{statistics.median(cpus) * 1000:.1f} ms, worst {max(cpus) * 1000:.1f} ms",
              flush=True)
    names = [m for m in (a.mutants.split(",") if a.mutants else MUTANTS) if m]
    from hw.ptxc import toolchain
    from oracle.check import clear_cache
    for m in names:
        found_s = []
        for seed in range(a.seeds):
            # from scratch: nothing compiled, nothing checked
            os.environ["SCOPEFUZZ_ISA_CACHE"] = tempfile.mkdtemp(prefix="scopefuzz-bench-ptxc-")
            toolchain.clear_memo()
            clear_cache()
            camp, out = campaign(m, seed=seed, time=a.seconds, max_findings=1)
            c0 = _cpu()
            st = camp.run()
            cpu = _cpu() - c0
            firsts = [r["first"]["t"] for r in load_findings(out)
                      if not (r.get("baseline") or {}).get("forbidden")]
            first = min(firsts) if firsts else None
            found = (f"found after {first:.1f} s ({st.programs} programs, {cpu:.1f} CPU s)"
                     if first is not None else
                     f"not found in {a.seconds:.0f} s ({st.programs} programs, {cpu:.1f} CPU s)")
            found_s.append(first)
            print(f"mutant {m} seed {seed}: {found}", flush=True)
        if a.seeds > 1:
            hit = [x for x in found_s if x is not None]
            worst = "not found" if len(hit) < len(found_s) else f"{max(hit):.1f} s"
            med = f"{statistics.median(hit):.1f} s" if hit else "-"
            print(f"mutant {m}: found in {len(hit)}/{len(found_s)} seeds, median {med}, "
                  f"worst {worst}", flush=True)
    return 0


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the compilers), user + system:
    on a shared machine the wall clock measures the load as much as the campaign."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


if __name__ == "__main__":
    sys.exit(main())

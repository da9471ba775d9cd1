"""The isa backend: compile throughput, campaign throughput, ISA-mutant time to find.

Run: ``.venv/bin/python benchmarks/bench_isa.py [--target gfx942] [--time 60] [--mutants a,b]
[--warm]``, or ``.venv/bin/python benchmarks/bench_isa.py --throughput [--targets all]
[--programs 300] [--seed 3]``. Every figure starts from an empty compile cache (a fresh
temporary ``SCOPEFUZZ_ISA_CACHE``) unless ``--warm``:

- corpus compile rate: tests/s through clang-22 + llvm-objdump-22 + interpretation, then again
  from the cache;
- a campaign on ``isa:TARGET`` (``--time`` seconds, features clang-22 can express): programs/s,
  refused, errors, findings;
- per ISA mutant: seconds of campaign until the first finding that the unmutated code (same
  options) does not show (``--baseline``, ``--stop-after 1``; issue 15's target is 60 s on gfx942)
  and the minimized test's size;
- ``--throughput``: per target (default all six), the campaign ``fuzz --backend isa:TARGET
  --seed S --programs N --jobs 1`` (default features and iterations) run in this process from an
  empty compile cache, then the same programs again from the warm cache (a new campaign; the
  in-process memo cleared, as a new worker would start): programs/s over the wall time, and the
  CPU per program of this process (the worker: oracle, interpreter, simulator ...) and of its
  clang-22 / llvm-objdump-22 children (run on another core while the worker runs the previous
  batch), so the figures can be read apart from the machine's load; then the mean and the worst
  target. ``--known`` runs them with ``fuzz --known`` (a finding in a known bug's bucket is
  counted, not minimized: the ``counted`` column), ``--forms-per-bucket N`` with that limit,
  ``--noscalar`` on ``isa:TARGET,noscalar``; each target's buckets are listed under its row.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import litmus  # noqa: E402
from fuzz.campaign import Campaign, Config  # noqa: E402
from fuzz.findings import load_findings  # noqa: E402
from fuzz.strategies import parse_features  # noqa: E402
from hw.backend import BackendError  # noqa: E402
from hw.isa import machine, targets, toolchain  # noqa: E402
from hw.isa.mutants import MUTANTS  # noqa: E402

FEATURES = "all,-av,-noav,-async"


def fresh_cache(d: str) -> None:
    os.environ["SCOPEFUZZ_ISA_CACHE"] = d
    toolchain.cache_dir.cache_clear()
    toolchain._MEMO.clear()


def compile_rate(target: str) -> tuple[float, int, int]:
    tg = targets.TARGETS[target]
    files = litmus.litmus_files([os.path.join(ROOT, "corpora")])
    t0 = time.perf_counter()
    done = refused = 0
    for f in files:
        try:
            machine.machine(machine.build(litmus.parse_file(f), tg))
            done += 1
        except BackendError:
            refused += 1
    return (done + refused) / (time.perf_counter() - t0), done, refused


def campaign(spec: str, seconds: float, out: str, baseline: str | None = None,
             stop: int | None = None):
    cfg = Config(backend=spec, out=out, seed=0, time=seconds, iterations=500,
                 baseline=baseline, max_findings=stop, minimize_seconds=20,
                 features=parse_features(FEATURES))
    t0 = time.perf_counter()
    s = Campaign(cfg).run()
    return s, time.perf_counter() - t0


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def throughput_run(target: str, programs: int, seed: int, out: str, known: bool = False,
                   noscalar: bool = False, forms: int | None = None) -> dict:
    """One ``--jobs 1`` campaign in this process: programs/s (wall) and CPU per program
    (``known``: ``--known``, the maintained hw/isa/known-clang22.json; ``noscalar``: backend
    ``isa:TARGET,noscalar``)."""
    from fuzz.known import default_known_for
    backend = f"isa:{target}" + (",noscalar" if noscalar else "")
    cfg = Config(backend=backend, out=out, seed=seed, programs=programs,
                 known=default_known_for(backend) if known else (), forms_per_bucket=forms)
    c = Campaign(cfg)
    _ = c.backend, c.checker
    c._warm_up()                  # numba and the oracle, as the campaign does before its clock
    p0, c0, t0 = time.process_time(), _children(), time.perf_counter()
    s = c.run()
    wall = time.perf_counter() - t0
    n = max(s.programs, 1)
    return {"programs": s.programs, "rate": s.programs / wall, "wall": wall,
            "cpu": 1000 * (time.process_time() - p0) / n, "child": 1000 * (_children() - c0) / n,
            "refused": s.refused, "errors": s.errors, "findings": s.findings,
            "counted": c.counted,
            "buckets": sorted({(f.get("bucket") or {}).get("signature", "?")
                               + (" [known]" if f.get("known") else "")
                               for f in load_findings(out)})}


def throughput(targets_: list[str], programs: int, seed: int, known: bool = False,
               noscalar: bool = False, forms: int | None = None) -> None:
    rows = {"empty": [], "warm": []}
    flags = ((" --known" if known else "") + (f" --forms-per-bucket {forms}" if forms else "")
             + (", noscalar" if noscalar else ""))
    head = f"campaign (--jobs 1, {programs} programs, seed {seed}{flags})"
    print(f"  {head:<34}"
          f" {'cache':<6} {'prog/s':>7} {'wall s':>7} {'worker CPU':>11} {'clang CPU':>10}  "
          f"refused errors findings counted")
    for tg in targets_:
        with tempfile.TemporaryDirectory() as tmp:
            fresh_cache(os.path.join(tmp, "cache"))
            for kind in ("empty", "warm"):
                toolchain._MEMO.clear()
                r = throughput_run(tg, programs, seed, os.path.join(tmp, kind), known, noscalar,
                                   forms)
                rows[kind].append((tg, r))
                name = "isa:" + tg + (",noscalar" if noscalar else "")
                print(f"  {name:<34} {kind:<6} {r['rate']:>7.1f} {r['wall']:>7.1f} "
                      f"{r['cpu']:>8.1f} ms {r['child']:>7.1f} ms  {r['refused']:>7} "
                      f"{r['errors']:>6} {r['findings']:>8} {r['counted']:>7}", flush=True)
                if kind == "empty":
                    for sig in r["buckets"]:
                        print(f"      bucket: {sig}", flush=True)
    for kind, rs in rows.items():
        rates = [r["rate"] for _, r in rs]
        worst = min(rs, key=lambda x: x[1]["rate"])
        cpu = [r["cpu"] for _, r in rs]
        child = [r["child"] for _, r in rs]
        print(f"  {kind + ' cache: mean':<41} {sum(rates) / len(rates):>7.1f} programs/s, worst "
              f"{worst[1]['rate']:.1f} (isa:{worst[0]}); worker CPU mean "
              f"{sum(cpu) / len(cpu):.1f} ms/program, worst {max(cpu):.1f}; clang CPU mean "
              f"{sum(child) / len(child):.1f} ms/program, worst {max(child):.1f}")
    print(f"  (load average {os.getloadavg()[0]:.1f} at the end)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="gfx942")
    ap.add_argument("--time", type=float, default=60.0, help="campaign seconds (per mutant)")
    ap.add_argument("--mutants", default=None, help="comma-separated (default all)")
    ap.add_argument("--warm", action="store_true", help="keep the user's compile cache")
    ap.add_argument("--throughput", action="store_true",
                    help="only the campaign throughput per target, empty then warm cache")
    ap.add_argument("--targets", default="all", help="with --throughput: comma-separated")
    ap.add_argument("--programs", type=int, default=300, help="with --throughput")
    ap.add_argument("--seed", type=int, default=3, help="with --throughput")
    ap.add_argument("--known", action="store_true",
                    help="with --throughput: the campaigns run with --known (findings in a known "
                         "bug's bucket counted, not minimized)")
    ap.add_argument("--forms-per-bucket", type=int, default=None, metavar="N",
                    help="with --throughput: fuzz --forms-per-bucket N")
    ap.add_argument("--noscalar", action="store_true",
                    help="with --throughput: backends isa:TARGET,noscalar (finding 1 suppressed)")
    args = ap.parse_args()
    why = toolchain.tools_available()
    if why:
        print(f"bench_isa: {why}")
        return 2
    if args.throughput:
        tgs = list(targets.TARGETS) if args.targets == "all" else args.targets.split(",")
        throughput(tgs, args.programs, args.seed, args.known, args.noscalar,
                   args.forms_per_bucket)
        return 0
    names = args.mutants.split(",") if args.mutants else list(MUTANTS)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.warm:
            fresh_cache(os.path.join(tmp, "cache"))
        rate, done, refused = compile_rate(args.target)
        print(f"  {'corpus through clang-22 (cold cache)':<52} {rate:>8.1f} tests/s "
              f"({done} built, {refused} refused)")
        rate, _, _ = compile_rate(args.target)
        print(f"  {'corpus again (cache)':<52} {rate:>8.1f} tests/s")
        if not args.warm:
            fresh_cache(os.path.join(tmp, "cache2"))
        s, wall = campaign(f"isa:{args.target}", args.time, os.path.join(tmp, "camp"))
        t = max(s.active, 1e-9)
        print(f"  {'campaign isa:' + args.target + ': programs/s':<52} {s.programs / t:>8.1f} "
              f"({s.programs} programs, {s.refused} refused, {s.errors} errors, "
              f"{s.findings} findings)")
        for m in names:
            if not args.warm:
                fresh_cache(os.path.join(tmp, f"cache-{m}"))
            tg, _ = targets.parse_spec(f"{args.target}:{m}", MUTANTS)
            out = os.path.join(tmp, f"m-{m}")
            s, wall = campaign(f"isa:{args.target}:{m}", args.time, out,
                               baseline=f"isa:{tg.label()}", stop=1)
            clean = [r for r in load_findings(out) if not (r.get("baseline") or {}).get("forbidden")]
            label = f"isa:{args.target}:{m}"
            if not clean:
                print(f"  {label + ': not found':<52} {'-':>8} ({s.programs} programs, "
                      f"wall {wall:.0f} s)")
                continue
            first = min(clean, key=lambda r: r["first"]["t"])
            print(f"  {label + ': first clean finding after':<52} {first['first']['t']:>8.1f} s "
                  f"(program {first['first']['index']}, minimized to "
                  f"{litmus.parse(first['test']).size} instructions, wall {wall:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

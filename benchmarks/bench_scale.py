"""Campaign throughput against the number of workers: ``--jobs 1..cores`` and xdist popen gateways.

Run: ``.venv/bin/python benchmarks/bench_scale.py [--time S] [--jobs 1,2,4] [--repeat R]
[--backend sim] [--no-xdist] [--json]``. Check the machine is quiet first (``uptime``: load well
below 1): the figures are ratios of throughputs, and other processes take cores. Each run's load
average before it starts is printed with it.

Each run is a fresh campaign directory under a temporary folder, seed 1, ``--iterations 1000``:

- ``scopefuzz fuzz --jobs J --time S``: each worker fuzzes S seconds of its own clock (numba kernels
  are loaded before it starts), so programs/s is the programs journaled by all shards over S;
- ``pytest --litmus-fuzz=S -n J`` (popen gateways; 4 x J work items of S/4 seconds, 1000 iterations
  per program): the programs of the merged campaign over S.

Two efficiencies, because one worker can use the cores two ways (the simulator's randomized
iterations run in a numba ``prange``; everything else of a program, the oracle, generation,
comparison, journal, runs on one thread):

(a) **against one worker with the simulator on all cores** (the default thread count, ``cores //
    J`` per worker): what ``--jobs J`` gains over what one process already gets from the machine;
(b) **against one worker with one simulator thread** (``NUMBA_NUM_THREADS=1`` for every run of
    this table, so each of J workers also has one): programs/s per worker relative to one worker
    doing the same work, the per-worker efficiency of the issue's "programs/s per worker relative
    to one".

*Efficiency* is programs/s per worker over the one-worker rate; *marginal* is what the J-th worker
adds relative to the first (the issue's target for the second worker on a 2-core machine: >= 70 %).
Runs whose worker count already gives one thread per worker (J >= cores) are the same in both
tables and run once. ``--repeat R`` runs every configuration R times, interleaved, and reports the
median (and the spread). A warm-up run (one program) first fills the numba cache so that no run
pays compilation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzz.layout import program_entries, read_meta  # noqa: E402
from fuzz.workers import cores  # noqa: E402

SCOPEFUZZ = [sys.executable, "-m", "fuzz.cli"]


def _programs(d: str) -> int:
    return sum(1 for _ in program_entries(d, read_meta(d)))


def _env(one_thread: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    if one_thread:
        env["NUMBA_NUM_THREADS"] = "1"
    return env


def fuzz_rate(backend: str, jobs: int, seconds: float, out: str, one_thread: bool) -> float:
    subprocess.run(SCOPEFUZZ + ["fuzz", "--backend", backend, "--time", str(seconds), "--seed", "1",
                                "--jobs", str(jobs), "--out", out, "--quiet"],
                   cwd=ROOT, check=False, capture_output=True, env=_env(one_thread))
    return _programs(out) / seconds


def xdist_rate(backend: str, jobs: int, seconds: float, root: str, one_thread: bool) -> float:
    os.makedirs(root)
    with open(os.path.join(root, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(jobs),
                    f"--litmus-fuzz={seconds}", f"--litmus-backend={backend}",
                    "--litmus-campaign=bench", "--litmus-seed=1", root],
                   cwd=root, check=False, capture_output=True, env=_env(one_thread))
    # J workers ran 4 x J work items of S/4 seconds each: the programs over S seconds
    merged = os.path.join(root, ".scopefuzz-pytest", "bench", "merged")
    return _programs(merged) / seconds if os.path.isdir(merged) else 0.0


def configurations(jobs: list[int], ncores: int) -> list[tuple[int, bool]]:
    """(workers, one simulator thread forced) to run: every J with the default threads, and the
    one-thread variant of each J whose default gives a worker more than one thread."""
    out = [(j, False) for j in jobs]
    out += [(j, True) for j in jobs if ncores // j > 1]
    return out


def rate_of(rates: dict, j: int, one_thread: bool, ncores: int):
    """The measured rate of J workers, one simulator thread each when ``one_thread`` (the default
    run when the default already gives one thread)."""
    if one_thread and ncores // j <= 1:
        one_thread = False
    return rates.get((j, one_thread))


def table(name: str, rates: dict[int, float]) -> list[str]:
    one = rates.get(1) or 1e-9
    rows = [f"{name}:", "  workers | programs/s | per worker | efficiency | marginal (J-th worker)"]
    prev = None
    for j, r in sorted(rates.items()):
        marginal = "" if prev is None else f"{(r - prev[1]) / (one * (j - prev[0])):.0%}"
        rows.append(f"  {j:>7} | {r:10.1f} | {r / j:10.1f} | {r / (j * one):10.0%} | {marginal}")
        prev = (j, r)
    return rows


def run_all(a, jobs: list[int], ncores: int, tmp: str) -> dict:
    runs: dict[str, dict] = {"fuzz": {}, "xdist": {}}
    loads: list[dict] = []
    kinds = ["fuzz"] + ([] if a.no_xdist else ["xdist"])
    n = 0
    for rep in range(a.repeat):
        for j, one in configurations(jobs, ncores):
            for kind in kinds:
                n += 1
                load = os.getloadavg()[0]
                t0 = time.time()
                out = os.path.join(tmp, f"run{n}")
                fn = fuzz_rate if kind == "fuzz" else xdist_rate
                r = fn(a.backend, j, a.time, out, one)
                runs[kind].setdefault((j, one), []).append(r)
                loads.append({"kind": kind, "workers": j, "one_thread": one, "rate": r,
                              "load_before": load})
                what = "fuzz --jobs" if kind == "fuzz" else "pytest -n"
                print(f"[{rep + 1}/{a.repeat}] {what} {j}"
                      f"{' (NUMBA_NUM_THREADS=1)' if one else ''}: {r:.1f} programs/s "
                      f"(load {load:.2f} before, {time.time() - t0:.0f} s wall)", file=sys.stderr)
    return {"runs": runs, "log": loads}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=30.0, help="seconds per run (default 30)")
    ap.add_argument("--jobs", default=None, help="comma-separated worker counts (default 1..cores)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration (median)")
    ap.add_argument("--backend", default="sim")
    ap.add_argument("--no-xdist", action="store_true", help="skip the pytest-xdist runs")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    ncores = cores()
    jobs = sorted({int(x) for x in a.jobs.split(",")} | {1}) if a.jobs else \
        list(range(1, ncores + 1))
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        subprocess.run(SCOPEFUZZ + ["fuzz", "--backend", a.backend, "--programs", "1", "--jobs", "1",
                                    "--out", os.path.join(tmp, "warm"), "--quiet"],
                       cwd=ROOT, check=False, capture_output=True)
        got = run_all(a, jobs, ncores, tmp)
    med = {kind: {k: statistics.median(v) for k, v in rs.items()} for kind, rs in got["runs"].items()}
    res = {"cores": ncores, "load_before": load, "load_after": os.getloadavg()[0],
           "seconds": a.time, "backend": a.backend, "repeat": a.repeat, "runs": got["log"]}
    for kind in med:
        if not med[kind]:
            continue
        res[kind] = {
            "all_cores": {j: rate_of(med[kind], j, False, ncores) for j in jobs},
            "one_thread": {j: rate_of(med[kind], j, True, ncores) for j in jobs},
        }
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{ncores} cores, load average {load:.2f} before, {res['load_after']:.2f} after; "
          f"{a.time:g} s per run on {a.backend}"
          + (f"; median of {a.repeat} runs" if a.repeat > 1 else ""))
    names = {"fuzz": "scopefuzz fuzz --jobs J", "xdist": "pytest --litmus-fuzz -n J (popen)"}
    for kind in ("fuzz", "xdist"):
        if kind not in res:
            continue
        print("\n".join(table(f"{names[kind]}, (a) against one worker with the simulator on all "
                              f"cores", res[kind]["all_cores"])))
        print("\n".join(table(f"{names[kind]}, (b) one simulator thread per worker "
                              f"(NUMBA_NUM_THREADS=1)", res[kind]["one_thread"])))
        if a.repeat > 1:
            for (j, one), rs in sorted(got["runs"][kind].items()):
                print(f"  runs, {j} worker(s){' one thread' if one else ''}: "
                      + ", ".join(f"{r:.1f}" for r in rs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

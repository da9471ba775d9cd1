"""Campaign throughput against the number of workers: ``--jobs 1..cores`` and xdist popen gateways.

Run: ``.venv/bin/python benchmarks/bench_scale.py [--time S] [--jobs 1,2,4] [--backend sim]
[--no-xdist] [--json]``. Check the machine is quiet first (``uptime``: load well below 1): the figure
is the ratio of two throughputs, and other processes take the second core.

Each run is a fresh campaign directory under a temporary folder, seed 1, ``--iterations 1000``:

- ``scopefuzz fuzz --jobs J --time S``: each worker fuzzes S seconds of its own clock (numba kernels
  are loaded before it starts), so programs/s is the programs journaled by all shards over S;
- ``pytest --litmus-fuzz=S -n J`` (popen gateways, ``--litmus-iterations`` 1000): the programs of the
  merged campaign over S.

Efficiency is programs/s per worker relative to one worker's; *marginal* is what the J-th worker
adds relative to the first (the issue's target for the second worker on a 2-core machine: >= 70 %).
A warm-up run (one program) first fills the numba cache so that no run pays compilation.
"""

from __future__ import annotations

import argparse
import json
import os
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


def fuzz_rate(backend: str, jobs: int, seconds: float, tmp: str) -> float:
    out = os.path.join(tmp, f"jobs{jobs}")
    subprocess.run(SCOPEFUZZ + ["fuzz", "--backend", backend, "--time", str(seconds), "--seed", "1",
                                "--jobs", str(jobs), "--out", out, "--quiet"],
                   cwd=ROOT, check=False, capture_output=True)
    return _programs(out) / seconds


def xdist_rate(backend: str, jobs: int, seconds: float, tmp: str) -> float:
    root = os.path.join(tmp, f"xdist{jobs}")
    os.makedirs(root)
    with open(os.path.join(root, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(jobs),
                    f"--litmus-fuzz={seconds}", f"--litmus-backend={backend}",
                    "--litmus-iterations=1000", "--litmus-seed=1", root],
                   cwd=root, check=False, capture_output=True)
    base = os.path.join(root, ".scopefuzz-pytest")
    merged = [os.path.join(base, d) for d in os.listdir(base) if d.endswith("-merged")] \
        if os.path.isdir(base) else []
    return _programs(merged[0]) / seconds if merged else 0.0


def table(name: str, rates: dict[int, float]) -> list[str]:
    one = rates.get(1) or 1e-9
    rows = [f"{name}: workers | programs/s | per worker | efficiency | marginal (J-th worker)"]
    prev = None
    for j, r in sorted(rates.items()):
        marginal = "" if prev is None else f"{(r - prev[1]) / (one * (j - prev[0])):.0%}"
        rows.append(f"  {j:>2} | {r:8.1f} | {r / j:8.1f} | {r / (j * one):6.0%} | {marginal}")
        prev = (j, r)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=30.0, help="seconds per run (default 30)")
    ap.add_argument("--jobs", default=None, help="comma-separated worker counts (default 1..cores)")
    ap.add_argument("--backend", default="sim")
    ap.add_argument("--no-xdist", action="store_true", help="skip the pytest-xdist runs")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    jobs = [int(x) for x in a.jobs.split(",")] if a.jobs else list(range(1, cores() + 1))
    load = os.getloadavg()[0]
    res = {"cores": cores(), "load_before": load, "seconds": a.time, "backend": a.backend,
           "jobs": {}, "xdist": {}}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        subprocess.run(SCOPEFUZZ + ["fuzz", "--backend", a.backend, "--programs", "1", "--jobs", "1",
                                    "--out", os.path.join(tmp, "warm"), "--quiet"],
                       cwd=ROOT, check=False, capture_output=True)
        for j in jobs:
            t0 = time.time()
            res["jobs"][j] = fuzz_rate(a.backend, j, a.time, tmp)
            print(f"fuzz --jobs {j}: {res['jobs'][j]:.1f} programs/s "
                  f"({time.time() - t0:.0f} s wall)", file=sys.stderr)
            if not a.no_xdist:
                res["xdist"][j] = xdist_rate(a.backend, j, a.time, tmp)
                print(f"pytest -n {j}: {res['xdist'][j]:.1f} programs/s", file=sys.stderr)
    res["load_after"] = os.getloadavg()[0]
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{res['cores']} cores, load average {load:.2f} before, {res['load_after']:.2f} after; "
          f"{a.time:g} s per run on {a.backend}")
    print("\n".join(table("scopefuzz fuzz --jobs", res["jobs"])))
    if res["xdist"]:
        print("\n".join(table("pytest --litmus-fuzz -n (popen)", res["xdist"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

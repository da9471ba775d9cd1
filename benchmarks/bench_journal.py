"""Report and resume on a week-long campaign's journal: time and peak memory.

Run: ``.venv/bin/python benchmarks/bench_journal.py [--programs N] [--keep DIR [--reuse]]
[--root DIR]...``.

Writes a synthetic campaign directory (in a temporary folder unless ``--keep``) whose journal holds
N program lines (default 10,000,000) shaped like a simulator campaign's (statuses in a campaign's
proportions, kinds, scope pairs, times), rotated into segments as a campaign rotates them. Then, each in
a fresh process so that the peak is its own: ``scopefuzz report`` (:func:`fuzz.report.build_report`)
and the journal scan ``--resume`` does (:meth:`fuzz.campaign.Campaign.open`). Prints the journal's size
on disk, bytes per program, wall and CPU seconds and peak resident memory (``resource.getrusage``)
of each, with the load average (on a shared machine the CPU seconds are the figure to compare).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzz.journal import SEGMENT_BYTES, segment_path  # noqa: E402

KINDS = ["ld", "st", "ld.atom", "st.atom", "rmw", "cas", "fence", "ld.vis", "st.av", "barrier"]
PAIRS = ["wave/wg", "wg/agent", "agent/sys", "wg/wg", "cluster/agent", "thread/wave"]


def write_journal(directory: str, programs: int, seed: int = 1) -> int:
    """A campaign directory with ``programs`` journal lines; returns the journal's bytes."""
    os.makedirs(os.path.join(directory, "findings"), exist_ok=True)
    from fuzz.campaign import Config
    meta = dict(Config(backend="sim", seed=seed, iterations=1000).identity(),
                uid="sim-seed1-shard1of1", created=time.time(), version=1)
    with open(os.path.join(directory, "campaign.json"), "w") as f:
        json.dump(meta, f)
    rng = random.Random(seed)
    path = os.path.join(directory, "journal.jsonl")
    statuses = ["ok"] * 90 + ["undef"] * 4 + ["all-undef"] * 3 + ["oracle-error"] + ["no-memory"] * 2
    total, seg, f = 0, 0, open(path, "w")
    t0 = 1.7e9
    for i in range(programs):
        st = statuses[rng.randrange(len(statuses))]
        e = {"type": "program", "i": i, "seed": rng.getrandbits(63), "name": f"prog{i}",
             "kinds": sorted(rng.sample(KINDS, 4)), "pairs": sorted(rng.sample(PAIRS, 2)),
             "size": rng.randrange(4, 14), "status": st, "executions": 1000 if st == "ok" else 0,
             "seconds": 0.0031, "t": round(i / 300, 4), "ts": round(t0 + i / 300, 3)}
        if st == "ok":
            e.update(verdict="Ok", witnesses=rng.randrange(0, 1000))
        elif st == "oracle-error":
            e["error"] = "OracleError: over the campaign budget"
        line = json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n"
        f.write(line)
        total += len(line)
        if f.tell() >= SEGMENT_BYTES:         # rotate as fuzz.journal.Journal does
            f.close()
            seg += 1
            os.rename(path, segment_path(path, seg))
            f = open(path, "w")
    f.close()
    return total


CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
what, d = sys.argv[1], sys.argv[2]
t = time.perf_counter()
u = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = u.ru_utime + u.ru_stime
if what == "report":
    from fuzz.report import build_report
    build_report(d, explainer=None)
else:
    from fuzz.campaign import Campaign, Config
    c = Campaign(Config(backend="sim", out=d, seed=1, resume=True, iterations=1000),
                 backend=object(), checker=lambda t: None)
    c.open()
    c.journal.close()
    assert len(c.done) > 0
u = resource.getrusage(resource.RUSAGE_SELF)
print(time.perf_counter() - t, u.ru_maxrss, u.ru_utime + u.ru_stime - cpu0)
"""


def measure(what: str, directory: str, root: str = ROOT) -> tuple[float, float, float]:
    """Wall seconds, peak resident MiB and CPU seconds of ``what`` ("report" or "resume") on
    ``directory``, in a fresh process importing scopefuzz from ``root``. On a shared machine the
    CPU seconds are the steadier figure (the wall time includes waiting for a core)."""
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=root), what, directory],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024, float(out[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=10_000_000)
    ap.add_argument("--keep", default=None, help="write the campaign here and keep it")
    ap.add_argument("--reuse", action="store_true",
                    help="measure the campaign already in --keep DIR (do not write one; give its --programs)")
    ap.add_argument("--root", action="append", default=None, metavar="DIR",
                    help="measure the scopefuzz sources in DIR (repeat to compare checkouts, e.g. "
                         "an export of main; default: this one)")
    args = ap.parse_args()
    if args.reuse and not args.keep:
        ap.error("--reuse needs --keep DIR")
    tmp = args.keep or tempfile.mkdtemp(prefix="sf-journal-")
    try:
        if args.reuse:
            size = sum(os.path.getsize(os.path.join(tmp, n)) for n in os.listdir(tmp)
                       if n.startswith("journal"))
        else:
            t = time.perf_counter()
            size = write_journal(tmp, args.programs)
            print(f"journal: {args.programs:,} programs, {size / 2**30:.2f} GiB "
                  f"({size / args.programs:.0f} B/program), written in "
                  f"{time.perf_counter() - t:.0f} s")
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        for what in ("report", "resume"):
            for root in args.root or [ROOT]:
                secs, mib, cpu = measure(what, tmp, os.path.abspath(root))
                print(f"{what}{'' if not args.root else ' ' + root}: {secs:.0f} s wall, {cpu:.0f} s "
                      f"CPU, peak RSS {mib:.0f} MiB ({args.programs / cpu:,.0f} programs per "
                      f"CPU second), load average {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

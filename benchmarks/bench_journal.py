"""Report and resume on a week-long campaign's journal: time and peak memory.

Run: ``.venv/bin/python benchmarks/bench_journal.py [--programs N] [--keep DIR]``.

Writes a synthetic campaign directory (in a temporary folder unless ``--keep``) whose journal holds
N program lines (default 10,000,000) shaped like a simulator campaign's (statuses in a campaign's
proportions, kinds, scope pairs, times), rotated into segments as a campaign rotates them. Then, each in
a fresh process so that the peak is its own: ``scopefuzz report`` (:func:`fuzz.report.build_report`)
and the journal scan ``--resume`` does (:meth:`fuzz.campaign.Campaign.open`). Prints the journal's size
on disk, bytes per program, seconds and peak resident memory (``resource.getrusage``) of each.
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
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(what: str, directory: str) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT), what, directory],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024        # seconds, MiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=10_000_000)
    ap.add_argument("--keep", default=None, help="write the campaign here and keep it")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="sf-journal-")
    try:
        t = time.perf_counter()
        size = write_journal(tmp, args.programs)
        print(f"journal: {args.programs:,} programs, {size / 2**30:.2f} GiB "
              f"({size / args.programs:.0f} B/program), written in {time.perf_counter() - t:.0f} s")
        for what in ("report", "resume"):
            secs, mib = measure(what, tmp)
            print(f"{what}: {secs:.0f} s, peak RSS {mib:.0f} MiB "
                  f"({args.programs / secs:,.0f} programs/s)")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

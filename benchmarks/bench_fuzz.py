"""Fuzzer throughput and mutant kill times.

Run: ``.venv/bin/python benchmarks/bench_fuzz.py [--quick] [--time S] [--mutants a,b]``.

Figures, each from a fresh campaign directory under a temporary folder:

- programs drawn per second (``fuzz.strategies.draw_program``, no oracle, no backend);
- a campaign on the correct simulator (``sim``): programs/s and backend executions/s, with the
  share of programs the oracle refused (error) or found Undef;
- per simulator mutant: seconds of campaign until the first finding that the correct simulator does
  not show (``--baseline sim --stop-after 1``; the DESIGN target is 60 s), and the minimized test's
  size against the hand-written killer in ``corpora/mutants/``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import litmus  # noqa: E402
from fuzz.campaign import Campaign, Config  # noqa: E402
from fuzz.findings import load_findings  # noqa: E402
from fuzz.strategies import draw_program  # noqa: E402


def draw_rate(n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        draw_program(0, i)
    return n / (time.perf_counter() - t)


def campaign_rate(seconds: float, tmp: str) -> tuple[float, float, int, int, int, int]:
    cfg = Config(backend="sim", out=os.path.join(tmp, "sim"), seed=1, time=seconds,
                 iterations=1000)
    camp = Campaign(cfg)
    s = camp.run()
    t = max(s.active, 1e-9)
    return s.programs / t, s.executions / t, s.programs, s.errors, s.undef, s.findings


def kill_time(mutant: str, seconds: float, tmp: str):
    out = os.path.join(tmp, f"m-{mutant}")
    cfg = Config(backend=f"sim:{mutant}", out=out, seed=0, time=seconds, iterations=500,
                 baseline="sim", max_findings=1, minimize_seconds=20)
    t0 = time.perf_counter()
    Campaign(cfg).run()
    wall = time.perf_counter() - t0
    clean = [r for r in load_findings(out) if not (r.get("baseline") or {}).get("forbidden")]
    if not clean:
        return None, wall, None
    first = min(clean, key=lambda r: r["first"]["t"])
    return first["first"]["t"], wall, litmus.parse(first["test"]).size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 s sim campaign, 3 mutants")
    ap.add_argument("--time", type=float, default=60.0, help="campaign budget per mutant (s)")
    ap.add_argument("--mutants", default=None, help="comma-separated mutant names (default all)")
    args = ap.parse_args()
    from hw.sim.mutants import MUTANTS
    names = args.mutants.split(",") if args.mutants else list(MUTANTS)
    if args.quick and not args.mutants:
        names = names[:3]
    print(f"  {'programs drawn per second':<58} {draw_rate(2000):>14,.0f} programs/s")
    with tempfile.TemporaryDirectory() as tmp:
        p, e, n, err, und, found = campaign_rate(10.0 if args.quick else 30.0, tmp)
        print(f"  {'campaign on sim: programs per second':<58} {p:>14,.1f} programs/s")
        print(f"  {'campaign on sim: backend executions per second':<58} {e:>14,.0f} exec/s")
        print(f"  {'campaign on sim: programs (oracle errors, undef)':<58} "
              f"{n:>8} ({err}, {und})")
        print(f"  {'campaign on sim: findings (simulator/model disagreements)':<58} {found:>8}")
        killed = 0
        for m in names:
            t, wall, size = kill_time(m, args.time, tmp)
            killer = os.path.join(ROOT, "corpora", "mutants", f"{m}.litmus")
            ksize = litmus.parse_file(killer).size if os.path.exists(killer) else "?"
            if t is None:
                print(f"  {'sim:' + m + ': not found':<58} {'-':>14} (budget {args.time:.0f} s, "
                      f"wall {wall:.0f} s)")
            else:
                killed += 1
                print(f"  {'sim:' + m + ': first clean finding after':<58} {t:>14.1f} s "
                      f"(size {size}, killer {ksize}, wall {wall:.0f} s)")
        print(f"  {'mutants killed':<58} {killed:>8}/{len(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

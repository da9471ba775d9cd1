"""Issue 30's candidates under CU-wide and per-wave vector-memory waits.

Prints, per backend, how many of N randomized iterations (seed 1) show the outcome the model
forbids:

- finding 2 (docs/isa.md, WRC+lds.wg+rel.agent) with the CU-wide ``vmcnt(0)`` and with per-wave
  counters: for ``sim:`` the profile option ``wavecnt`` (CU-wide is the default), for ``isa:``
  the default (per wave) against the option ``cuwait``;
- the buffer_wbl2 candidate (MP+fence.agent+rel.sys.xagent) on NC memory (``mtype=NC``), where
  the L2 writeback is in flight until a wait covers it.

Usage: ``python benchmarks/bench_wavecnt.py [ITERATIONS]``.
"""

from __future__ import annotations

import sys
import time

import litmus
from hw import get_backend

sys.path.insert(0, "tests")
from test_sim_issue30 import WBL2  # noqa: E402
from test_sim_wavecnt import WRC_FINDING2  # noqa: E402


def forbidden(name, test, n):
    h = get_backend(name).run(test, n, seed=1)
    return sum(c for o, c in h.outcomes() if litmus.condition_holds(test.condition, o))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    test = litmus.parse(WRC_FINDING2)
    print(f"WRC+lds.wg+rel.agent (finding 2), forbidden outcome per {n:,} randomized iterations "
          "(seed 1)")
    pairs = [(f"sim:{p}", f"sim:{p},wavecnt") for p in ("gfx942", "gfx90a", "gfx12")] + \
        [(f"isa:{t},cuwait", f"isa:{t}") for t in ("gfx942", "gfx90a", "gfx950", "gfx1200")]
    for cu_name, wave_name in pairs:
        try:
            t0 = time.perf_counter()
            cu = forbidden(cu_name, test, n)
            wave = forbidden(wave_name, test, n)
            dt = time.perf_counter() - t0
        except Exception as e:            # a missing toolchain: say so and go on
            print(f"  {wave_name:16s} not run: {e}")
            continue
        print(f"  {wave_name:16s} CU-wide waits: {cu:7d}   per-wave waits: {wave:7d}   "
              f"({dt:.1f} s)")
    test = litmus.parse(WBL2)
    print(f"MP+fence.agent+rel.sys.xagent (buffer_wbl2 candidate), forbidden outcome per {n:,} "
          "randomized iterations (seed 1)")
    for name in ("sim:gfx942,mtype=NC", "isa:gfx942,mtype=NC", "isa:gfx950,mtype=NC",
                 "isa:gfx942", "isa:gfx90a,mtype=NC", "isa:gfx1200,mtype=NC",
                 "isa:gfx1250,mtype=NC"):
        try:
            print(f"  {name:22s} {forbidden(name, test, n):7d}")
        except Exception as e:
            print(f"  {name:22s} not run: {e}")


if __name__ == "__main__":
    main()

"""Finding 2 (docs/isa.md) under CU-wide and per-wave vector-memory waits (issue 30).

Prints, per backend, how many of N randomized iterations of WRC+lds.wg+rel.agent (forbidden by
the model) show the forbidden outcome, with the default CU-wide ``vmcnt(0)`` and with per-wave
counters (``wavecnt``: the simulator profile option; for ``isa:`` backends the same flag set on
the compiled program's waits). Usage: ``python benchmarks/bench_wavecnt.py [ITERATIONS]``.
"""

from __future__ import annotations

import dataclasses
import sys

import litmus
from hw import get_backend
from hw.sim.uops import WAIT

sys.path.insert(0, "tests")
from test_sim_wavecnt import WRC_FINDING2  # noqa: E402


def per_wave(backend):
    """Make every wait of ``backend``'s machines count the wave's own operations only."""
    orig = backend.machine

    def machine(test):
        m = orig(test)
        prog = m.prog.copy()
        prog[:, :, 3] = (prog[:, :, 0] == WAIT).astype(prog.dtype) | \
            (prog[:, :, 3] * (prog[:, :, 0] != WAIT))
        return dataclasses.replace(m, prog=prog)
    backend.machine = machine
    return backend


def forbidden(backend, test, n):
    h = backend.run(test, n, seed=1)
    return sum(c for o, c in h.outcomes() if litmus.condition_holds(test.condition, o))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    test = litmus.parse(WRC_FINDING2)
    print(f"WRC+lds.wg+rel.agent, forbidden outcome per {n:,} randomized iterations (seed 1)")
    for name in ("sim:gfx942", "sim:gfx90a", "sim:gfx12", "isa:gfx942", "isa:gfx90a",
                 "isa:gfx950"):
        try:
            cu = forbidden(get_backend(name), test, n)
            wave = forbidden(per_wave(get_backend(name)), test, n)
        except Exception as e:            # a missing toolchain: say so and go on
            print(f"  {name:12s} not run: {e}")
            continue
        print(f"  {name:12s} CU-wide waits: {cu:7d}   per-wave waits: {wave:7d}")


if __name__ == "__main__":
    main()

"""``scopefuzz warm``: compile (or load) every compiled function of the oracle and the simulator
into numba's on-disk cache, so that no later run compiles (``make setup`` runs it).

Each package knows its own compiled code: :func:`oracle.warmup.warm` (every model's check and
explanation) and :func:`hw.sim.warmup.warm` (both simulator modes). When the cache is already up
to date this only loads it (a second or two).
"""

from __future__ import annotations

import sys
import time


def cmd_warm(args) -> int:
    t0 = time.perf_counter()
    from oracle.warmup import warm as warm_oracle
    models = warm_oracle()
    t1 = time.perf_counter()
    print(f"scopefuzz warm: the oracle ({', '.join(models)}) in {t1 - t0:.1f} s", file=sys.stderr)
    if not args.oracle_only:
        from hw.sim.warmup import warm as warm_sim
        warm_sim()
        print(f"scopefuzz warm: the simulator in {time.perf_counter() - t1:.1f} s",
              file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("warm", help="compile the oracle and the simulator once (make setup)",
                       description="Compile (or load from numba's on-disk cache) every compiled "
                                   "function of the oracle and the simulator, so that the next "
                                   "runs start at once. make setup runs it.")
    p.add_argument("--oracle-only", action="store_true", help="the oracle only")
    p.set_defaults(func=cmd_warm)

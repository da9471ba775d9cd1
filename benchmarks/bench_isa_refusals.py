"""Share of drawn programs the isa backend refuses, per target: all features vs the features
narrowed to the target's declared capabilities (fuzz.strategies.for_backend).

    PYTHONPATH=. python benchmarks/bench_isa_refusals.py [N] [SEED]

Refusal is decided from the program and the target alone (hw.isa.source.refusal), before any
compilation, so this needs no clang-22 and counts exactly what a campaign journals as refused
at that step (the simulator's in-flight limit, checked after compiling, is not counted).
"""

from __future__ import annotations

import sys

from fuzz.strategies import draw_program, for_backend, parse_features
from hw.isa.source import refusal
from hw.isa.targets import TARGETS, parse_spec
from hw.isa.mutants import MUTANTS


def rate(spec: str, n: int, seed: int, narrowed: bool) -> tuple[int, dict]:
    target, _ = parse_spec(spec, MUTANTS)
    feats = parse_features(None)
    if narrowed:
        feats = for_backend(feats, target.capabilities())
    refused, why = 0, {}
    for i in range(n):
        t = draw_program(seed, i, feats)
        r = refusal(t, target)
        if r:
            refused += 1
            key = r.split(": ", 2)[-1][:60]
            why[key] = why.get(key, 0) + 1
    return refused, why


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    specs = list(TARGETS) + ["gfx942,tgsplit", "gfx942,O0"]
    print(f"{'target':<16} {'all features':>13} {'capabilities':>13}  (refused of {n} programs, "
          f"seed {seed})")
    for spec in specs:
        before, _ = rate(spec, n, seed, False)
        after, why = rate(spec, n, seed, True)
        print(f"{spec:<16} {100 * before / n:12.1f}% {100 * after / n:12.1f}%"
              + (f"  left: {max(why, key=why.get)} x{max(why.values())}" if why else ""))


if __name__ == "__main__":
    main()

"""How the oracle's time grows with program size (issue 16's families), beside herd7's figures.

Usage: ``.venv/bin/python benchmarks/scaling.py [--quick] [--max-events N] [--limit S]
[--shared DIR]``; ``scopefuzz bench --only scaling`` prints the same figures.

Families (events = the program's memory events, as herd counts them: initial writes and the
engine's final-memory reads not included), each test written out as litmus text here:

- ``sb-ring``: n threads (C, rc11, relaxed atomics), thread i stores ``x_i`` then loads
  ``x_(i+1 mod n)``: 2n events, 2^n allowed states;
- ``lb-ring``: thread i loads ``x_i`` then stores ``x_(i+1 mod n)``: 2n events;
- ``mp-chain``: thread 0 stores ``x_0`` then ``x_1``, thread i loads ``x_i`` and stores
  ``x_(i+1)``, the last thread loads ``x_(n-1)`` then ``x_0``: 2n events;
- ``one-loc``: n threads each storing its own value to ``x`` then loading ``x``: 2n events;
- ``amdgpu-4x4``: four AMDGPU threads in separate workgroups, each storing and loading both of
  two locations with relaxed agent-scope atomics (16 events); ``amdgpu-5x4-rmw``: five such
  threads, thread 0's first store an rmw (21 events). For these two: the time of one observed
  outcome (``oracle.allows``: the outcome of running the threads one after the other, allowed,
  and one with a value nobody writes, forbidden), then the full set (once; ``--no-full``
  leaves it out: the 21-event shape's allowed set is very large).

For each size: the full allowed set (``oracle.check``, result cache cleared before each
repetition), wall seconds as the worst case and the mean over the repetitions, and the worst
CPU seconds of the process (less distorted by other jobs on a shared machine). A family stops
growing once one size took more than ``--limit`` seconds. Last, the per-test rate of the RC11
conformance suite (``benchmarks/conformance.py``: the 2nd, warm pass in one process).

herd7 7.58's figures are those measured in issue 16 on this machine (same programs, "—" where
none was taken). Timings on a shared machine are noisy: compare interleaved runs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: herd7 7.58 (issue 16's table): family -> events -> seconds (text: a bound or a range)
HERD7 = {
    "sb-ring": {16: "0.26-0.35", 20: "1.5-2.2"},
    "lb-ring": {16: "0.26-0.35", 20: "1.5-2.2"},
    "mp-chain": {16: "0.26-0.35", 20: "1.5-2.2"},
    "one-loc": {10: ">120"},
}


def _c_test(name: str, nloc: int, threads: list[list[str]], cond: str) -> str:
    locs = [f"x{i}" for i in range(nloc)]
    init = " ".join(f"[{x}] = 0;" for x in locs)
    params = ", ".join(f"atomic_int* {x}" for x in locs)
    body = [f"P{t} ({params}) {{ " + " ".join(lines) + " }" for t, lines in enumerate(threads)]
    return f"C {name}\n{{ {init} }}\n" + "\n".join(body) + f"\nexists ({cond})\n"


def _st(x: str, v: int) -> str:
    return f"atomic_store_explicit({x}, {v}, memory_order_relaxed);"


def _ld(r: str, x: str) -> str:
    return f"int {r} = atomic_load_explicit({x}, memory_order_relaxed);"


def sb_ring(n: int) -> str:
    th = [[_st(f"x{i}", 1), _ld("r0", f"x{(i + 1) % n}")] for i in range(n)]
    return _c_test(f"SB-ring-{n}", n, th, " /\\ ".join(f"{i}:r0=0" for i in range(n)))


def lb_ring(n: int) -> str:
    th = [[_ld("r0", f"x{i}"), _st(f"x{(i + 1) % n}", 1)] for i in range(n)]
    return _c_test(f"LB-ring-{n}", n, th, " /\\ ".join(f"{i}:r0=1" for i in range(n)))


def mp_chain(n: int) -> str:
    th = [[_st("x0", 1), _st("x1", 1)]]
    th += [[_ld("r0", f"x{i}"), _st(f"x{i + 1}", 1)] for i in range(1, n - 1)]
    th.append([_ld("r0", f"x{n - 1}"), _ld("r1", "x0")])
    return _c_test(f"MP-chain-{n}", n, th, f"{n - 1}:r0=1 /\\ {n - 1}:r1=0")


def one_loc(n: int) -> str:
    th = [[_st("x0", i + 1), _ld("r0", "x0")] for i in range(n)]
    return _c_test(f"one-loc-{n}", 1, th, " /\\ ".join(f"{i}:r0={i + 1}" for i in range(n)))


def amdgpu_multi(nthreads: int, rmw: bool) -> str:
    cols = []
    for t in range(nthreads):
        v = t + 1
        first = f"rmw.add.agent r2, x, {v}" if (rmw and t == 0) else f"st.atom.agent x, {v}"
        cols.append([f"P{t}@wg {t}", first, f"st.atom.agent y, {v}", "ld.atom.agent r0, x",
                     "ld.atom.agent r1, y"])
    width = max(len(c) for col in cols for c in col) + 1
    rows = [" | ".join(col[k].ljust(width) for col in cols) + " ;" for k in range(5)]
    name = f"AMDGPU-{nthreads}x4{'-rmw' if rmw else ''}"
    return f"AMDGPU {name}\n{{ x = 0; y = 0; }}\n" + "\n".join(" " + r for r in rows) + \
        "\nexists (P0:r0 == 0 /\\ P1:r0 == 0)\n"


#: family -> (events -> test text, event sizes)
FAMILIES = {
    "sb-ring": (lambda e: sb_ring(e // 2), range(6, 25, 2)),
    "lb-ring": (lambda e: lb_ring(e // 2), range(6, 25, 2)),
    "mp-chain": (lambda e: mp_chain(e // 2), range(6, 25, 2)),
    "one-loc": (lambda e: one_loc(e // 2), range(6, 25, 2)),
}
AMDGPU_SHAPES = {"amdgpu-4x4": (16, lambda: amdgpu_multi(4, False), 4),
                 "amdgpu-5x4-rmw": (21, lambda: amdgpu_multi(5, True), 5)}


def timed(fn, reps: int) -> tuple[float, float, float, object]:
    """(worst, mean) wall seconds of ``reps`` calls of ``fn`` (caches cleared before each), the
    worst CPU seconds of this process (what a loaded machine distorts least), and the last
    call's value."""
    import oracle
    secs, cpu = [], []
    out = None
    for _ in range(reps):
        oracle.clear_cache()
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        secs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return max(secs), statistics.mean(secs), max(cpu), out


def scaling(quick: bool = False, max_events: int = 24, limit: float = 20.0,
            full: bool = True):
    """Yield (family, events, states, worst s, mean s, worst CPU s, herd7 text, note) per
    measured size."""
    import litmus
    import oracle
    reps = 1 if quick else 3
    warm()
    for fam, (make, sizes) in FAMILIES.items():
        for ev in sizes:
            if ev > max_events:
                break
            test = litmus.parse(make(ev))
            worst, mean, cpu, res = timed(lambda: oracle.check(test), reps)
            yield fam, ev, len(res.states), worst, mean, cpu, HERD7.get(fam, {}).get(ev, "—"), ""
            if worst > limit:
                break
    for fam, (ev, make, nthreads) in AMDGPU_SHAPES.items():
        test = litmus.parse(make())
        observed = sequential_outcome(nthreads, fam.endswith("rmw"))
        w1, m1, c1, ok = timed(lambda: oracle.allows(test, observed), reps)
        assert ok, "the outcome of running the threads one after the other must be allowed"
        yield fam, ev, 1, w1, m1, c1, "—", "one allowed outcome"
        bad = dict(observed)
        bad["P0:r0"] = 99                      # no write of 99: forbidden
        w2, m2, c2, ok = timed(lambda: oracle.allows(test, bad), reps)
        assert not ok
        yield fam, ev, 0, w2, m2, c2, "—", "one forbidden outcome"
        if full:
            worst, mean, cpu, res = timed(lambda: oracle.check(test), 1)
            yield fam, ev, len(res.states), worst, mean, cpu, "—", "full set"


def warm() -> None:
    """Load the compiled code the timed calls run (check and outcome queries of C and AMDGPU
    programs: each signature is loaded from numba's cache on its first call, 0.2-0.4 s) on small
    members of the families, untimed, as ``check``'s own clock leaves loading out."""
    import litmus
    import oracle
    oracle.check(litmus.parse(sb_ring(2)))
    for nthreads, rmw in ((2, False), (2, True)):
        test = litmus.parse(amdgpu_multi(nthreads, rmw))
        oracle.allows(test, sequential_outcome(nthreads, rmw))
        oracle.check(test)
    oracle.clear_cache()


def sequential_outcome(nthreads: int, rmw: bool) -> dict:
    """The outcome of :func:`amdgpu_multi` when its threads run one after the other in thread
    order (so the model allows it): every thread reads its own stores, the rmw reads 0, the
    last thread's stores are the final values."""
    out = {}
    for t in range(nthreads):
        out[f"P{t}:r0"] = t + 1
        out[f"P{t}:r1"] = t + 1
    if rmw:
        out["P0:r2"] = 0
    out["x"] = out["y"] = nthreads
    return out


def conformance_rate(shared: pathlib.Path):
    """Tests per second of the RC11 suite (warm pass), or None when the suite is absent."""
    if not (shared / "conformance" / "expected" / "RC11.csv").is_file():
        return None
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import conformance
    agree, disagree, _, secs = conformance.run_suite(shared, "RC11")
    n = len(agree) + len(disagree)
    return n, secs


def figures(quick: bool = False, max_events: int = 24, limit: float = 20.0, shared=None):
    """``scopefuzz bench`` rows: (label, value, unit)."""
    rows = []
    for fam, ev, ns, worst, mean, cpu, herd, note in scaling(quick, max_events, limit,
                                                            full=not quick):
        what = f"{fam} {ev} events" + (f", {note}" if note else "")
        rows.append((f"{what}: worst (mean {mean:.3g} s, CPU {cpu:.3g} s; herd7 {herd} s)",
                     worst, "s"))
    shared = pathlib.Path(shared or os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
    rate = conformance_rate(shared)
    if rate is not None:
        n, secs = rate
        rows.append((f"RC11 conformance, {n} tests, per test in-process (herd7 645/s)",
                     n / secs, "tests/s"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repetition per size")
    ap.add_argument("--max-events", type=int, default=24)
    ap.add_argument("--limit", type=float, default=20.0,
                    help="stop a family after a size that took longer (seconds)")
    ap.add_argument("--shared", default=None)
    ap.add_argument("--no-full", action="store_true",
                    help="AMDGPU shapes: one outcome only, not the full allowed set")
    args = ap.parse_args(argv)
    print(f"{'family':<16} {'events':>6} {'states':>7} {'worst s':>9} {'mean s':>9} "
          f"{'CPU s':>9} {'herd7 s':>10}  note")
    sys.stdout.flush()
    for fam, ev, ns, worst, mean, cpu, herd, note in scaling(args.quick, args.max_events,
                                                            args.limit, not args.no_full):
        print(f"{fam:<16} {ev:>6} {ns:>7} {worst:>9.4f} {mean:>9.4f} {cpu:>9.4f} {herd:>10}  "
              f"{note}")
        sys.stdout.flush()
    shared = pathlib.Path(args.shared or os.environ.get("SCOPEFUZZ_SHARED",
                                                        ROOT.parent / "shared"))
    rate = conformance_rate(shared)
    if rate is None:
        print("RC11 conformance: suite not found under", shared)
    else:
        n, secs = rate
        print(f"RC11 conformance: {n} tests, {n / secs:,.0f} tests/s per test in-process "
              f"(herd7: 645/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

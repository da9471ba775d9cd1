"""Oracle throughput: tests/s on the corpora and the conformance files that have a front end and
a model, per model on the conformance suites it is measured on (mean rate, median and worst
test), and time per test for generated 16- and 20-event programs.

Run: ``.venv/bin/python benchmarks/bench_oracle.py [--quick]`` or ``scopefuzz bench --only oracle``.
Every figure is measured with the outcome cache cleared before each pass (uncached), in one
process on one core; the cached figure is reported separately.
"""

from __future__ import annotations

import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import litmus  # noqa: E402
import oracle  # noqa: E402
from oracle.models.amdgpu import UNIT as AMDGPU  # noqa: E402
from oracle.models.amdgpu.builder import build  # noqa: E402

SHARED = os.environ.get("SCOPEFUZZ_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))


def load(paths) -> tuple[list, int]:
    """Tests the oracle can decide (parsed, checked once to warm up), and the count skipped."""
    tests, skipped = [], 0
    for f in litmus.litmus_files(paths):
        try:
            t = litmus.parse_file(f)
            oracle.check(t)
            tests.append(t)
        except (litmus.ParseError, oracle.OracleError):
            skipped += 1
    return tests, skipped


def throughput(tests, min_seconds: float, cached: bool = False, model: str | None = None,
               clock=time.perf_counter) -> float:
    """Tests/s over passes of ``tests`` until ``min_seconds`` of ``clock`` (wall time; pass
    ``time.process_time`` for CPU time, the fairer figure on a machine other jobs load)."""
    if not tests:
        return 0.0
    done, t0 = 0, clock()
    while True:
        if not cached:
            oracle.clear_cache()
        for t in tests:
            oracle.check(t, model)
        done += len(tests)
        dt = clock() - t0
        if dt >= min_seconds:
            return done / dt


def per_model(conf: str, min_seconds: float):
    """Per model with conformance suites: the per-test rate in this process over the files of
    its suites that the engine decides (files over 64 events whose search it cannot finish go to
    the Python fallback and are counted apart), and the median and worst single test (best of 3
    runs each)."""
    from litmus.expected import read_expected
    from oracle import registry
    out = []
    for name in registry.names():
        unit = registry.get(name)
        if not unit.suites:
            continue
        rels: list[str] = []
        for suite in unit.suites:
            for row in read_expected(unit.expected_csv(conf, suite)).rows:
                if row.path not in rels:
                    rels.append(row.path)
        tests, fallback = [], 0
        for rel in rels:
            t = litmus.parse_file(os.path.join(conf, rel))
            if "reference-partial" in oracle.check(t, name).flags:
                fallback += 1
            else:
                tests.append(t)
        each = []
        for t in tests:
            best = float("inf")
            for _ in range(3):
                oracle.clear_cache()
                t0 = time.perf_counter()
                oracle.check(t, name)
                best = min(best, time.perf_counter() - t0)
            each.append(best)
        each.sort()
        suites = "/".join(unit.suites)
        out.append((f"{name} on {suites} ({len(tests)} tests), uncached",
                    throughput(tests, min_seconds, model=name), "tests/s"))
        out.append((f"{name} on {suites}, uncached, CPU time",
                    throughput(tests, min_seconds, model=name, clock=time.process_time), "tests/s"))
        if each:
            out.append((f"{name} on {suites}: median test", each[len(each) // 2], "s"))
            out.append((f"{name} on {suites}: worst test", each[-1], "s"))
        if fallback:
            out.append((f"{name} on {suites}: files over 64 events decided by the fallback, left out",
                        fallback, "files"))
    return out


SCOPES = ("wave", "wg", "agent", "sys")


def generated(nevents: int, seed: int) -> litmus.Test:
    """A deterministic random program with exactly ``nevents`` events (initial writes and final
    reads included): 4 threads in 2 workgroups over 2 or 3 locations, mixing atomics of every
    order and scope, plain accesses, rmws and fences."""
    rnd = random.Random(seed * 1000 + nevents)
    while True:
        nloc = 3
        locs = ["x", "y", "z"][:nloc]
        cols = [[] for _ in range(4)]
        regs = [0] * 4
        budget = nevents - 2 * nloc
        while budget > 0:
            t = rnd.randrange(4)
            kind = rnd.choice(("ld", "ld", "st", "st", "rmw", "fence"))
            if kind == "rmw" and budget < 2:
                continue
            loc = rnd.choice(locs)
            sc = rnd.choice(SCOPES)
            if kind == "ld":
                o = rnd.choice(("rlx", "acq", "sc"))
                ins = f"ld.atom.{o}.{sc} r{regs[t]}, {loc}" if rnd.random() < 0.8 \
                    else f"ld r{regs[t]}, {loc}"
                regs[t] += 1
                budget -= 1
            elif kind == "st":
                o = rnd.choice(("rlx", "rel", "sc"))
                v = rnd.randint(1, 3)
                ins = f"st.atom.{o}.{sc} {loc}, {v}" if rnd.random() < 0.8 else f"st {loc}, {v}"
                budget -= 1
            elif kind == "rmw":
                o = rnd.choice(("rlx", "acq", "rel", "acq_rel", "sc"))
                ins = f"rmw.add.{o}.{sc} r{regs[t]}, {loc}, 1"
                regs[t] += 1
                budget -= 2
            else:
                ins = f"fence.{rnd.choice(('acq', 'rel', 'acq_rel', 'sc'))}.{sc}"
                budget -= 1
            cols[t].append(ins)
        cols = [c for c in cols if c]
        head = " | ".join(f"P{t}@wg {t % 2}" for t in range(len(cols))) + " ;"
        rows = [" | ".join(c[k] if k < len(c) else "" for c in cols) + " ;"
                for k in range(max(len(c) for c in cols))]
        text = (f"AMDGPU gen{nevents}_{seed}\n{{ {' '.join(f'{x} = 0;' for x in locs)} }}\n"
                + head + "\n" + "\n".join(rows) + "\nexists (x == 1)\n")
        test = litmus.parse(text)
        if max(pe.n for pe in build(test)) == nevents:
            return test


def per_test_seconds(nevents: int, count: int) -> tuple[float, float]:
    times = []
    for seed in range(count):
        t = generated(nevents, seed)
        oracle.clear_cache()
        t0 = time.perf_counter()
        oracle.check(t)
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times), max(times)


def figures(quick: bool = False):
    """(label, value, unit) rows for ``scopefuzz bench``."""
    secs = 0.5 if quick else 2.0
    out = []
    corpora = [os.path.join(ROOT, "corpora")]
    tests, skipped = load(corpora)
    # the AMDGPU-dialect corpora (corpora/thinair holds Vulkan tests: a conformance front end)
    tests = [t for t in tests if t.dialect in AMDGPU.dialects]
    label = f"corpora: {len(tests)} AMDGPU tests ({skipped} not decidable yet), uncached"
    out.append((label, throughput(tests, secs), "tests/s"))
    out.append(("corpora, cached (same process, outcome cache warm)",
                throughput(tests, secs / 2, cached=True), "tests/s"))
    conf = os.path.join(SHARED, "conformance")
    if os.path.isdir(conf):
        if not quick:
            ctests, cskipped = load([conf])
            out.append((f"conformance: {len(ctests)} tests with front end + model "
                        f"({cskipped} not decidable), uncached", throughput(ctests, secs),
                        "tests/s"))
        out.extend(per_model(conf, secs))
    oracle.check(generated(16, 0))          # compile / warm up
    for ev in (16, 20):
        mean, worst = per_test_seconds(ev, 3 if quick else 10)
        out.append((f"{ev}-event generated programs: mean time per test", mean, "s"))
        out.append((f"{ev}-event generated programs: worst time per test", worst, "s"))
    return out


def main(argv=None) -> int:
    quick = "--quick" in (argv or sys.argv[1:])
    for label, value, unit in figures(quick):
        v = f"{value:,.4f}" if isinstance(value, float) and value < 10 else \
            (f"{value:,.1f}" if isinstance(value, float) else str(value))
        print(f"{label:<62} {v:>12} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

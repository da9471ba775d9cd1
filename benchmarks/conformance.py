"""Agreement of the conformance models with the Dat3M suites, and throughput per model.

Usage: ``.venv/bin/python benchmarks/conformance.py [--shared DIR] [--suite NAME ...]
[--reference] [--markdown] [--cpu-passes N]``

The suites and their models come from the model registration (each unit declares the suites it
is measured on: ``oracle.ConformanceModel``): RC11 (rc11), C11 (c11), VULKAN and VULKAN-DR
(vulkan), OPENCL and OPENCL-DR (opencl). By default the models run in the oracle engine
(``oracle.check``: the model files ``oracle/models/<model>/<model>.model``); a program over 64
events whose search the engine cannot finish within its bounded try (``oracle.check.
FALLBACK_AFTER``) is decided by the unit's fallback, the Python version of the same model
(``oracle/models/<m>/reference.py``, where the unit has one), and is counted apart.
``--reference`` runs the fallback only (suites whose model has none are left out). Each suite
is run twice, the first time to warm up (numba compilation, imports) with the oracle's cache
cleared after it; the throughput is that of the second run, in this one process.

For each suite it reads ``DIR/conformance/expected/<SUITE>.csv`` (``path,1|0``, read by
``litmus.expected``), parses every listed file under ``DIR/conformance``, runs the suite's model
and compares:

- plain suites: 1 = herd ``Ok`` (the condition holds), 0 = ``No``;
- ``-DR`` suites: 1 = no consistent execution (among those the file's ``filter`` keeps) is racy,
  0 = some is (the model's ``racy`` flag).

It prints ``SUITE: N agree, M disagree`` and every disagreement, and each suite's throughput in
tests per second in this one process. ``--markdown`` prints the table docs/conformance.md quotes.

``--cpu-passes N`` measures the engine's rate per test instead (issue 16's target): after a warm
pass, N passes over the suite's files, each check timed alone with ``time.process_time`` (CPU
time, less distorted by other processes than wall time) after ``oracle.clear_cache()``, so that
no pass reuses an earlier result. It prints each pass's rate and the rate of the sum of each
test's best time.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from litmus import ParseError, parse_file  # noqa: E402
from litmus.expected import read_expected  # noqa: E402

def suites() -> dict:
    """Suite name -> (model, comparison), from the registered models (oracle.ConformanceModel:
    each declares the suites it is measured on)."""
    from oracle import registry
    out = {}
    for name in registry.names():
        unit = registry.get(name)
        out.update({suite: (unit, how) for suite, how in unit.suites.items()})
    return out


def observed(result, how: str) -> str:
    if how == "race":
        return "0" if "racy" in result.flags else "1"
    return {"Ok": "1", "No": "0"}.get(result.verdict, result.verdict)


def run_suite(shared: pathlib.Path, suite: str, reference: bool = False):
    import oracle
    from oracle import OracleError
    unit, how = suites()[suite]
    model, ref = unit.name, unit.fallback
    stop = "race" if how == "race" else "verdict"
    table = read_expected(unit.expected_csv(str(shared / "conformance"), suite))
    tests = [(e.path, e.written, parse_file(shared / "conformance" / e.path)) for e in table.rows]
    result = None
    for _ in range(2):
        oracle.clear_cache()
        agree, disagree, fallback = [], [], []
        t0 = time.perf_counter()
        for rel, want, test in tests:
            try:
                if reference:
                    res = ref(test, stop=stop)
                else:
                    # past its bounded try on a program over 64 events oracle.check asks the reference
                    res = oracle.check(test, model)
                    if "reference-partial" in res.flags:
                        fallback.append(rel)
                got = observed(res, how)
            except (ParseError, ValueError, OracleError) as e:
                got = f"error: {e}"
            (agree if got == want else disagree).append((rel, want, got))
        result = agree, disagree, fallback, time.perf_counter() - t0
    return result


def cpu_rate(shared: pathlib.Path, suite: str, passes: int):
    """Per pass, tests per CPU second of ``oracle.check`` on the suite's files (the cache cleared
    before each check), and the rate of the sum of each test's best time."""
    import oracle
    unit, _ = suites()[suite]
    table = read_expected(unit.expected_csv(str(shared / "conformance"), suite))
    tests = [parse_file(shared / "conformance" / e.path) for e in table.rows]
    best = [float("inf")] * len(tests)
    rates = []
    for p in range(passes + 1):
        total = 0.0
        for i, test in enumerate(tests):
            oracle.clear_cache()
            t0 = time.process_time()
            oracle.check(test, unit.name)
            dt = time.process_time() - t0
            total += dt
            if p:
                best[i] = min(best[i], dt)
        if p:                                   # pass 0 warms up (loads, imports)
            rates.append(len(tests) / total if total else float("inf"))
    return rates, len(tests) / sum(best) if sum(best) else float("inf")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
    ap.add_argument("--suite", action="append", choices=sorted(suites()))
    ap.add_argument("--reference", action="store_true", help="Python reference models only")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cpu-passes", type=int, metavar="N",
                    help="the engine's rate per test in CPU time over N passes (no agreement)")
    args = ap.parse_args(argv)
    shared = pathlib.Path(args.shared)
    if args.cpu_passes:
        for suite in args.suite or list(suites()):
            rates, best = cpu_rate(shared, suite, args.cpu_passes)
            print(f"{suite}: {', '.join(f'{r:.0f}' for r in rates)} tests/s CPU per pass; "
                  f"{best:.0f} tests/s CPU as the sum of each test's best "
                  f"(load {os.getloadavg()[0]:.1f})")
        return 0
    status = 0
    lines = []
    for suite in args.suite or list(suites()):
        if args.reference and suites()[suite][0].fallback is None:
            print(f"{suite}: model {suites()[suite][0].name} has no Python reference (skipped "
                  "with --reference)", file=sys.stderr)
            continue
        agree, disagree, fallback, secs = run_suite(shared, suite, args.reference)
        n = len(agree) + len(disagree)
        rate = n / secs if secs else 0.0
        how = "reference" if args.reference else f"engine, {len(fallback)} by the reference"
        if args.markdown:
            model = suites()[suite][0].name
            lines.append(f"| {suite} | {model} | {n} | {len(agree)} | {len(disagree)} "
                         f"| {len(fallback)} | {rate:.0f} |")
        else:
            print(f"{suite}: {len(agree)} agree, {len(disagree)} disagree ({n} tests; {how}; "
                  f"{secs:.2f} s, {rate:.0f} tests/s)")
        for rel, want, got in disagree:
            print(f"  DISAGREE {rel}: expected {want}, model {got}", file=sys.stderr)
        status |= bool(disagree)
    if args.markdown:
        print("| suite | model | tests | agree | disagree | by the reference | tests/s |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(lines))
    return int(status)


if __name__ == "__main__":
    sys.exit(main())

"""Agreement of the rc11 and vulkan models with the Dat3M conformance suites, and RC11 throughput.

Usage: ``.venv/bin/python benchmarks/conformance.py [--shared DIR] [--suite NAME ...] [--markdown]``

For each suite it reads ``DIR/conformance/expected/<SUITE>.csv`` (``path,1|0``), parses every listed
file under ``DIR/conformance``, runs the suite's model and compares:

- plain suites: 1 = herd ``Ok`` (the condition holds), 0 = ``No``;
- ``-DR`` suites: 1 = no consistent execution (among those the file's ``filter`` keeps) is racy,
  0 = some is (the model's ``racy`` flag).

It prints ``SUITE: N agree, M disagree`` and every disagreement, and the RC11 throughput in tests
per second in this one process. ``--markdown`` prints the table docs/conformance.md quotes.
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from litmus import ParseError, parse_file  # noqa: E402

#: suite -> (model module, comparison)
SUITES = {
    "RC11": ("rc11", "verdict"),
    "VULKAN": ("vulkan", "verdict"),
    "VULKAN-DR": ("vulkan", "race"),
}


def model_check(name: str):
    import importlib
    return importlib.import_module(f"oracle.models.{name}").check


def read_expected(path: pathlib.Path) -> list[tuple[str, str]]:
    with open(path, newline="") as f:
        return [(row[0].strip(), row[1].strip()) for row in csv.reader(f) if row]


def observed(result, how: str) -> str:
    if how == "race":
        return "0" if "racy" in result.flags else "1"
    return {"Ok": "1", "No": "0"}.get(result.verdict, result.verdict)


def run_suite(shared: pathlib.Path, suite: str):
    model, how = SUITES[suite]
    check = model_check(model)
    rows = read_expected(shared / "conformance" / "expected" / f"{suite}.csv")
    agree, disagree = [], []
    t0 = time.perf_counter()
    for rel, want in rows:
        path = shared / "conformance" / rel
        try:
            res = check(parse_file(path), stop="race" if how == "race" else "verdict")
            got = observed(res, how)
        except (ParseError, ValueError) as e:
            got = f"error: {e}"
        (agree if got == want else disagree).append((rel, want, got))
    return agree, disagree, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
    ap.add_argument("--suite", action="append", choices=sorted(SUITES))
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    shared = pathlib.Path(args.shared)
    status = 0
    lines = []
    for suite in args.suite or list(SUITES):
        agree, disagree, secs = run_suite(shared, suite)
        n = len(agree) + len(disagree)
        rate = n / secs if secs else 0.0
        if args.markdown:
            lines.append(f"| {suite} | {SUITES[suite][0]} | {n} | {len(agree)} | {len(disagree)} "
                         f"| {rate:.0f} |")
        else:
            print(f"{suite}: {len(agree)} agree, {len(disagree)} disagree "
                  f"({n} tests, {secs:.2f} s, {rate:.0f} tests/s)")
        for rel, want, got in disagree:
            print(f"  DISAGREE {rel}: expected {want}, model {got}", file=sys.stderr)
        status |= bool(disagree)
    if args.markdown:
        print("| suite | model | tests | agree | disagree | tests/s |")
        print("|---|---|---|---|---|---|")
        print("\n".join(lines))
    return int(status)


if __name__ == "__main__":
    sys.exit(main())

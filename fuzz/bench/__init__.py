"""``scopefuzz bench``: throughput figures, section by section (DESIGN.md command table).

:data:`BENCH_SECTIONS` maps a section name to a module of this package exposing
``run(args) -> list[(label, value, unit)]``; adding a section is one module and one line here. The
sections live with the command line (not in ``oracle``/``hw``), so that backends import only
``litmus``: a section may use the oracle, a backend and :func:`fuzz.compare.compare` together.
"""

from __future__ import annotations

import importlib
import pathlib
import sys

#: the source checkout (benchmark scripts and corpora the sections read)
ROOT = pathlib.Path(__file__).resolve().parents[2]

#: bench section name -> module with run(args) -> [(label, value, unit)]
BENCH_SECTIONS: dict[str, str] = {
    "oracle": "fuzz.bench.oracle_figures",
    "opencl": "fuzz.bench.opencl_figures",
    "sim": "fuzz.bench.sim_figures",
    "scaling": "fuzz.bench.scaling_figures",
}


class BenchError(Exception):
    """A section cannot run (e.g. its benchmark script is missing): one line."""


def script_figures(name: str, args):
    """The rows of ``benchmarks/<name>.py``'s ``figures(quick=...)`` (a benchmark script that
    is also a section)."""
    import importlib.util
    script = ROOT / "benchmarks" / f"{name}.py"
    if not script.is_file():
        raise BenchError(f"{script}: benchmark script not found (run from a source checkout)")
    spec = importlib.util.spec_from_file_location(name, script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.figures(quick=args.quick)


def format_row(label: str, value, unit: str) -> str:
    """One figure as a line: label, value (thousands separators; 4 significant digits below 100),
    unit."""
    if isinstance(value, float):
        v = f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4g}"
    else:
        v = f"{value}"
    return f"  {label:<58} {v:>12} {unit}"


def print_rows(rows) -> None:
    """Print each (label, value, unit) row as it is computed."""
    for label, value, unit in rows:
        print(format_row(label, value, unit))
        sys.stdout.flush()


def cmd_bench(args) -> int:
    names = list(BENCH_SECTIONS)
    if args.only:
        unknown = [s for s in args.only if s not in BENCH_SECTIONS]
        if unknown:
            print(f"scopefuzz bench: unknown section {unknown[0]!r} (sections: "
                  f"{', '.join(names)})", file=sys.stderr)
            return 2
        names = args.only
    for name in names:
        mod = importlib.import_module(BENCH_SECTIONS[name])
        print(f"[{name}]")
        sys.stdout.flush()
        try:
            print_rows(mod.run(args))
        except BenchError as e:
            print(f"scopefuzz bench: {e}", file=sys.stderr)
            return 2
    return 0


def register(sub) -> None:
    p = sub.add_parser("bench", help="throughput figures (oracle tests/s, ...)",
                       description="Run the benchmark sections and print figures.")
    p.add_argument("--only", action="append", metavar="SECTION",
                   help=f"run only this section (repeatable; sections: {', '.join(BENCH_SECTIONS)})")
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.set_defaults(func=cmd_bench)

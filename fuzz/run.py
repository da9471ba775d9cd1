"""``scopefuzz run`` (DESIGN.md command table): any backend, against the oracle.

``run --backend B [--iterations N] [--seed S] [--json] [--exhaustive] FILE|DIR...``: each test is
checked by the oracle first; a test whose verdict is ``Undef`` is not run (the report says why).
Each observed outcome is marked allowed or FORBIDDEN (:func:`fuzz.compare.compare`). Exit status:
1 if anything forbidden was observed, otherwise 2 if some file could not be read or run, otherwise 0.
"""

from __future__ import annotations

import json
import sys

import hw
from hw import BackendError, ExhaustiveBackend
from litmus.about import JSON_SCHEMA
from litmus.dialects import litmus_files, parse_file
from litmus.lexer import ParseError
from litmus.outcome import format_outcome
from oracle.commands import timeout_option

from .compare import compare


def run_one(backend, test, path: str, iterations: int, seed: int,
            exhaustive: bool = False, timeout: float | None = None) -> dict:
    """Run ``test`` and compare with the oracle: the ``run --json`` object (DESIGN.md).
    ``exhaustive``: every scheduling (an :class:`~hw.ExhaustiveBackend`, i.e. sim) up to
    ``iterations`` schedules; counts are then schedules. ``timeout`` limits each oracle
    computation (:class:`oracle.deadline.Timeout`). The oracle is asked only whether the program
    is undefined and about the outcomes observed (:class:`oracle.judge.Judge`), never for the
    whole allowed set (the JSON object does not list it)."""
    from oracle.judge import Judge
    res = Judge(test, timeout=timeout)
    base = {"test": test.name, "file": path, "backend": backend.name}
    if res.ub:                                  # the verdict is Undef
        why = "; ".join(res.ub) or "undefined behaviour"
        return dict(base, skipped=f"verdict Undef: {why}")
    if exhaustive:
        if not isinstance(backend, ExhaustiveBackend):
            raise BackendError(f"backend {backend.name} has no exhaustive mode")
        hist, complete = backend.explore(test, iterations)
        if not complete:
            print(f"{path}: exhaustive exploration stopped at {iterations} schedules",
                  file=sys.stderr)
    else:
        hist = backend.run(test, iterations, seed)
    hangs = hist.params.get("deadlocks", 0)
    if hangs:
        print(f"{path}: {hangs} iterations hung (a barrier wait never completed) and are not "
              f"counted", file=sys.stderr)
    c = compare(res, hist, test.condition)
    return dict(base, iterations=hist.total, seconds=round(hist.seconds, 6), histogram=c.histogram(),
                forbidden=c.forbidden, witnesses=c.witnesses,
                condition_observed=c.condition_observed)


def _print_text(obj: dict) -> None:
    print(f"{obj['test']} ({obj['file']}) on {obj['backend']}")
    if "skipped" in obj:
        print(f"  not run: {obj['skipped']}")
        return
    for row in obj["histogram"]:
        mark = "" if row["allowed"] else "   FORBIDDEN"
        print(f"  {row['count']:>10}  {format_outcome(row['outcome'])}{mark}")
    print(f"  {obj['iterations']} iterations in {obj['seconds']:.3f}s; condition observed "
          f"{obj['witnesses']} times; forbidden {obj['forbidden']}")


def cmd_run(args) -> int:
    if getattr(args, "compile", None):
        # compilers in the loop (issue 29, docs/compilers.md): compile, read back, judge
        from .compilers import run_corpus
        if not litmus_files(args.files):
            print("scopefuzz run: no *.litmus files found", file=sys.stderr)
            return 2
        mutate = None
        if args.ptx_mutant:
            from hw.ptxc.mutants import get as get_mutant
            try:
                mutate = get_mutant(args.ptx_mutant)
            except BackendError as e:
                print(f"scopefuzz run: {e}", file=sys.stderr)
                return 2
        return run_corpus(args.files, args.compile, args.json, args.source_model, mutate)
    try:
        backend = hw.get_backend(args.backend)   # looked up now (tests substitute it)
    except BackendError as e:
        print(f"scopefuzz run: {e}", file=sys.stderr)
        return 2
    files = litmus_files(args.files)
    if not files:
        print("scopefuzz run: no *.litmus files found", file=sys.stderr)
        return 2
    errors = forbidden = 0
    try:
        for path in files:
            try:
                test = parse_file(path)
            except ParseError as e:
                errors += 1
                if args.json:
                    print(json.dumps({"file": path, "error": str(e), "schema": JSON_SCHEMA}))
                else:
                    print(str(e), file=sys.stderr)
                continue
            try:
                obj = run_one(backend, test, path, args.iterations, args.seed,
                              args.exhaustive, args.timeout)
            except Exception as e:          # backend or oracle refused: one line, go on
                errors += 1
                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                if not msg.startswith(f"{path}:"):
                    msg = f"{path}:1:1: {msg}"      # a whole-test error: the test's first line
                if args.json:
                    extra = {"timeout": True} if type(e).__name__ == "Timeout" else {}
                    print(json.dumps({"file": path, "error": msg, **extra, "schema": JSON_SCHEMA}))
                else:
                    print(msg, file=sys.stderr)
                continue
            forbidden += obj.get("forbidden", 0)
            if args.json:
                print(json.dumps(dict(obj, schema=JSON_SCHEMA)))
            else:
                _print_text(obj)
            sys.stdout.flush()
    finally:
        backend.close()
    if forbidden:
        return 1
    return 2 if errors else 0


def register(sub) -> None:
    p = sub.add_parser("run", help="run litmus tests on a backend; outcomes marked allowed or "
                                   "FORBIDDEN (exit 1 if forbidden seen)",
                       description="Run each FILE (directories: every *.litmus below) on a "
                                   "backend and compare every observed outcome with the oracle. "
                                   "Tests whose verdict is Undef are not run.")
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument("--backend", default="sim",
                   help="sim, sim:PROFILE, sim:MUTANT[@PROFILE][,OPTION...], opencl[:P:D]")
    p.add_argument("--iterations", type=int, default=100_000, help="runs per test")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one JSON object per test per line")
    p.add_argument("--exhaustive", action="store_true",
                   help="every scheduling instead of random ones (sim only; --iterations caps "
                        "the number of schedules)")
    p.add_argument("--compile", metavar="COMPILER[:sm_XX,Oo]",
                   help="compile each C/OPENCL/CUDA test to PTX with a real compiler (clang-cuda, "
                        "clang-ocl, nvcc-libcu, nvcc-builtins), read it back and check that every "
                        "PTX outcome is allowed by the source model (docs/compilers.md); one "
                        "line per test: holds / counterexample / skipped(racy) / refused / error")
    p.add_argument("--source-model", default=None,
                   help="with --compile: the source model (default: C c11, OPENCL and CUDA opencl)")
    p.add_argument("--ptx-mutant", metavar="NAME", default=None,
                   help="with --compile: plant a compiler bug by editing the emitted PTX "
                        "(hw/ptxc/mutants.py: drop-acquire, drop-release, drop-fence, "
                        "scope-gpu-to-cta, ...)")
    timeout_option(p)
    p.set_defaults(func=cmd_run)


"""``scopefuzz check`` and ``scopefuzz explain`` (DESIGN.md command table)."""

from __future__ import annotations

import json
import os
import sys
import types

from litmus.about import JSON_SCHEMA
from litmus.dialects import litmus_files, parse, parse_file, read_litmus_text
from litmus.expected import race_verdict, read_expected
from litmus.lexer import ParseError
from litmus.printer import format_condition

from .deadline import Timeout, call_with_timeout
from .errors import OracleError



# --- check ---------------------------------------------------------------------------------------
def _report_error(path: str, e: Exception, as_json: bool) -> None:
    """One file's error, one line naming the file (``--json``: an ``error`` object)."""
    msg = str(e)
    if not msg.startswith(path) and isinstance(e, OracleError):
        msg = f"{path}:1:1: {msg}"
    if as_json:
        print(json.dumps({"file": path, "error": msg, "schema": JSON_SCHEMA}))
    else:
        print(msg, file=sys.stderr)


def _report_failure(path: str, e: BaseException, as_json: bool) -> int:
    """An exception no front end or engine reported itself (out of memory or stack, a bug): one
    line naming the file, and its exit status (:mod:`litmus.failure`)."""
    from litmus.failure import failure_line
    msg, status = failure_line(path, e)
    if as_json:
        print(json.dumps({"file": path, "error": msg, "schema": JSON_SCHEMA}))
    else:
        print(msg, file=sys.stderr)
    return status


def _from_cache(text: str, test, model: str | None):
    """The verdict cache's result for this file text and model (:mod:`litmus.verdicts`), as an
    object with a Result's fields (``states`` a list of dicts), or None."""
    from litmus.dialects import DEFAULT_MODEL
    from litmus.verdicts import lookup
    name = model or DEFAULT_MODEL.get(test.dialect)
    got = lookup(text, name) if name else None
    if got is None:
        return None
    try:
        return types.SimpleNamespace(
            model=got["model"], verdict=got["verdict"], states=list(got["states"]),
            flags=got["flags"], ub=got["ub"], candidates=got["candidates"],
            consistent=got["consistent"], seconds=got["seconds"], pending=False)
    except (KeyError, TypeError):
        return None


def _to_cache(text: str, test, model: str | None, res) -> None:
    """Store a computed result in the verdict cache (not one with very many states)."""
    from litmus.verdicts import MAX_STATES, store
    if len(res.states) > MAX_STATES:
        return
    store(text, model or res.model,
          {"model": res.model, "verdict": res.verdict, "states": [dict(s) for s in res.states],
           "flags": list(res.flags), "ub": list(res.ub), "candidates": res.candidates,
           "consistent": res.consistent, "seconds": res.seconds})


def cmd_check(args) -> int:
    if getattr(args, "max_memory", None) is not None:
        from .ceiling import set_limit
        set_limit(args.max_memory)
    files = litmus_files(args.files)
    if not files:
        print("scopefuzz check: no *.litmus files found", file=sys.stderr)
        return 2
    if args.outcome is not None:
        return _check_outcome(args, files)
    expected = None
    if args.expect:
        try:
            expected = read_expected(args.expect)
        except ParseError as e:
            print(str(e), file=sys.stderr)
            return 2
    status = 0
    agree = disagree = missing = 0
    dr = args.dr or bool(expected and expected.race)
    # the plain line needs the verdict and ub only: a long search's verdict comes from the
    # outcome-directed search (oracle/witness.py); the states, the race flag and the JSON
    # object need the full check (computed within the timeout)
    full = bool(args.json or args.states or args.format == "herd" or dr)
    # the verdict cache: a file checked before with this code answers without the oracle
    cached = args.format != "herd"
    for path in files:
        test = None
        try:
            text = read_litmus_text(path)
            test = parse(text, path)
            res = _from_cache(text, test, args.model) if cached else None
            if res is None:
                from .check import check
                from .warmup import compile_search_ahead
                compile_search_ahead()      # a cold cache: the search's callees on two cores
                res = call_with_timeout(check, args.timeout, test, args.model, None, True, full)
                if cached and not getattr(res, "pending", False):
                    try:        # a result that cannot be stored is still this file's answer
                        _to_cache(text, test, args.model, res)
                    except Exception:
                        pass
        except Timeout as e:
            msg = f"{path}:1:1: {test.name}: {e}"
            if args.json:
                print(json.dumps({"test": test.name, "file": path, "error": msg, "timeout": True,
                                  "schema": JSON_SCHEMA}))
            else:
                print(msg, file=sys.stderr)
            status = 2
            continue
        except (ParseError, OracleError) as e:
            _report_error(path, e, args.json)
            status = 2
            continue
        except Exception as e:        # MemoryError, RecursionError, a bug: one line for this file
            status = max(status, _report_failure(path, e, args.json))
            continue
        try:                        # the output may expand a large set: within the ceiling
            if args.format == "herd":
                from .herd_format import herd_lines
                print("\n".join(herd_lines(test, res)))
            elif args.json:
                # json.dumps, a large States written block by block as it is streamed (a
                # cached result's states are a list: json.dumps itself)
                obj = {"test": test.name, "file": path, "model": res.model,
                       "verdict": res.verdict, "condition": format_condition(test.condition),
                       "states": res.states, "flags": res.flags, "ub": res.ub,
                       "candidates": res.candidates, "consistent": res.consistent,
                       "seconds": round(res.seconds, 6), "schema": JSON_SCHEMA}
                if isinstance(res.states, list):
                    sys.stdout.write(json.dumps(obj))
                else:
                    from .states import dump_pieces
                    for piece in dump_pieces(obj):
                        sys.stdout.write(piece)
                sys.stdout.write("\n")
                sys.stdout.flush()
            elif res.pending:         # the verdict by search: no state set computed
                print(f"{test.name}  {res.verdict}  (model {res.model}, decided by a witness "
                      f"search; --states for the states, {res.seconds:.4f} s)")
                if res.ub:
                    print(f"  ub: {'; '.join(res.ub)}")
            else:
                print(f"{test.name}  {res.verdict}  (model {res.model}, {len(res.states)} states, "
                      f"{res.candidates} candidates, {res.consistent} consistent, "
                      f"{res.seconds:.4f} s)")
                if res.ub:
                    print(f"  ub: {'; '.join(res.ub)}")
                if args.states:
                    for s in res.states:
                        print("  " + " ".join(f"{k}={v};" for k, v in s.items()))
        except OracleError as e:    # (oracle.ceiling.MemoryCeiling)
            sys.stdout.flush()
            _report_error(path, e, args.json)
            status = 2
            continue
        if expected is not None:
            want = expected.lookup(path)
            if want is None:
                missing += 1
            elif want == (got := race_verdict(res.flags) if dr else res.verdict):
                agree += 1
            else:
                disagree += 1
                print(f"DISAGREE {path}: expected {want}, model {res.model} says {got}",
                      file=sys.stderr if args.json else sys.stdout)
    if expected is not None:
        line = f"{agree} agree, {disagree} disagree"
        if missing:
            line += f" ({missing} not in {os.path.basename(args.expect)})"
        print(line, file=sys.stderr if args.json else sys.stdout)
        if disagree:
            status = max(status, 1)
    return status


def _check_outcome(args, files) -> int:
    """``check FILE --outcome PROP``: is this one outcome allowed (exit 0) or forbidden (exit 1)?
    Only that outcome is searched for (:func:`oracle.query.allows`)."""
    import time
    from .query import allows, parse_outcome
    if args.expect or args.states:
        print("scopefuzz check: --outcome cannot be combined with --expect or --states",
              file=sys.stderr)
        return 2
    status = 0
    for path in files:
        try:
            test = parse_file(path)
            outcome = parse_outcome(test, args.outcome)
            from .warmup import compile_search_ahead
            compile_search_ahead()          # a cold cache: the search's callees on two cores
            t0 = time.perf_counter()
            ok = call_with_timeout(allows, args.timeout, test, outcome, args.model)
            secs = time.perf_counter() - t0
        except Timeout as e:
            _report_error(path, OracleError(f"{test.name}: {e}"), args.json)
            status = 2
            continue
        except (ParseError, OracleError) as e:
            _report_error(path, e, args.json)
            status = 2
            continue
        except Exception as e:
            status = max(status, _report_failure(path, e, args.json))
            continue
        text = " ".join(f"{k}={v};" for k, v in outcome.items())
        if args.json:
            print(json.dumps({"test": test.name, "file": path, "model": args.model or
                              _default_model(test), "outcome": outcome, "allowed": ok,
                              "seconds": round(secs, 6), "schema": JSON_SCHEMA}))
        else:
            print(f"{test.name}  {'allowed' if ok else 'FORBIDDEN'}  {text}  ({secs:.4f} s)")
        if not ok and status == 0:
            status = 1
    return status


def _default_model(test) -> str:
    from .check import default_model
    return default_model(test)


# --- explain -------------------------------------------------------------------------------------
def _explained(test, outcome, model, svg: bool, dot: bool = False) -> tuple[str, str, str]:
    """The explanation's text and (when asked) SVG and DOT: plain strings, so they cross a
    process."""
    from .explanation import explain
    ex = explain(test, outcome, model)
    return ex.text(), (ex.svg() if svg else ""), (ex.dot() if dot else "")


def timeout_option(p) -> None:
    p.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="stop the oracle on a test after SECONDS; the test is reported as timed "
                        "out, never given a verdict (default: no limit)")


def max_memory_option(p) -> None:
    p.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                   help="memory ceiling of the oracle (e.g. 2G, 500M): a test that would need "
                        "more is an error (exit 2), never an out-of-memory kill (default: a "
                        "quarter of the machine's memory, or $SCOPEFUZZ_MAX_MEMORY)")


def _size(text: str) -> int:
    import argparse
    from .ceiling import parse_size
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _seconds(text: str) -> float:
    import argparse
    import math
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return v


def default_outcome(test) -> str:
    """The outcome ``explain`` looks at when none is given: the test's own condition's
    proposition (for ``forall P``, its negation: the outcome that would break the claim)."""
    from litmus.ir import Not
    from litmus.printer import format_prop
    prop = test.condition.prop
    if test.condition.quantifier == "forall":
        prop = Not(prop)
    return format_prop(prop, "top")


def cmd_explain(args) -> int:
    try:
        test = parse_file(args.file)
        outcome = args.outcome if args.outcome is not None else default_outcome(test)
        text, svg, dot = call_with_timeout(_explained, args.timeout, test, outcome,
                                           args.model, bool(args.svg), bool(args.dot))
    except Timeout as e:
        print(f"{args.file}:1:1: {e}", file=sys.stderr)
        return 2
    except (ParseError, OracleError) as e:
        print(str(e), file=sys.stderr)
        return 2
    except Exception as e:
        return _report_failure(args.file, e, False)
    sys.stdout.write(text)
    for path, content in ((args.svg, svg), (args.dot, dot)):
        if not path:
            continue
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
        except OSError as e:
            print(f"{path}: cannot write: {e.strerror or e}", file=sys.stderr)
            return 2
    return 0


def register(sub) -> None:
    p = sub.add_parser("check", help="oracle verdicts and allowed outcomes (exit 2 on bad input)",
                       description="Compute every outcome the memory model allows for each FILE "
                                   "(directories: every *.litmus below) and its verdict.")
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument("--model", default=None, help="memory model (default: the dialect's)")
    p.add_argument("--json", action="store_true", help="one JSON object per test per line")
    p.add_argument("--format", choices=("text", "herd"), default="text",
                   help="herd: herd7's layout (Test/States/Ok|No/Witnesses/Condition/Observation), "
                        "for scripts that parse herd logs")
    p.add_argument("--expect", metavar="CSV", help="compare with expected verdicts (path,verdict)")
    p.add_argument("--states", action="store_true", help="also print the allowed states")
    p.add_argument("--outcome", metavar="PROP",
                   help="only say whether this outcome is allowed (exit 0) or forbidden (exit 1): "
                        "'P1:r0=0; x=1;' or 'P1:r0 == 0 /\\ x == 1'; observables left out are "
                        "free")
    p.add_argument("--dr", action="store_true",
                   help="compare the racy flag, not the verdict (Dat3M -DR suites: 1 = race-free;"
                        " automatic when the CSV name ends in -DR)")
    timeout_option(p)
    max_memory_option(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("explain", help="why the model forbids (or allows) an outcome",
                       description="For a forbidden outcome: each candidate execution producing "
                                   "it and the first check it fails, with the witness. For an "
                                   "allowed one: an execution that produces it.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--outcome", default=None, metavar="PROP",
                   help="e.g. 'P1:r0 == 1 /\\ P1:r1 == 0' (default: the test's own condition; "
                        "for 'forall P', the outcome breaking P)")
    p.add_argument("--model", default=None)
    p.add_argument("--svg", metavar="OUT", help="also draw the executions as SVG")
    p.add_argument("--dot", metavar="OUT", help="also write the executions as Graphviz DOT")
    timeout_option(p)
    p.set_defaults(func=cmd_explain)

"""``scopefuzz check`` and ``scopefuzz explain`` (DESIGN.md command table)."""

from __future__ import annotations

import csv
import json
import os
import sys

from litmus.dialects import litmus_files, parse_file
from litmus.lexer import ParseError
from litmus.printer import format_condition

from .errors import OracleError

# --- expected verdicts -------------------------------------------------------------------------
def read_expected(path: str) -> list[tuple[list[str], str]]:
    """``expected.csv`` rows as (path parts, verdict); Dat3M's 1/0 become Ok/No."""
    out = []
    try:
        with open(path, encoding="utf-8", newline="") as f:
            for lineno, row in enumerate(csv.reader(f), 1):
                if not row or not row[0].strip() or row[0].lstrip().startswith("#"):
                    continue
                if len(row) < 2:
                    raise OracleError(f"{path}:{lineno}:1: expected 'path,verdict'")
                v = row[1].strip()
                v = {"1": "Ok", "0": "No"}.get(v, v)
                if v not in ("Ok", "No", "Undef"):
                    if lineno == 1:          # a header line
                        continue
                    raise OracleError(f"{path}:{lineno}:{len(row[0]) + 2}: verdict {row[1]!r} is "
                                      f"not Ok, No, Undef, 1 or 0")
                parts = [p for p in row[0].strip().replace("\\", "/").split("/") if p not in ("", ".")]
                out.append((parts, v))
    except OSError as e:
        raise OracleError(f"{path}:1:1: cannot read: {e.strerror or e}") from None
    return out


def match_expected(file: str, expected, csv_dir: str) -> str | None:
    """The expected verdict of ``file``: a CSV path relative to the CSV's directory or its parent,
    else the longest CSV path that is a suffix of the file's path."""
    absf = os.path.normpath(os.path.abspath(file))
    for parts, v in expected:
        for base in (csv_dir, os.path.dirname(csv_dir)):
            if os.path.normpath(os.path.join(base, *parts)) == absf:
                return v
    fparts = absf.split(os.sep)
    best, blen = None, 0
    for parts, v in expected:
        if len(parts) <= len(fparts) and fparts[-len(parts):] == parts and len(parts) > blen:
            best, blen = v, len(parts)
    return best


def is_dr_csv(path: str) -> bool:
    """Dat3M's data-race suites (``VULKAN-DR.csv``): 1 = no consistent execution is racy."""
    return os.path.splitext(os.path.basename(path))[0].upper().endswith("-DR")


def race_verdict(res) -> str:
    """The verdict a ``-DR`` suite expects: Ok when the ``racy`` flag never fires, else No."""
    return "No" if "racy" in res.flags else "Ok"


# --- check ---------------------------------------------------------------------------------------
def cmd_check(args) -> int:
    from .check import check
    files = litmus_files(args.files)
    if not files:
        print("scopefuzz check: no *.litmus files found", file=sys.stderr)
        return 2
    expected, csv_dir = None, None
    if args.expect:
        try:
            expected = read_expected(args.expect)
        except OracleError as e:
            print(str(e), file=sys.stderr)
            return 2
        csv_dir = os.path.dirname(os.path.abspath(args.expect))
    status = 0
    agree = disagree = missing = 0
    dr = args.dr or bool(args.expect and is_dr_csv(args.expect))
    for path in files:
        try:
            test = parse_file(path)
            res = check(test, args.model)
        except (ParseError, OracleError) as e:
            msg = str(e)
            if not msg.startswith(path) and isinstance(e, OracleError):
                msg = f"{path}:1:1: {msg}"
            if args.json:
                print(json.dumps({"file": path, "error": msg}))
            else:
                print(msg, file=sys.stderr)
            status = 2
            continue
        if args.json:
            print(json.dumps({"test": test.name, "file": path, "model": res.model,
                              "verdict": res.verdict, "condition": format_condition(test.condition),
                              "states": res.states, "flags": res.flags, "ub": res.ub,
                              "candidates": res.candidates, "consistent": res.consistent,
                              "seconds": round(res.seconds, 6)}))
        else:
            print(f"{test.name}  {res.verdict}  ({len(res.states)} states, {res.candidates} "
                  f"candidates, {res.consistent} consistent, {res.seconds:.4f} s)")
            if res.ub:
                print(f"  ub: {'; '.join(res.ub)}")
            if args.states:
                for s in res.states:
                    print("  " + " ".join(f"{k}={v};" for k, v in s.items()))
        if expected is not None:
            want = match_expected(path, expected, csv_dir)
            if want is None:
                missing += 1
            elif want == (got := race_verdict(res) if dr else res.verdict):
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


# --- explain -------------------------------------------------------------------------------------
def cmd_explain(args) -> int:
    from .explanation import explain
    try:
        test = parse_file(args.file)
        ex = explain(test, args.outcome, args.model)
    except (ParseError, OracleError) as e:
        print(str(e), file=sys.stderr)
        return 2
    sys.stdout.write(ex.text())
    if args.svg:
        try:
            with open(args.svg, "w", encoding="utf-8") as f:
                f.write(ex.svg())
        except OSError as e:
            print(f"{args.svg}: cannot write: {e.strerror or e}", file=sys.stderr)
            return 2
    return 0


def register(sub) -> None:
    p = sub.add_parser("check", help="oracle verdicts and allowed outcomes (exit 2 on bad input)",
                       description="Compute every outcome the memory model allows for each FILE "
                                   "(directories: every *.litmus below) and its verdict.")
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument("--model", default=None, help="memory model (default: the dialect's)")
    p.add_argument("--json", action="store_true", help="one JSON object per test per line")
    p.add_argument("--expect", metavar="CSV", help="compare with expected verdicts (path,verdict)")
    p.add_argument("--states", action="store_true", help="also print the allowed states")
    p.add_argument("--dr", action="store_true",
                   help="compare the racy flag, not the verdict (Dat3M -DR suites: 1 = race-free;"
                        " automatic when the CSV name ends in -DR)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("explain", help="why the model forbids (or allows) an outcome",
                       description="For a forbidden outcome: each candidate execution producing "
                                   "it and the first check it fails, with the witness. For an "
                                   "allowed one: an execution that produces it.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--outcome", required=True, metavar="PROP",
                   help="e.g. 'P1:r0 == 1 /\\ P1:r1 == 0'")
    p.add_argument("--model", default=None)
    p.add_argument("--svg", metavar="OUT", help="also draw the executions as SVG")
    p.set_defaults(func=cmd_explain)

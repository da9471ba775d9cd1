"""``scopefuzz fmt``: print litmus tests in canonical layout, or report why they are malformed."""

from __future__ import annotations

import sys

from .dialect import PrintError
from .dialects import format_test, litmus_files, parse_file, read_litmus_text
from .failure import failure_line
from .lexer import ParseError


def cmd_fmt(args) -> int:
    status = 0
    files = litmus_files(args.files)
    if not files:
        print("scopefuzz fmt: no *.litmus files found", file=sys.stderr)
        return 2
    for i, path in enumerate(files):
        try:
            test = parse_file(path)
        except ParseError as e:
            print(str(e), file=sys.stderr)
            status = 2
            continue
        except Exception as e:        # MemoryError, RecursionError, a bug: one line for this file
            line, code = failure_line(path, e)
            print(line, file=sys.stderr)
            status = max(status, code)
            continue
        try:
            text = format_test(test)
        except PrintError as e:       # a dialect (or construct) with no printer: refused
            print(f"{path}:1:1: fmt: {e}", file=sys.stderr)
            status = 2
            continue
        except Exception as e:
            line, code = failure_line(path, e)
            print(line, file=sys.stderr)
            status = max(status, code)
            continue
        if args.check:
            if read_litmus_text(path) != text:
                print(f"{path}: not in canonical layout", file=sys.stderr)
                status = max(status, 1)
            continue
        if len(files) > 1:
            print(f"// {path}")
        sys.stdout.write(text)
        if len(files) > 1 and i + 1 < len(files):
            print()
    return status


def register(sub) -> None:
    p = sub.add_parser("fmt", help="print litmus tests in canonical layout (exit 2 on bad input)",
                       description="Parse each FILE (directories: every *.litmus below) and print "
                                   "it in canonical layout with aligned columns.")
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument("--check", action="store_true",
                   help="print nothing; exit 1 when a file is not already in canonical layout")
    p.set_defaults(func=cmd_fmt)

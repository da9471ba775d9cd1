"""The ``scopefuzz`` command line (argparse).

Each package contributes its subcommands through a ``register(subparsers)`` function in a module
listed in :data:`COMMAND_MODULES`; a subcommand exists only once the capability behind it works.
Commands return an exit status; bad input of any kind is a one-line error on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: Modules that register subcommands, in the order of the data flow litmus -> oracle / hw -> fuzz.
COMMAND_MODULES = [
    "litmus.commands",
    "oracle.commands",
    "fuzz.bench",
    "fuzz.commands",
    "hw.opencl.commands",
    "fuzz.run",
    "hw.sim.commands",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scopefuzz",
        description="Property-based fuzzing and differential testing of GPU memory models.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("scopefuzz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``scopefuzz`` command line (argparse).

Each package contributes its subcommands through a ``register(subparsers)`` function in a module
listed in :data:`COMMAND_MODULES`; a subcommand exists only once the capability behind it works.
Commands return an exit status; bad input of any kind is a one-line error on stderr, and an
exception no command reported itself is one line too (exit 2 for running out of memory or stack,
exit 5 for an internal error: :mod:`litmus.failure`), never a traceback.

A command imports only what it uses: :data:`COMMANDS` says which module registers each command,
and a command line naming one of them builds the parser from that module alone (``scopefuzz
check`` never imports the OpenCL or simulator stacks, nor Hypothesis). Anything else (``--help``,
a mistyped command) builds it from every module.
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
    "fuzz.warm",
]

#: command -> the module of :data:`COMMAND_MODULES` that registers it (tests/test_startup.py
#: checks the two agree)
COMMANDS = {
    "fmt": "litmus.commands",
    "check": "oracle.commands", "explain": "oracle.commands",
    "bench": "fuzz.bench",
    "fuzz": "fuzz.commands", "report": "fuzz.commands", "merge": "fuzz.commands",
    "codegen": "hw.opencl.commands", "devices": "hw.opencl.commands",
    "run": "fuzz.run", "mutants": "hw.sim.commands",
    "warm": "fuzz.warm",
}


class _Version(argparse.Action):
    """``--version``: the version line, worked out only when asked for (it reads the installed
    distribution's metadata and runs ``git`` twice: a tenth of a second every other command
    does not need)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from litmus.about import version_line
        print(version_line())
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command`` (a name of :data:`COMMANDS`), only that command's module is
    imported and registered."""
    parser = argparse.ArgumentParser(
        prog="scopefuzz",
        description="Property-based fuzzing and differential testing of GPU memory models.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    module = COMMANDS.get(command) if command is not None else None
    for name in [module] if module is not None else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _command(argv: list[str]) -> str | None:
    """The command a command line names: its first word that is not an option."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(_command(argv))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("scopefuzz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit:
        raise
    except BaseException as e:      # MemoryError, RecursionError, a bug: one line, never a traceback
        from litmus.failure import failure_line
        line, status = failure_line(f"scopefuzz {args.command}", e)
        try:
            print(line, file=sys.stderr)
        except Exception:
            pass
        return status


if __name__ == "__main__":
    sys.exit(main())

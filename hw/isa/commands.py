"""``scopefuzz codegen --dialect isa --target TARGET FILE`` (the cross-check view) and the isa
lines of ``scopefuzz mutants``."""

from __future__ import annotations

import sys

from litmus import ParseError, parse_file

from ..backend import BackendError


def cmd_codegen_isa(path: str, target_spec: str | None, full: bool = False) -> int:
    """Print the OpenCL source, then per thread clang-22's code next to the hand lowering, with
    every difference (``full``: also the annotated disassembly of every thread)."""
    from . import crosscheck, evidence
    from .mutants import MUTANTS
    from .targets import parse_spec
    from .toolchain import tools_available
    try:
        test = parse_file(path)
    except ParseError as e:
        print(str(e), file=sys.stderr)
        return 2
    why = tools_available()
    if why:
        print(f"scopefuzz codegen: {why}", file=sys.stderr)
        return 2
    try:
        target, mutant = parse_spec(target_spec or "gfx942", MUTANTS)
        if mutant:
            raise BackendError("codegen --target takes a target and options, not a mutant")
        b, checks = crosscheck.check(test, target)
    except BackendError as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 2
    out = ["/* OpenCL source (test.cl) */", b.source.text.rstrip("\n"), "",
           crosscheck.side_by_side(b, checks)]
    if full:
        for th in b.threads:
            out += evidence.listing(b, th) + [""]
    sys.stdout.write("\n".join(out).rstrip("\n") + "\n")
    return 0


def mutant_lines(verbose: bool) -> list[str]:
    from .mutants import MUTANTS
    width = max(len(n) for n in MUTANTS)
    out = []
    for m in MUTANTS.values():
        opts = f"  [{','.join(m.options)}]" if m.options else ""
        out.append(f"isa:TARGET:{m.name:<{width}}  {m.summary}{opts}")
        if verbose:
            out.append(f"  {'':<{width + 11}}  {m.mechanism}")
    return out

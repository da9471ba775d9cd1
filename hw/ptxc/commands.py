"""``scopefuzz codegen --compile COMPILER[:sm_XX,Oo] FILE...``: what a real compiler made of a
source litmus test (issue 29).

For each FILE it prints three sections, so a reader can follow one access from the source kernel
through the PTX to the litmus row the PTX model checks:

- ``== source (NAME:sm_XX,Oo) ==``: the kernel handed to the compiler (:attr:`Compiled.source`),
  lines numbered;
- ``== ptx ==``: the compiler's PTX (after ``--ptx-mutant`` when given), lines numbered; above it
  the exact compiler command and version;
- ``== read back ==``: the PTX read back as a PTX-dialect litmus test (printed with
  :func:`litmus.print_ptx.format_ptx`, so the section parses back to :attr:`Compiled.test`), each
  row followed by a ``//`` comment naming, per thread, the PTX line and source line it came from.

Bad input (unreadable file, bad spec, unknown mutant, a source the front end refuses) and a
compiler failure are each one line on stderr and exit 2. Imports only ``litmus`` and ``hw``.
"""

from __future__ import annotations

import sys

from litmus import ParseError, Test, parse_file
from litmus.print_ptx import format_ptx, format_ptx_instr

from ..backend import BackendError
from . import Compiled, compile_test, parse_spec


def _numbered(text: str) -> str:
    lines = text.splitlines()
    w = len(str(len(lines)))
    return "".join(f"{i:>{w}}  {line}\n" for i, line in enumerate(lines, 1))


def _where(o: tuple) -> str:
    """``ptx L`` and, when the PTX carries a line table, ``src L`` of one read-back row."""
    line, _text, src = o
    return f"ptx {line}" + (f" src {src}" if src is not None else "")


def read_back_text(back: Test, origin: list) -> str:
    """``format_ptx(back)`` with each table row's origins as a trailing ``//`` comment.

    The printer leaves out rows that have no PTX-dialect cell; origins are kept in step with the
    rows it does print, so the n-th comment names the n-th printed cell of each thread."""
    cols = []
    for tid, th in enumerate(back.threads):
        cols.append([_where(o) for ins, o in zip(th.code, origin[tid])
                     if format_ptx_instr(ins) is not None])
    lines = format_ptx(back).splitlines()
    start = lines.index("}") + 2          # the placement row follows the init block
    nrows = max((len(c) for c in cols), default=0)
    width = max((len(lines[start + i]) for i in range(nrows)), default=0)
    for i in range(nrows):
        cells = [f"P{t}: {c[i]}" for t, c in enumerate(cols) if i < len(c)]
        lines[start + i] = lines[start + i].ljust(width) + "  // " + "; ".join(cells)
    return "\n".join(lines) + "\n"


def render(path: str, c: Compiled) -> str:
    """The three sections of one compiled test."""
    out = [f"== {path}: source ({c.compiler.spec()}) ==\n", _numbered(c.source),
           "== ptx ==\n"]
    out += [f"// command: {cmd}\n" for cmd in c.command]
    out += [f"// version: {c.version}\n", _numbered(c.ptx),
            "== read back (PTX dialect; // PTX line and source line of each row) ==\n",
            read_back_text(c.test, c.origin)]
    return "".join(out)


def cmd_codegen_ptxc(files: list[str], spec: str, mutant: str | None) -> int:
    """Entry of ``codegen --compile``: exit 0, or 2 with one line on the first bad file."""
    try:
        compiler = parse_spec(spec)
        mutate = None
        if mutant:
            from .mutants import get
            mutate = get(mutant)
    except BackendError as e:
        print(f"scopefuzz codegen: {e}", file=sys.stderr)
        return 2
    for n, path in enumerate(files):
        try:
            test = parse_file(path)
        except ParseError as e:
            print(str(e).splitlines()[0], file=sys.stderr)
            return 2
        except OSError as e:
            print(f"{path}: cannot read: {e.strerror or e}", file=sys.stderr)
            return 2
        try:
            compiled = compile_test(test, compiler, mutate)
        except BackendError as e:
            msg = " ".join(str(e).split())
            print(f"{path}: {msg}", file=sys.stderr)
            return 2
        sys.stdout.write(("\n" if n else "") + render(path, compiled))
    return 0


__all__ = ["cmd_codegen_ptxc", "read_back_text", "render"]

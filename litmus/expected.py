"""``expected.csv``: the expected verdicts of a directory of litmus tests (the one reader).

Each row is ``path,verdict``, the path relative to the CSV's directory (or its parent, as
Dat3M's ``expected/<SUITE>.csv`` files are next to the suites they list). The verdict is written
in one of two forms:

- LITMUS.md's: ``Ok``, ``No`` or ``Undef`` (the test's verdict);
- Dat3M's: ``1`` or ``0``, read as ``Ok`` / ``No``. In a data-race suite (file name ending in
  ``-DR``, e.g. ``VULKAN-DR.csv``) 1 means that no consistent execution is racy: compare it with
  :func:`race_verdict` (``Ok`` when the model's ``racy`` flag is not raised), not the verdict.

Blank lines and lines starting with ``#`` are skipped; a first line whose verdict is not one of
these is a header. Anything else malformed is a :class:`~litmus.lexer.ParseError` at
file:line:col.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass

from .dialects import read_litmus_text     # regular files only, size-capped (issue 33)
from .lexer import ParseError

#: verdict as written -> verdict
VERDICTS = {"Ok": "Ok", "No": "No", "Undef": "Undef", "1": "Ok", "0": "No"}


@dataclass(frozen=True)
class Expected:
    """One row: the listed path (``/``-separated, ``.`` parts dropped), the verdict, the verdict
    as written (``1``/``0`` for Dat3M's files) and the row's line."""

    path: str
    verdict: str
    written: str
    line: int

    @property
    def parts(self) -> list[str]:
        return self.path.split("/")


@dataclass(frozen=True)
class ExpectedTable:
    """The rows of one ``expected.csv`` file."""

    csv_path: str
    rows: tuple[Expected, ...]

    @property
    def race(self) -> bool:
        """A Dat3M data-race suite (``*-DR.csv``): 1 = no consistent execution is racy."""
        return is_dr_csv(self.csv_path)

    def by_path(self) -> dict[str, str]:
        """Listed path -> verdict."""
        return {e.path: e.verdict for e in self.rows}

    def lookup(self, file: str) -> str | None:
        """The expected verdict of ``file``: a listed path relative to the CSV's directory or its
        parent, else the longest listed path that is a suffix of the file's path; None if the
        file is not listed."""
        absf = os.path.normpath(os.path.abspath(file))
        csv_dir = os.path.dirname(os.path.abspath(self.csv_path))
        for e in self.rows:
            for base in (csv_dir, os.path.dirname(csv_dir)):
                if os.path.normpath(os.path.join(base, *e.parts)) == absf:
                    return e.verdict
        fparts = absf.split(os.sep)
        best, blen = None, 0
        for e in self.rows:
            parts = e.parts
            if len(parts) <= len(fparts) and fparts[-len(parts):] == parts and len(parts) > blen:
                best, blen = e.verdict, len(parts)
        return best


def is_dr_csv(path: str) -> bool:
    """Dat3M's data-race suites (``VULKAN-DR.csv``): 1 = no consistent execution is racy."""
    return os.path.splitext(os.path.basename(path))[0].upper().endswith("-DR")


def race_verdict(flags) -> str:
    """What a ``-DR`` row expects of a result with these flags: Ok when ``racy`` is not raised."""
    return "No" if "racy" in flags else "Ok"


def read_expected(path: str | os.PathLike) -> ExpectedTable:
    """Read one ``expected.csv`` (see the module docstring)."""
    path = os.fspath(path)
    rows = []
    text = read_litmus_text(path)
    lineno = 0
    try:
        for lineno, row in enumerate(csv.reader(text.split("\n")), 1):
            if not row or not row[0].strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) < 2:
                raise ParseError(path, lineno, 1, "expected 'path,verdict'")
            written = row[1].strip()
            v = VERDICTS.get(written)
            if v is None:
                if lineno == 1:          # a header line
                    continue
                raise ParseError(path, lineno, len(row[0]) + 2, f"verdict {row[1]!r} is not "
                                 f"Ok, No, Undef, 1 or 0")
            parts = [p for p in row[0].strip().replace("\\", "/").split("/")
                     if p not in ("", ".")]
            rows.append(Expected("/".join(parts), v, written, lineno))
    except csv.Error as e:        # a NUL byte, a quote left open
        raise ParseError(path, lineno + 1, 1, f"not CSV: {e}") from None
    return ExpectedTable(path, tuple(rows))

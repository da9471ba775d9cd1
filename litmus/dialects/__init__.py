"""The dialect units and the dispatch over them (LITMUS.md, "Shape"; issue 34).

Each dialect is one folder ``litmus/dialects/<name>/`` whose ``DIALECT`` record
(:class:`litmus.dialect.Dialect`) names its front end, printer, default model, warm-up sample and
capabilities; the :data:`UNITS` line below registers them. :func:`parse` picks the front end by
the header's dialect word, :func:`format_test` the printer by ``Test.dialect`` (a dialect without
a printer is refused with :class:`~litmus.dialect.PrintError`, never printed as another dialect).

To add a dialect: a folder with ``parse.py`` (and ``printer.py``), an ``__init__.py`` defining
``DIALECT``, and its module in :data:`UNITS` (docs/architecture.md, "Adding a dialect").
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from typing import Callable

from ..dialect import Dialect, PrintError, find, register, registered
from ..ir import Test
from ..lexer import BOM, ParseError, Source
from . import amdgpu, c, cuda, opencl, ptx, tileir, vulkan

#: the registered units, in the order their words are listed in messages
UNITS = (amdgpu, c, vulkan, tileir, ptx, opencl, cuda)
for _unit in UNITS:
    register(_unit.DIALECT)

class _ByWord(Mapping):
    """A read-only view of the registry (:mod:`litmus.dialect`): dialect word -> what
    ``value(record)`` gives, over the records registered now (a unit registered later, e.g. from
    outside litmus/dialects/, is in it at once)."""

    def __init__(self, value: Callable[[Dialect], object], aliases: bool):
        self._value = value
        self._aliases = aliases

    def _words(self) -> list[tuple[str, Dialect]]:
        return [(w, d) for d in registered() for w in d.words + d.aliases * self._aliases]

    def __getitem__(self, word: str):
        d = find(word)
        if d is None or (not self._aliases and word not in d.words):
            raise KeyError(word)
        return self._value(d)

    def __iter__(self):
        return iter([w for w, _ in self._words()])

    def __len__(self) -> int:
        return len(self._words())

    def __repr__(self) -> str:
        return repr(dict(self))


#: dialect word (as written in the header, case-sensitive) -> parser(text, path) -> Test
#: (a view of the records; kept for callers from before issue 34)
FRONT_ENDS: Mapping[str, Callable[[str, str], Test]] = _ByWord(lambda d: d.parse, aliases=True)

#: default memory model of each dialect word a test can carry (DESIGN.md, `scopefuzz check`)
DEFAULT_MODEL: Mapping[str, str] = _ByWord(lambda d: d.model, aliases=False)


def known_dialects() -> tuple[str, ...]:
    """The header words of the registered dialects, in registration order (for messages)."""
    return tuple(w for d in registered() for w in d.words)


def format_test(test: Test) -> str:
    """The test as text in its own dialect, which parses back to an equal test; a dialect with no
    printer, or a construct its printer cannot spell, raises :class:`PrintError` naming it."""
    d = find(test.dialect)
    if d is None:
        raise PrintError(f"test {test.name!r}: dialect {test.dialect!r} is not a registered "
                         "dialect; nothing prints it")
    if d.print is None:
        raise PrintError(f"test {test.name!r}: the {d.name} dialect has no printer yet "
                         f"({d.package}); its tests are not printed as another dialect's")
    return d.print(test)


Test.text_of = staticmethod(format_test)


def dialect_of(text: str) -> str | None:
    """The dialect word of a file's header (its first word outside comments), or None."""
    try:
        clean = Source(text).clean
    except ParseError:
        clean = text
    m = re.search(r"\S+", clean)
    return m.group() if m else None


def parse(text: str, path: str = "<string>") -> Test:
    """Parse a litmus test in any dialect that has a front end (a leading byte-order mark is
    dropped). Input that would exhaust the parser's recursion is a ParseError too."""
    if text.startswith(BOM):
        text = text[1:]
    try:
        return _parse(text, path)
    except RecursionError:
        raise ParseError(path, 1, 1, "the test nests too deeply to read (parentheses or "
                                     "blocks)") from None


def _parse(text: str, path: str) -> Test:
    m = re.match(r"\s*(\S+)\s", text)
    if m and getattr(find(m.group(1)), "c_comments", False):
        return find(m.group(1)).parse(text, path)   # '(*p)' is a C dereference, not a comment
    src = Source(text, path)          # reports unterminated comments and quotes first
    m = re.search(r"\S+", src.clean)
    if not m:
        raise src.error(len(text), "empty file: expected a header '<DIALECT> <name>'")
    word = m.group()
    d = find(word)
    if d is None:
        raise src.error(m.start(), f"unknown dialect {word!r} (expected one of "
                                   f"{', '.join(known_dialects())})")
    return d.parse(text, path)


#: the largest litmus file read, in bytes (real tests are a few KB; a conformance suite's largest
#: is tens of KB). ``SCOPEFUZZ_MAX_FILE_BYTES`` raises or lowers it.
MAX_FILE_BYTES = 4 << 20
MAX_FILE_ENV = "SCOPEFUZZ_MAX_FILE_BYTES"


def max_file_bytes() -> int:
    """The size cap in force: ``$SCOPEFUZZ_MAX_FILE_BYTES`` when it is a positive integer, else
    :data:`MAX_FILE_BYTES`."""
    text = os.environ.get(MAX_FILE_ENV, "").strip()
    if text.isdigit() and len(text) < 19 and int(text) > 0:
        return int(text)
    return MAX_FILE_BYTES


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, word in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "not a regular file"


def read_litmus_text(path: str | os.PathLike) -> str:
    """The text of one litmus file, refusing anything that is not a regular file of at most
    :func:`max_file_bytes` bytes of UTF-8 (a ParseError at 1:1).

    The file is opened non-blocking and checked with ``fstat`` before any byte is read, so a FIFO
    (which would block forever), a device such as ``/dev/zero`` (which never ends) or a socket is
    refused at once; at most cap + 1 bytes are ever read, so a file that grows meanwhile cannot
    exhaust memory either."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise ParseError(path, 1, 1, f"cannot read file: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ParseError(path, 1, 1, f"not a regular file ({_kind(st.st_mode)}): only "
                                         "regular files are read")
        cap = max_file_bytes()
        if st.st_size > cap:
            raise ParseError(path, 1, 1, f"file of {st.st_size} bytes is over the {cap}-byte "
                                         f"limit on litmus files (raise it with {MAX_FILE_ENV})")
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            raise ParseError(path, 1, 1, f"file grew past the {cap}-byte limit on litmus files "
                                         f"while being read (raise it with {MAX_FILE_ENV})")
        data = b"".join(chunks)
    except OSError as e:
        raise ParseError(path, 1, 1, f"cannot read file: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(path, 1, 1, f"not UTF-8 text ({e.reason})") from None
    # universal newlines, as open() in text mode gave: CRLF and CR read as LF
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def parse_file(path: str | os.PathLike) -> Test:
    """Read (:func:`read_litmus_text`) and parse one file; unreadable files give a ParseError at
    1:1."""
    path = os.fspath(path)
    return parse(read_litmus_text(path), path)


def litmus_files(paths) -> list[str]:
    """Expand FILE|DIR arguments: directories give every ``*.litmus`` below them, sorted."""
    out: list[str] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in files:
                    if f.endswith(".litmus"):
                        found.append(os.path.join(root, f))
            out.extend(sorted(found))
        else:
            out.append(p)
    return out

"""Front-end dispatch: the header's dialect word picks the parser (LITMUS.md, "Shape").

``AMDGPU`` is the native format. Other dialects (Dat3M/herd's ``C``, ``Vulkan``, ``PTX``,
``OPENCL``) register their parser in :data:`FRONT_ENDS` when they exist; a file in a dialect with no
front end gets a one-line :class:`ParseError`.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Callable

from .ir import Test
from .lexer import BOM, ParseError, Source
from .parse_amdgpu import parse_amdgpu

#: dialect word (as written in the header, case-sensitive) -> parser(text, path) -> Test
FRONT_ENDS: dict[str, Callable[[str, str], Test]] = {"AMDGPU": parse_amdgpu}
from .parse_c import parse_c; FRONT_ENDS["C"] = parse_c  # noqa: E402,E702 (conformance front end)
from .parse_vulkan import parse_vulkan; FRONT_ENDS.update(Vulkan=parse_vulkan, VULKAN=parse_vulkan)  # noqa: E402,E702
from .parse_tileir import parse_tileir; FRONT_ENDS["TILEIR"] = parse_tileir  # noqa: E402,E702
from .parse_ptx import parse_ptx; FRONT_ENDS.update(PTX=parse_ptx, ptx=parse_ptx)  # noqa: E402,E702
from .parse_opencl import parse_opencl; FRONT_ENDS["OPENCL"] = parse_opencl  # noqa: E402,E702
from .parse_cuda import parse_cuda; FRONT_ENDS["CUDA"] = parse_cuda  # noqa: E402,E702

#: default memory model of each dialect (DESIGN.md, `scopefuzz check`)
DEFAULT_MODEL = {"AMDGPU": "amdgpu", "C": "rc11", "Vulkan": "vulkan", "VULKAN": "vulkan",
                 "PTX": "ptx", "OPENCL": "opencl", "CUDA": "opencl",
                 "TILEIR": "tileir"}

KNOWN_DIALECTS = ("AMDGPU", "C", "Vulkan", "VULKAN", "PTX", "OPENCL", "CUDA", "TILEIR")


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
    m = re.match(r"\s*(C|OPENCL|CUDA)\s", text)   # '(*p)' is a C dereference, not a comment
    if m:
        return FRONT_ENDS[m.group(1)](text, path)
    src = Source(text, path)          # reports unterminated comments and quotes first
    m = re.search(r"\S+", src.clean)
    if not m:
        raise src.error(len(text), "empty file: expected a header '<DIALECT> <name>'")
    word = m.group()
    front = FRONT_ENDS.get(word)
    if front is None:
        if word in KNOWN_DIALECTS:
            raise src.error(m.start(), f"dialect {word!r} has no front end yet "
                                       f"(readable: {', '.join(sorted(FRONT_ENDS))})")
        raise src.error(m.start(), f"unknown dialect {word!r} (expected one of "
                                   f"{', '.join(KNOWN_DIALECTS)})")
    return front(text, path)


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

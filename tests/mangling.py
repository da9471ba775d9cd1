"""Mangled variants of real litmus files, for the hostile-input property test
(tests/test_mangled_cli.py) and the out-of-process sweep (benchmarks/mangle_sweep.py).

Each kind of :data:`KINDS` turns a file's bytes into a damaged variant with a ``random.Random``:
byte flips, truncations, line edits (delete, duplicate, swap, a line repeated a thousand times:
wide threads and long branch bodies), huge and edge integers (5,000 digits, 2^63-1, 2^63, -2^63-1),
deep nesting (thousands of parentheses, negations, braces), unicode and NUL bytes (invalid UTF-8
too), and line-ending / byte-order-mark changes. The kinds are written from the issue's list, not
from any outside fuzzer.
"""

from __future__ import annotations

import random
import re

_DIGITS = re.compile(rb"\d+")
_EDGE_INTS = [b"9" * 5000, b"-" + b"9" * 4400, b"1" + b"0" * 30, b"9223372036854775807",
              b"9223372036854775806", b"9223372036854775808", b"-9223372036854775808",
              b"-9223372036854775809", b"18446744073709551616", b"0" * 40 + b"7", b"4294967296"]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def byte_flips(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if b:
            k = rng.randrange(len(b))
            b[k] ^= 1 << rng.randrange(8)
    return bytes(b)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def line_edit(data: bytes, rng: random.Random) -> bytes:
    ls = _lines(data)
    k = rng.randrange(len(ls))
    op = rng.randrange(5)
    if op == 0:
        del ls[k]
    elif op == 1:
        ls.insert(k, ls[k])
    elif op == 2:
        j = rng.randrange(len(ls))
        ls[k], ls[j] = ls[j], ls[k]
    elif op == 3:                      # a line repeated: wide threads, long bodies under a branch
        ls[k:k + 1] = [ls[k]] * rng.choice((50, 1000, 3000))
    else:
        ls[k] = ls[k][::-1]
    return b"\n".join(ls)


def huge_int(data: bytes, rng: random.Random) -> bytes:
    ms = list(_DIGITS.finditer(data))
    new = rng.choice(_EDGE_INTS)
    if not ms:
        return data + b" " + new
    m = rng.choice(ms)
    return data[:m.start()] + new + data[m.end():]


def deep_nesting(data: bytes, rng: random.Random) -> bytes:
    n = rng.choice((200, 1100, 5000, 30000))
    opener, closer = rng.choice(((b"(", b")"), (b"~(", b")"), (b"{", b"}"), (b"[", b"]"),
                                 (b"(*", b"*)"), (b"if (1) {", b"}")))
    k = rng.randrange(len(data) + 1)
    tail = closer * n if rng.random() < 0.5 else b""
    return data[:k] + opener * n + tail + data[k:]


def unicode_nul(data: bytes, rng: random.Random) -> bytes:
    junk = rng.choice((b"\x00", b"\xe2\x80\xae", b"\xf0\x9f\x92\xa5", b"\xed\xa0\x80", b"\xff",
                       b"\xc3", "é".encode(), b"\x00" * 100, b"\x1b[2J", b"\x0c"))
    k = rng.randrange(len(data) + 1)
    return data[:k] + junk + data[k:]


def line_endings(data: bytes, rng: random.Random) -> bytes:
    op = rng.randrange(4)
    if op == 0:
        return data.replace(b"\n", b"\r\n")
    if op == 1:
        return b"\xef\xbb\xbf" + data
    if op == 2:
        return data.replace(b"\n", b"\r")
    return b"\xef\xbb\xbf\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")


KINDS = {"byte_flips": byte_flips, "truncate": truncate, "line_edit": line_edit,
         "huge_int": huge_int, "deep_nesting": deep_nesting, "unicode_nul": unicode_nul,
         "line_endings": line_endings}


def mangle(data: bytes, kind: str, seed: int) -> bytes:
    """One variant of ``data`` of the given kind, the same for the same seed; sometimes two
    kinds stacked."""
    rng = random.Random(seed)
    out = KINDS[kind](data, rng)
    if rng.random() < 0.2:
        out = KINDS[rng.choice(sorted(KINDS))](out, rng)
    return out


def error_line_ok(line: str, path: str) -> bool:
    """Does a stderr line follow the error contract: ``path:LINE:COL: reason`` or ``path: reason``?"""
    return re.match(re.escape(path) + r"(:\d+:\d+)?: \S", line) is not None

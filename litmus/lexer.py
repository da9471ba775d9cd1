"""Source text handling shared by every litmus front end: errors with positions, comment stripping,
and a small tokenizer.

Every malformed input raises :class:`ParseError`, whose text is one line:
``path:line:col: reason``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass


class ParseError(Exception):
    """A malformed litmus file; ``str()`` gives ``path:line:col: reason``."""

    def __init__(self, path: str, line: int, col: int, reason: str):
        self.path, self.line, self.col, self.reason = path, line, col, reason
        super().__init__(f"{path}:{line}:{col}: {reason}")


@dataclass(frozen=True)
class Token:
    kind: str   # "id", "int", "op", "str", "eof"
    text: str
    pos: int    # offset into the source text


class TokenCursor:
    """A position ``k`` in a token list ``toks`` that ends with an ``eof`` token: ``peek`` looks
    ahead (staying on eof), ``next`` takes a token (eof is never passed). :meth:`nest` bounds the
    nesting of a recursive-descent parser (a ParseError at the token that goes too deep)."""

    toks: list
    k: int
    depth: int = 0

    def nest(self, src: "Source", what: str = "expression"):
        """Context manager around one level of recursion."""
        cursor = self

        class _Level:
            def __enter__(self):
                cursor.depth += 1
                if cursor.depth > MAX_NESTING:
                    raise src.error(cursor.peek().pos, f"{what} nested more than {MAX_NESTING} "
                                                       "levels deep")

            def __exit__(self, *exc):
                cursor.depth -= 1
                return False
        return _Level()

    def peek(self, d: int = 0) -> "Token":
        return self.toks[min(self.k + d, len(self.toks) - 1)]

    def next(self) -> "Token":
        t = self.toks[self.k]
        if t.kind != "eof":
            self.k += 1
        return t


class Source:
    """A file's text with offset → (line, column) mapping and comment-free view."""

    def __init__(self, text: str, path: str = "<string>"):
        if text.startswith(BOM):
            text = text[1:]
        self.text = text
        self.path = path
        self._starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.clean = self._strip_comments()

    def linecol(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, pos) - 1
        return line + 1, pos - self._starts[line] + 1

    def error(self, pos: int, reason: str) -> ParseError:
        pos = max(0, min(pos, len(self.text)))
        line, col = self.linecol(pos)
        return ParseError(self.path, line, col, reason)

    def _strip_comments(self) -> str:
        """Blank out ``(* ... *)`` (nesting) and ``// ...`` comments outside quoted text.

        Blanking keeps every offset, so positions in the cleaned text are positions in the file.
        The scan jumps between the interesting markers with one regular-expression search each
        (``str.find``-speed), so its cost is linear in the file and a comment of tens of MB takes
        well under a second.
        """
        t = self.text
        if '"' not in t and "(*" not in t and "//" not in t:
            return t
        parts: list[str] = []
        last = 0              # text[last:] is not yet copied into parts
        i, n = 0, len(t)
        while True:
            m = _MARK.search(t, i)
            if m is None:
                break
            i = m.start()
            mark = m.group()
            if mark == '"':
                j = t.find('"', i + 1)
                if j < 0:
                    raise self.error(i, "unterminated quoted text")
                i = j + 1
                continue
            if mark == "//":
                j = t.find("\n", i)
                j = n if j < 0 else j
            else:
                depth, j = 1, i + 2
                while depth:
                    c = _NEST.search(t, j)
                    if c is None:
                        raise self.error(i, "unterminated comment '(*'")
                    depth += 1 if c.group() == "(*" else -1
                    j = c.end()
            parts.append(t[last:i])
            parts.append(_blank(t[i:j]))
            last = i = j
        parts.append(t[last:])
        return "".join(parts)


#: where a comment or a quoted text may start
_MARK = re.compile(r'"|\(\*|//')
#: the markers that change a ``(* ... *)`` comment's depth
_NEST = re.compile(r"\(\*|\*\)")


def _blank(text: str) -> str:
    """``text`` with every character but newlines replaced by a space (offsets kept)."""
    return "\n".join(" " * len(line) for line in text.split("\n"))


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<int>[+-]?\d+(?![A-Za-z_]))
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|/\\|\\/|<=|>=|[~()\[\]:=;,|@.{}*&+\-<>!^%/$])
""", re.VERBOSE)


#: the range of every integer a litmus file may write (values, ids, counts): signed 64-bit, what the
#: oracle's and the backends' arrays hold
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
#: the longest integer literal that can be in range (a sign and 20 digits, leading zeros aside):
#: longer literals are refused before ``int()`` sees them (``int()`` of a 5,000-digit literal is a
#: ValueError, and of a million digits slow)
MAX_INT_CHARS = 24

#: the longest name (register, location, thread, label) a litmus file may use: far beyond any
#: real test; it keeps a thread name like ``P`` + 5,000 digits from reaching ``int()``
MAX_ID_CHARS = 256

#: how deeply parentheses and negations may nest (far beyond any real test, far below Python's
#: recursion limit)
MAX_NESTING = 100

#: a UTF-8 byte-order mark, as some editors write at the start of a file (accepted and dropped)
BOM = "\ufeff"


def tokenize(src: Source, start: int = 0, end: int | None = None) -> list[Token]:
    """Tokens of ``src.clean[start:end]``; an unexpected character, or an integer outside the
    signed 64-bit range, is a ParseError."""
    text = src.clean
    end = len(text) if end is None else end
    toks: list[Token] = []
    i = start
    while i < end:
        m = _TOKEN.match(text, i, end)
        if not m:
            raise src.error(i, f"unexpected character {text[i]!r}")
        kind = m.lastgroup
        if kind == "int" and (m.end() - m.start() > MAX_INT_CHARS
                              or not INT_MIN <= int(m.group()) <= INT_MAX):
            if m.end() - m.start() > MAX_INT_CHARS:
                raise src.error(i, f"integer of {m.end() - m.start()} characters is out of "
                                   f"range (signed 64-bit: {INT_MIN}..{INT_MAX})")
            raise src.error(i, f"integer {m.group()} is out of range (signed 64-bit: "
                               f"{INT_MIN}..{INT_MAX})")
        if kind == "id" and m.end() - m.start() > MAX_ID_CHARS:
            raise src.error(i, f"name of {m.end() - m.start()} characters is too long (at most "
                               f"{MAX_ID_CHARS})")
        if kind != "ws":
            toks.append(Token(kind, m.group(), i))
        i = m.end()
    toks.append(Token("eof", "", end))
    return toks


def parse_int(src: Source, tok: Token, what: str = "value") -> int:
    if tok.kind != "int":
        shown = tok.text if tok.kind != "eof" else "end of input"
        raise src.error(tok.pos, f"expected an integer {what}, got {shown!r}")
    return int(tok.text)

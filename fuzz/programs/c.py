"""The C source family of the compilers campaign (``scopefuzz fuzz --compile ... --source
c``, docs/compilers.md)."""

from __future__ import annotations

from ._source import source_family

FAMILY = source_family("C", "c")

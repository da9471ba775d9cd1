"""The :class:`Dialect` record: everything scopefuzz knows about one litmus dialect, in one place.

A dialect is a unit (issue 34), as a memory model is (oracle/registry.py): one folder
``litmus/dialects/<name>/`` holds its front end, its printer, its warm-up sample and the record
that names them, and one line in ``litmus/dialects/__init__.py`` registers the record. Code that
needs to know something about a test's dialect asks the record (:func:`get`) instead of
comparing ``test.dialect`` with a string.

The registry lives here, apart from the units, so that a unit can import it without importing
every other unit (no import circle inside litmus/, tests/test_layers.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:                        # annotations only: the IR does not import this module
    from .ir import Test


class PrintError(ValueError):
    """A test that a printer cannot print faithfully (a dialect without a printer, or a construct
    the dialect's text cannot spell): the message names the dialect and the construct. Printing
    something that reads back as another test is never done instead."""


@dataclass(frozen=True)
class Dialect:
    """One dialect's record.

    - ``name``: the canonical header word (``VULKAN``); ``words``: every header word that selects
      the dialect and that a parsed test keeps as its ``Test.dialect``, the canonical one first
      (``VULKAN``, ``Vulkan``); ``aliases``: header words also read but recorded as ``name``
      (PTX's ``ptx``).
    - ``suffix``: the file suffix of its tests (all dialects share ``.litmus`` today).
    - ``parse(text, path) -> Test``: the front end (errors are ParseError at file:line:col).
    - ``print(test) -> str``: the printer whose output parses back to an equal test, or None when
      the dialect has none yet (:func:`format_test` then refuses with :class:`PrintError`).
    - ``model``: the default memory model of ``scopefuzz check`` (DESIGN.md).
    - ``sample``: a small message-passing program in the dialect, for warming the oracle's
      compiled code up (oracle/warmup.py).
    - ``scopes``: the dialect's own scope words, narrowest first, each mapped to the program
      model's scope keyword (litmus/scopes.py).
    - ``spaces``: the memory state spaces (regions) its tests can declare locations in.
    - ``control_flow``: whether its programs have branches, labels and computed values
      (litmus/cfg.py), i.e. are not straight-line code.
    - ``package``: the unit's folder, for messages (``litmus/dialects/<name>/``).
    - ``c_comments``: its text is C's (``//`` and ``/* */`` comments): ``(*p)`` is a dereference,
      not an OCaml-style comment, so :func:`litmus.parse` reads its header word before
      stripping those (C and the C family).
    - ``mapped_to`` and ``mapping``: a dialect whose programs a compiler turns into another
      dialect's names that dialect (Tile IR: ``PTX``) and the mapping, ``"module:function"``
      (``Test -> str``, the other dialect's text; a ``ValueError`` for what it cannot map),
      loaded when first used (:meth:`map`); ``scopefuzz codegen`` shows such a test as its
      mapped program. Empty for the others.
    """

    name: str
    words: tuple[str, ...]
    parse: Callable[[str, str], "Test"]
    print: Callable[["Test"], str] | None
    model: str
    sample: str
    scopes: tuple[tuple[str, str], ...]
    spaces: tuple[str, ...]
    control_flow: bool = False
    aliases: tuple[str, ...] = ()
    suffix: str = ".litmus"
    package: str = ""
    c_comments: bool = False
    mapped_to: str = ""
    mapping: str = ""

    @property
    def printable(self) -> bool:
        return self.print is not None

    def map(self, test: "Test") -> str:
        """``test`` as the program of :attr:`mapped_to` (its text), by :attr:`mapping`; a
        ``ValueError`` when the dialect has no mapping or the mapping refuses the test."""
        if not self.mapping:
            raise ValueError(f"the {self.name} dialect maps to no other dialect")
        module, _, function = self.mapping.partition(":")
        return getattr(importlib.import_module(module), function)(test)

    @property
    def scope_keywords(self) -> tuple[str, ...]:
        """The program-model scope keywords the dialect's scopes stand for, narrowest first."""
        out: list[str] = []
        for _, kw in self.scopes:
            if kw not in out:
                out.append(kw)
        return tuple(out)


#: header word -> record (every word of every registered dialect)
_BY_WORD: dict[str, Dialect] = {}
#: canonical name -> record, in registration order
_BY_NAME: dict[str, Dialect] = {}


def register(dialect: Dialect) -> Dialect:
    """Add a dialect's record (its unit's one registration line). A header word claimed by two
    dialects is a programming error."""
    for word in dialect.words + dialect.aliases:
        other = _BY_WORD.get(word)
        if other is not None and other is not dialect:
            raise ValueError(f"header word {word!r} of dialect {dialect.name} is already "
                             f"dialect {other.name}'s")
    if dialect.words[0] != dialect.name:
        raise ValueError(f"dialect {dialect.name}: its canonical name must be its first word")
    _BY_NAME[dialect.name] = dialect
    for word in dialect.words + dialect.aliases:
        _BY_WORD[word] = dialect
    return dialect


def unregister(name: str) -> None:
    """Remove the dialect ``name`` and its words (a unit registered for a while: a test, a
    plug-in that unloads); nothing when it is not registered."""
    d = _BY_NAME.pop(name, None)
    if d is not None:
        for word in d.words + d.aliases:
            if _BY_WORD.get(word) is d:
                del _BY_WORD[word]


def get(word: str) -> Dialect:
    """The record of a header word (``Vulkan`` and ``VULKAN`` give the same); KeyError naming
    the known dialects otherwise."""
    try:
        return _BY_WORD[word]
    except KeyError:
        raise KeyError(f"unknown dialect {word!r} (known: {', '.join(_BY_NAME)})") from None


def find(word: str) -> Dialect | None:
    """The record of a header word, or None."""
    return _BY_WORD.get(word)


def registered() -> tuple[Dialect, ...]:
    """Every registered dialect, in registration order."""
    return tuple(_BY_NAME.values())


def words() -> tuple[str, ...]:
    """Every header word (aliases included) of every registered dialect."""
    return tuple(_BY_WORD)

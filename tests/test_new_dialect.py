"""Issue 34's done-when, first clause: "a new dialect is one folder and a registration line".

A toy dialect ``TOY`` is built the way docs/architecture.md's "Adding a dialect" recipe says, in a
package of its own outside the repository (a temporary folder on ``sys.path``): ``parse.py``
(``parse_toy``), ``printer.py`` (``format_toy``) and ``__init__.py`` (``DIALECT = Dialect(...)``).
Its text is AMDGPU's instruction rows under the header word ``TOY`` (a toy: its parser and
printer lean on the AMDGPU unit's). It is registered with one line, ``register(toy.DIALECT)``
(what the ``UNITS`` loop in litmus/dialects/__init__.py does for the units in the repository),
and a model unit declaring the dialect (sequential consistency over the AMDGPU builder, the
recipe of "Adding a model") is registered beside it. Then, with nothing else edited:
``litmus.parse`` reads its tests, ``format_test`` and ``scopefuzz fmt`` print them back equal,
``scopefuzz check`` (no ``--model``: the record's default) and ``oracle.check`` judge them.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap

import pytest

import litmus
import oracle
from litmus import dialect as registry_of_dialects
from oracle import registry
from oracle.lang import load_model
from oracle.models.amdgpu import UNIT as AMDGPU

INIT = '''
"""The TOY dialect: AMDGPU rows under the header TOY (tests/test_new_dialect.py)."""

from litmus.dialect import Dialect

from .parse import parse_toy
from .printer import format_toy

SAMPLE = """TOY warmup
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                   ;
 st.atom.agent x, 1     | ld.atom.acq.agent r0, y   ;
 st.atom.rel.agent y, 1 | ld.atom.agent r1, x       ;
exists (P1:r0 == 1 /\\\\ P1:r1 == 0)
"""

DIALECT = Dialect(
    name="TOY", words=("TOY",), parse=parse_toy, print=format_toy, model="toysc",
    sample=SAMPLE, scopes=(("wg", "wg"), ("agent", "agent")), spaces=("global",),
    package="toydialect/")
'''

PARSE = '''
"""TOY's front end: the AMDGPU unit's, its tests recorded as TOY's."""

import dataclasses

from litmus.dialects.amdgpu import parse_amdgpu
from litmus.lexer import ParseError


def parse_toy(text: str, path: str):
    head, sep, rest = text.lstrip().partition(" ")
    if head != "TOY":
        raise ParseError(path, 1, 1, "expected the header 'TOY <name>'")
    test = parse_amdgpu("AMDGPU" + sep + rest, path)
    return dataclasses.replace(test, dialect="TOY")
'''

PRINTER = '''
"""TOY's printer: the AMDGPU unit's, under TOY's header word."""

import dataclasses

from litmus.dialects.amdgpu import format_amdgpu


def format_toy(test) -> str:
    text = format_amdgpu(dataclasses.replace(test, dialect="AMDGPU"))
    assert text.startswith("AMDGPU ")
    return "TOY" + text[len("AMDGPU"):]
'''

SB = """TOY SB
{ x = 0; y = 0; }
 P0             | P1             ;
 st.atom x, 1   | st.atom y, 1   ;
 ld.atom r0, y  | ld.atom r0, x  ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy dialect's package written out and imported (not registered yet); the dialect and
    model registries are restored after the test."""
    pkg = tmp_path / "pkgs" / "toydialect"
    pkg.mkdir(parents=True)
    for name, text in (("__init__.py", INIT), ("parse.py", PARSE), ("printer.py", PRINTER)):
        (pkg / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    load_model.cache_clear()
    module = importlib.import_module("toydialect")
    # the model unit that reads it ("Adding a model": a model file and a registration)
    mdir = tmp_path / "toysc"
    mdir.mkdir()
    (mdir / "toysc.model").write_text('include "prelude.model"\nacyclic po | rf | co | fr as sc\n')
    registry.register(registry.ModelUnit(
        name="toysc", dialects=("TOY",), build=AMDGPU.build, sets=AMDGPU.sets,
        relations=AMDGPU.relations, hints=AMDGPU.hints, directory=str(mdir)))
    yield module
    registry_of_dialects.unregister("TOY")
    sys.modules.pop("toydialect", None)
    for sub in ("parse", "printer"):
        sys.modules.pop(f"toydialect.{sub}", None)
    load_model.cache_clear()


def test_unregistered_the_word_is_an_unknown_dialect(toy):
    with pytest.raises(litmus.ParseError, match="unknown dialect 'TOY'"):
        litmus.parse(SB, "sb.litmus")


def test_a_new_dialect_is_one_folder_and_a_registration_line(toy, tmp_path, capsys):
    from fuzz.cli import main
    registry_of_dialects.register(toy.DIALECT)          # the registration line

    test = litmus.parse(SB, "sb.litmus")
    assert test.dialect == "TOY" and len(test.threads) == 2
    assert litmus.DEFAULT_MODEL["TOY"] == "toysc" and "TOY" in litmus.FRONT_ENDS
    text = litmus.format_test(test)
    assert text.startswith("TOY SB") and litmus.parse(text) == test       # the round trip
    assert litmus.parse(toy.DIALECT.sample).dialect == "TOY"

    path = tmp_path / "sb.litmus"
    path.write_text(SB)
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == text
    path.write_text(text)
    assert main(["fmt", "--check", str(path)]) == 0     # fmt's output is its own fixed point

    # SC forbids store buffering's both-zero outcome; the dialect's default model is used
    assert oracle.check(test).model == "toysc"
    assert oracle.check(test).verdict == "No"
    capsys.readouterr()
    rc = main(["check", "--json", str(path)])
    out = capsys.readouterr().out
    rec = json.loads(out.splitlines()[0])
    assert rc == 0 and rec["model"] == "toysc" and rec["verdict"] == "No"
    mp = litmus.parse(toy.DIALECT.sample)
    assert oracle.check(mp, "toysc").verdict == "No"   # message passing: forbidden under SC

    # a model of another dialect refuses it, as for any dialect
    with pytest.raises(oracle.OracleError, match="model amdgpu reads AMDGPU tests, not TOY"):
        oracle.check(test, "amdgpu")

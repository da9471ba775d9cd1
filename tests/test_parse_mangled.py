"""Mangled litmus files: every front end answers with a test or one ``ParseError``, never a traceback.

Hypothesis takes a file of every dialect present (the repository's corpora, and the conformance
suites when ``$SCOPEFUZZ_CONFORMANCE`` or ``../shared/conformance`` has them) and mangles it: cut,
duplicated or swapped slices, inserted tokens (deep nesting, integers beyond 64 bits, a byte-order
mark, stray separators). Parsing must return a :class:`litmus.Test` or raise
:class:`litmus.ParseError` whose text is ``path:line:col: reason`` on one line. The specific
failures found by mangling the corpora (issue 17 item 11) are pinned down by name below.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus
from conftest import CORPORA, conformance_dir
from fuzz.cli import main

POSITION = re.compile(r"^[^\n]*:\d+:\d+: [^\n]+$")


def _samples() -> list[str]:
    """A few files per dialect (AMDGPU from the corpora; C and Vulkan from the conformance
    suites when present)."""
    files = sorted(CORPORA.rglob("*.litmus"))
    picked = files[::max(1, len(files) // 12)]
    conf = conformance_dir()
    if conf is not None:
        for dialect_files in (sorted(conf.rglob("*.litmus")),):
            by_dialect: dict[str, list] = {}
            for f in dialect_files:
                try:
                    word = f.read_text(encoding="utf-8").split(None, 1)[0]
                except (UnicodeDecodeError, IndexError):
                    continue
                by_dialect.setdefault(word, []).append(f)
            for fs in by_dialect.values():
                picked += fs[::max(1, len(fs) // 6)]
    return [f.read_text(encoding="utf-8") for f in picked]


SAMPLES = _samples()
INSERTS = ["(" * 400, "~" * 450, "not " * 300, "99999999999999999999", "-99999999999999999999",
           "18446744073709551616", "\ufeff", "|", ";", "{", "}", "(*", "*)", '"', "exists", "P9:",
           ":", "@", "wg", "0x10", "\t", "\n", "//", "[", "]", "==", "/\\", "\\/", "r0", "@wg 1",
           "9223372036854775808", "\x00", "é"]


@st.composite
def mangled(draw):
    text = draw(st.sampled_from(SAMPLES))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        op = draw(st.sampled_from(["cut", "dup", "insert", "swap", "repeat"]))
        if op == "cut":
            text = text[:i] + text[j:]
        elif op == "dup":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(INSERTS)) + text[i:]
        elif op == "repeat":      # a duplicated row, many times (big tests)
            text = text[:j] + text[i:j] * draw(st.integers(2, 30)) + text[j:]
        else:
            k = draw(st.integers(0, n))
            a, b = sorted((i, k))
            text = text[:a] + text[b:] + text[a:b]
    return text


@settings(max_examples=300)
@given(mangled())
def test_mangled_files_parse_or_fail_with_a_position(text):
    try:
        test = litmus.parse(text, "m.litmus")
    except litmus.ParseError as e:
        assert POSITION.match(str(e)), str(e)
        assert str(e).startswith("m.litmus:")
        return
    assert isinstance(test, litmus.Test)
    if test.dialect != "AMDGPU":
        return
    # what parses prints and parses back (fmt cannot emit what it cannot read)
    again = litmus.parse(litmus.format_test(test), "m2.litmus")
    assert again.threads == test.threads


def _amdgpu(cond: str = "exists (P1:r0 == 1 /\\ P1:r1 == 0)", init: str = "x = 0; y = 0;",
            store: str = "1", wg: str = "1") -> str:
    return (f"AMDGPU MP\n{{ {init} }}\n P0@wg 0 | P1@wg {wg} ;\n st x, {store} | "
            f"ld.atom.acq.agent r0, y ;\n st.atom.rel.agent y, 1 | ld r1, x ;\n{cond}\n")


@pytest.mark.parametrize("text, where, why", [
    (_amdgpu("exists " + "(" * 330 + "P1:r0 == 1" + ")" * 330), "6:", "nested more than"),
    (_amdgpu("exists " + "~" * 450 + "P1:r0 == 1"), "6:", "nested more than"),
    (_amdgpu(init="x = 99999999999999999999; y = 0;"), "2:7:", "out of range"),
    (_amdgpu(store="-9223372036854775809"), "4:8:", "out of range"),
    (_amdgpu(wg="18446744073709551616"), "3:18:", "out of range"),
    (_amdgpu("exists (P1:r0 == 9223372036854775808)"), "6:18:", "out of range"),
])
def test_former_tracebacks_are_parse_errors(text, where, why):
    with pytest.raises(litmus.ParseError) as e:
        litmus.parse(text, "m.litmus")
    assert str(e.value).startswith(f"m.litmus:{where}") and why in str(e.value), str(e.value)


def test_byte_order_mark_is_accepted():
    plain = litmus.parse(_amdgpu())
    assert litmus.parse("\ufeff" + _amdgpu()) == plain


def test_a_directory_run_goes_on_past_a_bad_file(tmp_path, capsys):
    (tmp_path / "a_bad.litmus").write_text(_amdgpu("exists " + "(" * 400 + "P1:r0 == 1"
                                                   + ")" * 400))
    (tmp_path / "b_big.litmus").write_text(_amdgpu(init="x = 99999999999999999999; y = 0;"))
    (tmp_path / "c_good.litmus").write_text("\ufeff" + _amdgpu())
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr()
    errs = out.err.strip().splitlines()
    assert len(errs) == 2 and all(POSITION.match(e) for e in errs)
    assert out.out.startswith("MP  No")            # the good file was still checked
    assert main(["fmt", str(tmp_path / "b_big.litmus")]) == 2

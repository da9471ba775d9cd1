"""The README's Hypothesis example, run as it stands (issue 33): the block marked
``<!-- readme-example: hypothesis -->`` is taken from README.md and executed, so the README cannot
rot. Against the correct simulator the property holds; against a seeded bug it must fail (the
comparison really compares: a property that never fails would pass the first run too)."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "<!-- readme-example: hypothesis -->"


def _example() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    assert MARK in text, "README.md lost its Hypothesis example"
    m = re.match(r"\s*```python\n(.*?)\n```", text[text.index(MARK) + len(MARK):], re.S)
    assert m, "the README's example is not a ```python block right after its marker"
    return m.group(1)


def _run(code: str, where) -> None:
    """Import the block as a module of its own file (Hypothesis reads a test's source) and call
    its test."""
    path = where / "readme_example.py"
    path.write_text(code + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"readme_example_{abs(hash(code))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.test_backend_shows_only_allowed_outcomes()


def test_the_readme_example_is_complete_and_passes_on_the_correct_simulator(tmp_path):
    code = _example()
    for name in ("litmus_programs", "hw.get_backend", "oracle.check", "compare("):
        assert name in code
    _run(code, tmp_path)


def test_the_readme_example_catches_a_seeded_bug(tmp_path):
    code = _example()
    assert 'hw.get_backend("sim")' in code
    with pytest.raises(AssertionError):
        _run(code.replace('hw.get_backend("sim")', 'hw.get_backend("sim:acq-no-wait")'), tmp_path)

"""The public Hypothesis API (issue 17 item 9): ``from fuzz.strategies import litmus_programs``, and a
falsifying example printed as litmus text (that parses back to the same test), not a dataclass repr."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings

import litmus
from fuzz.strategies import litmus_programs


def test_falsifying_example_prints_as_litmus_text():
    @settings(max_examples=20, database=None, derandomize=True)
    @given(litmus_programs("atomics,fences"))
    def prop(test):
        assert len(test.threads) < 2          # false for every program with two threads

    with pytest.raises(AssertionError) as e:
        prop()
    report = "\n".join(getattr(e.value, "__notes__", []))
    assert ("Falsifying example" in report or "Failing test case" in report), report
    assert "Test(name=" not in report
    m = re.search(r"(AMDGPU .*?\nexists.*?\n|AMDGPU .*?\n(?:~exists|forall).*?\n)", report, re.S)
    assert m, report
    text = "\n".join(line.strip() for line in m.group(1).splitlines()) + "\n"
    shown = litmus.parse(text)
    assert len(shown.threads) >= 2


@settings(max_examples=15, database=None)
@given(litmus_programs("atomics,plain,fences"))
def test_litmus_programs_draws_tests_with_the_features_asked(test):
    assert isinstance(test, litmus.Test)
    kinds = {ins.kind for _, _, ins in test.instructions()}
    assert not any(k.startswith(("async", "bar", "rmw", "cas")) for k in kinds), kinds

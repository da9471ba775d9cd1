"""Only expressible programs: backends declare capabilities (hw.backend.CAPABILITIES), campaigns
draw within them (fuzz.strategies.for_backend).

The isa targets' refusals (hw.isa.source.refusal) are decided from the program and the target
alone, so these tests need no clang-22.
"""

from __future__ import annotations

import pytest

from fuzz.strategies import (NO_CLUSTER_BARRIER, NO_SPLIT_BARRIERS, draw_program, for_backend,
                             parse_features)
from hw.backend import CAPABILITIES, CapableBackend
from hw.isa.mutants import MUTANTS
from hw.isa.source import refusal
from hw.isa.targets import TARGETS, parse_spec

SPECS = list(TARGETS) + ["gfx942,tgsplit", "gfx942,O0", "gfx1200,wave64"]
N = 400


def _refused(spec: str, narrowed: bool, seed: int = 5) -> int:
    target, _ = parse_spec(spec, MUTANTS)
    feats = parse_features(None)
    if narrowed:
        feats = for_backend(feats, target.capabilities())
    return sum(1 for i in range(N) if refusal(draw_program(seed, i, feats), target))


@pytest.mark.parametrize("spec", SPECS)
def test_isa_targets_refuse_under_5_percent_of_what_they_are_given(spec):
    before = _refused(spec, False)
    after = _refused(spec, True)
    assert before > N // 5          # the default generator draws much that clang-22 lacks
    assert after < N * 5 // 100, (spec, after)


def test_declared_capabilities_are_known_names():
    for spec in SPECS:
        target, _ = parse_spec(spec, MUTANTS)
        assert target.capabilities() <= set(CAPABILITIES)
    gfx942 = parse_spec("gfx942", MUTANTS)[0].capabilities()
    assert {"av", "noav", "asyncmark", "named-barriers", "split-barriers"}.isdisjoint(gfx942)
    assert "split-barriers" in parse_spec("gfx1200", MUTANTS)[0].capabilities()
    assert "cluster-barrier" in parse_spec("gfx1250", MUTANTS)[0].capabilities()
    assert "lds" not in parse_spec("gfx942,tgsplit", MUTANTS)[0].capabilities()


def test_a_backend_without_capabilities_draws_the_same_programs():
    feats = parse_features(None)
    assert for_backend(feats, None) is feats
    assert all(draw_program(3, i, for_backend(feats, None)) == draw_program(3, i, feats)
               for i in range(50))


def test_narrowed_programs_have_no_unsupported_instruction():
    feats = for_backend(parse_features(None), frozenset({"lds", "cas", "lanes"}))
    assert NO_SPLIT_BARRIERS in feats and NO_CLUSTER_BARRIER in feats
    for i in range(300):
        t = draw_program(11, i, feats)
        for th in t.threads:
            for ins in th.code:
                assert not ins.noav
                assert ins.access not in ("vis", "av")
                assert ins.base not in ("async.ld", "async.mark", "async.wait", "bar.signal",
                                        "bar.wait", "bar.init", "bar.join", "bar.leave")


def test_isa_backend_is_a_capable_backend():
    from hw.isa.backend import IsaBackend
    b = IsaBackend(parse_spec("gfx1250", MUTANTS)[0])
    assert isinstance(b, CapableBackend)
    assert b.capabilities() == parse_spec("gfx1250", MUTANTS)[0].capabilities()

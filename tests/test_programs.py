"""The program-family registry (fuzz/programs/): one family per dialect, picked by dialect or by
the dialect a model reads, each wired to its generator."""

import pathlib
import re

import pytest

from litmus import parse
from fuzz import programs
from fuzz import c_strategies, ptx_strategies, strategies, tileir_strategies


def test_every_registered_family_names_its_own_dialect():
    for dialect in programs.FAMILIES:
        fam = programs.family(dialect)
        assert fam.dialect == dialect
        assert fam.loop in ("backend", "weakening", "compile")


def test_unknown_dialect_is_a_family_error():
    with pytest.raises(programs.FamilyError, match="no program family draws VULKAN"):
        programs.family("VULKAN")


def test_model_picks_the_family_of_the_dialect_it_reads():
    assert programs.for_model(None).dialect == "AMDGPU"
    assert programs.for_model("amdgpu").dialect == "AMDGPU"
    assert programs.for_model("ptx").dialect == "PTX"
    assert programs.for_model("ptx60").dialect == "PTX"
    assert programs.for_model("tileir", loop="weakening").dialect == "TILEIR"


def test_a_model_no_backend_family_reads_is_refused_with_a_hint():
    with pytest.raises(programs.FamilyError) as e:
        programs.for_model("c11")
    assert str(e.value) == ("model c11 reads C tests; the fuzzer draws AMDGPU and PTX programs")
    with pytest.raises(programs.FamilyError, match=r"\(Tile IR programs: fuzz --against ptx"):
        programs.for_model("tileir")
    with pytest.raises(programs.FamilyError, match="nosuchmodel"):
        programs.for_model("nosuchmodel")


def test_draws_are_the_generators_draws():
    feats = strategies.parse_features(None)
    for i in range(5):
        assert programs.family("AMDGPU").draw(4, i, feats, 0.5) == \
            strategies.draw_program(4, i, feats, 0.5)
        assert programs.family("PTX").draw(4, i) == ptx_strategies.draw_program(4, i)
        assert programs.family("TILEIR").draw(4, i) == tileir_strategies.draw_tileir(4, i)
        for dialect, source in (("CUDA", "cuda"), ("C", "c"), ("OPENCL", "opencl")):
            fam = programs.family(dialect)
            prog = fam.draw(4, i)
            assert prog == c_strategies.draw_source(4, i, source)
            assert fam.render(prog) == c_strategies.render_source(prog, source)


def test_source_families_print_programs_of_their_dialect():
    for dialect in programs.dialects("compile"):
        fam = programs.family(dialect)
        test = parse(fam.render(fam.draw(1, 3)), "p.litmus")
        assert test.dialect == dialect
        assert fam.parse_features(None) == frozenset(fam.features)
        assert all(fam.render(s) for s in fam.smaller(fam.draw(1, 3)))


def test_warm_up_programs_parse_in_their_dialect():
    for dialect in programs.dialects("backend"):
        fam = programs.family(dialect)
        assert parse(fam.warm_up()).dialect == dialect


def test_narrowing_asks_backends_only_when_the_family_narrows():
    class Caps:
        def capabilities(self):
            return frozenset()

    def boom():
        raise AssertionError("PTX programs do not narrow: no backend opened")

    ptx = programs.family("PTX")
    assert ptx.narrowed(frozenset({"a"}), boom) == frozenset({"a"})
    amd = programs.family("AMDGPU")
    full = strategies.parse_features(None)
    assert amd.narrowed(full, lambda: (Caps(), None)) == \
        strategies.for_backend(full, frozenset())


def test_no_dialect_string_tests_in_the_campaign_and_plugin():
    root = pathlib.Path(__file__).resolve().parents[1] / "fuzz"
    for name in ("campaign.py", "pytest_plugin.py", "compilers_campaign.py"):
        text = (root / name).read_text()
        assert not re.search(r"dialect\)?\s*[!=]=\s*\"", text), name
        assert "program_kind" not in text, name

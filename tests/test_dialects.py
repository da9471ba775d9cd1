"""The dialect units (issue 34): each dialect's record, and ``fmt``'s contract that every test
either prints in its own dialect and reads back as an equal test, or is refused with a
:class:`~litmus.PrintError` naming what cannot be printed — never printed as another dialect.

The round trip runs over every corpus file (corpora/**) and every conformance file
(/work/shared/conformance/**, skipped with a reason when absent).
"""

from __future__ import annotations

import pathlib
from collections import Counter

import pytest

import litmus
import litmus.dialect
from litmus import (DEFAULT_MODEL, Instr, Location, PrintError, Test, Thread, format_test, parse,
                    parse_file)
from litmus.ir import Atom, Condition
from litmus.scopes import Placement
from fuzz.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFORMANCE = pathlib.Path("/work/shared/conformance")

#: the default models DESIGN.md ("scopefuzz check") states per header word
DESIGN_MODELS = {"AMDGPU": "amdgpu", "C": "rc11", "Vulkan": "vulkan", "VULKAN": "vulkan",
                 "PTX": "ptx", "OPENCL": "opencl", "CUDA": "opencl", "TILEIR": "tileir"}
#: the dialects that have no printer yet; the round trip refuses exactly their tests. Adding a
#: printer means deleting its name here (the test below fails until then). Every registered
#: dialect prints since the C, OPENCL and CUDA printers (litmus/dialects/{c,opencl,cuda}/printer.py).
NO_PRINTER: set[str] = set()


def test_every_dialect_is_registered_once_with_its_words():
    names = [d.name for d in litmus.dialect.registered()]
    assert sorted(names) == ["AMDGPU", "C", "CUDA", "OPENCL", "PTX", "TILEIR", "VULKAN"]
    assert litmus.dialect.get("Vulkan") is litmus.dialect.get("VULKAN")
    assert litmus.dialect.get("ptx").name == "PTX"
    with pytest.raises(KeyError, match="unknown dialect 'X86'"):
        litmus.dialect.get("X86")
    with pytest.raises(ValueError, match="already dialect AMDGPU's"):
        litmus.dialect.register(litmus.dialect.Dialect(
            name="OTHER", words=("OTHER", "AMDGPU"), parse=parse, print=None, model="amdgpu",
            sample="", scopes=(), spaces=()))
    assert litmus.dialect.find("OTHER") is None          # a refused record leaves no trace


def test_default_models_are_designs():
    assert DEFAULT_MODEL == DESIGN_MODELS            # the table as it was before the units
    assert sorted(litmus.FRONT_ENDS) == ["AMDGPU", "C", "CUDA", "OPENCL", "PTX", "TILEIR",
                                         "VULKAN", "Vulkan", "ptx"]
    assert parse(litmus.dialect.get("PTX").sample.replace("PTX", "ptx", 1)).dialect == "PTX"
    for word, model in DESIGN_MODELS.items():
        assert DEFAULT_MODEL[word] == model, word
        assert litmus.dialect.get(word).model == model


def test_each_sample_parses_as_its_dialect_and_is_message_passing():
    for d in litmus.dialect.registered():
        t = parse(d.sample, f"<{d.name} sample>")
        assert litmus.dialect.get(t.dialect) is d
        assert len(t.threads) == 2 and t.condition.quantifier == "exists"
        if d.printable:
            assert parse(format_test(t)) == t


def test_the_printable_dialects_are_the_ones_with_a_printer():
    assert {d.name for d in litmus.dialect.registered() if not d.printable} == NO_PRINTER


def test_capabilities_name_the_program_model_scopes():
    for d in litmus.dialect.registered():
        assert set(d.scope_keywords) <= set(litmus.SCOPES), d.name
        assert d.spaces, d.name
    assert litmus.dialect.get("OPENCL").spaces == ("global", "local")
    assert litmus.dialect.get("PTX").scope_keywords == ("wg", "cluster", "agent", "sys")


# --- the round trip -----------------------------------------------------------------------------

def round_trip(path: pathlib.Path) -> str:
    """``ok``, or ``refused:<DIALECT>`` (a clean PrintError); anything else fails the test."""
    test = parse_file(path)
    try:
        text = format_test(test)
    except PrintError as e:
        assert litmus.dialect.get(test.dialect).name in str(e), str(e)
        return f"refused:{litmus.dialect.get(test.dialect).name}"
    back = parse(text, str(path))
    assert back.dialect == test.dialect, f"{path}: printed as {back.dialect}"
    assert DEFAULT_MODEL[back.dialect] == DEFAULT_MODEL[test.dialect]
    assert back == test, f"{path}: the printed text reads back as another test"
    assert format_test(back) == text, f"{path}: printing is not a fixed point"
    return "ok"


def corpus_dirs() -> list[str]:
    return sorted(p.name for p in (ROOT / "corpora").iterdir() if p.is_dir())


def check_tree(top: pathlib.Path) -> Counter:
    counts = Counter()
    files = sorted(top.rglob("*.litmus"))
    assert files, f"{top}: no litmus files"
    for path in files:
        counts[round_trip(path)] += 1
    return counts


@pytest.mark.parametrize("name", corpus_dirs())
def test_corpus_round_trips_through_fmt(name):
    counts = check_tree(ROOT / "corpora" / name)
    assert counts == Counter(ok=sum(counts.values()))     # every corpus file prints


@pytest.mark.parametrize("suite", ["C11", "OPENCL", "PTX", "VULKAN"])
def test_conformance_round_trips_through_fmt(suite):
    top = CONFORMANCE / suite
    if not top.is_dir():
        pytest.skip(f"{top} is absent (outside suites are read in place, never copied)")
    counts = check_tree(top)
    refused = {k.split(":")[1] for k in counts if k.startswith("refused:")}
    assert refused <= NO_PRINTER
    assert counts == Counter(ok=sum(counts.values()))     # every file of theirs prints


# --- the two bugs of issue 34, and the AMDGPU printer's own refusal ----------------------------

OPENCL_MP = (ROOT / "corpora/opencl/coherence/CoRR+rlx.wg.samewg.litmus")


def test_an_opencl_test_prints_as_opencl_not_as_amdgpu():
    t = parse_file(OPENCL_MP)
    text = format_test(t)
    assert text.startswith("OPENCL CoRR+rlx.wg.samewg\n")
    assert parse(text) == t


def test_a_c_test_with_a_computed_store_prints_and_reads_back():
    """Issue 34: format_test raised IndexError on this test (the stored value is an expression,
    no integer argument); it now prints the store as written."""
    t = parse("C comp\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  int r0 = 1;\n"
              "  atomic_store_explicit(x, r0 + 1, memory_order_relaxed);\n}\n"
              "exists (x == 2)\n")
    text = format_test(t)
    assert "atomic_store_explicit(x, r0 + 1, memory_order_relaxed);" in text
    assert parse(text) == t


def _amdgpu(ins: Instr) -> Test:
    return Test("T", (Location("x"),), (Thread(Placement(), (ins,)),),
                Condition("exists", Atom(None, "x", "==", 0)))


def test_the_amdgpu_printer_refuses_what_it_cannot_spell():
    ok = _amdgpu(Instr("st", access="atom", order="rlx", scope="sys", loc="x", args=(1,)))
    assert parse(format_test(ok)) == ok
    with pytest.raises(PrintError, match=r"P0 row 0: st \[proxy=surface\] has no AMDGPU"):
        format_test(_amdgpu(ok.threads[0].code[0].replace(attrs=("proxy=surface",))))
    with pytest.raises(PrintError, match="P0 row 0: goto .* has no AMDGPU"):
        format_test(_amdgpu(Instr("goto", attrs=("target=L0",))))


def test_a_test_of_an_unregistered_dialect_is_refused():
    t = _amdgpu(Instr("fence", order="sc", scope="sys"))
    with pytest.raises(PrintError, match="'SPIRV' is not a registered dialect"):
        format_test(Test(t.name, t.locations, t.threads, t.condition, dialect="SPIRV"))


def _unprintable() -> Test:
    """A C test with a placement: no C text spells one (C threads have none)."""
    t = parse(litmus.dialect.get("C").sample)
    threads = (Thread(Placement(wg=1), t.threads[0].code),) + t.threads[1:]
    return Test(t.name, t.locations, threads, t.condition, dialect="C")


def test_hypothesis_repr_of_an_unprintable_test_is_its_dataclass_repr():
    class Printer:
        def __init__(self):
            self.out = ""

        def text(self, s):
            self.out += s

    p = Printer()
    _unprintable()._repr_pretty_(p, False)
    assert p.out.startswith("Test(name='warmup'")
    p = Printer()
    parse_file(ROOT / "corpora/classic/MP/MP+rel+acq.cluster.xwg.litmus")._repr_pretty_(p, False)
    assert p.out.startswith("\nAMDGPU MP+rel+acq.cluster.xwg\n")


def test_fmt_prints_opencl_and_tileir(capsys):
    assert main(["fmt", str(OPENCL_MP)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OPENCL CoRR+rlx.wg.samewg\n") and parse(out) == parse_file(OPENCL_MP)
    tile = sorted((ROOT / "corpora/tileir").rglob("*.litmus"))[0]
    assert main(["fmt", str(tile)]) == 0
    assert capsys.readouterr().out == tile.read_text(encoding="utf-8")


def test_a_placed_c_thread_is_refused_by_fmt_and_by_the_printer(tmp_path, capsys):
    """A placement has no C spelling: the C front end refuses one in a file (fmt: exit 2 at its
    position) and the C printer refuses a hand-built test that has one (PrintError naming it)."""
    bad = tmp_path / "placed.litmus"
    bad.write_text(litmus.dialect.get("C").sample.replace("P0 (", "P0@wg 1 ("))
    assert main(["fmt", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:") and "no placement" in err
    with pytest.raises(PrintError, match=r"P0's placement|placement .* has no C spelling"):
        format_test(_unprintable())

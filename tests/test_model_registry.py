"""Model units (oracle/registry.py): registration, the declared vocabulary checked against the
model file and the builder, the search hints the engine follows, and dialect defaults."""

from __future__ import annotations

import dataclasses

import pytest

import oracle
from litmus import DEFAULT_MODEL, parse
from oracle import registry
from oracle.errors import OracleError
from oracle.lang import load_model
from oracle.models.amdgpu import UNIT as AMDGPU
from oracle.pack import options, search_pe
from oracle.registry import ModelUnit, check_defaults, register
from test_explain import CORR  # test programs shared with other tests
from test_oracle_cli import SB

C_MP = """C MP
{ x = 0; y = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


@pytest.fixture
def scratch_registry(monkeypatch):
    """Units registered by a test disappear after it."""
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    load_model.cache_clear()
    yield
    load_model.cache_clear()


def test_the_units_register_themselves_from_their_folders():
    assert registry.names() == ["amdgpu", "c11", "opencl", "ptx", "ptx60", "rc11", "tileir",
                                "tileir-casnowrite", "tileir-cause", "tileir-nochain",
                                "tileir-patterns", "vulkan"]
    assert registry.get("tileir").dialects == registry.get("tileir-cause").dialects == ("TILEIR",)
    assert registry.get("tileir").ub_flags == ("racy",)
    assert registry.get("ptx").dialects == registry.get("ptx60").dialects == ("PTX",)
    assert registry.get("ptx").suites == {"PTXv7_5": "verdict"}
    assert registry.get("ptx60").suites == {"PTXv6_0": "verdict"}
    assert registry.get("amdgpu").dialects == ("AMDGPU",)
    assert registry.get("rc11").dialects == ("C",)
    assert set(registry.get("vulkan").dialects) == {"Vulkan", "VULKAN"}
    assert registry.get("opencl").dialects == ("OPENCL", "CUDA")   # CUDA: docs/compilers.md
    assert {u.name for u in registry.for_dialect("C")} == {"rc11", "c11"}
    assert registry.get("rc11").suites == {"RC11": "verdict"}
    assert registry.get("c11").suites == {"C11": "verdict"}
    assert registry.get("opencl").suites == {"OPENCL": "verdict", "OPENCL-DR": "race"}


def test_unknown_model_lists_the_registered_ones():
    with pytest.raises(OracleError, match=r"unknown model 'nosuch' \(available: amdgpu, c11, "
                                          r"opencl, ptx, ptx60, rc11, tileir, tileir-casnowrite, "
                                          r"tileir-cause, tileir-nochain, tileir-patterns, vulkan\)"):
        registry.get("nosuch")


def test_dialect_defaults_agree_with_the_registration():
    assert check_defaults(DEFAULT_MODEL) == []
    assert check_defaults(dict(DEFAULT_MODEL, AMDGPU="rc11")) == \
        ["default model 'rc11' of AMDGPU does not read AMDGPU"]
    assert DEFAULT_MODEL["TILEIR"] == "tileir"
    assert DEFAULT_MODEL["PTX"] == "ptx"
    assert DEFAULT_MODEL["OPENCL"] == "opencl"
    assert "dialect C of model 'rc11' has no default model" in \
        check_defaults({"AMDGPU": "amdgpu", "Vulkan": "vulkan", "VULKAN": "vulkan"})


def test_a_model_reads_only_its_dialects():
    with pytest.raises(OracleError, match=r"model amdgpu reads AMDGPU tests, not C"):
        oracle.check(parse(C_MP), "amdgpu")


def unit_with(tmp_path, name, model_text, **kw):
    d = tmp_path / name
    d.mkdir()
    (d / f"{name}.model").write_text(model_text)
    fields = dict(name=name, dialects=("AMDGPU",), build=AMDGPU.build, sets=AMDGPU.sets,
                  relations=AMDGPU.relations, hints=AMDGPU.hints, directory=str(d))
    fields.update(kw)
    return ModelUnit(**fields)


def test_a_name_outside_the_vocabulary_is_an_error_at_its_first_use(tmp_path, scratch_registry):
    register(unit_with(tmp_path, "tv", "let a = po\n\nlet b = a | porder ; porder\n"
                                       "acyclic b as x\n"))
    with pytest.raises(OracleError) as e:
        load_model("tv")
    assert str(e.value) == (f"{tmp_path}/tv/tv.model:3:13: 'porder' is not in the vocabulary of "
                            f"model tv (declared in oracle/models/tv/__init__.py)")


def test_a_declared_name_the_builder_does_not_provide_is_an_error(tmp_path, scratch_registry):
    register(unit_with(tmp_path, "tp", "acyclic po as x\n",
                       sets=AMDGPU.sets | {"NOPE"}, relations=AMDGPU.relations | {"nope_rel"}))
    with pytest.raises(OracleError, match=r"model tp: its builder does not provide declared "
                                          r"NOPE, nope_rel"):
        oracle.check(parse(CORR), "tp")


@pytest.mark.parametrize("kw, msg", [
    (dict(hints=frozenset({"CohX"})), "unknown search hint(s) CohX"),
    (dict(hints=frozenset({"CohR"}), sets=frozenset({"R", "W"})),
     "hint 'CohR' must also be declared as a set the builder provides"),
    (dict(sets=frozenset({"W", "CO"}), hints=frozenset()), "the search needs the set 'R'"),
])
def test_bad_declarations_are_refused(tmp_path, scratch_registry, kw, msg):
    with pytest.raises(OracleError) as e:
        register(unit_with(tmp_path, "tb", "acyclic po as x\n", **kw))
    assert str(e.value).startswith("oracle/models/tb/__init__.py: " + msg)


def test_the_engine_prunes_by_the_declared_hints_only():
    """CoRR with atomics: the reads are coherent (CohR), so the search prunes the partial choice
    r0 = 1, r1 = 0 before the model runs; without the coherence hints the model rejects it
    instead. The allowed states are the same: (0,0), (0,1), (1,1)."""
    test = parse(CORR)
    prog = load_model("amdgpu")
    pes = AMDGPU.build(test)
    weaker = AMDGPU.hints - {"CohR", "CohA", "CohRmw", "cohord"}
    got = {}
    for hints in (AMDGPU.hints, weaker):
        states, pruned = set(), 0
        for pe in pes:
            st, ns, _, _, _, fails, _ = search_pe(pe, prog, hints,
                                                  options(pe.n, len(pe.observables), bound=False))
            keys = [k for k, _ in pe.observables]
            states |= {tuple(dict(zip(keys, row))[k] for k in ("P1:r0", "P1:r1"))
                       for row in st[:ns].tolist()}
            pruned += int(fails[-2])         # pruned by values and hints
        got[hints] = states, pruned
    assert got[AMDGPU.hints][0] == got[weaker][0] == {(0, 0), (0, 1), (1, 1)}
    assert got[AMDGPU.hints][1] > 0 and got[weaker][1] == 0


def test_units_are_frozen_declarations():
    with pytest.raises(dataclasses.FrozenInstanceError):
        AMDGPU.name = "other"


def test_results_and_units_meet_the_declared_contracts(tmp_path):
    res = oracle.check(parse(CORR))
    assert isinstance(res, oracle.OracleResult)
    # r0 = 1, r1 = 0 is forbidden (CoRR), r0 = 0, r1 = 1 allowed; x ends 1 (its only write)
    assert not res.allows({"P1:r0": 1, "P1:r1": 0, "x": 1})
    assert res.allows({"P1:r0": 0, "P1:r1": 1, "x": 1})
    for name in registry.names():
        assert isinstance(registry.get(name), oracle.ConformanceModel)
    vk = registry.get("vulkan")
    assert vk.expected_csv("/c", "VULKAN-DR") == "/c/expected/VULKAN-DR.csv"
    with pytest.raises(OracleError, match=r"model vulkan is not measured on suite 'RC11'"):
        vk.expected_csv("/c", "RC11")


def test_a_new_model_is_a_model_file_and_a_registration(tmp_path, scratch_registry):
    """Sequential consistency over the AMDGPU builder: a model file (using the prelude's fr) and
    a ModelUnit, nothing else. SC forbids SB's both-zero outcome, which amdgpu allows for
    relaxed atomics."""
    register(unit_with(tmp_path, "scdemo", 'include "prelude.model"\n'
                                           "acyclic po | rf | co | fr as sc\n"))
    test = parse(SB)
    assert oracle.check(test, "scdemo").verdict == "No"
    assert oracle.check(test, "amdgpu").verdict == "Ok"
    ex = oracle.explain(test, "P0:r0 == 0 /\\ P1:r0 == 0", "scdemo")
    assert not ex.allowed and "fails 'sc' (acyclic)" in ex.text()

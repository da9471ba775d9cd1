"""Issue 34's dialect sites outside litmus/: each asks declared data (the dialect record, a model
unit's or a backend's ``dialects``, an emitter's ``READS``/``PLATFORM``) and behaves as the
string tests it replaced did; warm-up programs have one home, the dialect records."""

from __future__ import annotations

import pytest

import litmus
import oracle
import oracle.deadline
import oracle.registry
import oracle.warmup
from hw.opencl.codegen import CodegenError, generate, languages_for
from hw.sim import warmup as sim_warmup
from hw.sim.lower import refusal
from litmus.dialect import get, registered
from oracle.errors import OracleError, TooManyEvents


def test_every_models_warm_up_program_is_its_dialect_records_sample():
    for name in oracle.registry.names():
        unit = oracle.registry.get(name)
        test = oracle.warmup.sample(unit)
        assert test is not None, name
        assert test == litmus.parse(get(unit.dialects[0]).sample), name
    assert not hasattr(oracle.warmup, "SAMPLES")         # no second copy of the programs


def test_the_other_warm_ups_read_the_records_too():
    assert oracle.deadline.WARM_UP_TEST == get("AMDGPU").sample
    assert sim_warmup.SAMPLE == get("AMDGPU").sample


def test_a_mapped_dialect_shows_its_tests_as_the_other_dialects_program():
    tileir = get("TILEIR")
    assert tileir.mapped_to == "PTX"
    text = tileir.map(litmus.parse(tileir.sample))
    assert litmus.parse(text).dialect == "PTX"
    with pytest.raises(ValueError, match="the AMDGPU dialect maps to no other dialect"):
        get("AMDGPU").map(litmus.parse(get("AMDGPU").sample))
    for d in registered():               # every declared mapping names a registered dialect
        assert not d.mapped_to or get(d.mapped_to).name == d.mapped_to


def _long_amdgpu(n: int):
    rows = "\n".join(f" st x, {i} ;" for i in range(n))
    return litmus.parse(f"AMDGPU long\n{{ x = 0; }}\n P0@wg 0 ;\n{rows}\nexists (x == {n - 1})\n")


def test_the_amdgpu_units_size_check_runs_before_any_search():
    with pytest.raises(TooManyEvents, match=r"long: program has more than 64 events \(the AMDGPU "
                                            r"event builder's limit\): 65 instructions"):
        oracle.check(_long_amdgpu(64))
    assert oracle.check(_long_amdgpu(3)).verdict == "Ok"       # the last store is final
    # a unit that does not read the dialect says so (its size check is not its to run)
    with pytest.raises(OracleError, match="model rc11 reads C tests, not AMDGPU"):
        oracle.check(_long_amdgpu(64), "rc11")


def test_kernel_languages_are_chosen_by_their_declared_reads():
    assert languages_for("PTX") == ("ptx",)
    assert languages_for("AMDGPU") == ("cl3", "amdgcn")
    assert languages_for("C") == ()
    amd = litmus.parse(get("AMDGPU").sample)
    with pytest.raises(CodegenError, match=r"this test is AMDGPU \(use --dialect cl3\)$"):
        generate(amd, "ptx")
    c = litmus.parse(get("C").sample)
    with pytest.raises(CodegenError, match=r"lowers AMDGPU tests; this test is C$"):
        generate(c, "cl3")


def test_the_simulators_refusal_names_where_a_dialect_runs():
    assert refusal("PTX") == (
        "the simulator models AMD GPU hardware: it runs AMDGPU-dialect tests, not PTX (PTX "
        "tests run on an NVIDIA GPU: --backend opencl on an NVIDIA platform, kernels of "
        "codegen --dialect ptx)")
    assert refusal("VULKAN") == ("the simulator models AMD GPU hardware: it runs "
                                 "AMDGPU-dialect tests, not VULKAN")

"""hw.parse_backend_spec: every backend name read in one place, into a typed record, with each
family's own one-line error (issue 34: the harness stops splitting names on ':')."""

from __future__ import annotations

import pytest

import hw
from hw import BackendError, BackendSpec, parse_backend_spec


@pytest.mark.parametrize("name,family,spec,mutant,simulator,device", [
    ("sim", "sim", None, None, True, False),
    ("sim:acq-no-inv", "sim", "acq-no-inv", "acq-no-inv", True, False),
    ("sim:gfx90a", "sim", "gfx90a", None, True, False),           # a profile, not a mutant
    ("sim:acq-no-inv@gfx90a", "sim", "acq-no-inv@gfx90a", "acq-no-inv", True, False),
    ("isa:gfx942", "isa", "gfx942", None, True, False),
    ("isa:gfx942,tgsplit:drop-inv", "isa", "gfx942,tgsplit:drop-inv", "drop-inv", True, False),
    ("opencl", "opencl", None, None, False, True),
    ("opencl:1:0", "opencl", "1:0", None, False, True),
    ("ptxc:nvcc-libcu:sm_80,O0:relaxed-to-weak", "ptxc", "nvcc-libcu:sm_80,O0:relaxed-to-weak",
     "relaxed-to-weak", False, False),
])
def test_names_are_read_into_their_parts(name, family, spec, mutant, simulator, device):
    s = parse_backend_spec(name)
    assert isinstance(s, BackendSpec)
    assert (s.name, s.family, s.spec, s.mutant) == (name, family, spec, mutant)
    assert (s.simulator, s.device, s.compiler) == (simulator, device, family == "ptxc")


def test_each_family_gives_its_typed_reading():
    prof = parse_backend_spec("sim:acq-no-inv@gfx90a").detail
    assert prof.name == "gfx90a"                          # the mutant's profile, as given
    assert parse_backend_spec("sim").detail.name == "gfx942"   # the default profile
    target = parse_backend_spec("isa:gfx942,tgsplit").detail
    assert (target.name, target.tgsplit) == ("gfx942", True)
    assert parse_backend_spec("opencl").detail == ("0", "0")
    assert parse_backend_spec("opencl:NVIDIA").detail == ("NVIDIA", "0")
    comp = parse_backend_spec("ptxc:clang-ocl:sm_86,O3,per-role").detail
    assert (comp.name, comp.sm, comp.opt, comp.per_role) == ("clang-ocl", 86, "O3", True)


def test_a_reading_matches_what_the_factory_builds():
    """The spec's mutant and profile are the backend's own (the reader is the family's)."""
    spec = parse_backend_spec("sim:acq-no-inv")
    backend = hw.get_backend(spec.name)
    assert backend.mutant == spec.mutant and backend.profile == spec.detail


@pytest.mark.parametrize("name,message", [
    ("nosuch", "unknown backend 'nosuch' (available: isa, opencl, ptxc, sim)"),
    ("sim:nosuch", "unknown sim variant 'nosuch'"),
    ("isa", "isa needs a target: isa:TARGET"),
    ("isa:gfx1", "unknown isa target 'gfx1'"),
    ("isa:gfx942:nosuch", "unknown isa mutant 'nosuch'"),
    ("isa:gfx1250,tgsplit", "tgsplit exists on gfx90a/gfx942/gfx950, not gfx1250"),
    ("opencl:a:b:c", "bad OpenCL device spec 'a:b:c': expected PLATFORM:DEVICE"),
    ("ptxc", "ptxc needs a compiler"),
    ("ptxc:gcc", "unknown compiler 'gcc'"),
    ("ptxc:clang-cuda:sm_90:nosuch", "unknown PTX mutant 'nosuch'"),
    ("ptxc:clang-cuda:sm_90:drop-fence:x", "expected COMPILER[:OPTIONS][:MUTANT]"),
])
def test_bad_names_are_one_line_errors_of_their_family(name, message):
    with pytest.raises(BackendError) as e:
        parse_backend_spec(name)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_registered_family_without_a_reader_is_read_for_its_parts(monkeypatch):
    monkeypatch.setitem(hw.FAMILIES, "fake", "fakes:make_backend")
    s = parse_backend_spec("fake:x:y")
    assert (s.family, s.spec, s.mutant, s.detail) == ("fake", "x:y", None, None)
    assert not (s.simulator or s.device or s.compiler)

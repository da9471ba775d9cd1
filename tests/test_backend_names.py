"""fuzz/backend_names.py: the facts fuzz reads from a backend name, in one place."""

from fuzz.backend_names import backend_family, mutant_of, owns_device, simulated


def test_family_is_the_text_before_the_first_colon():
    assert backend_family("sim") == "sim"
    assert backend_family("isa:gfx942,O2:acq-no-inv") == "isa"
    assert backend_family("opencl:0:1") == "opencl"


def test_mutant_of_each_grammar():
    assert mutant_of("sim") is None
    assert mutant_of("sim:acq-no-inv") == "acq-no-inv"
    assert mutant_of("isa:gfx942") is None
    assert mutant_of("isa:gfx942,O0:drop-inv,seed=3") == "drop-inv"
    assert mutant_of("opencl:0:1") is None           # platform and device, not a mutant


def test_simulated_and_device_owning_backends():
    assert simulated("sim:m") and simulated(None, "isa:gfx90a")
    assert not simulated("opencl:0:0", None) and not simulated()
    assert owns_device("opencl") and owns_device("opencl:1:0")
    assert not owns_device("sim") and not owns_device("isa:gfx942")

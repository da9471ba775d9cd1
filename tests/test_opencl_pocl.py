"""The ``opencl`` backend on a real OpenCL device (PoCL on this machine's CPU).

Runs are short: built programs are cached per source within the process (and on disk by PoCL),
and each test runs a few thousand to a few million instances. Every observed outcome is checked
against the oracle; SB's weak outcome must show; a deliberately wrong lowering must be caught.
"""

from __future__ import annotations

import pytest

import litmus
import oracle
from fuzz.compare import compare
from hw import BackendError, get_backend
from hw.opencl import runner
from hw.opencl.runner import OpenCLBackend, Params

from conftest import CORPORA
from opencl_programs import LDS_BARRIER, SB_SC_FENCE


def _device_or_skip():
    try:
        return OpenCLBackend(None)
    except BackendError as e:      # no OpenCL platform on this machine: nothing to run on
        pytest.skip(f"no OpenCL device: {e}")


@pytest.fixture(scope="module")
def backend():
    return _device_or_skip()


def forbidden(test, hist) -> list:
    return compare(oracle.check(test), hist, test.condition).forbidden_outcomes()


SB_RLX = """AMDGPU SB+rlx
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             ;
 st.atom.agent x, 1  | st.atom.agent y, 1  ;
 ld.atom.agent r0, y | ld.atom.agent r0, x ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""

#: effort bound when looking for a weak outcome: rounds of PER_ROUND instances until one shows or
#: HUNT_SECONDS pass. A weak outcome needs both PoCL threads running at once, which a 2-core machine
#: busy with other work grants only now and then (an effort bound, not a timed assertion).
ROUNDS, PER_ROUND, HUNT_SECONDS = 400, 1_000_000, 60.0


def _hunt(backend, test):
    """Run until the condition is witnessed (bounded); returns (witnesses, merged histogram).

    Rounds alternate between the backend's parameters and neighbouring workgroups without the
    alignment spin: which one catches both PoCL threads running at once depends on the load."""
    from dataclasses import replace
    other = OpenCLBackend(None, replace(backend.params, block_stride=1, sync_spins=0,
                                        rendezvous_spins=0), weaken=backend.weaken)
    import time
    total = None
    deadline = time.monotonic() + HUNT_SECONDS
    for seed in range(ROUNDS):
        if time.monotonic() > deadline:
            break
        h = (backend if seed % 2 == 0 else other).run(test, PER_ROUND, seed)
        total = h if total is None else (total.merge(h) or total)
        seen = sum(n for o, n in total.outcomes() if litmus.condition_holds(test.condition, o))
        if seen:
            return seen, total
    return 0, total


def test_sb_weak_outcome_shows_and_is_allowed(backend):
    t = litmus.parse(SB_RLX)
    seen, hist = _hunt(backend, t)
    assert seen > 0, f"SB weak outcome never seen in {hist.total:,} instances: {dict(hist.counts)}"
    assert forbidden(t, hist) == []


def test_wrong_lowering_is_caught(backend):
    """sc fences lowered as acq_rel fences (no mfence on x86): SB's forbidden outcome shows."""
    t = litmus.parse(SB_SC_FENCE)
    assert oracle.check(t).verdict == "No"
    weak = OpenCLBackend(None, weaken="sc-fence-as-acq_rel")
    seen, hist = _hunt(weak, t)
    assert seen > 0 and forbidden(t, hist), "the harness missed a miscompiled sc fence"
    assert hist.params["weaken"] == "sc-fence-as-acq_rel"
    good = backend.run(t, 2 * PER_ROUND, 0)
    assert forbidden(t, good) == []


def test_classic_corpus_has_no_forbidden_outcome(backend):
    files = litmus.litmus_files([CORPORA / "classic"])
    assert files, "corpora/classic is empty"
    tests = [litmus.parse_file(p) for p in files]
    backend.prepare(tests)              # one build for all kernels
    ran, bad = 0, []
    for path, t in zip(files, tests):
        res = oracle.check(t)
        if res.verdict == "Undef":
            continue
        h = backend.run(t, 4096, 1)
        assert h.total == 4096
        ran += 1
        bad += [(path, o, n) for o, n in compare(res, h, t.condition).forbidden_outcomes()]
    assert ran > 100
    assert bad == []


ASYNC = """AMDGPU async+wait
{ x = 5; lds a = 0; }
 P0@wg 0 ;
 async.ld a, x ;
 async.mark ;
 async.wait 0 ;
 ld r0, a ;
forall (P0:r0 == 5)
"""


@pytest.mark.parametrize("text", [LDS_BARRIER, ASYNC])
def test_barrier_lds_and_async_programs(backend, text):
    """Hand-derived forall conditions: every observed outcome satisfies them, and the oracle
    allows every observed outcome."""
    t = litmus.parse(text)
    h = backend.run(t, 20_000, 3)
    assert h.total == 20_000
    assert forbidden(t, h) == []
    assert all(not litmus.condition_holds(t.condition, o) for o, _ in h.outcomes()), \
        dict(h.counts)


def test_params_are_recorded(backend):
    t = litmus.parse(SB_RLX)
    h = backend.run(t, 10_000, 7)
    p = h.params
    for key in ("device", "kernel_language", "seed", "launches", "instances_per_launch", "wg_size",
                "testing_wgs", "block_stride", "sync_spins", "stress_wgs", "pre_stress_iters",
                "shuffle", "scope_map", "build_options"):
        assert key in p, key
    assert p["seed"] == 7 and p["kernel_language"] == "cl3"
    assert p["launches"] * p["instances_per_launch"] >= 10_000 == h.total
    assert p["scope_map"]["wave"] == "work_group" and p["scope_map"]["agent"] == "device"
    assert h.observables == ["P0:r0", "P1:r0", "x", "y"]
    # final memory: both stores always land
    assert all(o["x"] == 1 and o["y"] == 1 for o, _ in h.outcomes())


def test_stress_shuffle_and_lane_permutation_stay_sound(backend):
    t = litmus.parse(SB_SC_FENCE)
    b = OpenCLBackend(None, Params(wg_size=64, testing_wgs=128, stress_wgs=8, stress_iters=64,
                                   pre_stress_iters=8, shuffle=True, lane_shuffle=True,
                                   stride=4, block_stride=1))
    h = b.run(t, 50_000, 11)
    assert h.total == 50_000 and h.params["stress_wgs"] == 8
    assert forbidden(t, h) == []


def test_refusals_and_errors_are_one_line(backend):
    misaligned = litmus.parse("""AMDGPU named
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 bar.join 1      | barrier         ;
 bar.wait 1      | ld r0, x        ;
 barrier         |                 ;
exists (true)
""")
    with pytest.raises(BackendError, match="cannot honour barriers") as e:
        backend.run(misaligned, 100, 0)
    assert "\n" not in str(e.value)
    with pytest.raises(BackendError, match="kernel build failed") as e:
        backend.program("__kernel void litmus(void) { this is not C; }")
    assert "\n" not in str(e.value)
    with pytest.raises(BackendError, match="no OpenCL platform 7"):
        OpenCLBackend("7:0")
    with pytest.raises(BackendError, match="no OpenCL device matches"):
        OpenCLBackend("0:no-such-device")
    with pytest.raises(BackendError, match="iterations"):
        backend.run(litmus.parse(SB_RLX), 0, 0)


def test_backend_names(backend):
    b = get_backend("opencl")
    assert b.describe() == backend.describe()
    plat = backend.platform.name.split()[0]
    b2 = get_backend(f"opencl:{plat.lower()}:0")
    assert b2.device.name == backend.device.name
    assert get_backend("opencl:0:0").name == "opencl:0:0"


def test_hang_watchdog_reports_and_marks_device(backend, monkeypatch):
    """A launch past the time limit is a one-line BackendError; the device is then refused."""
    t = litmus.parse(SB_RLX)
    slow = OpenCLBackend(None, Params(wg_size=64, testing_wgs=2, stress_wgs=64,
                                      stress_iters=50_000, timeout_s=0.01))
    key = (slow.pi, slow.di)
    try:
        with pytest.raises(BackendError, match="hung for more than") as e:
            slow.run(t, 128, 0)
        assert "\n" not in str(e.value)
        with pytest.raises(BackendError, match="unusable after an earlier hang"):
            backend.run(t, 128, 0)
    finally:
        slow.queue.finish()                 # the stress kernel does end; let it
        runner._WEDGED.pop(key, None)
    assert backend.run(t, 128, 0).total == 128


def test_devices_command_lists_backend_names(backend, capsys):
    from fuzz.cli import main
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert f"opencl:{backend.pi}:{backend.di}" in out
    assert backend.device.name.strip() in out


def test_a_non_nvidia_device_refuses_ptx_tests_and_ptx_campaigns(backend, tmp_path):
    """PoCL gets cl3 kernels: it runs AMDGPU tests only; a PTX test is refused with the kernel
    language it needs, and so is a PTX campaign on it (before anything is written)."""
    from fuzz.campaign import Campaign, CampaignError, Config
    assert backend.kernel_language == "cl3" and backend.dialects == ("AMDGPU",)
    assert backend.why_not("PTX") == (
        "PTX tests need the ptx kernel language (an NVIDIA GPU platform, or "
        "SCOPEFUZZ_OPENCL_PARAMS=kernel_language=ptx); this device uses cl3")
    assert backend.why_not("C") == "the cl3 kernels lower AMDGPU tests, not C"
    t = litmus.parse("PTX p\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists (P0:r0 == 0)\n")
    with pytest.raises(BackendError, match=r"this test is PTX \(use --dialect ptx\)"):
        backend.run(t, 10)
    with pytest.raises(CampaignError, match="runs AMDGPU programs, not PTX: PTX tests need the "
                                            "ptx kernel language"):
        Campaign(Config(backend=backend.name, out=str(tmp_path / "c"), seed=1, programs=1,
                        iterations=10, model="ptx"), backend=backend).run()
    assert not (tmp_path / "c").exists()

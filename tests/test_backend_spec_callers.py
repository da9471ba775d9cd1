"""The harness reads backend names through hw only (issue 34: ``hw.parse_backend_spec``).

fuzz/backend_names.py, which read names itself, is gone; these tests check what its callers do
with hw's reading: a campaign's finding names the mutant hw reads (None for a profile or target
alone: ``sim:gfx90a`` names a profile, not a mutant), ``--jobs`` defaults to one worker per
device, a parallel campaign refuses a bad device name before touching its directory, the compiler
campaign and the pytest plugin ask the same spec, and a finding written before (``"mutant":
"gfx90a"``) still loads and renders.
"""

from __future__ import annotations

import json
import math
import os

import pytest

from fakes import StaleReadBackend, sc_check
from fuzz import pytest_plugin, workers
from fuzz.campaign import Campaign, CampaignError, Config
from fuzz.findings import finding_markdown, load_findings
from fuzz.strategies import parse_features

FEATS = parse_features("atomics,plain,fences,rmw")


def _findings(tmp_path, name: str) -> list[dict]:
    """The findings of a short campaign whose backend is named ``name`` (a stale-read fake runs
    it: the name is what the finding record reads)."""
    out = str(tmp_path / "c")
    cfg = Config(backend=name, out=out, seed=1, programs=12, features=FEATS, iterations=150,
                 minimize_seconds=math.inf)
    Campaign(cfg, backend=StaleReadBackend(0.3), checker=sc_check).run()
    fs = load_findings(out)
    assert fs, "the stale-read fake gives findings on these programs"
    return fs


@pytest.mark.parametrize("name, mutant", [
    ("sim:gfx90a", None),                        # a profile: no mutant (backend_names said "gfx90a")
    ("sim", None),
    ("sim:acq-no-inv", "acq-no-inv"),
    ("sim:acq-no-inv@gfx90a", "acq-no-inv"),     # mutant on a profile (it said "acq-no-inv@gfx90a")
    ("isa:gfx942,noscalar:drop-inv", "drop-inv"),
    ("isa:gfx942", None),
    ("opencl:0:1", None),                        # platform and device, not a mutant
])
def test_a_findings_mutant_is_the_one_hw_reads(tmp_path, name, mutant):
    for rec in _findings(tmp_path, name):
        assert rec["backend"] == name and rec["mutant"] == mutant
        text = finding_markdown(rec)
        assert ("(mutant `" in text) == (mutant is not None)


def test_a_campaign_on_a_bad_name_is_hws_one_line_error(tmp_path):
    cfg = Config(backend="sim:nosuch", out=str(tmp_path / "c"), seed=0, programs=2,
                 features=FEATS)
    with pytest.raises(CampaignError) as e:
        Campaign(cfg, checker=sc_check).run()
    assert "nosuch" in str(e.value) and "\n" not in str(e.value)
    assert not os.path.exists(tmp_path / "c")          # nothing written


def test_old_finding_with_a_profile_as_mutant_still_loads_and_renders(tmp_path):
    fs = _findings(tmp_path, "sim:gfx90a")
    rec = dict(fs[0], mutant="gfx90a")                  # as fuzz/backend_names.py wrote it
    path = tmp_path / "c" / "findings" / rec["id"] / "finding.json"
    path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    again = {r["id"]: r for r in load_findings(str(tmp_path / "c"))}[rec["id"]]
    assert again["mutant"] == "gfx90a"
    assert "(mutant `gfx90a`)" in finding_markdown(again)


def test_default_jobs_is_one_per_device_as_hw_reads_the_name():
    cores = workers.cores()
    assert workers.default_jobs("opencl", None) == 1
    assert workers.default_jobs("opencl:0:1", None) == 1
    assert workers.default_jobs("sim:acq-no-inv", None) == cores
    assert workers.default_jobs("isa:gfx942", None) == cores
    assert workers.default_jobs("nosuch", None) == cores       # named when the campaign opens it
    assert workers.default_jobs("opencl", ["opencl:0:0", "opencl:0:1"]) == 2


def test_parallel_campaign_refuses_a_bad_device_name_before_touching_its_directory(tmp_path):
    cfg = Config(backend="opencl:a:b:c", out=str(tmp_path / "c"), seed=0, programs=2,
                 features=FEATS)
    with pytest.raises(CampaignError) as e:
        workers.ParallelCampaign(cfg, 2).check_backends()
    assert "bad OpenCL device spec 'a:b:c'" in str(e.value)
    assert not os.path.exists(tmp_path / "c")


def test_compiler_campaign_reads_its_backend_through_hw():
    from fuzz.compilers_campaign import parse_backend
    comp, mutant = parse_backend("ptxc:clang-cuda:sm_90:drop-fence")
    assert (comp.name, comp.sm, mutant) == ("clang-cuda", 90, "drop-fence")
    assert parse_backend("ptxc:clang-cuda")[1] is None
    with pytest.raises(CampaignError, match="not a compiler campaign backend: 'sim'"):
        parse_backend("sim")
    with pytest.raises(CampaignError, match="unknown PTX mutant 'nosuch'"):
        parse_backend("ptxc:clang-cuda:sm_90:nosuch")


def test_pytest_plugin_warms_the_simulator_for_simulated_backends_only():
    assert pytest_plugin._simulated("sim") and pytest_plugin._simulated("isa:gfx942")
    assert not pytest_plugin._simulated("opencl:0:0")
    assert not pytest_plugin._simulated("none")        # no backend: nothing to warm up
    assert not pytest_plugin._simulated("nosuch")      # the items report a bad name

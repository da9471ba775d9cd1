"""Fuzzing PTX programs (``scopefuzz fuzz --model ptx``): the PTX strategies draw well-formed
programs of every shape that print and parse back unchanged; the campaign draws them, checks
them with the ptx model, refuses a backend that cannot run them (the simulator models AMD
hardware), and records findings in PTX; ``run --backend sim`` refuses PTX tests with a reason."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings

import litmus
import oracle
from fuzz.campaign import Campaign, CampaignError, Config
from fuzz.findings import load_findings
from fuzz.ptx_strategies import (PTX_FEATURES, SHAPES, draw_program, parse_ptx_features,
                                 programs)
from fuzz.strategies import MAX_EVENTS, FeatureError, estimate_events
from litmus.print_ptx import format_ptx
from oracle.check import pre_executions
from oracle.lang import load_model
from oracle.registry import get as get_unit
from fakes import StaleReadBackend
from reference import candidates, co_groups, rf_candidates


def test_campaign_draws_are_well_formed_ptx_programs():
    names = set()
    for i in range(150):
        t = draw_program(7, i)
        assert t == draw_program(7, i)                       # a pure function of (seed, i)
        assert t.dialect == "PTX" and estimate_events(t) <= MAX_EVENTS
        assert litmus.parse(format_ptx(t)) == t, format_ptx(t)
        assert all(th.placement.wave is None and th.placement.wg is not None
                   for th in t.threads)
        stored: dict[str, list[int]] = {}
        for _, _, ins in t.instructions():
            if ins.base == "st" or ins.base == "rmw" and ins.op == "xchg":
                stored.setdefault(ins.loc, []).append(ins.args[0])
            assert ins.scope in (None, "wg", "cluster", "agent", "sys")
        assert all(len(v) == len(set(v)) for v in stored.values())    # distinct values
        names.add(t.name.split("-")[0].rstrip("0123456789"))
    assert {"cycle", "coherence", "barrier", "atomicity", "proxy", "random"} <= \
        {n if n not in ("CoRR", "CoWR", "CoRW", "CoWW") else "coherence" for n in names}
    assert set(SHAPES) == {"cycle", "coherence", "barrier", "atomicity", "proxy", "random"}


def test_features_select_what_is_drawn():
    feats = parse_ptx_features("weak,strong")
    for i in range(60):
        t = draw_program(3, i, feats)
        for _, _, ins in t.instructions():
            assert ins.base in ("ld", "st", "label", "assign")
            assert not ins.attrs
        assert all(th.placement.cluster == 0 and th.placement.agent == 0 for th in t.threads)
    assert parse_ptx_features("all,-proxies") == frozenset(PTX_FEATURES) - {"proxies"}
    with pytest.raises(FeatureError, match="unknown PTX feature 'async'"):
        parse_ptx_features("async")
    with pytest.raises(FeatureError, match="no memory access"):
        parse_ptx_features("fences,sc")


def enumeration_size(test) -> int:
    """How many candidates tests/reference.py enumerates (it prunes nothing)."""
    total = 0
    for pe in pre_executions(get_unit("ptx"), test):
        n = 1
        for c in rf_candidates(pe).values():
            n *= len(c)
        for _, rest in co_groups(pe):
            n *= math.factorial(len(rest))
        total += n
    return total


def reference(test):
    """(states, race flag) by tests/reference.py's plain enumeration of the ptx model."""
    prog = load_model("ptx")
    keys = test.observables()
    states, racy = set(), False
    for pe in pre_executions(get_unit("ptx"), test):
        for c in candidates(pe, prog):
            if c is not None and c.failed is None:
                o = c.outcome()
                states.add(tuple(o[k] for k in keys))
                racy = racy or "racy" in c.flags
    return states, racy


@settings(max_examples=25, deadline=None)
@given(programs())
def test_engine_and_reference_agree_on_random_ptx_programs(t):
    """The numba engine with the unit's search hints against the plain evaluation of the same
    model files: same outcomes and race flag."""
    assume(enumeration_size(t) <= 3000)         # the plain enumeration is slow
    res = oracle.check(t, "ptx")
    mine = {tuple(s[k] for k in t.observables()) for s in res.states}
    assert (mine, "racy" in res.flags) == reference(t)


class PTXStale(StaleReadBackend):
    """The stale-read fake backend (tests/fakes.py) running PTX programs: a load of a location
    another thread writes may return its initial value, which the ptx model forbids after
    synchronization."""

    dialects = ("PTX",)


def test_a_ptx_campaign_finds_records_and_minimizes_in_ptx(tmp_path):
    cfg = Config(backend="fake", out=str(tmp_path / "c"), seed=2, programs=30, iterations=100,
                 minimize_seconds=10, model="ptx",
                 features=parse_ptx_features("weak,strong,fences,barriers"))
    stats = Campaign(cfg, backend=PTXStale(0.4)).run()
    meta = json.loads((tmp_path / "c" / "campaign.json").read_text())
    assert meta["model"] == "ptx"
    fs = load_findings(str(tmp_path / "c"))
    assert stats.findings == len(fs) >= 1
    for rec in fs:
        assert rec["test"].startswith("PTX ") and rec["model"] == "ptx"
        small = litmus.parse(rec["test"])
        assert small.dialect == "PTX"
        res = oracle.check(small, "ptx")
        assert res.verdict == "No"
        assert not res.allows(rec["forbidden"][0]["outcome"])
    # --resume must name the same model: the programs mean something else under another one
    both = PTXStale(0.4)
    both.dialects = ("AMDGPU", "PTX")
    with pytest.raises(CampaignError, match="--resume with model=None, but the campaign was "
                                            "started with model='ptx'"):
        Campaign(Config(backend="fake", out=str(tmp_path / "c"), seed=2, programs=30,
                        iterations=100, resume=True,
                        features=parse_ptx_features("weak,strong,fences,barriers")),
                 backend=both).run()


def test_a_campaign_refuses_a_backend_that_cannot_run_its_programs(tmp_path):
    cfg = Config(backend="fake", out=str(tmp_path / "c"), seed=1, programs=3, model="ptx",
                 features=parse_ptx_features(None))
    with pytest.raises(CampaignError, match="backend fake runs AMDGPU programs, not PTX"):
        Campaign(cfg, backend=StaleReadBackend(0.0)).run()
    assert not (tmp_path / "c").exists()


def scopefuzz(*args):
    return subprocess.run([sys.executable, "-m", "fuzz.cli", *args], capture_output=True,
                          text=True)


def test_the_simulator_refuses_ptx_programs_with_a_reason(tmp_path):
    r = scopefuzz("fuzz", "--model", "ptx", "--backend", "sim", "--programs", "2", "--out",
                  str(tmp_path / "c"), "--quiet")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "scopefuzz fuzz: backend sim runs AMDGPU programs, not PTX: the simulator models AMD GPU "
        "hardware: it runs AMDGPU-dialect tests, not PTX (PTX tests run on an NVIDIA GPU: "
        "--backend opencl on an NVIDIA platform, kernels of codegen --dialect ptx)"]
    f = tmp_path / "mp.litmus"
    f.write_text(format_ptx(draw_program(1, 0)))
    r = scopefuzz("run", "--backend", "sim", "--iterations", "10", str(f))
    assert r.returncode == 2
    (line,) = r.stderr.strip().splitlines()
    # run's per-test errors name file:line:col (issue 17): the test's first line
    assert line.startswith(f"{f}:1:1: ") and "the simulator models AMD GPU hardware" in line

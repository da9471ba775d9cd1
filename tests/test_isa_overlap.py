"""The isa campaign's speed-ups change nothing but time (issue 30, throughput): a campaign whose
batches compile in a background thread while the previous batch runs, and whose minimizer
compiles windows of variants ahead, journals the same programs with the same statuses, verdicts
and witnesses, and publishes the same findings (same minimized test, histogram, minimization
steps) as the same campaign compiling every program alone; and every worker of a ``--jobs``
campaign uses one compile cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import hw
from fuzz.campaign import Campaign, Config
from fuzz.findings import load_findings
from fuzz.strategies import draw_program, parse_features
from hw.isa import source, toolchain

pytestmark = pytest.mark.skipif(toolchain.tools_available() is not None,
                                reason=f"isa backend: {toolchain.tools_available()}")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: journal and record fields that are clocks (seconds, timestamps), not results
CLOCKS = {"t", "ts", "seconds"}


def _fresh_cache(path, monkeypatch):
    monkeypatch.setenv("SCOPEFUZZ_ISA_CACHE", str(path))
    toolchain.cache_dir.cache_clear()
    toolchain._MEMO.clear()


def _programs(out: str) -> dict:
    rows = {}
    with open(os.path.join(out, "journal.jsonl"), encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e.get("type") == "program":
                rows[e["i"]] = {k: v for k, v in e.items() if k not in CLOCKS}
    return rows


def _findings(out: str) -> dict:
    recs = {}
    for r in load_findings(out):
        r = dict(r)
        r["first"] = {k: v for k, v in r["first"].items() if k not in CLOCKS}
        r["minimize"] = {k: v for k, v in r["minimize"].items() if k not in CLOCKS}
        r.pop("tool", None)
        recs[r["id"]] = r
    return recs


def _campaign(out, batched: bool):
    backend = hw.get_backend("isa:gfx942")
    if not batched:
        backend.prepare = None          # the unbatched path: every program compiled alone
    # seed 3: programs 52 and 60 are findings (finding 1), so the minimizer runs twice
    # minimization unbounded in time: a time-limited one stops at a load-dependent step, and
    # the finding's id (the minimized test) would then differ between two runs
    cfg = Config(backend="isa:gfx942", out=str(out), seed=3, programs=64,
                 features=parse_features(None), minimize_seconds=3600)
    seen = []
    if batched:
        real = backend.prepare

        def spy(tests, cancel=None):
            seen.append(len(tests))
            return real(tests, cancel=cancel)
        backend.prepare = spy
    stats = Campaign(cfg, backend=backend).run()
    return stats, seen


def test_overlapped_batches_give_the_unbatched_results(tmp_path, monkeypatch):
    _fresh_cache(tmp_path / "cache-a", monkeypatch)
    sa, seen = _campaign(tmp_path / "a", batched=True)
    assert 32 in seen and any(n < 32 for n in seen)     # campaign batches and minimizer windows
    _fresh_cache(tmp_path / "cache-b", monkeypatch)
    sb, _ = _campaign(tmp_path / "b", batched=False)
    pa, pb = _programs(str(tmp_path / "a")), _programs(str(tmp_path / "b"))
    assert sorted(pa) == list(range(64))
    assert pa == pb
    assert sum(e["status"] == "finding" for e in pa.values()) >= 2
    fa, fb = _findings(str(tmp_path / "a")), _findings(str(tmp_path / "b"))
    assert fa and fa == fb
    assert (sa.programs, sa.executed, sa.findings, sa.errors) == \
        (sb.programs, sb.executed, sb.findings, sb.errors)


def test_the_workers_of_a_campaign_share_one_compile_cache(tmp_path):
    # CU-wide waits and no scalar loads: neither finding 1 nor finding 2 (per-wave waits) shows,
    # so the second run compiles nothing for minimization either
    SPEC = "isa:gfx942,noscalar,cuwait"
    cache = tmp_path / "cache"
    env = dict(os.environ, SCOPEFUZZ_ISA_CACHE=str(cache), PYTHONPATH=ROOT)

    def fuzz(out):
        r = subprocess.run([sys.executable, "-m", "fuzz.cli", "fuzz", "--backend", SPEC,
                            "--seed", "5", "--programs", "40", "--jobs", "2", "--out", str(out),
                            "--quiet"], env=env, cwd=ROOT, capture_output=True, text=True,
                           timeout=900)
        assert r.returncode == 0, r.stderr       # 0: no finding
        return {p.name: p.stat().st_mtime_ns for p in cache.glob("*.json")}

    first = fuzz(tmp_path / "one")
    # both workers compiled into the one folder: every program either shard ran has its entry
    shards = sorted(p for p in (tmp_path / "one").iterdir() if p.name.startswith("shard-"))
    assert len(shards) == 2
    feats = Campaign(Config(backend=SPEC, seed=5)).draw_features
    target = hw.get_backend(SPEC).target
    for s in shards:
        ran = [i for i, e in _programs(str(s)).items() if e["status"] in ("ok", "finding")]
        assert ran
        for i in ran:
            src = source.generate(draw_program(5, i, feats, 0.5), target).text
            assert toolchain._key(src, target) + ".json" in first
    # the same campaign again (another --out): every compile is read from that folder, none
    # made or rewritten
    again = fuzz(tmp_path / "two")
    assert again == first

"""The campaign loop against fakes (tests/fakes.py): an SC oracle and a backend with stale reads.

Checks what a campaign promises: findings are really forbidden, minimized and deduplicated; the same
seed gives the same campaign; shards partition a campaign; SIGKILL + --resume loses nothing; errors
are recorded and the campaign goes on.
"""

from __future__ import annotations

import io
import math
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import litmus
from fuzz.campaign import Campaign, CampaignError, Config, parse_shard
from fakes import StaleReadBackend, fuzz_cli, sc_check
from fuzz.findings import load_findings
from fuzz.journal import Journal, read_journal
from fuzz.merge import merge
from fuzz.progress import Progress
from fuzz.strategies import parse_features

FEATS = parse_features("atomics,plain,fences,rmw")


def _campaign(out, programs=24, seed=1, stale=0.3, shard=(1, 1), resume=False, checker=sc_check,
              backend=None, **kw):
    cfg = Config(backend="fake", out=str(out), seed=seed, programs=programs, features=FEATS,
                 shard=shard, iterations=150, resume=resume, minimize_seconds=math.inf, **kw)
    camp = Campaign(cfg, backend=backend or StaleReadBackend(stale), checker=checker)
    return camp, camp.run()


def _programs(out):
    return [e for e in read_journal(os.path.join(out, "journal.jsonl")) if e["type"] == "program"]


def test_correct_backend_gives_no_findings(tmp_path):
    _, stats = _campaign(tmp_path / "c", stale=0.0, programs=12)
    assert stats.findings == 0
    entries = _programs(tmp_path / "c")
    assert sorted(e["i"] for e in entries) == list(range(12))
    assert {e["status"] for e in entries} == {"ok"}
    assert all(e["executions"] == 150 for e in entries)


def test_findings_are_forbidden_minimized_and_deduplicated(tmp_path):
    camp, stats = _campaign(tmp_path / "c")
    fs = load_findings(str(tmp_path / "c"))
    assert stats.findings == len(fs) >= 2
    ids = set()
    for rec in fs:
        small = litmus.parse(rec["test"])
        orig = litmus.parse(rec["original"])
        assert litmus.canonical_hash(small) == rec["id"]
        ids.add(rec["id"])
        assert small.size <= orig.size
        res = sc_check(small)
        # the finding's condition is forbidden by the oracle and was observed
        assert res.verdict == "No"
        for f in rec["forbidden"]:
            assert not res.allows(f["outcome"])
        # the condition is (part of) the first forbidden outcome seen
        assert litmus.condition_holds(small.condition, rec["forbidden"][0]["outcome"])
        assert any(not h["allowed"] for h in rec["histogram"])
        assert rec["reproduced"]["hits"] >= 1
        d = tmp_path / "c" / "findings" / rec["id"]
        assert (d / "minimized.litmus").read_text() == rec["test"]
        assert "FORBIDDEN" in (d / "report.md").read_text()
    # a stale read needs another thread's write: minimal findings have 2 threads, <= 4 instrs
    assert min(litmus.parse(r["test"]).size for r in fs) <= 3
    assert len(ids) == len(fs)
    # every finding program names its finding in the journal
    found = {e["finding"] for e in _programs(tmp_path / "c") if e["status"] == "finding"}
    assert found == ids


def test_condition_of_a_finding_is_a_minimal_forbidden_conjunction(tmp_path):
    _campaign(tmp_path / "c", programs=16)
    for rec in load_findings(str(tmp_path / "c")):
        small = litmus.parse(rec["test"])
        states = sc_check(small).states
        atoms = list(litmus.ir.prop_atoms(small.condition.prop))
        for k in range(len(atoms)):
            rest = atoms[:k] + atoms[k + 1:]
            if not rest:
                continue
            prop = rest[0] if len(rest) == 1 else litmus.And(tuple(rest))
            assert any(litmus.satisfiable(prop, s) for s in states), "an atom could be dropped"


def test_same_seed_same_campaign(tmp_path):
    _campaign(tmp_path / "a", programs=12)
    _campaign(tmp_path / "b", programs=12)
    a = {r["id"] for r in load_findings(str(tmp_path / "a"))}
    b = {r["id"] for r in load_findings(str(tmp_path / "b"))}
    assert a == b and a
    strip = lambda es: [(e["i"], e["status"], e.get("finding")) for e in es]
    assert strip(_programs(tmp_path / "a")) == strip(_programs(tmp_path / "b"))


def test_two_shards_find_what_one_campaign_finds(tmp_path):
    _campaign(tmp_path / "all", programs=16)
    _campaign(tmp_path / "s1", programs=16, shard=(1, 2))
    _campaign(tmp_path / "s2", programs=16, shard=(2, 2))
    i1 = {e["i"] for e in _programs(tmp_path / "s1")}
    i2 = {e["i"] for e in _programs(tmp_path / "s2")}
    assert not i1 & i2 and i1 | i2 == set(range(16))
    whole = {r["id"] for r in load_findings(str(tmp_path / "all"))}
    merge(str(tmp_path / "m"), [str(tmp_path / "s1"), str(tmp_path / "s2")])
    merged = {r["id"] for r in load_findings(str(tmp_path / "m"))}
    assert merged == whole and whole
    assert len(_programs(tmp_path / "m")) == 16


def test_resume_continues_and_checks_parameters(tmp_path):
    _campaign(tmp_path / "c", programs=8)
    with pytest.raises(CampaignError, match="already holds a campaign"):
        _campaign(tmp_path / "c", programs=8)
    with pytest.raises(CampaignError, match="seed"):
        _campaign(tmp_path / "c", programs=8, seed=2, resume=True)
    _campaign(tmp_path / "c", programs=14, resume=True)
    idx = [e["i"] for e in _programs(tmp_path / "c")]
    assert sorted(idx) == list(range(14)) and len(idx) == 14


def test_errors_are_recorded_and_the_campaign_goes_on(tmp_path):
    calls = []

    def flaky(test):
        calls.append(test.name)
        if test.name.startswith(("CoRR", "CoWR")):    # coherence programs (seed 1 draws both
            raise RuntimeError("oracle exploded\nsecond line")    # kinds among its first 30)
        return sc_check(test)

    backend = StaleReadBackend(0.3, fail_on="cycle2")
    _, stats = _campaign(tmp_path / "c", programs=30, checker=flaky, backend=backend)
    es = _programs(tmp_path / "c")
    assert len(es) == 30
    oerr = [e for e in es if e["status"] == "oracle-error"]
    berr = [e for e in es if e["status"] == "backend-error"]
    assert oerr and all(e["error"] == "RuntimeError: oracle exploded" for e in oerr)
    assert berr and all("refused by the fake backend" in e["error"] for e in berr)
    assert stats.errors == len(oerr) + len(berr)
    assert any(e["status"] in ("ok", "finding") for e in es)


def test_shard_syntax():
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "x/2", "2"):
        with pytest.raises(CampaignError):
            parse_shard(bad)


def test_journal_drops_a_line_cut_by_a_kill(tmp_path):
    p = tmp_path / "j.jsonl"
    j = Journal(str(p))
    j.append({"type": "program", "i": 0})
    j.close()
    with open(p, "a") as f:
        f.write('{"type": "program", "i": 1')       # killed mid-write
    assert [e["i"] for e in read_journal(str(p))] == [0]
    j = Journal(str(p))
    j.append({"type": "program", "i": 1})
    j.close()
    assert [e["i"] for e in read_journal(str(p))] == [0, 1]


def test_journal_fsyncs_every_line_by_default_or_grouped_by_time(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    j = Journal(str(tmp_path / "every.jsonl"))
    for i in range(3):
        j.append({"i": i})
    assert len(synced) == 3
    j.close()
    synced.clear()
    now = [100.0]
    j = Journal(str(tmp_path / "grouped.jsonl"), sync_every=0.5, clock=lambda: now[0])
    fsyncs_after = []
    for t in (100.0, 100.25, 100.5, 100.75, 101.25, 101.5):   # opened at 100.0
        now[0] = t
        j.append({"t": t})
        fsyncs_after.append(len(synced))
    assert fsyncs_after == [0, 0, 1, 1, 2, 2]     # 0.5 s after the last fsync, not before
    j.close()
    assert len(synced) == 3                        # close syncs what is left
    assert [e["t"] for e in read_journal(str(tmp_path / "grouped.jsonl"))] == \
        [100.0, 100.25, 100.5, 100.75, 101.25, 101.5]


def test_grouped_fsync_loses_no_line_to_sigkill(tmp_path):
    """A line is written to the kernel before append returns: a process SIGKILLed right after its
    appends, none of them fsynced, loses none of them."""
    path = tmp_path / "j.jsonl"
    code = ("import os, signal\n"
            "from fuzz.journal import Journal\n"
            f"j = Journal({str(path)!r}, sync_every=3600.0)\n"
            "for i in range(200):\n"
            "    j.append({'type': 'program', 'i': i})\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], cwd=root)
    assert proc.returncode == -signal.SIGKILL
    assert [e["i"] for e in read_journal(str(path))] == list(range(200))


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_is_tty_aware(tmp_path):
    tty, plain = _Tty(), io.StringIO()
    for stream in (tty, plain):
        cfg = Config(backend="fake", out=str(tmp_path / f"p{id(stream)}"), programs=6,
                     features=FEATS, iterations=50)
        Campaign(cfg, backend=StaleReadBackend(0.0), checker=sc_check,
                 progress=Progress(stream, interval=0.0)).run()
    assert "\r" in tty.getvalue() and tty.getvalue().endswith("\n")
    lines = plain.getvalue().splitlines()
    assert "\r" not in plain.getvalue() and len(lines) >= 2
    assert "programs 6" in lines[-1] and "exec/s" in lines[-1] and "kinds" in lines[-1]
    assert "scope pairs" in lines[-1] and "findings 0" in lines[-1]


def _cli(tmp_path, *args):
    return fuzz_cli(tmp_path, "--jobs", "1", *args)     # the one-process layout (journal.jsonl)


def test_sigkill_and_resume_lose_nothing(tmp_path):
    ref = tmp_path / "ref"
    done = subprocess.run(_cli(tmp_path, "--programs", "30", "--out", str(ref)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr        # findings -> exit 1
    victim = tmp_path / "victim"
    kills = 0
    for wait_lines in (5, 14):                       # kill twice, at different points
        args = ["--programs", "30", "--out", str(victim)] + (["--resume"] if kills else [])
        proc = subprocess.Popen(_cli(tmp_path, *args), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        jp = victim / "journal.jsonl"
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            if jp.exists() and len(jp.read_text().splitlines()) >= wait_lines:
                break
            time.sleep(0.02)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 1
    fin = subprocess.run(_cli(tmp_path, "--programs", "30", "--out", str(victim), "--resume"),
                         capture_output=True, text=True, timeout=600)
    assert fin.returncode == 1, fin.stderr
    key = lambda es: sorted((e["i"], e["status"], e.get("finding")) for e in es)
    assert key(_programs(victim)) == key(_programs(ref))
    ref_f = {r["id"]: sorted(s["index"] for s in r["sources"]) for r in load_findings(str(ref))}
    vic_f = {r["id"]: sorted(s["index"] for s in r["sources"]) for r in load_findings(str(victim))}
    assert vic_f == ref_f and ref_f
    assert not [n for n in os.listdir(victim / "findings") if n.startswith(".")]


@pytest.mark.parametrize("args, message", [
    (["--features", "atomix"], "unknown feature 'atomix'"),
    (["--shard", "3/2"], "bad --shard '3/2'"),
    (["--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["--time", "-1"], "bad --time"),
])
def test_cli_errors_are_one_line_and_leave_no_campaign(tmp_path, capsys, args, message):
    from fuzz.cli import main
    out = tmp_path / "c"
    argv = ["fuzz", "--out", str(out), *args]
    if "--backend" not in args:
        argv += ["--backend", "sim"]
    if "--time" not in args:
        argv += ["--programs", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_one_process_per_campaign_directory(tmp_path):
    cfg = Config(backend="fake", out=str(tmp_path / "c"), programs=2, features=FEATS,
                 iterations=20)
    first = Campaign(cfg, backend=StaleReadBackend(0.0), checker=sc_check)
    first.open()                      # holds the directory's lock
    again = Config(backend="fake", out=str(tmp_path / "c"), programs=2, features=FEATS,
                   iterations=20, resume=True)
    with pytest.raises(CampaignError, match="another scopefuzz process"):
        Campaign(again, backend=StaleReadBackend(0.0), checker=sc_check).run()
    first.journal.close()
    first._lock_file.close()
    Campaign(again, backend=StaleReadBackend(0.0), checker=sc_check).run()
    assert sorted(e["i"] for e in _programs(tmp_path / "c")) == [0, 1]

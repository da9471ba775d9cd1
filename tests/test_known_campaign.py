"""Counting instead of minimizing (fuzz/campaign.py ``Campaign._count_into``): ``fuzz --known``
on sim/isa campaigns and ``--forms-per-bucket N``.

The planted simulator bug ``sim:acq-no-inv`` (an acquire that does not invalidate L1) is found by
several programs of seed 1 in the first 150, all in one bucket (``sim GFX9: missing inv.l1``).
A finding in a known bug's bucket, or in a bucket that already has N forms, must be recorded (the
program as found and its outcome in the journal, a source of the bucket's finding) and counted,
with the minimizer never called for it; ``--resume`` keeps the counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import fuzz.campaign as campaign_mod
from fuzz.campaign import Campaign, Config
from fuzz.findings import load_findings
from fuzz.journal import read_journal

BACKEND = "sim:acq-no-inv"
SEED = 1
PROGRAMS = 150
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def minimize_calls(monkeypatch):
    """Every call of the campaign's minimizer, recorded (the real minimizer still runs)."""
    calls = []
    real = campaign_mod.minimize

    def spy(test, *a, **k):
        calls.append(test.name)
        return real(test, *a, **k)
    monkeypatch.setattr(campaign_mod, "minimize", spy)
    return calls


def run(out, programs=PROGRAMS, resume=False, **kw) -> Campaign:
    cfg = Config(backend=BACKEND, out=str(out), seed=SEED, programs=programs, resume=resume,
                 minimize_seconds=10, **kw)
    c = Campaign(cfg)
    c.run()
    return c


def finding_entries(out) -> dict[int, dict]:
    return {e["i"]: e for e in read_journal(os.path.join(str(out), "journal.jsonl"))
            if e.get("type") == "program" and e.get("status") == "finding"}


def known_file(tmp_path, match="missing inv\\.l1") -> str:
    p = tmp_path / "known.json"
    p.write_text(json.dumps({"version": 1, "bugs": [
        {"name": "planted acq-no-inv", "match": match, "links": ["https://example.org/inv"]}]}))
    return str(p)


def test_forms_per_bucket_counts_later_findings_without_minimizing(tmp_path, minimize_calls):
    out = tmp_path / "c"
    c = run(out, forms_per_bucket=1)
    es = finding_entries(out)
    assert len(es) >= 3, "seed 1 finds the planted bug several times in 150 programs"
    assert len(minimize_calls) == 1                  # the first one only
    [rec] = load_findings(str(out))
    assert c.stats.findings == 1 and c.counted == len(es) - 1
    first = min(es)
    assert rec["first"]["index"] == first and rec["minimize"]["tried"] > 0
    assert rec["bucket"]["found_as"] == es[first]["bucket"]
    srcs = {s["index"]: s for s in rec["sources"]}
    assert sorted(srcs) == sorted(es)                 # every finding program counted in it
    for i, e in es.items():
        assert e["finding"] == rec["id"] and e["bucket"] == es[first]["bucket"]
        if i == first:
            assert "counted" not in e and "counted" not in srcs[i]
        else:      # recorded as found: the program and its forbidden outcomes
            assert e["counted"] == "forms" and srcs[i]["counted"] == "forms"
            assert e["test"].startswith("AMDGPU") and e["forbidden"]
            assert srcs[i]["outcome"] == e["forbidden"][0]
    # merge keeps the counted sources and says how many
    r = subprocess.run([sys.executable, "-m", "fuzz.cli", "merge", str(tmp_path / "m"), str(out)],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert (f"1 finding(s) in 1 bucket(s), {len(es) - 1} more counted in their bucket without "
            "minimizing") in r.stdout
    [merged] = load_findings(str(tmp_path / "m"))
    assert sorted(s["index"] for s in merged["sources"]) == sorted(es)


def test_known_bucket_is_counted_and_never_minimized(tmp_path, minimize_calls):
    out = tmp_path / "k"
    r = subprocess.run([sys.executable, "-m", "fuzz.cli", "fuzz", "--backend", BACKEND,
                        "--seed", str(SEED), "--programs", str(PROGRAMS), "--jobs", "1",
                        "--quiet", "--out", str(out), "--known", known_file(tmp_path)],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 1, r.stderr                  # findings: exit 1, as always
    es = finding_entries(out)
    assert len(es) >= 3
    [rec] = load_findings(str(out))
    first = min(es)
    # published as found: the drawn program, not minimized
    assert rec["minimize"]["tried"] == 0 and "not minimized: known bug" in rec["minimize"]["steps"][0]
    assert rec["minimize"]["size_after"] == rec["minimize"]["size_before"]
    assert rec["known"]["name"] == "planted acq-no-inv"
    assert rec["reproduced"]["hits"] >= 1 and rec["bucket"]["signature"] == "sim GFX9: missing inv.l1"
    assert sorted(s["index"] for s in rec["sources"]) == sorted(es)
    for i, e in es.items():
        assert e["known"] == "planted acq-no-inv"
        assert ("counted" in e) == (i != first)
    n = len(es)
    assert (f"1 finding(s) in 1 bucket(s) (1 known), {n - 1} more counted in their bucket "
            "without minimizing") in r.stderr
    # the report (without --known) still sets the bucket apart as known, with its count
    from fuzz.report import build_report
    build_report(str(out))
    md = (out / "report.md").read_text()
    assert "### Known bugs (1 bucket(s))" in md and "New bugs" not in md
    assert f"{n - 1} more program(s) counted in their bucket without minimizing" in md
    row = [ln for ln in md.splitlines() if ln.startswith("| ") and "missing inv.l1" in ln]
    assert len(row) == 1 and f"| {n} | 1 |" in row[0]


def test_in_process_known_bucket_skips_the_minimizer(tmp_path, minimize_calls):
    c = run(tmp_path / "k", known=(known_file(tmp_path),))
    assert minimize_calls == [] and c.stats.findings == 1 and c.counted >= 2


def test_an_unmatched_known_file_changes_nothing(tmp_path, minimize_calls):
    """A known-bugs file whose bugs match no bucket: every finding minimized, as without it."""
    out = tmp_path / "u"
    c = run(out, programs=80, known=(known_file(tmp_path, match="^never$"),))
    es = finding_entries(out)
    assert es and len(minimize_calls) == len(es) and c.counted == 0
    assert all("counted" not in e and "known" not in e for e in es.values())


def test_resume_keeps_the_counts(tmp_path, minimize_calls):
    straight = tmp_path / "s"
    run(straight, forms_per_bucket=1)
    want = {s["index"] for s in load_findings(str(straight))[0]["sources"]}
    calls_straight = len(minimize_calls)
    out = tmp_path / "r"
    split = sorted(want)[1]          # the second session starts after the bucket's first form
    run(out, programs=split, forms_per_bucket=1)
    c = run(out, programs=PROGRAMS, resume=True, forms_per_bucket=1)
    assert len(minimize_calls) == 2 * calls_straight == 2     # none in the resumed session
    [rec] = load_findings(str(out))
    assert {s["index"] for s in rec["sources"]} == want
    assert c.stats.findings == 1
    assert sum(1 for s in rec["sources"] if s.get("counted")) == len(want) - 1


def test_bad_options_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\"bugs\": [\n  {\"name\": 1}\n]}")
    for extra, why in ((["--known", str(bad)], "bug 0"),
                       (["--forms-per-bucket", "0"], "--forms-per-bucket")):
        r = subprocess.run([sys.executable, "-m", "fuzz.cli", "fuzz", "--backend", BACKEND,
                            "--programs", "3", "--quiet", "--out", str(tmp_path / "x")] + extra,
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "x").exists()


def test_default_known_files_per_campaign_kind():
    from fuzz.known import default_known_for, default_known_path, default_known_ptxc_path
    assert default_known_for("isa:gfx942,noscalar") == (default_known_path(),)
    assert default_known_for(None, "clang-cuda:sm_90,O2") == (default_known_ptxc_path(),)
    assert set(default_known_for("sim")) == {default_known_path(), default_known_ptxc_path()}


def _record(bid, sig, found_as, sources):
    from fuzz.finding import Finding
    return Finding("f1", "", [], sources,
                   {"bucket": {"id": bid, "signature": sig, "found_as": found_as}})


def test_a_bucket_minimized_into_a_known_bug_is_counted_as_that_bug(tmp_path):
    """Finding 2's programs may first show a forbidden outcome that buckets otherwise; once one
    of them was minimized into the known bucket, later ones found the same way are counted."""
    c = Campaign(Config(backend=BACKEND, out=str(tmp_path / "c"),
                        known=(known_file(tmp_path, match="^known sig$"),)))
    c.known = {"f1": _record("B2", "known sig", "B1", [{"index": 3}])}
    fid, known = c._count_into({"id": "B1", "signature": "as found"})
    assert fid == "f1" and known["name"] == "planted acq-no-inv"
    # a bucket nobody minimized into a known bug is minimized as usual
    assert c._count_into({"id": "B3", "signature": "as found"}) is None


def test_the_limit_counts_minimized_programs_not_distinct_forms(tmp_path):
    """Two programs minimized to one form are two minimizations: with --forms-per-bucket 2 the
    third finding of the bucket is counted (else a bucket whose programs all minimize to one
    test would be minimized for ever); counted sources and other workers' claims do not count."""
    c = Campaign(Config(backend=BACKEND, out=str(tmp_path / "c"), forms_per_bucket=2))
    c.known = {"f1": _record("B1", "s", "B1", [{"index": 1}, {"index": 5, "counted": "forms"},
                                                {"index": 6, "claimed_by_other": {}}])}
    assert c._count_into({"id": "B1", "signature": "s"}) is None          # 1 minimized
    c._noted_source("f1", [{"index": 9}])          # a second program minimized to the same form
    assert c._count_into({"id": "B1", "signature": "s"}) == ("f1", None)

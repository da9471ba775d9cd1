"""Damaged campaign directories (issue 33): ``report`` and ``--resume`` name the damage in one
line or agree on it, never a traceback; a failed write leaves no temporary file; ``--out FILE``
says the path is a file."""

from __future__ import annotations

import dataclasses
import json
import math
import os

import pytest

from fakes import StaleReadBackend, sc_check
from fuzz.campaign import Campaign, Config
from fuzz.cli import main
from fuzz.findings import FindingFileError, add_sources, load_findings
from fuzz.journal import atomic_write
from fuzz.layout import META, journals
from fuzz.report import ReportError, load_campaign
from fuzz.strategies import parse_features


def _campaign(out: str, programs: int = 6, stale: float = 0.0) -> Config:
    cfg = Config(backend="fake", out=out, seed=1, programs=programs, iterations=60,
                 features=parse_features("atomics,plain,fences"), minimize_seconds=math.inf)
    Campaign(cfg, backend=StaleReadBackend(stale), checker=sc_check).run()
    return cfg


def test_report_names_a_non_string_backend(tmp_path):
    out = str(tmp_path / "c")
    _campaign(out, programs=2)
    path = os.path.join(out, META)
    meta = json.load(open(path, encoding="utf-8"))
    meta["backend"] = {"name": 7}
    open(path, "w", encoding="utf-8").write(json.dumps(meta))
    with pytest.raises(ReportError, match=r"campaign.json: field 'backend' is dict"):
        load_campaign(out)


def test_report_and_resume_agree_on_duplicated_journal_lines(tmp_path):
    out = str(tmp_path / "c")
    cfg = _campaign(out, programs=5)
    meta = json.load(open(os.path.join(out, META), encoding="utf-8"))
    before = sum(p.n for p in load_campaign(out)["parts"].values())
    assert before == 5
    _, jpath = next(journals(out, meta))
    lines = [l for l in open(jpath, encoding="utf-8") if '"type": "program"' in l
             or '"type":"program"' in l]
    with open(jpath, "a", encoding="utf-8") as f:
        f.writelines(lines * 2)               # every program line three times in all
        f.write(json.dumps({"type": "program", "i": "7", "status": "ok"}) + "\n")
    assert sum(p.n for p in load_campaign(out)["parts"].values()) == 5
    resumed = Campaign(dataclasses.replace(cfg, resume=True), backend=StaleReadBackend(0.0),
                       checker=sc_check)
    resumed.run()
    assert resumed.stats.programs == 5


def test_non_list_sources_are_named_not_a_traceback(tmp_path):
    out = str(tmp_path / "c")
    _campaign(out, programs=16, stale=0.3)
    recs = load_findings(out)
    assert recs
    rec = recs[0]
    path = os.path.join(out, "findings", rec["id"], "finding.json")
    open(path, "w", encoding="utf-8").write(json.dumps(dict(rec, sources=5)))
    named = []
    assert rec["id"] not in {r["id"] for r in load_findings(out, on_bad=named.append)}
    assert named == [f"{path}: 'sources' is not a list of objects"]
    with pytest.raises(FindingFileError):
        add_sources(out, rec["id"], [{"campaign": "x", "index": 1}])
    add_sources(out, rec["id"], [{"campaign": "x", "index": 1}], rec)   # rewritten from rec
    assert json.load(open(path, encoding="utf-8"))["sources"][-1] == {"campaign": "x", "index": 1}


def test_failed_atomic_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old")

    def full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        atomic_write(str(target), "new")
    assert sorted(os.listdir(tmp_path)) == ["report.md"]
    assert target.read_text() == "old"


def test_out_naming_a_file_says_so(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    status = main(["fuzz", "--backend", "sim", "--out", str(f), "--programs", "1", "--quiet"])
    err = capsys.readouterr().err
    assert status == 3
    assert "is a file, not a campaign directory" in err and "--resume" not in err


#: wrong types in the fields the renderers read (the typed record gives a neutral value)
DAMAGE = {"backend": 3, "mutant": ["m"], "minimize": "x", "first": [1], "histogram": 5,
          "allowed": {"a": 1}, "bucket": "b", "baseline": 7, "reproduce": "cmd", "tool": [],
          "params": "p", "iterations": "many", "evidence": {"e": 1}, "original": None,
          "known": "k", "reproduced": [2]}


def test_wrong_typed_fields_render_and_merge_and_resume(tmp_path, capsys):
    """A finding.json whose optional fields have the wrong types (issue 33, issue 34's typed
    record): ``report`` writes both pages, ``merge`` copies it, ``--resume`` goes on; the
    finding's id, test and outcome still show."""
    from fuzz.findings import finding_markdown, load_finding_records
    from fuzz.merge import merge
    out = str(tmp_path / "c")
    cfg = _campaign(out, programs=16, stale=0.3)
    recs = load_findings(out)
    assert recs
    rec = recs[0]
    path = os.path.join(out, "findings", rec["id"], "finding.json")
    open(path, "w", encoding="utf-8").write(json.dumps(dict(rec, **DAMAGE)))
    bad = {r.id: r for r in load_finding_records(out)}[rec["id"]]
    assert (bad.backend, bad.mutant, bad.minimize, bad.histogram, bad.bucket, bad.original) == \
        ("?", None, {}, [], {}, "")
    text = finding_markdown(bad)
    assert rec["test"].rstrip("\n") in text and "forbidden outcome on `?`" in text
    assert main(["report", out]) == 0
    md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
    assert f"[{rec['id']}](findings/{rec['id']}/report.md): `?`" in md
    assert f'id="f-{rec["id"]}"' in open(os.path.join(out, "report.html"), encoding="utf-8").read()
    assert merge(str(tmp_path / "m"), [out])["findings"] == len(recs)
    merged = json.load(open(os.path.join(tmp_path, "m", "findings", rec["id"], "finding.json"),
                            encoding="utf-8"))
    assert {k: merged[k] for k in DAMAGE} == DAMAGE            # kept as written, not "repaired"
    more = dataclasses.replace(cfg, resume=True, programs=24)
    resumed = Campaign(more, backend=StaleReadBackend(0.3), checker=sc_check)
    resumed.run()
    assert resumed.stats.programs == 24 and rec["id"] in resumed.known

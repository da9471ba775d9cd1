"""Programs a backend refuses (hw.BackendRefused, e.g. the isa backend and a construct clang-22
cannot express) are counted apart from errors, journaled with their reason and listed in the
report; a backend's evidence goes into its findings."""

from __future__ import annotations

import json

from fuzz.campaign import Campaign, Config
from fakes import StaleReadBackend, sc_check
from fuzz.findings import load_findings
from fuzz.report import build_report
from hw.backend import BackendRefused, EvidenceBackend


class RefusesFences(StaleReadBackend, EvidenceBackend):
    """Refuses every program with a fence; runs the others with stale reads (findings)."""

    name = "refuses-fences"

    def run(self, test, iterations, seed=0):
        if any(i is not None and i.base == "fence" for th in test.threads for i in th.code):
            raise BackendRefused(f"{test.name}: fences cannot be expressed here")
        return super().run(test, iterations, seed)

    def evidence(self, test) -> str:
        return f"## Backend evidence\n\ncompiled {test.name}\n"


def test_refused_programs_are_counted_journaled_and_reported(tmp_path):
    out = tmp_path / "c"
    cfg = Config(backend="refuses-fences", out=str(out), seed=2, programs=60, iterations=200,
                 minimize_seconds=5)
    stats = Campaign(cfg, backend=RefusesFences(0.3), checker=sc_check).run()
    entries = [json.loads(ln) for ln in open(out / "journal.jsonl")]
    refused = [e for e in entries if e.get("status") == "refused"]
    assert refused and stats.refused == len(refused)
    assert stats.errors == sum(e.get("status") in ("oracle-error", "backend-error", "too-big")
                               for e in entries)
    assert all("fences cannot be expressed" in e["error"] for e in refused)
    _, md = build_report(str(out), explainer=None)
    text = open(md).read()
    assert "## Refused programs" in text and "fences cannot be expressed" in text
    found = load_findings(str(out))
    assert found, "the stale-read backend should have produced a finding"
    for rec in found:
        assert rec["evidence"].startswith("## Backend evidence")
        report = (out / "findings" / rec["id"] / "report.md").read_text()
        assert "compiled " in report and "## Backend evidence" in report

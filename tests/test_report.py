"""``scopefuzz report``: report.html and report.md, checked structurally (html.parser)."""

from __future__ import annotations

import html.parser
import json
import math
import os
import re

import pytest

import litmus
from fuzz.campaign import Campaign, Config
from fuzz.cli import main
from fakes import StaleReadBackend, sc_check
from fuzz.findings import load_findings
from fuzz.report import build_report
from fuzz.strategies import parse_features


class _Outline(html.parser.HTMLParser):
    """Sections (by id/class), SVG elements and <pre> texts of a page; checks tags balance."""

    VOID = {"meta", "br", "img", "hr", "input", "link"}

    def __init__(self):
        super().__init__()
        self.sections: list[str] = []
        self.svgs = 0
        self.finding_svgs = 0
        self.pres: list[tuple[str, str]] = []
        self.stack: list[str] = []
        self._pre = None
        self.in_finding = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id", ""))
            if a.get("class") == "finding":
                self.in_finding = len(self.stack) + 1
        if tag == "svg":
            self.svgs += 1
            if self.in_finding:
                self.finding_svgs += 1
        if tag == "pre":
            self._pre = [a.get("class", ""), ""]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()
        if tag == "pre":
            self.pres.append(tuple(self._pre))
            self._pre = None
        if tag == "section" and self.in_finding and len(self.stack) < self.in_finding:
            self.in_finding = 0

    def handle_data(self, data):
        if self._pre is not None:
            self._pre[1] += data


class _Explanation:
    def __init__(self, outcome):
        self.outcome = outcome

    def text(self):
        return f"fails axiom sc: W x=1 -po-> R x -fr-> W x=1 for {self.outcome}"

    def svg(self):
        return '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><circle r="3"/></svg>'


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("rep") / "c")
    cfg = Config(backend="fake", out=out, seed=1, programs=16, iterations=150,
                 features=parse_features("atomics,plain,fences,rmw"), minimize_seconds=math.inf)
    Campaign(cfg, backend=StaleReadBackend(0.3), checker=sc_check).run()
    assert load_findings(out)
    return out


def test_html_report_structure(campaign_dir):
    page, md = build_report(campaign_dir, explainer=lambda t, o: _Explanation(o))
    p = _Outline()
    with open(page, encoding="utf-8") as f:
        p.feed(f.read())
    assert p.stack == []
    fs = load_findings(campaign_dir)
    for sec in ("summary", "throughput", "timeline", "coverage"):
        assert sec in p.sections
    assert sum(1 for s in p.sections if s.startswith("f-")) == len(fs)
    assert p.finding_svgs == len(fs)           # one explanation graph per finding
    assert p.svgs == len(fs) + 1                # + the timeline
    litmus_pres = [t for c, t in p.pres if c == "litmus"]
    assert {litmus.canonical_hash(litmus.parse(t)) for t in litmus_pres} == {r["id"] for r in fs}
    expl = [t for c, t in p.pres if c == "explanation"]
    assert len(expl) == len(fs) and all("fails axiom sc" in t for t in expl)


def test_markdown_report_has_test_histogram_and_explanation(campaign_dir):
    _, md = build_report(campaign_dir, explainer=lambda t, o: _Explanation(o))
    text = open(md, encoding="utf-8").read()
    for rec in load_findings(campaign_dir):
        assert rec["test"].strip() in text
        assert f"findings/{rec['id']}/report.md" in text
    assert "| outcome | count | model |" in text and "**FORBIDDEN**" in text
    assert "fails axiom sc" in text
    assert "## Throughput" in text and "## Coverage" in text


def test_report_without_explain_says_why(campaign_dir):
    def broken(test, outcome):
        raise RuntimeError("no witness")
    _, md = build_report(campaign_dir, explainer=broken)
    assert "explanation unavailable: RuntimeError: no witness" in open(md).read()


def test_report_cli_rejects_a_non_campaign(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a campaign directory" in err and len(err.splitlines()) == 1


def test_timeline_marks_findings(campaign_dir):
    """Exactly one mark per distinct finding (not one per program that hit it), a legend that
    counts them, and both axes labelled (issue 33)."""
    build_report(campaign_dir, explainer=None)
    page = open(os.path.join(campaign_dir, "report.html"), encoding="utf-8").read()
    fs = load_findings(campaign_dir)
    programs_with_findings = sum(
        1 for line in open(os.path.join(campaign_dir, "journal.jsonl"), encoding="utf-8")
        if json.loads(line).get("status") == "finding")
    timeline = page[page.index('<section id="timeline">'):]
    timeline = timeline[:timeline.index("</section>")]
    assert timeline.count('class="finding" cx=') == len(fs) >= 1
    assert programs_with_findings >= len(fs)
    assert f"finding, when first found ({len(fs)})" in timeline
    assert "campaign time (s)" in timeline and "programs run" in timeline
    for r in fs:
        assert f"finding {r['id']}, first found at {r['first']['t']:.2f} s" in timeline


def test_the_why_block_wraps_and_inline_code_renders():
    """The explanation is wrapped text (no clipping on the right), and the baseline line's
    `backend` is code, not literal backticks (issue 33)."""
    from fuzz.report import _CSS, inline_code
    assert re.search(r"pre\.explanation\{[^}]*white-space:\s*pre-wrap", _CSS)
    assert inline_code("baseline `sim` <ok>") == "baseline <code>sim</code> &lt;ok&gt;"
    assert inline_code("one ` only") == "one ` only"


def test_report_renders_for_a_real_simulator_finding(tmp_path):
    """A real finding (sim:cas-spurious against the AMDGPU oracle) with oracle.explain's graph."""
    out = str(tmp_path / "real")
    cfg = Config(backend="sim:cas-spurious", baseline="sim", out=out, seed=0, programs=400,
                 iterations=300, max_findings=1, minimize_seconds=math.inf)
    Campaign(cfg).run()
    fs = load_findings(out)
    assert fs, "sim:cas-spurious not found in 400 programs"
    page, md = build_report(out)
    p = _Outline()
    with open(page, encoding="utf-8") as f:
        p.feed(f.read())
    assert p.stack == []
    assert {"summary", "throughput", "timeline", "coverage"} <= set(p.sections)
    assert p.finding_svgs >= 1                     # oracle.explain's execution graph
    expl = [t for c, t in p.pres if c == "explanation"]
    assert expl and all("FORBIDDEN" in t or "forbid" in t.lower() for t in expl)
    text = open(md, encoding="utf-8").read()
    for rec in fs:
        assert rec["test"].strip() in text
        assert rec["mutant"] == "cas-spurious" and "mutant `cas-spurious`" in text
    assert "**FORBIDDEN**" in text and "| outcome | count | model |" in text
    # the report's summary and the throughput table count the same findings
    assert text.count(f"{len(fs)} finding(s) in ") == 1
    assert f"| `sim:cas-spurious` | " in text
    row = next(line for line in text.splitlines() if "| `sim:cas-spurious` |" in line)
    assert row.split("|")[4].strip() == str(len(fs))
    assert "&#x27;" not in text and "&quot;" not in text and "&lt;" not in text


def test_finding_reproduces_from_its_record_alone(tmp_path, monkeypatch, capsys):
    """The record's command line, run in the finding's directory, gives the histogram the record
    shows (the simulator is deterministic per seed); the record names the tool and the backend's
    parameters."""
    import json
    import importlib.metadata
    out = tmp_path / "real"
    cfg = Config(backend="sim:cas-spurious", baseline="sim", out=str(out), seed=0, programs=400,
                 iterations=300, max_findings=1, minimize_seconds=math.inf)
    Campaign(cfg).run()
    rec = load_findings(str(out))[0]
    assert rec["tool"]["version"] == importlib.metadata.version("scopefuzz")
    assert rec["params"]["mutant"] == "cas-spurious" and rec["params"]["seed"] == \
        rec["reproduce"]["seed"]
    cmd = rec["reproduce"]["command"].split()
    assert cmd[:2] == ["scopefuzz", "run"] and cmd[-1] == "minimized.litmus"
    monkeypatch.chdir(out / "findings" / rec["id"])
    capsys.readouterr()
    assert main(cmd[1:] + ["--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    key = lambda h: sorted((json.dumps(r["outcome"], sort_keys=True), r["count"], r["allowed"])
                           for r in h)
    assert key(got["histogram"]) == key(rec["histogram"])
    md = (out / "findings" / rec["id"] / "report.md").read_text()
    assert rec["reproduce"]["command"] in md and "## Reproduce" in md


def test_report_and_resume_survive_hand_edited_journal_lines(tmp_path):
    """Lines whose fields have the wrong JSON types (a hand-edited or foreign journal) are
    counted as programs and otherwise left out; neither ``report`` nor ``--resume`` crashes."""
    import dataclasses
    import json

    from fuzz.layout import META, journals
    from fuzz.report import load_campaign

    out = str(tmp_path / "c")
    cfg = Config(backend="fake", out=out, seed=1, programs=4, iterations=50,
                 features=parse_features("atomics,plain"), minimize_seconds=math.inf)
    Campaign(cfg, backend=StaleReadBackend(0.0), checker=sc_check).run()
    with open(os.path.join(out, META), encoding="utf-8") as f:
        meta = json.load(f)
    before = sum(p.n for p in load_campaign(out)["parts"].values())
    _, jpath = next(journals(out, meta))
    odd = [{"status": ["ok"], "executions": "many", "t": "late"},
           {"status": "oracle-error", "error": {"why": 1}, "budget": [1]},
           {"status": "ok", "kinds": [[1]], "pairs": [{"a": 1}]},
           {"status": "ok", "kinds": 5, "pairs": None}]
    with open(jpath, "a", encoding="utf-8") as f:
        for k, e in enumerate(odd):
            f.write(json.dumps(dict(e, type="program", i=100 + k)) + "\n")
    agg = load_campaign(out)
    assert sum(p.n for p in agg["parts"].values()) == before + len(odd)
    assert agg["errors"][json.dumps({"why": 1})] == 1
    page, md = build_report(out, explainer=None)
    assert os.path.getsize(page) > 0 and "## Coverage" in open(md, encoding="utf-8").read()
    resumed = Campaign(dataclasses.replace(cfg, resume=True, programs=4),
                       backend=StaleReadBackend(0.0), checker=sc_check)
    resumed.run()
    assert resumed.stats.programs == before + len(odd)


class _MarkedExplanation(_Explanation):
    """An explanation whose drawing defines an arrow marker, as oracle.explain's do."""

    def svg(self):
        return ('<svg xmlns="http://www.w3.org/2000/svg"><defs><marker id="arr"><path d="M0,0"/>'
                '</marker></defs><line x1="0" y1="0" x2="9" y2="9" marker-end="url(#arr)"/>'
                '<use href="#arr"/><line marker-end="url(#elsewhere)"/></svg>')


def test_inlined_drawings_keep_distinct_ids(campaign_dir):
    """Several findings' drawings in one report.html: every id is defined once, and every
    drawing's marker reference points at its own definition (not the first finding's)."""
    import re
    page, _ = build_report(campaign_dir, explainer=lambda t, o: _MarkedExplanation(o))
    text = open(page, encoding="utf-8").read()
    fs = load_findings(campaign_dir)
    assert len(fs) >= 2
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    for r in fs:
        sec = text[text.index(f'id="f-{r["id"]}"'):]
        sec = sec[:sec.index("</section>")]
        own = set(re.findall(r'\bid="([^"]+)"', sec))
        refs = re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', sec)
        names = {a or b for a, b in refs}
        assert "elsewhere" in names               # a reference to no id of the drawing: kept
        assert names - {"elsewhere"} <= own and len(names - {"elsewhere"}) == 1

"""The strict-weakening campaign on the worker machinery (``fuzz --against ptx --jobs N``), its
counterexamples as typed findings, ``--resume`` after a kill, and ``scopefuzz report`` of it.

Counterexamples come from a planted flaw (tests/weakening_planted.py: the tileir model plus SC
over token order, SB at every third program): the default Tile IR model has none on the programs
a test can afford. Needs the ``ptx`` model unit, as tests/test_tileir_weakening.py.
"""

from __future__ import annotations

import json
import os

import pytest

from oracle import registry

pytestmark = pytest.mark.skipif(
    not os.path.isdir(os.path.join(os.path.dirname(registry.__file__), "models", "ptx")),
    reason="needs the ptx model unit (oracle/models/ptx) to compare against")

#: fields of a journal line that are timing or name the process layout (the shard), not what the
#: program is or found
VARIES = ("t", "ts", "seconds", "campaign")
N = 8
SEED = 3


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """The planted unit registered in this process (restored afterwards)."""
    from oracle.lang import load_model
    import weakening_planted as wp
    registry.names()
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    name = wp.register_planted(str(tmp_path / "planted-model"))
    yield name
    load_model.cache_clear()


def _config(out, model, n=N, resume=False):
    from fuzz.weakening_campaign import weakening_config
    return weakening_config(str(out), model, seed=SEED, seconds=None, programs=n,
                            minimize_seconds=120, resume=resume)


def _one(out, model, n=N, resume=False):
    import weakening_planted as wp
    return wp.PlantedWeakeningCampaign(_config(out, model, n, resume)).run()


def _two(out, model, n=N, resume=False):
    import weakening_planted as wp
    return wp.PlantedParallelCampaign(_config(out, model, n, resume), 2,
                                      log=lambda line: None).run()


def _programs(out) -> dict[int, dict]:
    """Every program line of the campaign's journals (one process or shards), by number, without
    the fields in VARIES."""
    from fuzz.journal import read_journal
    from fuzz.layout import journals, read_meta
    out_lines = {}
    for _, path in journals(str(out), read_meta(str(out))):
        for e in read_journal(path):
            if e.get("type") == "program":
                assert e["i"] not in out_lines, f"program {e['i']} journaled twice"
                out_lines[e["i"]] = {k: v for k, v in e.items() if k not in VARIES}
    return out_lines


def _findings(out) -> dict[str, dict]:
    from fuzz.findings import load_findings
    return {r["id"]: r for r in load_findings(str(out), on_bad=None)}


def _figures(out) -> dict:
    res = json.loads((out / "weakening.json").read_text())
    for k in ("seconds", "programs_per_s", "race_free_per_s", "found"):
        res.pop(k)
    return res


def _cx(out) -> dict[str, str]:
    """``counterexamples/NNN/tileir.litmus`` of each directory, without its name line (the
    program it was minimized from)."""
    d = out / "counterexamples"
    return {n: "\n".join((d / n / "tileir.litmus").read_text().splitlines()[1:])
            for n in sorted(os.listdir(d))}


def test_jobs_2_finds_what_jobs_1_finds(planted, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    st1 = _one(one, planted)
    st2 = _two(two, planted)
    p1, p2 = _programs(one), _programs(two)
    assert sorted(p1) == list(range(N))
    assert [p1[i]["status"] for i in (1, 4, 7)] == ["counterexample"] * 3
    # which of the SB programs publishes (and names the directory) is the order the shards reach
    # them in; everything else of every line is the same
    named = [i for i, e in p2.items() if "counterexample" in e]
    assert len(named) == 1 and named[0] in (1, 4, 7)
    for e in list(p1.values()) + list(p2.values()):
        e.pop("counterexample", None)
    assert p1 == p2
    f1, f2 = _findings(one), _findings(two)
    assert len(f1) == 1 and sorted(f1) == sorted(f2)
    for fid in f1:
        assert sorted(s["index"] for s in f1[fid]["sources"]) == [1, 4, 7]
        assert sorted(s["index"] for s in f2[fid]["sources"]) == [1, 4, 7]
        assert f1[fid]["test"].splitlines()[1:] == f2[fid]["test"].splitlines()[1:]
    assert _cx(one) == _cx(two) and list(_cx(one)) == ["001"]
    assert _figures(one) == _figures(two)
    assert (st1.programs, st1.race_free, st1.racy, st1.counterexamples) == \
        (st2.programs, st2.race_free, st2.racy, st2.counterexamples) == \
        (N, st1.race_free, N - st1.race_free, 1)
    assert [f["dir"] for f in json.loads((two / "weakening.json").read_text())["found"]] == \
        [str(two / "counterexamples" / "001")]


def test_counterexample_is_a_typed_finding(planted, tmp_path):
    from litmus import parse, parse_file
    from fuzz.finding import read_finding
    from fuzz.weakening import weakening
    out = tmp_path / "w"
    _one(out, planted)
    (fid,) = _findings(out)
    d = out / "findings" / fid
    assert sorted(os.listdir(d)) == ["explanation.txt", "finding.json", "minimized.litmus",
                                     "original.litmus", "ptx.litmus", "report.md"]
    rec = read_finding(str(d / "finding.json")).to_dict()
    assert rec["kind"] == "weakening" and rec["model"] == planted and rec["against"] == "ptx"
    assert rec["counterexample"] == "001" and rec["first"]["index"] == 1
    # the same files as counterexamples/001/, and the key the journal names
    cx = out / "counterexamples" / "001"
    assert (d / "minimized.litmus").read_text() == (cx / "tileir.litmus").read_text()
    assert (d / "ptx.litmus").read_text() == (cx / "ptx.litmus").read_text()
    assert (d / "explanation.txt").read_text() == (cx / "explanation.txt").read_text()
    keys = {e["key"] for e in _programs(out).values() if e["status"] == "counterexample"}
    assert keys == {fid}
    small = parse_file(str(d / "minimized.litmus"))
    assert weakening(small, planted).status == "counterexample"
    assert parse((d / "ptx.litmus").read_text()).dialect == "PTX"
    # SB under SC: r0 = r1 = 0 is the PTX outcome the planted model forbids
    assert {"P0:r0": 0, "P1:r1": 0, "x": 1, "y": 1} in [f["outcome"] for f in rec["forbidden"]]
    assert "fails 'sc'" in rec["bucket"]["signature"]


def test_report_renders_a_weakening_campaign(planted, tmp_path):
    from fuzz.cli import main
    out = tmp_path / "w"
    _two(out, planted)
    assert main(["report", str(out)]) == 0
    (fid,) = _findings(out)
    rec = _findings(out)[fid]
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    assert md.startswith(f"# scopefuzz campaign report: {out}\n\n1 counterexample(s) in 1 "
                         f"bucket(s); {N} programs drawn, ")
    for text in (md, page):
        assert "Tile IR program" in text and "Lowered PTX program" in text
        assert "is FORBIDDEN by model tileir-sc" in text and "is ALLOWED by model ptx" in text
        assert "Strict-weakening figures" in text
        assert "executed on the backend" not in text and "Coverage" not in text
    ptx_line = next(line for line in rec["ptx"].splitlines() if "st." in line)
    assert ptx_line.strip() in md
    assert "P0:r0=0; P1:r1=0; x=1; y=1;" in md and "P0:r0=0; P1:r1=0; x=1; y=1;" in page
    assert f"[{fid}](findings/{fid}/report.md)" in md and f'id="f-{fid}"' in page


def test_report_computes_no_explanation_for_a_counterexample(planted, tmp_path):
    """A strict-weakening counterexample carries both models' explanations: the report renders
    those and asks the campaign's explainer for none (it used to compute one and drop it)."""
    from fuzz.report import build_report
    out = tmp_path / "w"
    _two(out, planted)
    asked = []

    def explainer(test, outcome):
        asked.append(test.name)
        raise AssertionError("not asked for a weakening counterexample")
    page, md = build_report(str(out), explainer=explainer)
    assert asked == []
    assert "is FORBIDDEN by model tileir-sc" in open(md).read()


def test_resume_after_a_kill_loses_and_doubles_nothing(planted, tmp_path, monkeypatch):
    """A kill between a counterexample's finding and its program's journal line (and before its
    counterexamples/ directory): the resumed campaign ends as one run of all its programs."""
    import weakening_planted as wp
    from fuzz import weakening_campaign as wc
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    _one(whole, planted)

    real = wc.write_counterexample

    class Killed(BaseException):
        pass

    def killed(root, record):
        raise Killed()                  # after publish(), before the directory and the line
    monkeypatch.setattr(wc, "write_counterexample", killed)
    with pytest.raises(Killed):
        wp.PlantedWeakeningCampaign(_config(cut, planted)).run()
    monkeypatch.setattr(wc, "write_counterexample", real)
    assert sorted(_programs(cut)) == [0]             # program 1 was cut off
    assert os.listdir(cut / "counterexamples") == []
    assert list(_findings(cut)) == list(_findings(whole))
    _one(cut, planted, resume=True)
    assert _programs(cut) == _programs(whole)
    assert _cx(cut) == _cx(whole)
    assert _figures(cut) == _figures(whole)
    for fid, rec in _findings(whole).items():
        assert [s["index"] for s in _findings(cut)[fid]["sources"]] == \
            [s["index"] for s in rec["sources"]] == [1, 4, 7]
    found = json.loads((cut / "weakening.json").read_text())["found"]
    assert found == [{"dir": str(cut / "counterexamples" / "001"), "from": "sb-1"}]


def test_parallel_resume_continues_every_shard(planted, tmp_path):
    whole, half = tmp_path / "whole", tmp_path / "half"
    _two(whole, planted)
    _two(half, planted, n=N // 2)
    _two(half, planted, resume=True)
    a, b = _programs(whole), _programs(half)
    for e in list(a.values()) + list(b.values()):
        e.pop("counterexample", None)
    assert a == b and sorted(a) == list(range(N))
    assert _cx(whole) == _cx(half)
    assert _figures(whole) == _figures(half)
    assert [sorted(s["index"] for s in r["sources"]) for r in _findings(half).values()] == \
        [[1, 4, 7]]


def test_cli_jobs_2_on_the_real_model(tmp_path):
    """``fuzz --against ptx --jobs 2`` on the default model: the programs and their statuses of
    ``--jobs 1``; ``--report`` writes the report; ``--resume`` keeps the worker count."""
    from fuzz.cli import main
    one, two = tmp_path / "one", tmp_path / "two"
    args = ["fuzz", "--against", "ptx", "--programs", "12", "--seed", "5", "--quiet"]
    assert main(args + ["--out", str(one)]) == 0
    assert main(args + ["--out", str(two), "--jobs", "2", "--report"]) == 0
    assert _programs(one) == _programs(two)
    judged = sum(e["status"] == "holds" for e in _programs(two).values())
    md = (two / "report.md").read_text()
    assert f"0 counterexample(s) in 0 bucket(s); 12 programs drawn, {judged} race-free" in md
    assert f"No counterexample: on {judged} race-free programs" in md
    assert sorted(n for n in os.listdir(two) if not n.startswith(".")) == [
        "campaign.json", "counterexamples", "findings", "report.html", "report.md",
        "shard-1of2", "shard-2of2", "weakening.json"]
    assert _figures(one) == _figures(two)
    assert main(args + ["--out", str(two), "--jobs", "1", "--resume"]) == 2
    assert main(args + ["--out", str(two), "--resume", "--programs", "14"]) == 0
    assert sorted(_programs(two)) == list(range(14))


def test_resume_of_a_campaign_written_before_findings(planted, tmp_path):
    """A campaign an earlier scopefuzz wrote (``counterexamples/NNN/``, journal lines without
    ``finding``, no findings/): resumed, a repeat of its counterexample is not recorded again."""
    import shutil
    out = tmp_path / "old"
    _one(out, planted, n=3)                          # program 1 is SB
    shutil.rmtree(out / "findings")
    path = out / "journal.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for e in lines:
        e.pop("finding", None)
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    _one(out, planted, n=5, resume=True)             # program 4 is SB again
    p = _programs(out)
    assert p[4]["status"] == "counterexample" and p[4]["key"] == p[1]["key"]
    assert "finding" not in p[4] and "counterexample" not in p[4]
    assert os.listdir(out / "counterexamples") == ["001"]
    assert _findings(out) == {}
    assert json.loads((out / "weakening.json").read_text())["counterexamples"] == 1

"""Findings grouped by cause (fuzz/buckets.py, hw/isa/culprit.py) and known bugs (fuzz/known.py).

The tests below are forms of one planted bug (the simulator mutant ``acq-no-inv``: an acquire
that does not invalidate the L1) written by hand: message passing through ``ld.acq``,
``rmw.xchg.acq`` and a fence after a barrier, mirrored threads, renamed locations. They must
share one bucket; a different cause (a coherence violation, a missing release) must not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import litmus
from fuzz.buckets import bucket_of, flavour, group, signature
from fuzz.finding import Finding
from fuzz.known import KnownFileError, default_known_path, load_known, mark_known

MP_LD = """AMDGPU a
{ x = 0; y = 0; }
 P0                        | P1                       ;
 ld.atom.acq.cluster r0, x | st y, 1                  ;
 ld r1, y                  | st.atom.rel.cluster x, 1 ;
exists (P0:r0 == 1 /\\ P0:r1 == 0)
"""
# the same bug through an rmw, threads mirrored, locations renamed
MP_RMW = """AMDGPU b
{ a = 0; b = 0; }
 P0                       | P1                            ;
 st a, 7                  | rmw.xchg.acq.cluster r0, b, 0 ;
 st.atom.rel.cluster b, 1 | ld r1, a                      ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
# through release/acquire fences around a barrier
BAR = """AMDGPU c
{ x = 0; }
 P0                | P1                ;
 st x, 1           | bar.signal -3     ;
 fence.rel.cluster | bar.wait -3       ;
 bar.signal -3     | fence.acq.cluster ;
 bar.wait -3       | ld r0, x          ;
exists (P1:r0 == 0)
"""
# another cause: a coherence violation (no acquire at all)
CORR = """AMDGPU d
{ x = 0; }
 P0                   | P1                   ;
 st.atom.agent x, 1   | ld.atom.agent r0, x  ;
                      | ld.atom.agent r1, x  ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
# the same shape at agent scope: another bucket (an agent acquire is another operation)
MP_AGENT = MP_LD.replace("cluster", "agent")


def _record(text: str, outcome: dict) -> dict:
    t = litmus.parse(text)
    return {"id": t.name, "test": text, "forbidden": [{"outcome": outcome}], "sources": [{}]}


def _bucket(text, outcome):
    return bucket_of(_record(text, outcome))


def test_forms_of_one_bug_share_a_bucket():
    a = _bucket(MP_LD, {"P0:r0": 1, "P0:r1": 0})
    b = _bucket(MP_RMW, {"P1:r0": 1, "P1:r1": 0})
    c = _bucket(BAR, {"P1:r0": 0})
    assert a["check"] == "may-see"
    assert a["id"] == b["id"] == c["id"], (a, b, c)
    # the stale read is named: P0's `ld r1, y` (thread 0, instruction 1)
    assert a["culprits"] == [[0, 1]]
    assert "acquire.cluster" in a["signature"] and "plain read" in a["signature"]


def test_other_causes_get_other_buckets():
    a = _bucket(MP_LD, {"P0:r0": 1, "P0:r1": 0})
    d = _bucket(CORR, {"P1:r0": 1, "P1:r1": 0})
    assert d["id"] != a["id"]
    assert "acquire" not in d["signature"]
    e = _bucket(MP_AGENT, {"P0:r0": 1, "P0:r1": 0})
    assert e["id"] != a["id"] and "acquire.agent" in e["signature"]


def test_flavours_fold_spelling():
    ins = [litmus.parse(f"AMDGPU t\n{{ x = 0; }}\n P0 ;\n {s} ;\nexists (x == 0)\n").threads[0].code[0]
           for s in ("ld.atom.acq.agent r0, x", "rmw.xchg.acq.agent r0, x, 1",
                     "cas.acq.agent r0, x, 0, 1", "fence.acq.agent")]
    assert {flavour(i) for i in ins} == {"acquire.agent"}


def test_group_counts_programs_and_keeps_unbucketed_findings_apart():
    recs = [Finding("f1", "", [], [{}, {}], {"bucket": {"id": "B", "signature": "s",
                                                        "kind": "model"}}),
            Finding("f2", "", [], [{}], {"bucket": {"id": "B", "signature": "s", "kind": "model"}}),
            Finding("f3", "", [], [{}]),
            Finding("f4", "", [], [{"counted": True}], {"bucket": "damaged"})]
    gs = group(recs)
    assert [(g["id"], g["count"], len(g["findings"])) for g in gs] == \
        [("B", 3, 2), ("f3", 1, 1), ("f4", 1, 1)]
    assert gs[2]["signature"] == "finding f4" and gs[2]["counted"] == 1


def test_known_file_marks_buckets(tmp_path):
    p = tmp_path / "known.json"
    p.write_text(json.dumps({"version": 1, "bugs": [
        {"name": "bug A", "match": "scalar-load s_load", "links": ["https://example.org/1"]}]}))
    known = load_known(str(p))
    gs = mark_known([{"id": "1", "signature": "GFX9: scalar-load s_load_dword"},
                     {"id": "2", "signature": "may-see: plain read after acquire.wg"}], known)
    assert gs[0]["known"]["name"] == "bug A" and gs[1]["known"] is None


def test_known_file_errors_name_the_place(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"bugs": [\n  {"name": "x",}\n]}')
    with pytest.raises(KnownFileError, match=r"bad.json:2:\d+: "):
        load_known(str(p))
    p.write_text('{"bugs": [{"name": "x", "match": "("}]}')
    with pytest.raises(KnownFileError, match="bad match regex"):
        load_known(str(p))


def test_maintained_known_file_names_both_findings():
    known = load_known(default_known_path())
    by = {b["name"].split(":")[0]: b for b in known}
    assert "https://github.com/llvm/llvm-project/pull/219991" in by["finding 1"]["links"]
    assert "https://github.com/llvm/llvm-project/pull/161638" in by["finding 2"]["links"]
    assert by["finding 1"]["rx"].search("GFX9: scalar-load s_load_dword")
    assert by["finding 2"]["rx"].search("GFX9: uncumulative-release:no-vmcnt (workgroup release)")
    assert not by["finding 2"]["rx"].search("GFX12: uncumulative-release:no-storecnt "
                                            "(workgroup release)")
    assert not by["finding 2"]["rx"].search("GFX9: missing-wait:vmcnt before global_store_dword")


def test_planted_mutant_campaign_reports_one_bucket(tmp_path):
    """sim:acq-no-inv, seed 1: 4 findings (4 forms, measured) in one bucket; the report says so
    and lists the bucket once, the forms under it."""
    out = tmp_path / "camp"
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "fuzz.cli", "fuzz", "--backend", "sim:acq-no-inv",
                        "--seed", "1", "--programs", "400", "--jobs", "1", "--quiet",
                        "--minimize-seconds", "10", "--out", str(out), "--report"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 1, r.stderr
    fs = [json.load(open(out / "findings" / d / "finding.json"))
          for d in os.listdir(out / "findings") if not d.startswith(".")]
    assert len(fs) >= 2
    assert len({f["bucket"]["id"] for f in fs}) == 1
    assert f"{len(fs)} finding(s) in 1 bucket(s)" in r.stderr
    md = (out / "report.md").read_text()
    assert "### New bugs (1 bucket(s))" in md
    assert md.count(f"({len(fs)} form(s))") == 1


BAR_WG = """AMDGPU barrier-wg
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 st x, 1         | barrier         ;
 fence.rel.wg    | fence.acq.wg    ;
 barrier         | ld r0, x        ;
exists (P1:r0 == 0)
"""


def _isa(spec):
    from hw.isa import toolchain
    why = toolchain.tools_available()
    if why:
        pytest.skip(f"isa backend: {why}")
    from hw.isa.backend import make_backend
    return make_backend(spec)


@pytest.mark.parametrize("spec,family", [("gfx942", "GFX9"), ("gfx1200", "GFX12")])
def test_isa_bucket_names_the_scalar_load(spec, family):
    """Finding 1 (docs/isa.md): the plain load after barrier + acquire fence is compiled to
    s_load (notes/amdgpu-isa-clang22.md); the bucket names it and the family, and the maintained
    known-bugs file knows it."""
    b = bucket_of(_record(BAR_WG, {"P1:r0": 0}), _isa(spec))
    assert b["kind"] == "isa" and b["family"] == family
    assert b["signature"].startswith(f"{family}: scalar-load s_load"), b
    assert "model_signature" in b
    known = load_known(default_known_path())
    assert mark_known([dict(b)], known)[0]["known"]["name"].startswith("finding 1")


def test_isa_bucket_without_scalar_loads_is_not_finding_1():
    b = bucket_of(_record(BAR_WG, {"P1:r0": 0}), _isa("gfx942,noscalar"))
    assert "scalar-load" not in b["signature"]


def _camp_with(camp, findings, seed=1):
    """A real (small) sim campaign directory, with hand-made findings added."""
    import subprocess as sp
    r = sp.run([sys.executable, "-m", "fuzz.cli", "fuzz", "--backend", "sim", "--programs", "3",
                "--seed", str(seed), "--jobs", "1", "--quiet", "--out", str(camp)],
               capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    for fid, text, outcome in findings:
        rec = _record(text, outcome)
        rec.update(id=fid, backend="sim", original=text, bucket=bucket_of(rec),
                   histogram=[{"outcome": outcome, "count": 1, "allowed": False}],
                   minimize={"size_after": 4}, first={"t": 0.0})
        d = camp / "findings" / fid
        d.mkdir(parents=True)
        (d / "finding.json").write_text(json.dumps(rec))


def test_merge_counts_buckets(tmp_path):
    import subprocess as sp
    _camp_with(tmp_path / "a", [("f1", MP_LD, {"P0:r0": 1, "P0:r1": 0}),
                                ("f2", CORR, {"P1:r0": 1, "P1:r1": 0})])
    _camp_with(tmp_path / "b", [("f3", MP_RMW, {"P1:r0": 1, "P1:r1": 0})], seed=2)
    r = sp.run([sys.executable, "-m", "fuzz.cli", "merge", str(tmp_path / "m"),
                str(tmp_path / "a"), str(tmp_path / "b")], capture_output=True, text=True,
               timeout=600)
    assert r.returncode == 0, r.stderr
    assert "3 finding(s) in 2 bucket(s)" in r.stdout
    r = sp.run([sys.executable, "-m", "fuzz.cli", "report", str(tmp_path / "m")],
               capture_output=True, text=True, timeout=600)
    md = (tmp_path / "m" / "report.md").read_text()
    assert "### New bugs (2 bucket(s))" in md and "(2 form(s))" in md


def test_report_separates_known_from_new_buckets(tmp_path):
    """A campaign directory with two hand-made findings in two buckets; a known-bugs file
    matching one of them."""
    import subprocess as sp
    camp = tmp_path / "camp"
    _camp_with(camp, [("f1", MP_LD, {"P0:r0": 1, "P0:r1": 0}),
                      ("f2", CORR, {"P1:r0": 1, "P1:r1": 0})])
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"bugs": [{"name": "planted acq-no-inv",
                                           "match": "after acquire\\.cluster",
                                           "links": ["https://example.org/acq"]}]}))
    r = sp.run([sys.executable, "-m", "fuzz.cli", "report", str(camp), "--known", str(known)],
               capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    md = (camp / "report.md").read_text()
    assert "2 finding(s) in 2 bucket(s) (1 new, 1 known)" in md
    new, known_part = md.split("### Known bugs (1 bucket(s))")
    assert "### New bugs (1 bucket(s))" in new
    assert "planted acq-no-inv" in known_part and "https://example.org/acq" in known_part
    assert "[f1]" in known_part.split("## Finding")[0] and "[f1]" not in new
    assert "[f2]" in new
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = sp.run([sys.executable, "-m", "fuzz.cli", "report", str(camp), "--known", str(bad)],
               capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "bad.json:1:2:" in r.stderr

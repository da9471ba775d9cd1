"""Week-long campaigns (issue 17 item 15): the journal rotates into segments, ``report``, ``--resume``
and ``merge`` stream it with bounded memory and give the same answers as on one file.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hw
from fakes import StaleReadBackend, sc_check
from fuzz import campaign as campaign_mod
from fuzz import journal as journal_mod
from fuzz import report as report_mod
from fuzz.cli import main
from fuzz.coverage import ComboTally
from fuzz.journal import (DoneSet, Journal, decode_line, journal_paths, journal_segments,
                          read_journal, segment_path)
from fuzz.report import build_report, load_campaign


def _entry(i: int, status: str = "ok") -> dict:
    return {"type": "program", "i": i, "status": status, "kinds": ["ld", "st"], "pairs": [],
            "executions": 10, "t": i * 0.01}


def test_journal_rotates_and_reads_back_in_order(tmp_path):
    path = str(tmp_path / "journal.jsonl")
    j = Journal(path, segment_bytes=500)
    for i in range(100):
        j.append(_entry(i))
    j.close()
    segs = journal_segments(path)
    assert len(segs) > 5 and segs[-1] == path and segs[0] == segment_path(path, 1)
    assert all(os.path.getsize(s) < 500 + 200 for s in segs)
    assert [e["i"] for e in read_journal(path)] == list(range(100))
    assert journal_paths(str(tmp_path)) == [path]


def test_a_kill_between_seal_and_new_file_loses_nothing(tmp_path):
    path = str(tmp_path / "journal.jsonl")
    j = Journal(path, segment_bytes=10**9)
    for i in range(5):
        j.append(_entry(i))
    j.close()
    os.rename(path, segment_path(path, 1))          # sealed, and killed before reopening
    assert journal_paths(str(tmp_path)) == [path]    # the journal is still found
    j = Journal(path, segment_bytes=10**9)
    j.append(_entry(5))
    j.close()
    assert [e["i"] for e in read_journal(path)] == list(range(6))


def test_several_journals_in_one_directory(tmp_path):
    for name in ("journal.jsonl", "journal-2of2.jsonl"):
        j = Journal(str(tmp_path / name), segment_bytes=300)
        for i in range(10):
            j.append(_entry(i))
        j.close()
    paths = journal_paths(str(tmp_path))
    assert [os.path.basename(p) for p in paths] == ["journal.jsonl", "journal-2of2.jsonl"]
    assert all(len(list(read_journal(p))) == 10 for p in paths)


@given(st.integers(0, 3), st.integers(1, 4), st.lists(st.integers(0, 60), max_size=80))
def test_done_set_is_a_set(first, step, adds):
    done, ref = DoneSet(first, step), set()
    for i in adds:
        i = first + i * step if i % 5 else i     # mostly shard numbers, some strays
        done.add(i)
        ref.add(i)
    assert len(done) == len(ref)
    for i in range(0, 300):
        assert (i in done) == (i in ref)


def test_done_set_stays_small_for_an_in_order_campaign():
    done = DoneSet(2, 4)
    for i in range(2, 400_002, 4):
        done.add(i)
    assert len(done) == 100_000 and not done.extra and 399_998 in done and 399_999 not in done


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                   max_size=4), max_leaves=12)


def _json_or_none(line: str):
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


@given(_json_values, st.integers(0, 40), st.sampled_from(["", " ", "x", "}", ",1", "\t"]),
       st.sampled_from(["", " ", "\ufeff"]))
def test_the_fast_line_decoder_reads_what_json_loads_reads(value, cut, tail, head):
    """``decode_line`` (the C scanner called directly) gives ``json.loads``' value, or None where
    ``json.loads`` fails, on whole lines, lines with stray text around them, and cut lines."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    for line in (text, head + text + tail, text[:cut], text[cut:]):
        line += "\n"
        assert decode_line(line) == _json_or_none(line)


@given(st.lists(st.tuples(st.lists(st.sampled_from(["ld", "st", "rmw", "fence"]), max_size=4),
                          st.lists(st.sampled_from(["wg/agent", "wave/wg"]), max_size=2)),
                max_size=60), st.integers(1, 5))
def test_combo_tally_counts_like_one_update_per_kind(programs, bound):
    """Counting whole combinations (spread at flush, and whenever more than COMBOS are held)
    gives the per-kind counts of a plain Counter."""
    kinds, pairs = Counter(), Counter()
    tally = ComboTally(kinds, pairs, None)
    tally.COMBOS = bound
    for ks, ps in programs:
        tally.add(ks, ps)
    tally.flush()
    assert kinds == Counter(k for ks, _ in programs for k in ks)
    assert pairs == Counter(p for _, ps in programs for p in ps)


def test_combo_tally_hands_what_is_not_a_list_to_the_fallback():
    seen = []
    tally = ComboTally({}, {}, lambda k, p: seen.append((k, p)))
    tally.add("ld", ["wg/agent"])
    tally.add(["ld"], None)
    assert seen == [("ld", ["wg/agent"]), (["ld"], None)] and not tally.combos


@pytest.mark.parametrize("cut", [0, 10, 200_000])
def test_reopening_cuts_an_unfinished_last_line_of_any_length(tmp_path, cut):
    """The repair reads the active file backwards block by block: a cut line longer than a block
    (200,000 bytes) is removed as exactly as a short one, and a file with no newline at all
    is emptied."""
    path = tmp_path / "journal.jsonl"
    j = Journal(str(path))
    for i in range(3 if cut else 0):
        j.append(_entry(i))
    j.close()
    whole = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b'{"type":"program","test":"' + b"x" * max(cut, 5))     # killed mid-write
    Journal(str(path)).close()
    assert path.read_bytes() == whole
    j = Journal(str(path))
    j.append(_entry(3))
    j.close()
    assert [e["i"] for e in read_journal(str(path))] == ([0, 1, 2, 3] if cut else [3])


@pytest.fixture
def fake_world(monkeypatch):
    # "fake" is a backend family as a new one would be (one hw.FAMILIES line): the command reads
    # the name through hw.parse_backend_spec before it opens the backend
    monkeypatch.setitem(hw.FAMILIES, "fake", "fakes:StaleReadBackend")
    monkeypatch.setattr(hw, "get_backend", lambda name: StaleReadBackend(0.3))
    monkeypatch.setattr(campaign_mod, "default_checker", lambda: sc_check)
    return monkeypatch


def _fuzz(out, programs, *extra):
    return main(["fuzz", "--jobs", "1", "--backend", "fake", "--programs", str(programs), "--features",
                 "atomics,plain,fences,rmw", "--iterations", "50", "--quiet", "--out", str(out),
                 *extra])


def test_segmented_campaign_resumes_and_reports_like_one_file(fake_world, tmp_path):
    fake_world.setattr(journal_mod, "SEGMENT_BYTES", 2000)
    seg = tmp_path / "seg"
    assert _fuzz(seg, 10) in (0, 1)
    assert _fuzz(seg, 20, "--resume") in (0, 1)       # resume reads the segments back
    assert len(journal_segments(str(seg / "journal.jsonl"))) > 3
    programs = [e for e in read_journal(str(seg / "journal.jsonl")) if e["type"] == "program"]
    assert sorted(e["i"] for e in programs) == list(range(20))     # each program once
    # the same campaign on one file
    fake_world.setattr(journal_mod, "SEGMENT_BYTES", 10**12)
    one = tmp_path / "one"
    assert _fuzz(one, 20) in (0, 1)
    a, b = load_campaign(str(seg)), load_campaign(str(one))
    assert a["kinds"] == b["kinds"] and a["pairs"] == b["pairs"]
    assert [(p.n, p.status) for p in a["parts"].values()] == \
        [(p.n, p.status) for p in b["parts"].values()]
    # merge streams the segments too
    assert main(["merge", str(tmp_path / "m"), str(seg)]) in (0,)
    m = load_campaign(str(tmp_path / "m"))
    assert sum(p.n for p in m["parts"].values()) == 20


def test_report_memory_is_bounded_by_samples(tmp_path, monkeypatch):
    """A long journal: the report keeps counters and bounded samples, and its counts are exact."""
    monkeypatch.setattr(report_mod, "TIMELINE_POINTS", 100)
    monkeypatch.setattr(report_mod, "UNCONFIRMED_SAMPLE", 5)
    d = tmp_path / "c"
    d.mkdir()
    (d / "campaign.json").write_text(json.dumps({"uid": "u", "backend": "fake"}))
    j = Journal(str(d / "journal.jsonl"), segment_bytes=200_000, sync=False)
    n = 30_000
    for i in range(n):
        st_ = "unconfirmed" if i % 100 == 0 else ("oracle-error" if i % 7 == 0 else "ok")
        e = _entry(i, st_)
        if st_ == "oracle-error":
            e["error"] = f"RuntimeError: case {i % 3}"
        j.append(e)
    j.close()
    camp = load_campaign(str(d))
    (p,) = camp["parts"].values()
    assert p.n == n and len(p.points) <= 101 and p.points[-1] == (p.active, n)
    assert len(camp["unconfirmed"]) == 5
    errs = sum(1 for i in range(n) if i % 100 and i % 7 == 0)
    assert sum(camp["errors"].values()) == errs == p.status["oracle-error"]
    assert camp["kinds"]["ld"] == n - errs          # the ok and unconfirmed programs ran
    _, md = build_report(str(d), explainer=None)
    assert f"{n} programs drawn, {n - errs} executed on the backend, {errs} errored" in \
        open(md, encoding="utf-8").read()


def test_a_parallel_campaigns_segmented_shard_journals_stream_into_report_and_merge(tmp_path):
    """A ``--jobs 2`` directory (fuzz/layout.py: campaign.json lists the shard directories) whose
    shard journals were rotated into segments: the report counts every program of every segment
    on its shard's row, and merge copies each (shard, program) once, even given the campaign
    twice. Every journal of a shard directory counts (``journal_paths``)."""
    from fuzz.merge import merge
    d = tmp_path / "c"
    d.mkdir()
    (d / "campaign.json").write_text(json.dumps(
        {"uid": "par", "backend": "x", "jobs": 2, "shards": ["shard-1of2", "shard-2of2"]}))
    for k in (1, 2):
        sd = d / f"shard-{k}of2"
        sd.mkdir()
        (sd / "campaign.json").write_text(json.dumps(
            {"uid": f"x-shard{k}of2", "backend": "x", "shard": f"{k}/2"}))
        j = Journal(str(sd / "journal.jsonl"), segment_bytes=400)
        late = Journal(str(sd / "journal-late.jsonl"), segment_bytes=400)   # a second journal
        j.append({"type": "session", "ts": 0.0})
        for i in range(k - 1, 60, 2):      # entries without "campaign": tagged by their directory
            (late if i >= 50 else j).append(
                {"type": "program", "i": i, "status": "ok", "t": i / 10, "executions": 7})
        j.close()
        late.close()
        assert len(journal_segments(str(sd / "journal.jsonl"))) > 3     # really segmented
    camp = load_campaign(str(d))
    assert {uid: (p.n, p.executions) for uid, p in camp["parts"].items()} == \
        {"x-shard1of2": (30, 210), "x-shard2of2": (30, 210)}
    counts = merge(str(tmp_path / "m"), [str(d), str(d)])
    assert counts["programs"] == 60
    merged = [e for e in read_journal(str(tmp_path / "m" / "journal.jsonl"))]
    assert sorted((e["campaign"], e["i"]) for e in merged) == \
        sorted((f"x-shard{i % 2 + 1}of2", i) for i in range(60))

"""The finding record (fuzz/finding.py): one schema, read and written in one place, unknown keys
kept on round trip, a damaged record named in one line."""

import json

import pytest

from fuzz.finding import Finding, FindingFileError, finding_json, read_finding
from fuzz.findings import load_findings, publish

RECORD = {
    "id": "0123456789abcdef", "test": "AMDGPU t\n", "original": "AMDGPU o\n",
    "forbidden": [{"outcome": {"P1:r0": 0}, "count": 3}],
    "sources": [{"campaign": "c", "index": 7, "seed": 11}],
    "backend": "sim:acq-no-inv", "first": {"t": 1.5, "index": 7},
    "histogram": [{"outcome": {"P1:r0": 0}, "count": 3, "allowed": False}],
    "from_a_future_version": {"nested": [1, 2, {"x": None}]},
}


def test_the_json_is_sorted_one_space_indented_and_ends_in_a_newline():
    text = finding_json({"b": 1, "a": [2]})
    assert text == '{\n "a": [\n  2\n ],\n "b": 1\n}\n'


def test_round_trip_keeps_every_key_and_the_bytes(tmp_path):
    path = tmp_path / "finding.json"
    written = json.dumps(RECORD, indent=1, sort_keys=True) + "\n"
    path.write_text(written)
    rec = read_finding(str(path))
    assert (rec.id, rec.test, rec.sources) == (RECORD["id"], RECORD["test"], RECORD["sources"])
    assert rec.extra["from_a_future_version"] == RECORD["from_a_future_version"]
    assert rec.first_seen == 1.5
    assert rec.to_json() == written
    assert rec.to_dict() == RECORD


@pytest.mark.parametrize("damage, message", [
    (lambda r: r.pop("sources"), "no 'sources' field"),
    (lambda r: r.pop("test"), "no 'test' field"),
    (lambda r: r.update(id=5), "'id' is int, expected a string"),
    (lambda r: r.update(sources=[1]), "'sources' is not a list of objects"),
])
def test_a_damaged_record_is_one_line_naming_the_file(tmp_path, damage, message):
    rec = json.loads(json.dumps(RECORD))
    damage(rec)
    path = tmp_path / "finding.json"
    path.write_text(json.dumps(rec))
    with pytest.raises(FindingFileError) as e:
        read_finding(str(path))
    assert str(e.value) == f"{path}: {message}"


def test_invalid_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "finding.json"
    path.write_text('{\n "id": \n')
    with pytest.raises(FindingFileError, match=rf"^{path}:3:1: not valid JSON"):
        read_finding(str(path))


def test_published_findings_read_back_with_unknown_keys(tmp_path):
    later = dict(RECORD, id="fedcba9876543210", first={"t": 0.5, "index": 1})
    assert publish(str(tmp_path), RECORD)
    assert publish(str(tmp_path), later)
    got = load_findings(str(tmp_path))
    assert [r["id"] for r in got] == ["fedcba9876543210", "0123456789abcdef"]   # first seen first
    assert got[1] == RECORD
    text = (tmp_path / "findings" / RECORD["id"] / "finding.json").read_text()
    assert text == json.dumps(RECORD, indent=1, sort_keys=True) + "\n"
    # publishing the same id again adds only the new source, keeping the unknown key
    assert not publish(str(tmp_path), dict(RECORD, sources=[{"campaign": "d", "index": 1}]))
    again = Finding.from_dict(load_findings(str(tmp_path))[1])
    assert again.sources == RECORD["sources"] + [{"campaign": "d", "index": 1}]
    assert again.extra["from_a_future_version"] == RECORD["from_a_future_version"]

"""``scopefuzz fuzz`` exit statuses and option checks (issue 17 items 2, 13, 14).

A campaign says what it did in its exit status: 0 nothing forbidden seen, 1 findings, 2 unusable
options, 3 the campaign directory could not be written, 4 most programs errored. The report's
coverage counts programs that ran on the backend, not programs drawn. The backend and the oracle
are fakes (tests/fakes.py) so the exit paths are exercised without compiling anything.
"""

from __future__ import annotations

import errno
import json
import os

import pytest

import hw
from fakes import StaleReadBackend, sc_check
from fuzz import campaign as campaign_mod
from fuzz.cli import main
from fuzz.commands import EXIT_ERRORS, EXIT_STORAGE
from fuzz.journal import Journal, read_journal
from fuzz.report import build_report


def _broken_oracle(test, *a, **k):
    raise RuntimeError("oracle exploded")


@pytest.fixture
def fake_world(monkeypatch):
    """``hw.get_backend`` gives a correct fake backend; the oracle is the fake SC checker."""
    # "fake" is a backend family as a new one would be (one hw.FAMILIES line): the command reads
    # the name through hw.parse_backend_spec before it opens the backend
    monkeypatch.setitem(hw.FAMILIES, "fake", "fakes:StaleReadBackend")
    monkeypatch.setattr(hw, "get_backend", lambda name: StaleReadBackend(0.0))
    monkeypatch.setattr(campaign_mod, "default_checker", lambda: sc_check)
    return monkeypatch


def _fuzz(out, *extra):
    return main(["fuzz", "--jobs", "1", "--backend", "fake", "--programs", "8", "--features",
                 "atomics,plain,fences,rmw", "--iterations", "20", "--quiet", "--out", str(out),
                 *extra])


def test_clean_campaign_exits_0(fake_world, tmp_path):
    assert _fuzz(tmp_path / "c") == 0


def test_all_errors_is_not_success(fake_world, tmp_path, capsys):
    fake_world.setattr(campaign_mod, "default_checker", lambda: _broken_oracle)
    assert _fuzz(tmp_path / "c", "--report") == EXIT_ERRORS
    err = capsys.readouterr().err
    assert "8 of 8 programs errored" in err and "Traceback" not in err
    md = (tmp_path / "c" / "report.md").read_text()
    assert "No forbidden outcome was observed" not in md
    assert "No program was executed on the backend (8 errored" in md
    assert "0 executed on the backend, 8 errored" in md
    # coverage counts programs that ran: none did
    assert "Instruction kinds: 0/" in md and "scope pairs: 0/" in md
    assert "oracle exploded" in md


def test_report_coverage_counts_executed_programs_only(fake_world, tmp_path):
    out = tmp_path / "c"
    assert _fuzz(out) == 0
    entries = [e for e in read_journal(str(out / "journal.jsonl")) if e["type"] == "program"]
    # turn the journal's first three programs into errors: coverage must drop their kinds
    for e in entries[:3]:
        e["status"], e["error"] = "oracle-error", "RuntimeError: 'x' | y"
    (out / "journal.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    _, md = build_report(str(out), explainer=None)
    text = open(md, encoding="utf-8").read()
    want = {}
    for e in entries[3:]:
        for k in e["kinds"]:
            want[k] = want.get(k, 0) + 1
    for k, n in want.items():
        assert f"| `{k}` | {n} |" in text
    assert "5 executed on the backend, 3 errored" in text
    # error messages are plain text in Markdown: no HTML entities, the pipe escaped
    assert "RuntimeError: 'x' \\| y" in text and "&#x27;" not in text


def test_a_file_as_out_is_a_storage_error(fake_world, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("not a directory\n")
    assert _fuzz(f / "sub") == EXIT_STORAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write" in err and str(f) in err
    assert f.read_text() == "not a directory\n"


def test_full_disk_is_a_storage_error_and_keeps_the_journal(fake_world, tmp_path, capsys):
    out = tmp_path / "c"
    assert _fuzz(out) == 0
    before = (out / "journal.jsonl").read_text()
    real = Journal.append
    calls = [0]

    def full(self, entry):
        calls[0] += 1
        if calls[0] > 2:
            raise OSError(errno.ENOSPC, "No space left on device", self.path)
        real(self, entry)
    fake_world.setattr(Journal, "append", full)
    r = main(["fuzz", "--jobs", "1", "--backend", "fake", "--programs", "16", "--features",
              "atomics,plain,fences,rmw", "--iterations", "20", "--quiet", "--out", str(out),
              "--resume"])
    assert r == EXIT_STORAGE
    err = capsys.readouterr().err.strip()
    assert "No space left on device" in err and "intact" in err and "Traceback" not in err
    after = (out / "journal.jsonl").read_text()
    assert after.startswith(before)          # nothing written before was lost
    for line in after.splitlines():
        json.loads(line)                      # and what is there is whole


@pytest.mark.parametrize("opt, value, name", [
    ("--time", "nan", "--time"), ("--time", "inf", "--time"), ("--time", "-1", "--time"),
    ("--stop-after", "-1", "--stop-after"), ("--stop-after", "0", "--stop-after"),
    ("--minimize-seconds", "-1", "--minimize-seconds"),
    ("--minimize-seconds", "nan", "--minimize-seconds"),
    ("--iterations", "0", "--iterations"), ("--seed", "-3", "--seed"),
])
def test_bad_options_are_rejected(fake_world, tmp_path, capsys, opt, value, name):
    out = tmp_path / "c"
    args = ["fuzz", "--backend", "fake", "--quiet", "--out", str(out), opt, value]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"bad {name}" in err
    assert not os.path.exists(out)            # rejected before anything is written


def test_help_documents_exit_statuses(capsys):
    with pytest.raises(SystemExit):
        main(["fuzz", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for code in ("0 no finding", "1 findings", "2 unusable", "3 the campaign directory could not be "
                 "written", "4 most programs errored"):
        assert code in out


# --- corrupt campaign files (item 13) --------------------------------------------------------------

@pytest.fixture
def finding_dir(fake_world, tmp_path):
    """A campaign with findings (a fake backend with stale reads)."""
    fake_world.setattr(hw, "get_backend", lambda name: StaleReadBackend(0.3))
    out = tmp_path / "c"
    assert main(["fuzz", "--jobs", "1", "--backend", "fake", "--programs", "12", "--features",
                 "atomics,plain,fences,rmw", "--iterations", "100", "--quiet", "--out", str(out),
                 "--minimize-seconds", "30"]) == 1
    return out


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_corrupt_campaign_json_is_named(finding_dir, tmp_path, capsys):
    meta = finding_dir / "campaign.json"
    meta.write_text('{"backend": "fake",\n  "seed": ')
    assert main(["report", str(finding_dir)]) == 2
    assert f"{meta}:2:11: not valid JSON" in _one_error_line(capsys)
    assert main(["fuzz", "--jobs", "1", "--backend", "fake", "--programs", "14", "--features",
                 "atomics,plain,fences,rmw", "--iterations", "100", "--quiet", "--out",
                 str(finding_dir), "--resume"]) == 2
    assert f"{meta}:2:11" in _one_error_line(capsys)
    merged = tmp_path / "m"
    assert main(["merge", str(merged), str(finding_dir)]) == 2
    assert str(meta) in _one_error_line(capsys)
    assert not merged.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".tmp")]


def test_corrupt_finding_json(finding_dir, tmp_path, capsys):
    ids = sorted(os.listdir(finding_dir / "findings"))
    bad = finding_dir / "findings" / ids[0] / "finding.json"
    bad.write_text("{")
    # report: the bad finding is skipped and named, the rest is reported
    assert main(["report", str(finding_dir)]) == 0
    err = capsys.readouterr().err
    assert f"skipping {bad}:1:2: not valid JSON" in err and "Traceback" not in err
    md = (finding_dir / "report.md").read_text()
    assert all(f"findings/{i}/report.md" in md for i in ids[1:])
    # merge: stops, names the file, leaves nothing behind
    merged = tmp_path / "m"
    assert main(["merge", str(merged), str(finding_dir)]) == 2
    assert str(bad) in _one_error_line(capsys)
    assert not merged.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".tmp")]
    # resume: goes on (the bad file named on stderr)
    assert main(["fuzz", "--jobs", "1", "--backend", "fake", "--programs", "14", "--features",
                 "atomics,plain,fences,rmw", "--iterations", "100", "--quiet", "--out",
                 str(finding_dir), "--resume", "--minimize-seconds", "30"]) in (0, 1)
    assert str(bad) in capsys.readouterr().err


def test_merge_into_a_file_or_full_directory_is_refused(finding_dir, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["merge", str(f), str(finding_dir)]) == 2
    assert "not an empty directory" in _one_error_line(capsys)
    assert main(["merge", str(tmp_path / "ok"), str(finding_dir)]) == 0
    assert (tmp_path / "ok" / "campaign.json").exists()

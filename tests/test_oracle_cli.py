"""``scopefuzz check`` / ``bench`` contracts (DESIGN.md command table, ``check --json`` format)."""

from __future__ import annotations

import json

import pytest

from fuzz.cli import main

MP = """AMDGPU MP
{ x = 0; y = 0; }
 P0                  | P1                  ;
 st x, 1             | ld.atom.acq r0, y   ;
 st.atom.rel y, 1    | ld r1, x            ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
SB = """AMDGPU SB
{ x = 0; y = 0; }
 P0             | P1             ;
 st.atom x, 1   | st.atom y, 1   ;
 ld.atom r0, y  | ld.atom r0, x  ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""


@pytest.fixture
def suite(tmp_path):
    d = tmp_path / "suite" / "sub"
    d.mkdir(parents=True)
    (d / "mp.litmus").write_text(MP)
    (d / "sb.litmus").write_text(SB)
    return tmp_path / "suite"


def test_check_json_fields(suite, capsys):
    assert main(["check", "--json", str(suite)]) == 0
    lines = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [o["test"] for o in lines] == ["MP", "SB"]          # sorted by path
    mp = lines[0]
    assert set(mp) == {"test", "file", "model", "verdict", "condition", "states", "flags", "ub",
                       "candidates", "consistent", "seconds", "schema"}
    assert mp["model"] == "amdgpu" and mp["verdict"] == "No"
    assert {"P1:r0": 0, "P1:r1": "undef", "x": 1, "y": 1} in mp["states"]
    assert mp["condition"].startswith("exists")
    assert lines[1]["verdict"] == "Ok"


def test_check_human_line(suite, capsys):
    assert main(["check", str(suite / "sub" / "sb.litmus")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SB  Ok  (model amdgpu, 4 states, ")


def test_unreadable_file_gives_error_object_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.litmus"
    bad.write_text("AMDGPU bad\n{ x = 0; }\n P0 ;\n frob x ;\nexists (x == 0)\n")
    assert main(["check", "--json", str(bad)]) == 2
    obj = json.loads(capsys.readouterr().out)
    assert set(obj) == {"file", "error", "schema"}
    assert obj["error"].startswith(f"{bad}:4:")


def test_expect_with_our_verdicts(suite, capsys):
    (suite / "expected.csv").write_text("sub/mp.litmus,No\nsub/sb.litmus,Ok\n")
    assert main(["check", "--expect", str(suite / "expected.csv"), str(suite)]) == 0
    assert "2 agree, 0 disagree" in capsys.readouterr().out


def test_expect_dat3m_style_relative_to_parent_and_disagreement(suite, capsys):
    exp = suite / "expected"
    exp.mkdir()
    # Dat3M lists paths relative to the conformance root (the CSV directory's parent); 1 = Ok
    (exp / "X.csv").write_text("sub/mp.litmus,1\nsub/sb.litmus,1\n")
    assert main(["check", "--expect", str(exp / "X.csv"), str(suite / "sub")]) == 1
    out = capsys.readouterr().out
    assert "1 agree, 1 disagree" in out
    assert "DISAGREE" in out and "mp.litmus" in out


def test_expect_matches_by_path_suffix(suite, capsys, tmp_path):
    other = tmp_path / "elsewhere.csv"
    other.write_text("foo/sub/sb.litmus,0\nsub/mp.litmus,0\n")
    assert main(["check", "--expect", str(other), str(suite)]) == 0
    assert "1 agree, 0 disagree" in capsys.readouterr().out


def test_bench_unknown_section(capsys):
    assert main(["bench", "--only", "nope"]) == 2
    assert "unknown section" in capsys.readouterr().err


def test_explain_command_and_svg(suite, tmp_path, capsys):
    out_svg = tmp_path / "mp.svg"
    rc = main(["explain", str(suite / "sub" / "mp.litmus"), "--outcome",
               "P1:r0 == 1 /\\ P1:r1 == 0", "--svg", str(out_svg)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "FORBIDDEN" in text
    import xml.etree.ElementTree as ET
    root = ET.parse(out_svg).getroot()
    assert root.tag.endswith("svg")


def test_explain_bad_outcome(suite, capsys):
    assert main(["explain", str(suite / "sub" / "mp.litmus"), "--outcome", "P7:r0 == 1"]) == 2
    assert "P7" in capsys.readouterr().err


def test_version_and_json_schema(tmp_path, capsys):
    """``--version`` names the distribution's version; every ``--json`` line carries ``schema``."""
    import importlib.metadata
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"scopefuzz {importlib.metadata.version('scopefuzz')}")
    good = tmp_path / "sb.litmus"
    good.write_text(SB)
    bad = tmp_path / "bad.litmus"
    bad.write_text("AMDGPU bad\n{ x = 0; }\n P0 ;\n frob x ;\nexists (x == 0)\n")
    main(["check", "--json", str(good), str(bad)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2 and all(obj["schema"] == 1 for obj in lines)
    assert lines[0]["verdict"] == "Ok" and "error" in lines[1]


def _parse_herd_log(text: str) -> dict:
    """What a script reading herd7 logs extracts (herd's documented layout)."""
    import re
    out = {}
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        m = re.match(r"Test (\S+) (Allowed|Forbidden|Required)$", lines[0])
        n = int(re.match(r"States (\d+)$", lines[1]).group(1))
        states = lines[2:2 + n]
        rest = lines[2 + n:]
        obs = re.match(r"Observation (\S+) (Always|Sometimes|Never) (\d+) (\d+)$", rest[4])
        out[m.group(1)] = {"kind": m.group(2), "states": states, "verdict": rest[0],
                           "witnesses": rest[1], "positive": rest[2], "condition": rest[3],
                           "observation": obs.groups()[1:]}
        assert obs.group(1) == m.group(1) and rest[5].startswith(f"Time {m.group(1)} ")
        assert rest[6].startswith("Hash=")
    return out


def test_check_format_herd(suite, capsys):
    """Hand-derived: SB with relaxed atomics allows all 4 register pairs, one of them the
    condition's (Ok, Sometimes 1 3); MP with release/acquire forbids r0=1, r1=0 (No, Never)."""
    assert main(["check", "--format", "herd", str(suite)]) == 0
    log = _parse_herd_log(capsys.readouterr().out)
    sb = log["SB"]
    assert sb["kind"] == "Allowed" and sb["verdict"] == "Ok" and sb["witnesses"] == "Witnesses"
    assert sorted(s.split(" x=")[0] for s in sb["states"]) == [
        "0:r0=0; 1:r0=0;", "0:r0=0; 1:r0=1;", "0:r0=1; 1:r0=0;", "0:r0=1; 1:r0=1;"]
    assert sb["positive"] == "Positive: 1 Negative: 3"
    assert sb["condition"] == "Condition exists (0:r0=0 /\\ 1:r0=0)"
    assert sb["observation"] == ("Sometimes", "1", "3")
    mp = log["MP"]
    assert mp["verdict"] == "No" and mp["observation"][0] == "Never"
    assert mp["condition"] == "Condition exists (1:r0=1 /\\ 1:r1=0)"
    assert not any("1:r0=1; 1:r1=0;" in s for s in mp["states"])

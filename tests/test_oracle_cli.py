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
    assert out.startswith("SB  Ok  (4 states, ")


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

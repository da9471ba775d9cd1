"""``scopefuzz report --upstream``: an LLVM issue for finding 1 (a plain load after a barrier and
an acquire fence compiled to s_load_dword). The litmus test is the minimized finding
``b7a8845c4f2f898c`` of an isa:gfx942 campaign (seed 3, program 31), copied here."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from fuzz.cli import main
from hw.isa import toolchain

FINDING_1 = """AMDGPU barrier-wg-min
{
  x = 0;
}
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 st x, 1         | barrier         ;
 fence.rel.wg    | fence.acq.wg    ;
 barrier         | ld r0, x        ;
exists (P1:r0 == 0)
"""

pytestmark = pytest.mark.skipif(
    toolchain.tools_available() is not None or shutil.which("llc-22") is None
    or shutil.which("llvm-reduce-22") is None,
    reason="needs clang-22, llvm-objdump-22, llc-22 and llvm-reduce-22")


def _finding(tmp_path, backend="isa:gfx942"):
    d = tmp_path / "f"
    d.mkdir()
    rec = {"id": "b7a8845c4f2f898c", "backend": backend, "model": "amdgpu", "test": FINDING_1,
           "forbidden": [{"outcome": {"P1:r0": 0}, "count": 12}], "sources": [{}],
           "iterations": 1000,
           "histogram": [{"outcome": {"P1:r0": 0}, "count": 12, "allowed": False},
                         {"outcome": {"P1:r0": 1}, "count": 988, "allowed": True}]}
    (d / "finding.json").write_text(json.dumps(rec))
    return d


def test_upstream_report_of_finding_1(tmp_path, capsys):
    d = _finding(tmp_path)
    assert main(["report", "--upstream", str(d)]) == 0
    md = (d / "upstream.md").read_text()
    assert md.startswith("# [AMDGPU] a plain global load after an acquire is selected as "
                         "s_load_dword")
    for part in ("## Reduced reproducer (LLVM IR)", "llc-22 -mtriple=amdgcn-amd-amdhsa "
                 "-mcpu=gfx942", "## Reproducer (OpenCL C)", "clang-22 -x cl", "<== culprit",
                 "scalar L1 cache", "## Expected vs produced", "scalar-load",
                 "| `P1:r0=0;` | 12 | **FORBIDDEN** |", "## What would confirm it on hardware"):
        assert part in md, part
    reduced = (d / "upstream" / "reduced.ll").read_text()
    assert "acquire" in reduced and len(reduced) < len((d / "upstream" / "test.ll").read_text())
    # checked here, independently of the script: llc-22 still selects s_load_dword after the
    # acquire's invalidate for the reduced IR
    asm = subprocess.run(["llc-22", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O2",
                          str(d / "upstream" / "reduced.ll"), "-o", "-"],
                         capture_output=True, text=True, check=True).stdout
    body = asm[asm.index("buffer_inv"):] if "buffer_inv" in asm else asm[asm.index("s_barrier"):]
    assert "s_load_dword " in body


def test_upstream_refuses_non_isa_findings(tmp_path, capsys):
    d = _finding(tmp_path, backend="sim:acq-no-inv")
    assert main(["report", "--upstream", str(d)]) == 2
    assert "for isa findings" in capsys.readouterr().err
    assert main(["report", "--upstream", str(tmp_path / "nothing")]) == 2

"""`scopefuzz run --compile SPEC FILE|DIR` (fuzz/run.py -> fuzz/compilers.py): exit codes and
lines. A release/acquire MP holds under clang-cuda; MP whose release is a fetch_add is a
counterexample (clang-22 lowers every atomicrmw as atom.relaxed.gpu, dropping its order: a real
compiler bug the check finds, docs/compilers.md); a bad spec is exit 2."""

import json

import pytest

from fuzz.cli import main

MP = """CUDA MP{tag}
{{ [x] = 0; [y] = 0; }}
P0@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {{
  atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_device);
  {write}
}}
P1@cta 1,gpu 0 (atomic_int* x, atomic_int* y) {{
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_device);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, cuda::thread_scope_device);
}}
exists (P1:r0=1 /\\ P1:r1=0)
"""
STORE = "atomic_store_explicit(y, 1, memory_order_release, cuda::thread_scope_device);"
RMW = "int t = atomic_fetch_add_explicit(y, 1, memory_order_release, cuda::thread_scope_device);"


@pytest.fixture
def clang():
    import hw.ptxc as ptxc
    why = ptxc.available(ptxc.parse_spec("clang-cuda:sm_90,O2"))
    if why:
        pytest.skip(why)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_holds_exit_0(tmp_path, clang, capsys):
    f = write(tmp_path, "mp.litmus", MP.format(tag="", write=STORE))
    assert main(["run", "--compile", "clang-cuda:sm_90,O2", f]) == 0
    assert capsys.readouterr().out.splitlines() == ["MP  holds"]


def test_rmw_order_dropped_is_a_counterexample_exit_1(tmp_path, clang, capsys):
    f = write(tmp_path, "mp.litmus", MP.format(tag="+rmw", write=RMW))
    assert main(["run", "--compile", "clang-cuda:sm_90,O2", "--json", f]) == 1
    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["status"] == "counterexample" and rec["source_model"] == "opencl"
    assert any(e["P1:r0"] == 1 and e["P1:r1"] == 0 for e in rec["extra"])
    assert "atom" in rec["explanation"] and "clang-22" in rec["explanation"]


def test_racy_is_skipped_and_bad_spec_exit_2(tmp_path, clang, capsys):
    racy = MP.format(tag="+racy", write=STORE).replace("thread_scope_device", "thread_scope_block")
    f = write(tmp_path, "r.litmus", racy)
    assert main(["run", "--compile", "clang-cuda", f]) == 0
    assert capsys.readouterr().out.splitlines() == ["MP+racy  skipped(racy)"]
    assert main(["run", "--compile", "gcc-cuda", f]) == 2
    assert "unknown compiler 'gcc-cuda'" in capsys.readouterr().out


def test_fuzz_compile_finds_a_planted_mutant(tmp_path, clang, capsys):
    # programs 0..4 of seed 0 include an acquire load; with its .acquire dropped the compiled
    # program escapes the source model: a finding (finding.json, report.md), exit 1
    from fuzz.findings import load_findings
    out = tmp_path / "camp"
    rc = main(["fuzz", "--compile", "clang-cuda:sm_90,O2", "--ptx-mutant", "drop-acquire",
               "--programs", "5", "--seed", "0", "--out", str(out), "--quiet"])
    assert rc == 1
    assert "5 programs" in capsys.readouterr().err
    recs = load_findings(str(out))
    assert recs
    rec = recs[0]
    assert rec["mutant"] == "drop-acquire" and rec["forbidden"] and "clang-22" in rec["command"][0]
    md = (out / "findings" / rec["id"] / "report.md").read_text()
    assert "why it is forbidden" in md and "<- ptx" in md and "<-- load" in md


def test_fuzz_compile_bad_mutant_exit_2(tmp_path, clang, capsys):
    rc = main(["fuzz", "--compile", "clang-cuda", "--ptx-mutant", "nope", "--programs", "1",
               "--out", str(tmp_path / "c"), "--quiet"])
    assert rc == 2 and "unknown PTX mutant 'nope'" in capsys.readouterr().err

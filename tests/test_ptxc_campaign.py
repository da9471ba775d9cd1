"""`scopefuzz fuzz --compile` as a campaign of the main machinery (fuzz/compilers_campaign.py):
compiler buckets (fuzz/compile_buckets.py), known NVPTX bugs, --resume after SIGKILL, --jobs,
C and OPENCL sources (fuzz/c_strategies.py), report. Needs clang-22 (skips without it)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fuzz.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = "clang-cuda:sm_90,O2"

MP_RMW = """CUDA MP+rmw
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_device);
  int t = atomic_exchange_explicit(y, 1, memory_order_release, cuda::thread_scope_device);
}
P1@cta 1,gpu 0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_device);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, cuda::thread_scope_device);
}
exists (P1:r0=1 /\\ P1:r1=0)
"""
# a relaxed system-scope fetch_or against a store from another GPU: only the scope is lost
SYS_RMW = """CUDA sys-rmw
{ [y] = 0; }
P0@cta 1,gpu 1 (atomic_int* y) {
  atomic_store_explicit(y, 2, memory_order_relaxed, cuda::thread_scope_system);
}
P1@cta 2,gpu 0 (atomic_int* y) {
  int r0 = atomic_fetch_or_explicit(y, 0, memory_order_relaxed, cuda::thread_scope_system);
}
exists (y=0)
"""
MP = MP_RMW.replace("int t = atomic_exchange_explicit", "atomic_store_explicit").replace(
    "MP+rmw", "MP")


@pytest.fixture
def clang():
    import hw.ptxc as ptxc
    why = ptxc.available(ptxc.parse_spec(SPEC))
    if why:
        pytest.skip(why)


OCL_RMW = """OPENCL ocl-rmw
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);
  int t = atomic_fetch_add_explicit(y, 1, memory_order_release, memory_scope_device);
}
P1@wg 1, dev 0 (global atomic_int* x, global atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, memory_scope_device);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, memory_scope_device);
}
exists (1:r0=1 /\\ 1:r1=0)
"""


# seq_cst load, a seq_cst fence and a seq_cst store in a row: clang-ocl emits fence.sc.sys three
# times with no line information; each seq_cst op must get its own (only the RMW is weakened)
OCL_SC = """OPENCL S-s0-40
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) {
  int r0 = atomic_fetch_or_explicit(x, 1, memory_order_release, memory_scope_all_svm_devices);
  atomic_store_explicit(y, 2, memory_order_seq_cst, memory_scope_all_svm_devices);
}
P1@wg 0, dev 1 (global atomic_int* x, global atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_seq_cst, memory_scope_all_svm_devices);
  atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_work_group);
  atomic_store_explicit(x, 3, memory_order_seq_cst, memory_scope_all_svm_devices);
}
exists (x=0)
"""


def bucket_of(text, mutant=None, spec=SPEC):
    import hw.ptxc as ptxc
    from hw.ptxc.emit_common import emit
    from hw.ptxc.mutants import get
    from litmus import parse
    from fuzz.compile_buckets import compiler_bucket
    from fuzz.compilers import judge
    c = ptxc.parse_spec(spec)
    t = parse(text, "t.litmus")
    comp = ptxc.compile_test(t, c, get(mutant) if mutant else None)
    v = judge(t, comp.test)
    assert v.status == "counterexample"
    lines = emit(t, ptxc.SPELLINGS[c.name](), c.per_role).lines
    return compiler_bucket(t, comp, v.extra[0], v.source_model, lines)


def test_the_atomicrmw_bug_is_one_known_bucket_whatever_was_lost(clang):
    from fuzz.known import default_known_ptxc_path, known_for, load_known
    a = bucket_of(MP_RMW)        # exchange release: the order is dropped
    b = bucket_of(SYS_RMW)       # fetch_or relaxed system: the scope is narrowed
    assert a["id"] == b["id"] and a["kind"] == "ptx"
    assert a["signature"] == "ptxc clang-22: atomicrmw -> `atom.global.<op> (no .sem, no scope)`"
    assert a["weakened"][0]["lost"] == ["release lost (no release)"]
    assert b["weakened"][0]["lost"] == ["scope system narrowed to device"]
    assert b["weakened"][0]["ptx"]["text"].startswith("atom.global.or.b32")
    known = load_known(default_known_ptxc_path())
    assert "179553" in " ".join(known_for(a["signature"], known)["links"])
    # a planted bug on loads is another bucket, not known
    c = bucket_of(MP, "drop-acquire")
    assert c["signature"] == "ptxc clang-22: load -> `ld.relaxed.sys.global`"
    assert c["weakened"][0]["lost"] == ["acquire lost (no acquire)"]
    assert known_for(c["signature"], known) is None
    # clang-ocl (the same NVPTX back end; its PTX has no line information: aligned in order)
    d = bucket_of(OCL_RMW, spec="clang-ocl:sm_90,O2")
    assert d["id"] == a["id"] and d["weakened"][0]["lost"] == ["release lost (no release)"]
    e = bucket_of(OCL_SC, spec="clang-ocl:sm_90,O2")
    assert e["id"] == a["id"] and [w["kind"] for w in e["weakened"]] == ["atomicrmw"]


def test_ptx_instruction_folds_types_and_rmw_ops():
    from fuzz.compile_buckets import ptx_instruction
    assert ptx_instruction("atom.global.add.u32 %r1, [%rd1], 1;") == \
        "atom.global.<op> (no .sem, no scope)"
    assert ptx_instruction("atom.global.exch.b32 %r1, [%rd1], 1;") == \
        "atom.global.<op> (no .sem, no scope)"
    assert ptx_instruction("atom.acquire.sys.global.cas.b32 %r5, [%rd2], 0, 3") == \
        "atom.acquire.sys.global.cas"
    assert ptx_instruction("fence.sc.sys") == "fence.sc.sys"
    assert ptx_instruction("ld.global.b32 %r1, [%rd1]") == "ld.global (no .sem, no scope)"


def fuzz(out, *extra):
    return main(["fuzz", "--compile", SPEC, "--seed", "11", "--out", str(out), "--quiet",
                 "--minimize-seconds", "300", *extra])


def programs(d):
    """{i: (status, finding)} of every journal of a campaign directory, and the count of lines."""
    from fuzz.journal import journal_paths, read_journal
    out, n = {}, 0
    dirs = [d] + [os.path.join(d, x) for x in sorted(os.listdir(d)) if x.startswith("shard-")]
    for sub in dirs:
        for jp in journal_paths(sub):
            for e in read_journal(jp):
                if e.get("type") == "program":
                    n += 1
                    out[e["i"]] = (e["status"], e.get("finding"))
    return out, n


def findings(d):
    from fuzz.findings import load_findings
    return {r["id"]: sorted(s["index"] for s in r["sources"]) for r in load_findings(str(d))}


def test_resume_after_sigkill_equals_an_uninterrupted_campaign(tmp_path, clang):
    # programs 0..19 of seed 11: program 12 meets the atomicrmw bug
    assert fuzz(tmp_path / "a", "--programs", "20") == 1
    want, n = programs(str(tmp_path / "a"))
    assert n == 20 and sorted(want) == list(range(20)) and want[12][0] == "finding"
    b = tmp_path / "b"
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "fuzz.cli", "fuzz", "--compile", SPEC,
                             "--seed", "11", "--out", str(b), "--quiet", "--minimize-seconds",
                             "300", "--programs", "20"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = b / "journal.jsonl"
    while proc.poll() is None:            # kill it part-way: after some programs are journaled
        if journal.exists() and journal.read_text().count('"type":"program"') >= 6:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert programs(str(b))[1] < 20        # it was cut short
    assert fuzz(b, "--programs", "20", "--resume") == 1
    got, n = programs(str(b))
    assert n == 20                          # nothing lost, nothing doubled
    assert got == want
    assert findings(b) == findings(tmp_path / "a")
    # --resume with another compiler or dialect is refused
    assert main(["fuzz", "--compile", "clang-cuda:sm_70,O2", "--seed", "11", "--out", str(b),
                 "--quiet", "--programs", "20", "--resume"]) == 2
    assert main(["fuzz", "--compile", SPEC, "--source", "c", "--seed", "11", "--out", str(b),
                 "--quiet", "--programs", "20", "--resume"]) == 2


def test_jobs_2_finds_what_one_process_finds(tmp_path, clang):
    assert fuzz(tmp_path / "one", "--programs", "20") == 1
    assert fuzz(tmp_path / "two", "--programs", "20", "--jobs", "2") == 1
    one, _ = programs(str(tmp_path / "one"))
    two, n = programs(str(tmp_path / "two"))
    assert n == 20 and two == one
    assert {"campaign.json", "findings", "shard-1of2", "shard-2of2"} <= \
        set(os.listdir(tmp_path / "two"))
    assert findings(tmp_path / "two") == findings(tmp_path / "one")
    meta = json.loads((tmp_path / "two" / "campaign.json").read_text())
    assert meta["jobs"] == 2 and meta["backend"] == "ptxc:" + SPEC and meta["features"] == ["cuda"]


def test_shards_merged_equal_one_campaign_and_report_one_row_per_bucket(tmp_path, clang, capsys):
    assert fuzz(tmp_path / "one", "--programs", "20") == 1
    for k in (1, 2):
        fuzz(tmp_path / f"s{k}", "--programs", "20", "--shard", f"{k}/2")
    assert main(["merge", str(tmp_path / "m"), str(tmp_path / "s1"), str(tmp_path / "s2")]) == 0
    assert "1 finding(s) in 1 bucket(s)" in capsys.readouterr().out
    got, n = programs(str(tmp_path / "m"))
    assert n == 20 and got == programs(str(tmp_path / "one"))[0]
    assert findings(tmp_path / "m") == findings(tmp_path / "one")
    assert main(["report", str(tmp_path / "m"), "--known"]) == 0
    md = (tmp_path / "m" / "report.md").read_text()
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "ptxc clang-22" in ln]
    assert len(rows) == 1 and "atomicrmw" in rows[0] and "llvm-project" in rows[0]


def test_known_bucket_is_minimized_once_then_counted_and_reported_known(tmp_path, clang, capsys):
    # programs 12, 49 and 85 of seed 11 meet the atomicrmw bug
    out = tmp_path / "k"
    assert fuzz(out, "--programs", "86", "--known", "--report") == 1
    err = capsys.readouterr().err
    assert "1 finding(s) in 1 bucket(s) (1 known)" in err
    fs = findings(out)
    assert list(fs.values()) == [[12, 49, 85]]
    from fuzz.journal import read_journal
    es = {e["i"]: e for e in read_journal(str(out / "journal.jsonl")) if e.get("type") == "program"}
    assert "known" not in es[12] and es[49]["known"] and es[85]["known"]
    rec = json.loads((out / "findings" / next(iter(fs)) / "finding.json").read_text())
    assert rec["kind"] == "compiler" and rec["minimize"]["accepted"] >= 1
    assert rec["bucket"]["instruction"] == "atom.global.<op> (no .sem, no scope)"
    md = (out / "report.md").read_text()
    assert "Known bugs (1 bucket(s))" in md and "llvm-project/pull/179553" in md
    assert "<-- atomicrmw" in md and "clang-22 -x cuda" in md
    assert "Finding " + rec["id"] in (out / "report.html").read_text()


def test_planted_mutant_campaign_reports_one_bucket(tmp_path, clang, capsys):
    out = tmp_path / "m"
    assert main(["fuzz", "--compile", SPEC, "--ptx-mutant", "drop-acquire", "--programs", "8",
                 "--seed", "0", "--out", str(out), "--quiet", "--minimize-seconds", "300"]) == 1
    assert "finding(s) in 1 bucket(s)" in capsys.readouterr().err
    from fuzz.findings import load_findings
    recs = load_findings(str(out))
    assert recs                  # one bug, however many forms: every finding in its one bucket
    for rec in recs:
        assert rec["mutant"] == "drop-acquire" and rec["baseline"]["forbidden"] == 0
        assert rec["bucket"]["signature"] == "ptxc clang-22: load -> `ld.relaxed.sys.global`"
    assert main(["report", str(out)]) == 0
    assert "### New bugs (1 bucket(s))" in (out / "report.md").read_text()


def test_c_and_opencl_programs_parse_and_compile(tmp_path, clang):
    from litmus import parse
    from fuzz.c_strategies import draw_source, render_source
    for i in range(40):
        c = parse(render_source(draw_source(5, i, "c"), "c"), "c.litmus")
        o = parse(render_source(draw_source(5, i, "opencl"), "opencl"), "o.litmus")
        assert c.dialect == "C" and o.dialect == "OPENCL"
        assert len(c.threads) == len(o.threads)
        # C has no scopes: every atomic of the C program is system scope
        assert all(ins.scope in (None, "sys") for th in c.threads for ins in th.code)
    out = tmp_path / "c"
    rc = main(["fuzz", "--compile", SPEC, "--source", "c", "--programs", "6", "--seed", "3",
               "--out", str(out), "--quiet", "--minimize-seconds", "300"])
    assert rc in (0, 1)
    got, n = programs(str(out))
    assert n == 6 and all(s in ("ok", "finding") for s, _ in got.values())
    assert json.loads((out / "campaign.json").read_text())["features"] == ["c"]
    for rec in __import__("fuzz.findings", fromlist=["x"]).load_findings(str(out)):
        assert rec["test"].startswith("C ") and rec["model"] == "c11"

"""``scopefuzz run`` / ``scopefuzz mutants`` (DESIGN.md command table and ``run --json``), and the
simulator's determinism and lowering facts the rest of the project relies on."""

from __future__ import annotations

import json
import pathlib

import pytest

import litmus
from fuzz.cli import main
from hw import get_backend
from hw.sim import MUTANTS
from hw.sim.lower import lower
from hw.sim.profiles import PROFILES, with_options
from hw.sim.uops import CNT_LOAD, CNT_STORE, CNT_VM, GLD, INV1, INV2, WAIT, WB2

ROOT = pathlib.Path(__file__).resolve().parent.parent
MUT = ROOT / "corpora" / "mutants"
KEYS = {"test", "file", "backend", "iterations", "seconds", "histogram", "forbidden",
        "witnesses", "condition_observed", "schema"}

MP_ACQREL = """AMDGPU MP+relacq
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                 ;
 st x, 1                | ld.atom.acq.agent r0, y ;
 st.atom.rel.agent y, 1 | ld r1, x                ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def run_json(capsys, *argv):
    rc = main(["run", "--json", *argv])
    out = capsys.readouterr()
    return rc, [json.loads(line) for line in out.out.splitlines() if line.strip()], out.err


def test_run_mutant_reports_forbidden_and_exits_1(capsys):
    rc, objs, _ = run_json(capsys, "--backend", "sim:rel-no-wait", "--iterations", "50000",
                           "--seed", "1", str(MUT / "rel-no-wait.litmus"))
    assert rc == 1
    (obj,) = objs
    assert set(obj) == KEYS
    assert obj["backend"].startswith("sim:rel-no-wait")
    assert obj["iterations"] == 50000 == sum(r["count"] for r in obj["histogram"])
    bad = [r for r in obj["histogram"] if not r["allowed"]]
    assert bad and obj["forbidden"] == sum(r["count"] for r in bad)
    assert all(r["outcome"]["P1:r0"] == 1 and r["outcome"]["P1:r1"] == 0 for r in bad)
    assert obj["condition_observed"] and obj["witnesses"] == obj["forbidden"]


def test_run_correct_sim_exits_0(capsys, tmp_path):
    f = tmp_path / "mp.litmus"
    f.write_text(MP_ACQREL)
    rc, (obj,), _ = run_json(capsys, "--iterations", "20000", str(f))
    assert rc == 0
    assert obj["forbidden"] == 0 and obj["witnesses"] == 0 and not obj["condition_observed"]
    assert all(r["allowed"] for r in obj["histogram"])
    assert {tuple(sorted(r["outcome"])) for r in obj["histogram"]} == {("P1:r0", "P1:r1", "x", "y")}


def test_run_goes_on_after_unreadable_file_and_exits_2(capsys, tmp_path):
    bad = tmp_path / "a_bad.litmus"
    bad.write_text("AMDGPU broken\n{ x = 0; }\n P0 ;\n frob x ;\nexists (x == 0)\n")
    good = tmp_path / "b_good.litmus"
    good.write_text(MP_ACQREL)
    rc, objs, _ = run_json(capsys, "--iterations", "1000", str(tmp_path))
    assert rc == 2
    assert objs[0]["file"].endswith("a_bad.litmus") and "error" in objs[0]
    assert "\n" not in objs[0]["error"] and ":" in objs[0]["error"]
    assert objs[1]["test"] == "MP+relacq" and objs[1]["forbidden"] == 0


def test_run_does_not_run_undef_programs(capsys, monkeypatch):
    """A program whose verdict is Undef (here: a wave waits on a named barrier it never arrived
    at, corpora/barrier/expected.csv) is not run; the output says why."""
    import oracle
    path = ROOT / "corpora" / "barrier" / "named" / "BAR+named+waitnoarrive.deadlock.xwave3.litmus"
    res = oracle.check(litmus.parse_file(path))
    assert res.verdict == "Undef" and res.ub
    calls = []
    backend = get_backend("sim")
    monkeypatch.setattr(type(backend), "run", lambda *a, **k: calls.append(a))
    rc = main(["run", "--iterations", "10", str(path)])
    out = capsys.readouterr().out
    assert rc == 0 and not calls
    assert "not run" in out and res.ub[0].split(":")[0] in out


def test_run_text_marks_forbidden(capsys):
    rc = main(["run", "--backend", "sim:acq-no-inv", "--iterations", "20000",
               str(MUT / "acq-no-inv.litmus")])
    out = capsys.readouterr().out
    assert rc == 1 and "FORBIDDEN" in out


def test_run_unknown_backend_is_one_line(capsys):
    rc = main(["run", "--backend", "sim:no-such-mutant", str(MUT / "acq-no-inv.litmus")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "no-such-mutant" in err


def test_mutants_lists_each_with_description(capsys):
    assert main(["mutants"]) == 0
    lines = [ln for ln in capsys.readouterr().out.strip().splitlines() if ln.startswith("sim:")]
    assert len(lines) == len(MUTANTS) >= 16          # (the isa mutants follow, tested elsewhere)
    for line, m in zip(lines, MUTANTS.values()):
        assert line.startswith(f"sim:{m.name} ") and m.summary in line


def test_randomized_mode_is_deterministic_per_seed():
    test = litmus.parse(MP_ACQREL.replace(".acq", "").replace(".rel", ""))
    b = get_backend("sim")
    h1, h2, h3 = (b.run(test, 30000, s) for s in (5, 5, 6))
    assert h1.counts == h2.counts
    assert h1.counts != h3.counts and set(h1.counts) == set(h3.counts)


def _uops(text, profile, thread=1):
    m = lower(litmus.parse(text), profile)
    return [u for _, u in m.listing[thread]]


def test_lowering_follows_llvm_sequences():
    # gfx942 agent acquire: load sc1 (L1 bypass), vmcnt(0), buffer_inv sc1 (L1 invalidate)
    u = _uops(MP_ACQREL, PROFILES["gfx942"])
    assert u[0][0] == GLD and u[0][3] == 1
    assert (WAIT, CNT_VM, 0) in u and u.index((WAIT, CNT_VM, 0)) < u.index((INV1,))
    # the plain data load may hit L1
    assert u[-1][0] == GLD and u[-1][3] == 0
    # gfx12: loadcnt/storecnt instead of vmcnt
    u12 = _uops(MP_ACQREL, PROFILES["gfx12"])
    assert (WAIT, CNT_LOAD, 0) in u12 and (WAIT, CNT_VM, 0) not in u12
    # system scope: L2 writeback before the release, L2 invalidate after the acquire
    sys_text = MP_ACQREL.replace(".agent", ".sys")
    p0 = _uops(sys_text, PROFILES["gfx90a"], thread=0)
    # the writeback is in flight on vmcnt, which the release's wait covers
    assert p0[1] == (WB2, 0, 0, 0, CNT_VM) and p0.index((WAIT, CNT_VM, 0)) > 1
    p1 = _uops(sys_text, PROFILES["gfx90a"])
    assert (INV2,) in p1 and p1.index((INV2,)) < p1.index((INV1,))
    # gfx12 release waits for both loads and stores
    p0_12 = _uops(MP_ACQREL, PROFILES["gfx12"], thread=0)
    assert (WAIT, CNT_LOAD, 0) in p0_12 and (WAIT, CNT_STORE, 0) in p0_12
    # tgsplit: workgroup scope needs the L1 bypass and invalidate
    wg = MP_ACQREL.replace("P0@wg 0", "P0@wave 0, wg 0").replace("P1@wg 1", "P1@wave 1, wg 0")
    wg = wg.replace(".agent", ".wg")
    plain = _uops(wg, PROFILES["gfx90a"])
    split = _uops(wg, with_options(PROFILES["gfx90a"], ["tgsplit"]))
    assert (INV1,) not in plain and (INV1,) in split


def test_run_exhaustive_mode(capsys):
    rc, (obj,), _ = run_json(capsys, "--backend", "sim:acq-no-inv", "--exhaustive",
                             "--iterations", "100000", str(MUT / "acq-no-inv.litmus"))
    assert rc == 1 and obj["forbidden"] > 0
    rc, (obj,), _ = run_json(capsys, "--backend", "sim", "--exhaustive",
                             "--iterations", "100000", str(MUT / "acq-no-inv.litmus"))
    assert rc == 0 and obj["forbidden"] == 0
    # every allowed state of this test is reached by some scheduling
    assert {(r["outcome"]["P1:r0"], r["outcome"]["P1:r1"]) for r in obj["histogram"]} == \
        {(0, 0), (0, 1), (1, 1)}


def test_too_big_program_is_a_one_line_backend_error():
    from hw import BackendError
    rows = "\n".join(" st x, 1 ;" for _ in range(300))
    test = litmus.parse(f"AMDGPU big\n{{ x = 0; }}\n P0 ;\n{rows}\nexists (x == 1)\n")
    with pytest.raises(BackendError) as e:
        get_backend("sim").run(test, 10, 0)
    assert "in-flight" in str(e.value) and "\n" not in str(e.value)


def test_exhaustive_cap_reports_incomplete():
    # 2 threads x 60 stores: far more schedules than the cap of 50
    rows = "\n".join(f" st.atom.agent x, {i} | st.atom.agent y, {i} ;" for i in range(1, 61))
    test = litmus.parse(f"AMDGPU deep\n{{ x = 0; y = 0; }}\n P0@wg 0 | P1@wg 1 ;\n{rows}\n"
                        f"exists (x == 60)\n")
    hist, complete = get_backend("sim").explore(test, 50)
    assert not complete and hist.total == 50

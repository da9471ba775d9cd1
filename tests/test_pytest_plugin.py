"""The pytest plugin: litmus files as items, expected.csv, Undef, devices per xdist worker."""

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

# In-process pytester runs restore sys.modules afterwards; numpy's C extension cannot be imported
# twice in one process, so load the oracle (and numpy) before any run takes its snapshot.
import hw  # noqa: F401
import numpy  # noqa: F401
import oracle  # noqa: F401
import oracle.check  # noqa: F401,E402  (import oracle alone loads neither numpy nor numba)
import oracle.judge  # noqa: F401,E402
import oracle.query  # noqa: F401,E402

from conftest import CORPORA

pytest_plugins = ["pytester"]

MP_SYNC = """AMDGPU MP+rel+acq.agent
"Forbidden: release/acquire at agent scope between two workgroups of one agent synchronize."
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                ;
 st.atom x, 1           | ld.atom.acq.agent r0, y ;
 st.atom.rel.agent y, 1 | ld.atom r1, x          ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

SB = """AMDGPU SB+rlx
"Allowed: relaxed atomics do not order a store before a later load."
{ x = 0; y = 0; }
 P0@wg 0        | P1@wg 1        ;
 st.atom x, 1   | st.atom y, 1   ;
 ld.atom r0, y  | ld.atom r0, x  ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""

DEADLOCK = """AMDGPU barrier-deadlock
"Undef: P1 waits on named barrier 1 that nobody else joins with count 2."
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 bar.init 1, 2   | bar.join 1      ;
 st.atom x, 1    | barrier         ;
                 | bar.signal 1    ;
                 | bar.wait 1      ;
exists (x == 1)
"""

FAKE_HW = """
from hw.backend import Backend, Histogram

class Fake(Backend):
    def __init__(self, spec):
        self.name = "fake:" + (spec or "")
    def run(self, test, iterations, seed=0):
        h = Histogram(test.observables())
        # registers read 0, every global ends at 1
        h.add(tuple(0 if ":" in k else 1 for k in test.observables()), iterations)
        return h

def make(spec):
    return Fake(spec)
"""

FAKE_CONFTEST = """
import hw
hw.FAMILIES["fake"] = "fakehw:make"
"""


def test_collects_litmus_files_and_checks_expected_csv(pytester):
    d = pytester.mkdir("suite")
    (d / "mp.litmus").write_text(MP_SYNC)
    (d / "sb.litmus").write_text(SB)
    (d / "expected.csv").write_text("mp.litmus,No\nsb.litmus,Ok\n")
    r = pytester.runpytest("--litmus", "suite", "--litmus-backend=none", "-v")
    r.assert_outcomes(passed=2)
    r.stdout.fnmatch_lines(["*suite/mp.litmus::MP+rel+acq.agent PASSED*",
                            "*suite/sb.litmus::SB+rlx PASSED*"])


def test_wrong_expected_verdict_fails_with_both_verdicts(pytester):
    d = pytester.mkdir("suite")
    (d / "mp.litmus").write_text(MP_SYNC)
    (d / "expected.csv").write_text("mp.litmus,Ok\n")
    r = pytester.runpytest("--litmus", "suite", "--litmus-backend=none")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*MP+rel+acq.agent: oracle verdict No, expected Ok*expected.csv*"])


def test_dat3m_style_csv_in_an_ancestor_directory(pytester):
    d = pytester.mkdir("root")
    (d / "sub").mkdir()
    (d / "sub" / "sb.litmus").write_text(SB)
    (d / "expected.csv").write_text("sub/sb.litmus,0\n")     # 0 = herd No, but SB is Ok
    r = pytester.runpytest("--litmus", "root", "--litmus-backend=none")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*oracle verdict Ok, expected No*"])


def test_malformed_file_fails_with_position(pytester):
    pytester.makefile(".litmus", bad=SB.replace("st.atom x, 1", "st.atomic x, 1"))
    r = pytester.runpytest("--litmus", "bad.litmus", "--litmus-backend=none")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*bad.litmus:5:5: unknown modifier 'atomic'*"])


def test_undef_program_checks_verdict_and_is_never_run(pytester):
    pytester.makepyfile(fakehw=FAKE_HW.replace("def run(self, test, iterations, seed=0):",
                                               "def run(self, test, iterations, seed=0):\n"
                                               "        raise AssertionError('ran an Undef test')"))
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makefile(".litmus", dead=DEADLOCK)
    (pytester.path / "expected.csv").write_text("dead.litmus,Undef\n")
    r = pytester.runpytest_subprocess("--litmus", "dead.litmus", "--litmus-backend=fake:x")
    r.assert_outcomes(passed=1)


def test_forbidden_outcome_fails_with_histogram_and_explanation(pytester):
    # a backend that always reports the outcome MP forbids: r0 = 1, r1 = 0
    pytester.makepyfile(fakehw=FAKE_HW.replace(
        "h.add(tuple(0 if \":\" in k else 1 for k in test.observables()), iterations)",
        "h.add(tuple({'P1:r0': 1, 'x': 1, 'y': 1}.get(k, 0) for k in test.observables()), "
        "iterations)"))
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makefile(".litmus", mp=MP_SYNC)
    r = pytester.runpytest_subprocess("--litmus", "mp.litmus", "--litmus-backend=fake:x",
                                      "--litmus-iterations=7")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*7 of 7 iterations on fake:x showed an outcome the amdgpu model "
                            "forbids*",
                            "*7  P1:r0=1; P1:r1=0; x=1; y=1;  FORBIDDEN*",
                            "*allowed by the model:*"])


def test_each_xdist_worker_takes_its_own_device(pytester):
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(FAKE_CONFTEST)
    body = "\n".join(
        f"def test_dev{i}(litmus_backend, worker_id):\n"
        f"    open('devices.log', 'a').write(worker_id + ' ' + litmus_backend.name + '\\n')\n"
        for i in range(8))
    pytester.makepyfile(test_devices=body)
    r = pytester.runpytest_subprocess("-n", "2", "--litmus-devices=fake:a,fake:b",
                                      "test_devices.py")
    r.assert_outcomes(passed=8)
    seen = {tuple(line.split()) for line in (pytester.path / "devices.log").read_text().split("\n")
            if line}
    assert seen <= {("gw0", "fake:a"), ("gw1", "fake:b")}
    assert {w for w, _ in seen} == {"gw0", "gw1"}


def test_junitxml_records_outcome_counts(pytester):
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makefile(".litmus", sb=SB)
    r = pytester.runpytest_subprocess("--litmus", "sb.litmus", "--litmus-backend=fake:x",
                                      "--litmus-iterations=5", "--junitxml=out.xml")
    r.assert_outcomes(passed=1)
    props = {p.get("name"): p.get("value")
             for p in ET.parse(pytester.path / "out.xml").iter("property")}
    assert props["verdict"] == "Ok" and props["backend"] == "fake:x"
    assert props["outcome P0:r0=0; P1:r0=0; x=1; y=1;"] == "5"


def test_litmus_oracle_fixture(pytester):
    pytester.makefile(".litmus", sb=SB)
    pytester.makepyfile(test_user="""
def test_it(litmus_oracle):
    r = litmus_oracle("sb.litmus")
    assert r.verdict == "Ok"
    assert r.allows({"P0:r0": 0, "P1:r0": 0, "x": 1, "y": 1})
    assert not r.allows({"P0:r0": 0, "P1:r0": 0, "x": 0, "y": 1})
""")
    r = pytester.runpytest("test_user.py", "--litmus-backend=none")
    r.assert_outcomes(passed=1)


def test_real_parallel_run_over_the_corpora_on_the_simulator(pytester):
    dirs = [p for p in sorted(CORPORA.iterdir()) if (p / "expected.csv").is_file()]
    assert dirs, "corpora with expected.csv exist"
    for p in dirs:
        shutil.copytree(p, pytester.path / p.name)
    r = pytester.runpytest_subprocess("--litmus", "-n", "2", "--litmus-backend=sim",
                                      "--litmus-iterations=500", *[p.name for p in dirs])
    outcomes = r.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, r.stdout.str()[-3000:]
    n_files = sum(1 for p in dirs for _ in p.rglob("*.litmus"))
    assert outcomes.get("passed", 0) == n_files


def test_fuzz_item_fails_on_a_finding_and_passes_without(pytester):
    # a backend whose final memory is impossible: every global ends at 12345
    pytester.makepyfile(fakehw=FAKE_HW.replace("0 if \":\" in k else 1", "0 if \":\" in k else 12345"))
    pytester.makeconftest(FAKE_CONFTEST)
    r = pytester.runpytest_subprocess("--litmus-fuzz=3", "--litmus-backend=fake:bad", "-p",
                                      "no:cacheprovider", str(pytester.path))
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*fuzz campaign on fake:bad: * finding(s) in * programs*"])
    assert list((pytester.path / ".scopefuzz-pytest").rglob("*.litmus"))
    r = pytester.runpytest_subprocess("--litmus-fuzz=3", "--litmus-backend=sim", str(pytester.path))
    r.assert_outcomes(passed=1)


def _entries(d):
    return [json.loads(line) for line in (d / "journal.jsonl").read_text().splitlines()]


def _check_counts(store, items):
    """The merged campaign holds exactly the received items' programs, each once, item J's being
    shard J/M's (i % M == J-1); returns {J: set of program numbers}."""
    merged = store / "merged"
    received = {int(p.stem.split("-")[1]): json.loads(p.read_text())
                for p in (store / "items").glob("item-*.json")}
    by_item = {}
    for e in _entries(merged):
        if e["type"] != "program":
            continue
        j = int(e["campaign"].rpartition("shard")[2].split("of")[0])
        assert e["campaign"].endswith(f"of{items}")
        assert e["i"] % items == j - 1
        assert e["i"] not in by_item.setdefault(j, set()), "a program counted twice"
        by_item[j].add(e["i"])
    assert set(by_item) <= set(received)
    for j, r in received.items():
        assert r["programs"] == len(by_item.get(j, ())), j
    fleet = json.loads((store / "fleet.json").read_text())
    assert fleet["programs"] == sum(len(v) for v in by_item.values())
    return by_item, received, fleet


def test_fuzz_items_over_xdist_workers_merge_into_one_report(pytester):
    pytester.makepyfile(fakehw=FAKE_HW.replace("0 if \":\" in k else 1", "0 if \":\" in k else 12345"))
    pytester.makeconftest(FAKE_CONFTEST)
    r = pytester.runpytest_subprocess("-n", "2", "--litmus-fuzz=2", "--litmus-fuzz-items=4",
                                      "--litmus-campaign=c1", "--litmus-backend=fake:bad",
                                      "-p", "no:cacheprovider", "-v", str(pytester.path))
    r.assert_outcomes(failed=4)
    r.stdout.fnmatch_lines(["*litmus-fuzz[[]1s-1of4[]]*", "*scopefuzz live: * items, *",
                            "*scopefuzz: 4 of 4 work items from 1 host(s) merged into *c1/merged: "
                            "* programs, * finding(s); report *report.html*"])
    store = pytester.path / ".scopefuzz-pytest" / "c1"
    by_item, received, fleet = _check_counts(store, 4)
    assert set(received) == {1, 2, 3, 4} and all(by_item[j] for j in received)
    assert fleet["complete"] and fleet["lost"] == [] and fleet["not_run"] == []
    meta = json.loads((store / "merged" / "campaign.json").read_text())
    assert sorted(p["shard"] for p in meta["merged"]) == ["1/4", "2/4", "3/4", "4/4"]
    # every item's journal on the worker's host came home whole, with every finding
    for j in range(1, 5):
        local = {e["i"] for e in _entries(store / f"item-{j}of4") if e["type"] == "program"}
        assert local == by_item[j]
    local_ids = {f.name for j in range(1, 5) for f in (store / f"item-{j}of4" / "findings").iterdir()}
    assert local_ids and {f.name for f in (store / "merged" / "findings").iterdir()} == local_ids
    report = (store / "merged" / "report.md").read_text()
    assert "## Hosts and work items" in report and "INCOMPLETE" not in report
    assert "shard1of4" in report and "shard4of4" in report


def test_a_named_campaign_is_not_overwritten_and_resume_needs_one(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(fakehw=FAKE_HW)
    r = pytester.runpytest_subprocess("--litmus-fuzz=1", "--litmus-campaign=x", "--litmus-resume",
                                      "--litmus-backend=sim", str(pytester.path))
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "no campaign to resume" in r.stderr.str()
    r = pytester.runpytest_subprocess("--litmus-fuzz=1", "--litmus-campaign=x",
                                      "--litmus-backend=sim", str(pytester.path))
    r.assert_outcomes(passed=1)
    r = pytester.runpytest_subprocess("--litmus-fuzz=1", "--litmus-campaign=x",
                                      "--litmus-backend=sim", str(pytester.path))
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "already holds campaign 'x'; add --litmus-resume" in r.stderr.str()
    r = pytester.runpytest_subprocess("--litmus-fuzz=1", "--litmus-campaign=x", "--litmus-seed=3",
                                      "--litmus-resume", "--litmus-backend=sim", str(pytester.path))
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "--litmus-resume with seed=3, but the campaign was started with seed=0" in r.stderr.str()
    # the complete campaign resumed: nothing left to run
    r = pytester.runpytest_subprocess("--litmus-fuzz=1", "--litmus-campaign=x", "--litmus-resume",
                                      "--litmus-backend=sim", str(pytester.path))
    assert r.ret == pytest.ExitCode.NO_TESTS_COLLECTED


KILL_CONFTEST = """
import os, pathlib, signal, threading
import hw
hw.FAMILIES["fake"] = "fakehw:make"
MARK = pathlib.Path(MARK_PATH)

def pytest_runtest_call(item):
    # worker gw1 is killed (SIGKILL) one second into its first fuzz item, once
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw1" and item.name.startswith("litmus-fuzz[") \
            and not MARK.exists():
        MARK.write_text(item.name)
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
"""


def _killed_item(pytester) -> int:
    name = (pytester.path / "killed").read_text()
    return int(name.rpartition("-")[2].split("of")[0])


def test_a_killed_worker_loses_one_item_listed_for_resume(pytester):
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(KILL_CONFTEST.replace("MARK_PATH", repr(str(pytester.path / "killed"))))
    args = ["-n", "2", "--litmus-fuzz=3", "--litmus-fuzz-items=6", "--litmus-campaign=k",
            "--litmus-backend=sim", "-p", "no:cacheprovider", str(pytester.path)]
    r = pytester.runpytest_subprocess(*args, "--litmus-retry-lost=0")
    lost = _killed_item(pytester)
    out = r.stdout.str()
    assert f"scopefuzz: work item {lost} lost (worker gw1 on " in out, out[-3000:]
    r.stdout.fnmatch_lines([f"*INCOMPLETE: 1 of 6 work items missing (1 lost, 0 never run); "
                            f"continue it with: pytest * --litmus-campaign=k --litmus-resume*",
                            f"*lost item {lost}: worker gw1 on * went down while running it*",
                            "*5 of 6 work items from 1 host(s) merged into *"])
    store = pytester.path / ".scopefuzz-pytest" / "k"
    by_item, received, fleet = _check_counts(store, 6)
    assert set(received) == set(range(1, 7)) - {lost}
    assert [x["item"] for x in fleet["lost"]] == [lost] and not fleet["complete"]
    report = (store / "merged" / "report.md").read_text()
    assert report.splitlines()[2].startswith("**INCOMPLETE: 1 of 6 work items missing")
    assert f"- item {lost}: lost: worker gw1 on" in report
    before = {p.name: p.read_bytes() for p in (store / "items").iterdir()}
    # resume: only the lost item runs; the others are kept as they were
    r = pytester.runpytest_subprocess(*args, "--litmus-resume", "-v")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines([f"*PASSED*litmus-fuzz[[]1s-{lost}of6[]]*",
                            "*6 of 6 work items from 1 host(s) merged into *"])
    by_item2, received2, fleet2 = _check_counts(store, 6)
    assert set(received2) == set(range(1, 7)) and fleet2["complete"] and by_item2[lost]
    assert {j: v for j, v in by_item2.items() if j != lost} == by_item
    assert all((store / "items" / n).read_bytes() == b for n, b in before.items())
    assert "INCOMPLETE" not in (store / "merged" / "report.md").read_text()


def test_a_killed_workers_item_is_handed_to_another_worker(pytester):
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(KILL_CONFTEST.replace("MARK_PATH", repr(str(pytester.path / "killed"))))
    r = pytester.runpytest_subprocess("-n", "2", "--litmus-fuzz=3", "--litmus-fuzz-items=6",
                                      "--litmus-campaign=h", "--litmus-backend=sim",
                                      "-p", "no:cacheprovider", str(pytester.path))
    lost = _killed_item(pytester)
    outcomes = r.parseoutcomes()
    assert outcomes.get("passed") == 6 and outcomes.get("rerun") == 1, r.stdout.str()[-3000:]
    r.stdout.fnmatch_lines([f"*work item {lost} lost (worker gw1 on *); handed to another worker*",
                            "*6 of 6 work items from 1 host(s) merged into *"])
    assert "INCOMPLETE" not in r.stdout.str()
    store = pytester.path / ".scopefuzz-pytest" / "h"
    by_item, received, fleet = _check_counts(store, 6)
    assert set(received) == set(range(1, 7)) and fleet["complete"] and by_item[lost]
    assert received[lost]["worker"] != "gw1"


def test_items_no_worker_took_are_listed_as_never_run(pytester):
    # the only worker is killed and may not be replaced: xdist ends the session
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(KILL_CONFTEST.replace("MARK_PATH", repr(str(pytester.path / "killed")))
                          .replace('"gw1"', '"gw0"'))
    r = pytester.runpytest_subprocess("-n", "1", "--max-worker-restart=0", "--litmus-fuzz=4",
                                      "--litmus-campaign=n", "--litmus-backend=sim",
                                      "-p", "no:cacheprovider", str(pytester.path))
    lost = _killed_item(pytester)
    fleet = json.loads((pytester.path / ".scopefuzz-pytest" / "n" / "fleet.json").read_text())
    assert fleet["plan"]["items"] == 4 and fleet["received"] + 1 + len(fleet["not_run"]) == 4
    assert [x["item"] for x in fleet["lost"]] == [lost] and fleet["not_run"], r.stdout.str()[-3000:]
    r.stdout.fnmatch_lines([f"*INCOMPLETE: {4 - fleet['received']} of 4 work items missing "
                            f"(1 lost, {len(fleet['not_run'])} never run)*"])


def test_tx_alone_distributes_and_remote_style_gateways_need_no_rsync_root(pytester):
    # --tx without --dist used to run one undistributed session; a gateway with chdir= (like
    # ssh=) used to stop at "arg . not relative to an rsync root" (exit 3)
    remote = pytester.mkdir("remote")
    r = pytester.runpytest_subprocess("--tx", f"2*popen//chdir={remote}", "--litmus-fuzz=1",
                                      "--litmus-campaign=t", "--litmus-backend=sim",
                                      "-p", "no:cacheprovider", str(pytester.path))
    assert r.ret == 0, r.stdout.str()[-3000:]
    assert "rsync root" not in r.stdout.str() + r.stderr.str()
    r.stdout.fnmatch_lines(["*2 workers [[]8 items[]]*",
                            "*scopefuzz: 8 of 8 work items from 1 host(s) merged into *"])
    assert len(list((remote / ".scopefuzz-pytest" / "t").glob("item-*of8"))) == 8


def test_devices_per_host_from_the_ini_map_and_the_environment(pytester):
    import os as _os
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(FAKE_CONFTEST)
    body = "\n".join(
        f"def test_dev{i}(litmus_backend, worker_id):\n"
        f"    open('devices.log', 'a').write(worker_id + ' ' + litmus_backend.name + '\\n')\n"
        for i in range(8))
    pytester.makepyfile(test_devices=body)
    pytester.makeini(f"[pytest]\nlitmus_devices =\n    elsewhere = fake:z\n"
                     f"    {_os.uname().nodename} = fake:a,fake:b\n")

    def seen():
        log = pytester.path / "devices.log"
        pairs = {tuple(line.split()) for line in log.read_text().split("\n") if line}
        log.unlink()
        return pairs
    r = pytester.runpytest_subprocess("-n", "2", "test_devices.py")
    r.assert_outcomes(passed=8)
    assert seen() == {("gw0", "fake:a"), ("gw1", "fake:b")}
    # the host's own SCOPEFUZZ_DEVICES (here through the --tx spec's env) comes first
    r = pytester.runpytest_subprocess("--tx", "2*popen//env:SCOPEFUZZ_DEVICES=fake:c,fake:d",
                                      "--dist", "load", "test_devices.py")
    r.assert_outcomes(passed=8)
    assert seen() == {("gw0", "fake:c"), ("gw1", "fake:d")}


def test_ssh_gateways_get_a_keepalive():
    from scopefuzz_pytest import _ssh_keepalive
    assert _ssh_keepalive("4*ssh=fuzz1//python=/v/bin/python", 5) == (
        "4*ssh=-o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o ConnectTimeout=10 fuzz1"
        "//python=/v/bin/python")
    assert _ssh_keepalive("popen//python=x", 5) == "popen//python=x"
    mine = "ssh=-o ServerAliveInterval=30 fuzz2"
    assert _ssh_keepalive(mine, 5) == mine


def test_fuzz_shards_run_on_distinct_workers_among_litmus_items(pytester):
    pytester.makepyfile(fakehw=FAKE_HW)
    pytester.makeconftest(FAKE_CONFTEST)
    for k in range(10):
        pytester.makefile(".litmus", **{f"sb{k}": SB})
    r = pytester.runpytest_subprocess("-n", "2", "--litmus", "--litmus-fuzz=1",
                                      "--litmus-fuzz-items=2", "--litmus-backend=fake:x",
                                      "-p", "no:cacheprovider", "-v", str(pytester.path))
    ran = {}
    for line in r.stdout.lines:
        if "litmus-fuzz[" in line and line.startswith("[gw"):
            ran[line.split("litmus-fuzz[")[1].split("]")[0]] = line[1:4]
    assert set(ran) == {"1s-1of2", "1s-2of2"}, r.stdout.str()[-2000:]
    assert len(set(ran.values())) == 2            # one shard per worker
    r.stdout.fnmatch_lines(["*scopefuzz: 2 of 2 work items from 1 host(s) merged into *"])


def _claims(store):
    """The merged journal's programs by claimed bucket: {bucket: [entries]}."""
    out = {}
    for e in _entries(store / "merged"):
        if e["type"] == "program" and e.get("claim"):
            out.setdefault(e["claim"], []).append(e)
    return out


def test_two_workers_finding_one_bucket_minimize_it_once_and_both_count(pytester):
    pytester.makepyfile(fakehw=FAKE_HW.replace("0 if \":\" in k else 1", "0 if \":\" in k else 12345"))
    pytester.makeconftest(FAKE_CONFTEST)
    r = pytester.runpytest_subprocess("-n", "2", "--litmus-fuzz=2", "--litmus-fuzz-items=2",
                                      "--litmus-campaign=d", "--litmus-backend=fake:bad",
                                      "-p", "no:cacheprovider", str(pytester.path))
    r.assert_outcomes(failed=2)
    r.stdout.fnmatch_lines(["*more not minimized here: their bucket was claimed by another worker*"])
    store = pytester.path / ".scopefuzz-pytest" / "d"
    by_item, received, fleet = _check_counts(store, 2)
    assert {received[j]["worker"] for j in (1, 2)} == {"gw0", "gw1"}
    by_bucket = _claims(store)
    rows = {c["bucket"]: c for c in fleet["claims"]}
    assert set(rows) == set(by_bucket)
    shared = 0
    for k, entries in by_bucket.items():
        minimized = [e for e in entries if e["status"] == "finding"]
        assert len(minimized) == 1, (k, entries)          # exactly one minimization per bucket
        row = rows[k]
        assert row["programs"] == len(entries) and row["findings"] == [minimized[0]["finding"]]
        workers = {x["worker"] for x in row["skipped"]} | {row["minimized_by"]["worker"]}
        shared += workers == {"gw0", "gw1"}
        # every skipped program counts under the minimized finding, kept as it was found
        rec = json.loads((store / "merged" / "findings" / minimized[0]["finding"]
                          / "finding.json").read_text())
        src = {(s["campaign"], s["index"]): s for s in rec["sources"]}
        for e in entries:
            if e["status"] == "claimed":
                s = src[(e["campaign"], e["i"])]
                assert s["test"] == e["test"] and s["forbidden"] == e["forbidden"]
                assert s["test"].startswith("AMDGPU") and s["claimed_by_other"]["worker"]
    assert shared, fleet["claims"]                        # a bucket both workers found
    assert "### Findings deduplicated before minimizing" in (store / "merged" / "report.md").read_text()


CLAIM_KILL_CONFTEST = """
import os, pathlib, signal, time
import hw
import fuzz.campaign as fc
hw.FAMILIES["fake"] = "fakehw:make"
MARK = pathlib.Path(MARK_PATH)
_minimize = fc.minimize

def minimize(*a, **kw):
    # worker gw1 is killed (SIGKILL) in its first minimization, once: it holds that bucket's claim
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw1" and not MARK.exists():
        MARK.write_text("minimizing")
        os.kill(os.getpid(), signal.SIGKILL)
    return _minimize(*a, **kw)

fc.minimize = minimize
WAITED = []

def pytest_runtest_call(item):
    # gw0 starts fuzzing once gw1 is gone, so that gw1 is the first claimant
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw0" and item.name.startswith("litmus-fuzz[") \
            and not WAITED:
        WAITED.append(1)
        t = time.monotonic()
        while not MARK.exists() and time.monotonic() - t < 120:
            time.sleep(0.1)
        time.sleep(2)
"""


def test_a_claimant_lost_while_minimizing_releases_its_claim(pytester):
    pytester.makepyfile(fakehw=FAKE_HW.replace("0 if \":\" in k else 1", "0 if \":\" in k else 12345"))
    pytester.makeconftest(CLAIM_KILL_CONFTEST.replace("MARK_PATH",
                                                      repr(str(pytester.path / "killed"))))
    # 6 items: xdist keeps workers live (pending items) to take the lost one
    r = pytester.runpytest_subprocess("-n", "2", "--litmus-fuzz=3", "--litmus-fuzz-items=6",
                                      "--litmus-campaign=l", "--litmus-backend=fake:bad",
                                      "-p", "no:cacheprovider", str(pytester.path))
    out = r.stdout.str()
    assert (pytester.path / "killed").exists(), out[-3000:]
    assert r.parseoutcomes().get("rerun") == 1 and "INCOMPLETE" not in out, out[-3000:]
    r.stdout.fnmatch_lines(["*scopefuzz: claim on bucket * released (gw1 on *, item *"])
    store = pytester.path / ".scopefuzz-pytest" / "l"
    by_item, received, fleet = _check_counts(store, 6)
    assert fleet["complete"]
    released = [c for c in fleet["claims"] if c["released"]]
    assert [x["worker"] for c in released for x in c["released"]] == ["gw1"]
    (row,) = released
    # the next finder minimized it, once
    assert row["minimized_by"] and row["minimized_by"]["worker"] != "gw1"
    assert [e["status"] for e in _claims(store)[row["bucket"]]].count("finding") == 1


# --- living next to other projects (issue 17 item 3) ----------------------------------------------

HERD_AARCH64 = """AArch64 MP
{
0:X1=x; 0:X3=y;
1:X1=y; 1:X3=x;
}
 P0          | P1          ;
 MOV W0,#1   | LDR W0,[X1] ;
 STR W0,[X1] | LDR W2,[X3] ;
 MOV W2,#1   |             ;
 STR W2,[X3] |             ;
exists (1:X0=1 /\\ 1:X2=0)
"""


def _other_project(pytester):
    """A project with its own top-level ``litmus`` and ``fuzz`` packages, a herd AArch64 file and
    a test that uses its packages."""
    pytester.mkpydir("litmus").joinpath("__init__.py").write_text("WHO = 'other litmus'\n")
    pytester.mkpydir("fuzz").joinpath("__init__.py").write_text("WHO = 'other fuzz'\n")
    pytester.makefile(".litmus", herd=HERD_AARCH64)
    pytester.makepyfile(test_other="""
import fuzz, litmus
def test_own_packages():
    assert litmus.WHO == 'other litmus' and fuzz.WHO == 'other fuzz'
""")


def test_other_project_with_clashing_packages_and_herd_files_runs(pytester):
    _other_project(pytester)
    r = pytester.runpytest_subprocess(str(pytester.path))
    assert "Error while loading plugin" not in r.stderr.str() + r.stdout.str()
    r.assert_outcomes(passed=1)          # its own test; the herd .litmus file is not collected
    assert "herd.litmus" not in r.stdout.str()


def test_asking_for_litmus_next_to_a_clashing_package_is_one_usage_error(pytester):
    _other_project(pytester)
    r = pytester.runpytest_subprocess("--litmus", str(pytester.path))
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    err = r.stderr.str()
    assert "scopefuzz litmus plugin: package 'litmus' resolves to" in err
    assert "another project's 'litmus' package shadows it" in err and "Traceback" not in err


def test_litmus_files_are_collected_only_when_asked(pytester):
    pytester.makefile(".litmus", sb=SB)
    r = pytester.runpytest(str(pytester.path), "--litmus-backend=none")
    assert r.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    r = pytester.runpytest("--litmus", "sb.litmus", "--litmus-backend=none")
    r.assert_outcomes(passed=1)


def test_ini_litmus_paths_collects_below_those_paths_only(pytester):
    (pytester.mkdir("suite") / "sb.litmus").write_text(SB)
    (pytester.mkdir("elsewhere") / "herd.litmus").write_text(HERD_AARCH64)
    pytester.makeini("[pytest]\nlitmus_paths = suite\n")
    r = pytester.runpytest("suite", "elsewhere", "--litmus-backend=none", "-v")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["*suite/sb.litmus::SB+rlx PASSED*"])
    assert "herd" not in r.stdout.str()


def test_expected_csv_rows_naming_missing_files_fail(pytester):
    d = pytester.mkdir("suite")
    (d / "sb.litmus").write_text(SB)
    (d / "expected.csv").write_text("sb.litmus,Ok\ngone.litmus,No\n")
    r = pytester.runpytest("--litmus", "suite", "--litmus-backend=none")
    r.assert_outcomes(passed=1, failed=1)
    r.stdout.fnmatch_lines(["*expected.csv:2:1: lists 'gone.litmus', which does not exist*"])

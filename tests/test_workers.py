"""``scopefuzz fuzz --jobs N`` (fuzz/workers.py) against the fakes (tests/fakes.py).

A parallel campaign must be the one-process campaign cut differently: the same programs with the same
statuses and the same findings from the same sources (order aside); a worker SIGKILLed mid-campaign
is resumed by its parent, and a parent SIGKILLed with its workers is resumed by ``--resume``, with
nothing lost and no program journaled twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fakes import fuzz_cli
from fuzz.campaign import EXECUTED
from fuzz.findings import load_findings
from fuzz.journal import read_journal
from fuzz.layout import program_entries, read_meta, sub_shard
from fuzz.merge import merge
from fuzz.report import campaign_markdown, load_campaign

PROGRAMS = "30"


def _run(tmp_path, *args, timeout=600):
    return subprocess.run(fuzz_cli(tmp_path, "--programs", PROGRAMS, *args), capture_output=True,
                          text=True, timeout=timeout)


def _programs(d):
    return sorted((e["i"], e["status"], e.get("finding"))
                  for e in program_entries(str(d), read_meta(str(d))))


def _findings(d):
    return {r["id"]: sorted(s["index"] for s in r["sources"]) for r in load_findings(str(d))}


def _shard_journal(d, k):
    return [e for e in read_journal(os.path.join(d, f"shard-{k}of2", "journal.jsonl"))]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The one-process campaign of the same seed."""
    tmp = tmp_path_factory.mktemp("ref")
    done = _run(tmp, "--jobs", "1", "--out", str(tmp / "c"))
    assert done.returncode == 1, done.stderr            # findings -> exit 1
    assert _findings(tmp / "c")
    return tmp / "c"


def test_worker_numba_threads_share_the_cores_under_the_users_cap(monkeypatch):
    from fuzz.workers import numba_threads
    monkeypatch.setattr("fuzz.workers.cores", lambda: 8)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    assert [numba_threads(j) for j in (1, 2, 3, 4, 8, 16)] == [8, 4, 2, 2, 1, 1]
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert [numba_threads(j) for j in (1, 2, 4, 16)] == [3, 3, 2, 1]
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    assert numba_threads(1) == 1


def test_sub_shards_partition_their_shard():
    for base in [(1, 1), (2, 3), (3, 3)]:
        for jobs in (2, 3, 5):
            classes = [[i for i in range(300) if i % n == k - 1]
                       for k, n in (sub_shard(base, jobs, j) for j in range(jobs))]
            flat = sorted(i for c in classes for i in c)
            assert flat == [i for i in range(300) if i % base[1] == base[0] - 1]


def test_two_jobs_give_the_programs_and_findings_of_one(tmp_path, reference):
    done = _run(tmp_path, "--jobs", "2", "--out", str(tmp_path / "c"))
    assert done.returncode == 1, done.stderr
    d = tmp_path / "c"
    assert _programs(d) == _programs(reference)
    assert _findings(d) == _findings(reference)
    evens = {e["i"] for e in _shard_journal(d, 1) if e["type"] == "program"}
    odds = {e["i"] for e in _shard_journal(d, 2) if e["type"] == "program"}
    assert evens == set(range(0, 30, 2)) and odds == set(range(1, 30, 2))
    assert {e["pid"] for e in _shard_journal(d, 1) + _shard_journal(d, 2)
            if e["type"] == "session"} and not (d / "journal.jsonl").exists()
    # the report and merge see both shards
    for k in (1, 2):      # every program entry names its shard's campaign (the report's part)
        assert {e["campaign"] for e in _shard_journal(d, k) if e["type"] == "program"} == \
            {f"stale:0.3-seed0-shard{k}of2"}
    camp = load_campaign(str(d))
    assert sorted(camp["parts"]) == ["stale:0.3-seed0-shard1of2", "stale:0.3-seed0-shard2of2"]
    assert [p.n for p in camp["parts"].values()] == [15, 15]
    md = campaign_markdown(camp, {})
    for k in (1, 2):                      # one throughput row per shard, 15 programs each
        assert f"| stale:0.3-seed0-shard{k}of2 | `stale:0.3` | 15 | " in md
    # the summary line counts executed programs over both shards (not only the parent's)
    executed = sum(1 for _, st, _ in _programs(reference) if st in EXECUTED)
    assert executed and f"30 programs ({executed} executed)" in done.stderr
    merge(str(tmp_path / "m"), [str(d)])
    assert _programs(tmp_path / "m") == _programs(reference)
    assert _findings(tmp_path / "m") == _findings(reference)


def _wait_for(pred, proc, seconds=300):
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        if pred():
            return True
        time.sleep(0.02)
    return False


def _lines(path):
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_killed_worker_is_resumed_by_its_parent(tmp_path, reference):
    d = tmp_path / "c"
    proc = subprocess.Popen(fuzz_cli(tmp_path, "--programs", PROGRAMS, "--jobs", "2", "--out",
                                     str(d)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    j1 = d / "shard-1of2" / "journal.jsonl"
    assert _wait_for(lambda: _lines(j1) >= 6, proc), "shard 1 never got going"
    pid = next(e["pid"] for e in read_journal(str(j1)) if e["type"] == "session")
    os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err
    assert "worker 1/2 died (signal 9); resuming shard-1of2" in err
    assert _programs(d) == _programs(reference)
    assert _findings(d) == _findings(reference)
    for k in (1, 2):                      # nothing journaled twice
        idx = [e["i"] for e in _shard_journal(d, k) if e["type"] == "program"]
        assert len(idx) == len(set(idx))
    sessions = [e for e in _shard_journal(d, 1) if e["type"] == "session"]
    assert len(sessions) == 2 and sessions[1]["resume"] and sessions[1]["pid"] != pid


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_campaign_resumes_with_its_job_count(tmp_path, reference):
    d = tmp_path / "c"
    proc = subprocess.Popen(fuzz_cli(tmp_path, "--programs", PROGRAMS, "--jobs", "2", "--out",
                                     str(d)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    j2 = d / "shard-2of2" / "journal.jsonl"
    assert _wait_for(lambda: _lines(j2) >= 5, proc), "shard 2 never got going"
    workers = [e["pid"] for k in (1, 2) for e in _shard_journal(d, k) if e["type"] == "session"]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 30
    while time.time() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.05)
    assert not any(_alive(p) for p in workers), "workers outlived their parent"
    bad = _run(tmp_path, "--jobs", "3", "--out", str(d), "--resume")
    assert bad.returncode == 2
    assert "started with --jobs 2" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    fin = _run(tmp_path, "--out", str(d), "--resume")             # keeps --jobs 2
    assert fin.returncode == 1, fin.stderr
    assert json.loads((d / "campaign.json").read_text())["jobs"] == 2
    assert _programs(d) == _programs(reference)
    assert _findings(d) == _findings(reference)
    assert not [n for n in os.listdir(d / "findings") if n.startswith(".")]


def test_each_worker_gets_its_own_device_and_shard(tmp_path):
    from fuzz.campaign import Config
    from fuzz.workers import ParallelCampaign, default_jobs
    cfg = Config(backend="opencl", out=str(tmp_path / "c"), shard=(2, 3))
    par = ParallelCampaign(cfg, 3, devices=["opencl:0:0", "opencl:0:1"])
    got = [(c.backend, c.shard, os.path.basename(c.out), c.findings_root)
           for c in (par.worker_config(j, False, None) for j in range(3))]
    assert got == [("opencl:0:0", (2, 9), "shard-2of9", str(tmp_path / "c")),
                   ("opencl:0:1", (5, 9), "shard-5of9", str(tmp_path / "c")),
                   ("opencl:0:0", (8, 9), "shard-8of9", str(tmp_path / "c"))]
    assert default_jobs("opencl", None) == 1 and default_jobs("opencl", ["a", "b"]) == 2
    assert default_jobs("sim", None) == len(os.sched_getaffinity(0))


def test_stop_after_counts_findings_over_all_shards(tmp_path):
    done = _run(tmp_path, "--jobs", "2", "--stop-after", "1", "--out", str(tmp_path / "c"))
    assert done.returncode == 1, done.stderr
    n = len(_programs(tmp_path / "c"))
    assert _findings(tmp_path / "c") and n < int(PROGRAMS)
    for k in (1, 2):                      # both shards stopped, each after a program it finished
        assert [e for e in _shard_journal(tmp_path / "c", k) if e["type"] == "program"]


_BROKEN_ORACLE = """
from fuzz import campaign
def _broken(test, *a, **k):
    raise RuntimeError("oracle exploded")
campaign.default_checker = lambda: _broken
"""


def test_a_worker_storage_error_is_the_campaigns_exit_3(tmp_path):
    """A shard directory that cannot be written (here a file stands where shard 2's directory
    goes) stops the campaign with exit 3 and one line naming it, as with --jobs 1."""
    d = tmp_path / "c"
    d.mkdir()
    (d / "shard-2of2").write_text("in the way\n")
    done = _run(tmp_path, "--jobs", "2", "--out", str(d))
    assert done.returncode == 3, done.stderr
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and "cannot write" in err[0] and "shard-2of2" in err[0], err
    assert "Traceback" not in done.stderr
    assert (d / "shard-2of2").read_text() == "in the way\n"


def test_most_programs_errored_over_workers_is_exit_4(tmp_path):
    """Every program of both shards errors (the oracle raises in each worker): exit 4, the count
    summed over the shards."""
    cmd = fuzz_cli(tmp_path, "--programs", "8", "--jobs", "2", "--out", str(tmp_path / "c"))
    script = tmp_path / "runner.py"
    text = script.read_text()
    script.write_text(text.replace('if __name__ == "__main__":', _BROKEN_ORACLE.strip()
                                   + '\nif __name__ == "__main__":'))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 4, done.stderr
    assert "8 of 8 programs errored" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("first", ["simulator", "thread-limit"])
@pytest.mark.parametrize("preset, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_simulator_threads_wait_passively_unless_the_user_says(first, preset, expected):
    """libgomp reads OMP_WAIT_POLICY once, when numba's threading layer starts (the first parallel
    kernel, or the first numba.get/set_num_threads, as the pytest plugin's fuzz item does before
    any simulator runs): the policy is set before either, so idle simulator threads do not spin
    on a core another worker needs; a user's own setting is kept."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")}
    if preset is not None:
        env["OMP_WAIT_POLICY"] = preset
    start = {"simulator": "import hw.sim\n",
             "thread-limit": "from fuzz.workers import numba_thread_limit\n"
                             "with numba_thread_limit(1):\n"
                             "    pass\n"}[first]
    code = ("import os\n"
            "def gomp():\n"
            "    return 'libgomp' in open('/proc/self/maps').read()\n"
            "seen = []\n"
            "_setdefault = os.environ.setdefault\n"
            "def spy(k, v):\n"
            "    if k == 'OMP_WAIT_POLICY':\n"
            "        seen.append(gomp())\n"
            "    return _setdefault(k, v)\n"
            "os.environ.setdefault = spy\n"
            + start +
            "import hw, litmus\n"
            "from oracle.deadline import WARM_UP_TEST\n"
            "hw.get_backend('sim').run(litmus.parse(WARM_UP_TEST), 64, 1)\n"
            "assert gomp(), 'the simulator ran without the OpenMP layer'\n"
            "assert seen and not seen[0], 'libgomp was loaded before the policy was set'\n"
            "print(os.environ.get('OMP_WAIT_POLICY'))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [expected]

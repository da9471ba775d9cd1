"""A campaign's first run from an empty numba cache (issue 33): when the first finding shows, and
where the CPU went, per process (the campaign's and compile_ahead's helper), so that a shared,
loaded machine still gives the critical path (wall time there says little).

    python benchmarks/first_run.py [--time 30] [--mutant acq-no-inv] [--keep DIR]

Runs ``scopefuzz fuzz --backend sim:MUTANT --baseline sim`` (``make fuzz``'s campaign) with
``NUMBA_CACHE_DIR`` and ``SCOPEFUZZ_VERDICT_CACHE`` in a fresh temporary directory, prints every
stderr line with its wall time from the start and the CPU seconds (user + system, read from
``/proc/PID/stat`` every 0.5 s) of the campaign process and of each child so far, then a summary:
wall and campaign-process CPU at the first progress line with a finding, and each process's
total CPU. Linux only (``/proc``)."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

TCK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def _cpu(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TCK
    except (OSError, IndexError, ValueError):
        return None


class Poller(threading.Thread):
    """The CPU seconds of ``root`` and every descendant, the last reading of each kept."""

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root, self.cpu, self.lock, self.stop = root, {}, threading.Lock(), False

    def run(self):
        while not self.stop:
            todo, seen = [self.root], []
            while todo:
                p = todo.pop()
                seen.append(p)
                todo += _children(p)
            for p in seen:
                c = _cpu(p)
                if c is not None:
                    with self.lock:
                        self.cpu[p] = c
            time.sleep(0.5)

    def snapshot(self) -> dict:
        with self.lock:
            return dict(self.cpu)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", type=int, default=30)
    ap.add_argument("--mutant", default="acq-no-inv")
    ap.add_argument("--keep", default=None, help="use (and keep) this directory")
    args = ap.parse_args(argv)
    root = args.keep or tempfile.mkdtemp(prefix="scopefuzz-first-run-")
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(root, "numba"),
               SCOPEFUZZ_VERDICT_CACHE=os.path.join(root, "verdicts"))
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "fuzz.cli", "fuzz", "--backend", f"sim:{args.mutant}",
           "--baseline", "sim", "--time", str(args.time), "--seed", "0",
           "--out", os.path.join(root, "camp")]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env,
                            text=True, cwd=repo)
    poll = Poller(proc.pid)
    poll.start()
    first = None
    for raw in proc.stderr:
        for line in raw.rstrip("\n").split("\r"):
            if not line.strip():
                continue
            t = time.monotonic() - t0
            cpu = poll.snapshot()
            own = cpu.get(proc.pid, 0.0)
            others = " ".join(f"{p}:{c:.1f}" for p, c in sorted(cpu.items()) if p != proc.pid)
            print(f"{t:7.1f} s | campaign {own:6.1f} | {others:24} | {line}", flush=True)
            m = re.search(r"findings (\d+)", line)
            if first is None and m and int(m.group(1)) >= 1:
                first = (t, own)
    proc.wait()
    poll.stop = True
    poll.join()
    cpu = poll.snapshot()
    print(f"\nexit {proc.returncode}; first finding: "
          + (f"{first[0]:.1f} s wall, campaign process {first[1]:.1f} CPU s" if first
             else "none"))
    for p, c in sorted(cpu.items()):
        print(f"  pid {p}{' (campaign)' if p == proc.pid else ''}: {c:.1f} CPU s in all")
    print(f"  directory: {root}")
    return 0 if first else 1


if __name__ == "__main__":
    sys.exit(main())

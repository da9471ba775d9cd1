"""A fuzz campaign over three ssh hosts with one host killed mid-run, then resumed (issue 31).

Run as root: ``python benchmarks/bench_hosts.py [--time 40] [--kill-at 20]``. Makes the network
namespaces and sshds of ``tests/test_hosts_ssh.py`` (10.213.K.2, loopback-only traffic; needs ``ip
netns`` and ``openssh-server``), runs ``pytest --litmus-fuzz=TIME --tx ssh=...`` (3 hosts, one worker
each, sim, ``--litmus-retry-lost=0``), SIGKILLs host 3's processes at ``--kill-at`` seconds, and
prints when the session ended against the planned end, what it merged and lost; then
``--litmus-resume`` over hosts 1 and 2 and its totals. Prints the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_hosts_ssh import Hosts, _pytest  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=40.0, help="--litmus-fuzz seconds (default 40)")
    ap.add_argument("--kill-at", type=float, default=20.0, help="kill host 3 then (default 20)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hosts-") as tmp:
        h = Hosts(Path(tmp), 3)
        try:
            h.up()
            ctl = Path(tmp) / "ctl"
            ctl.mkdir()
            print(f"load average before: {os.getloadavg()[0]:.2f}")
            common = [f"--litmus-fuzz={a.time:g}", "--litmus-campaign=bench",
                      "--litmus-backend=sim"]
            t0 = time.monotonic()
            p = _pytest(ctl, *common, "--litmus-retry-lost=0",
                        *(x for k in (1, 2, 3) for x in ("--tx", h.tx(k))), ".")
            threading.Timer(a.kill_at, lambda: h.kill(3)).start()
            p.communicate(timeout=a.time + 600)
            end = time.monotonic() - t0
            fleet = json.loads((ctl / ".scopefuzz-pytest/bench/fleet.json").read_text())
            print(f"killed host 3 at {a.kill_at:g} s; session ended on its own at {end:.1f} s "
                  f"(planned {a.time:g} s + start-up), exit {p.returncode}")
            print(f"  {fleet['received']} of {fleet['plan']['items']} items, "
                  f"{fleet['programs']} programs; lost: "
                  + "; ".join(f"item {x['item']}: {x['reason']}" for x in fleet["lost"]))
            t1 = time.monotonic()
            p = _pytest(ctl, *common, "--litmus-resume",
                        *(x for k in (1, 2) for x in ("--tx", h.tx(k))), ".")
            p.communicate(timeout=a.time + 600)
            fleet = json.loads((ctl / ".scopefuzz-pytest/bench/fleet.json").read_text())
            print(f"resume over hosts 1-2: {time.monotonic() - t1:.1f} s, exit {p.returncode}; "
                  f"{fleet['received']} of {fleet['plan']['items']} items, "
                  f"{fleet['programs']} programs, complete: {fleet['complete']}")
            print(f"load average after: {os.getloadavg()[0]:.2f}")
        finally:
            h.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())

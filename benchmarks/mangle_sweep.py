"""Hostile-input sweep (issue 33): mangled variants of real litmus files through ``scopefuzz fmt``
and ``scopefuzz check`` out of process, counting contract breaks.

    python benchmarks/mangle_sweep.py [--count 20000] [--batch 200] [--timeout 600] [--seed 1]

Variants (tests/mangling.py: byte flips, truncations, line edits, huge integers, deep nesting,
unicode/NUL, CRLF/BOM) of every ``*.litmus`` under corpora/ and ../shared/conformance are written
to a temporary directory in batches; each batch is one ``fmt`` process and one ``check --timeout 5``
process over the whole batch (``ulimit -v 4G`` through ``resource``, a per-process wall-clock limit).
A batch that breaks the contract as a whole (a traceback, a signal, a hang) is rerun file by file to
name the file. Printed: variants, tracebacks, hangs, blow-ups (out-of-memory lines or a process
killed), internal errors (exit 5), unlocated error lines -- each target 0 -- and the wall time.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from mangling import KINDS, mangle  # noqa: E402

LIMIT_AS = 4 << 30


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def sources() -> list[pathlib.Path]:
    dirs = [ROOT / "corpora", pathlib.Path(os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
            / "conformance"]
    return sorted(p for d in dirs if d.is_dir() for p in d.rglob("*.litmus"))


def run(argv: list[str], timeout: float) -> tuple[int | None, str]:
    """(exit status or None on a hang, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        p = subprocess.run([sys.executable, "-m", "fuzz.cli", *argv], cwd=ROOT, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=timeout, preexec_fn=_limit)
    except subprocess.TimeoutExpired:
        return None, ""
    return p.returncode, p.stderr


def judge(status: int | None, err: str, files: list[str], tally: dict, where: list) -> bool:
    """Count one process's breaks; True when the process as a whole broke (rerun per file)."""
    whole = status is None or status < 0 or "Traceback" in err or status not in (0, 1, 2, 5)
    for line in err.splitlines():
        m = re.match(r"(.*?\.litmus)(:\d+:\d+)?: \S", line)
        if m is None or m.group(1) not in files:
            if not whole:
                tally["unlocated"] += 1
                where.append(("unlocated", line[:200]))
            continue
        if "out of memory" in line:
            tally["blowups"] += 1
            where.append(("blowup", line[:200]))
        if "internal error" in line:
            tally["internal"] += 1
            where.append(("internal", line[:200]))
    return whole


def one_file(cmd: list[str], f: str, timeout: float, tally: dict, where: list) -> None:
    status, err = run([*cmd, f], timeout)
    if status is None:
        tally["hangs"] += 1
        where.append(("hang", f"{' '.join(cmd)} {f}"))
    elif status < 0:
        tally["blowups"] += 1
        where.append(("signal", f"{' '.join(cmd)} {f}: signal {-status}"))
    elif "Traceback" in err:
        tally["tracebacks"] += 1
        where.append(("traceback", f"{' '.join(cmd)} {f}: {err.strip().splitlines()[-1][:200]}"))
    else:
        judge(status, err, [f], tally, where)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per batch process")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    srcs = sources()
    data = {p: p.read_bytes() for p in srcs}
    kinds = sorted(KINDS)
    tally = dict(variants=0, tracebacks=0, hangs=0, blowups=0, internal=0, unlocated=0)
    where: list = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mangle") as tmp:
        done = 0
        while done < args.count:
            n = min(args.batch, args.count - done)
            bdir = pathlib.Path(tmp) / f"b{done}"
            bdir.mkdir()
            files = []
            for i in range(n):
                src = rng.choice(srcs)
                f = bdir / f"{i}.litmus"
                f.write_bytes(mangle(data[src], rng.choice(kinds), rng.getrandbits(32)))
                files.append(str(f))
            for cmd in (["fmt"], ["check", "--timeout", "5"]):
                status, err = run([*cmd, *files], args.timeout)
                if judge(status, err, files, tally, where):
                    for f in files:
                        one_file(cmd, f, 60, tally, where)
            done += n
            tally["variants"] = done
            print(f"  {done} variants, {time.perf_counter() - t0:.0f} s: "
                  + ", ".join(f"{k} {v}" for k, v in tally.items() if k != "variants"),
                  file=sys.stderr, flush=True)
            for f in files:
                os.unlink(f)
    print(f"{tally['variants']} variants of {len(srcs)} files ({len(kinds)} kinds), "
          f"{time.perf_counter() - t0:.0f} s: tracebacks {tally['tracebacks']}, hangs "
          f"{tally['hangs']}, blow-ups {tally['blowups']}, internal errors {tally['internal']}, "
          f"unlocated errors {tally['unlocated']}")
    for kind, text in where[:50]:
        print(f"  {kind}: {text}")
    return 1 if any(v for k, v in tally.items() if k != "variants") else 0


if __name__ == "__main__":
    sys.exit(main())

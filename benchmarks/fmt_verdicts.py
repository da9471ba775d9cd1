"""Verdict sanity of the printers (issue 34): ``scopefuzz check --json`` of every file printed by
``scopefuzz fmt`` equals that of the original file, apart from the fields naming the file.

Usage: ``.venv/bin/python benchmarks/fmt_verdicts.py [DIR ...]`` (default: the C11 and OPENCL
conformance suites under ``/work/shared/conformance``, each left out with a note when absent,
and ``corpora/opencl`` and ``corpora/cuda``).

Each tree is printed file by file with :func:`litmus.format_test` into a temporary tree of the
same shape; ``check --json`` then runs once over the original tree and once over the printed one
(with ``SCOPEFUZZ_VERDICT_CACHE=off`` so that the engine decides both), and the records are
compared in order with ``file``, ``test`` and ``seconds`` left out. A file the printer refuses
is counted as ``refused`` (and not compared); a record that differs is listed and the exit
status is 1.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from litmus import PrintError, format_test, parse_file  # noqa: E402

CONFORMANCE = pathlib.Path("/work/shared/conformance")
DEFAULT = [CONFORMANCE / "C11", CONFORMANCE / "OPENCL", ROOT / "corpora/opencl",
           ROOT / "corpora/cuda"]
NAMING = ("file", "test", "seconds")


def check_json(top: pathlib.Path) -> list[dict]:
    env = dict(os.environ, SCOPEFUZZ_VERDICT_CACHE="off", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "fuzz.cli", "check", "--json", str(top)],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in NAMING}


def compare(top: pathlib.Path) -> tuple[int, int, list[str]]:
    """(files compared, files refused, the files whose records differ)."""
    with tempfile.TemporaryDirectory() as tmp:
        printed = pathlib.Path(tmp)
        refused = 0
        for path in sorted(top.rglob("*.litmus")):
            rel = path.relative_to(top)
            try:
                text = format_test(parse_file(path))
            except PrintError:
                refused += 1
                continue
            (printed / rel).parent.mkdir(parents=True, exist_ok=True)
            (printed / rel).write_text(text, encoding="utf-8")
        kept = {p.relative_to(printed) for p in printed.rglob("*.litmus")}
        original = pathlib.Path(tmp + ".orig")
        # the original tree restricted to the printed files, so the two runs list the same files
        for rel in kept:
            (original / rel).parent.mkdir(parents=True, exist_ok=True)
            (original / rel).write_bytes((top / rel).read_bytes())
        try:
            a, b = check_json(original), check_json(printed)
        finally:
            subprocess.run(["rm", "-rf", str(original)], check=False)
    if len(a) != len(b) or len(a) != len(kept):
        return len(kept), refused, [f"{top}: {len(kept)} files, {len(a)} / {len(b)} records"]
    differ = [ra["file"] for ra, rb in zip(a, b) if strip(ra) != strip(rb)]
    return len(kept), refused, differ


def main(argv: list[str]) -> int:
    tops = [pathlib.Path(a) for a in argv] or DEFAULT
    bad = []
    for top in tops:
        if not top.is_dir():
            print(f"({top} is absent: left out)")
            continue
        t0 = time.perf_counter()
        n, refused, differ = compare(top)
        bad += differ
        print(f"{top}: {n} files printed and checked, {n - len(differ)} equal records, "
              f"{len(differ)} different, {refused} refused ({time.perf_counter() - t0:.0f} s)")
    for f in bad:
        print(f"DIFFERENT: {f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``check --format herd`` against herd7's own output on the C suites (issue 33), and mcompare7.

Usage: ``.venv/bin/python benchmarks/herd_compare.py [--shared DIR] [--model rc11|c11] [--keep DIR]
[--timeout S] [FILE.litmus...]`` (files given: those instead of the suites)

herd7 is found through ``$HERD7`` or ``PATH`` (``mcompare7`` through ``$MCOMPARE7``, next to
herd7, or ``PATH``); without it the script prints why it skips and exits 0. herd7 is not a
dependency of scopefuzz: docs/oracle.md ("herd7 comparison") says how to build it from source.

For each C test (``DIR/conformance/C11``, both halves, and the corpora's C-dialect tests, if any),
herd7 runs the model's herd cat (:data:`CATS`: ``rc11.cat`` for ``--model rc11``,
``c11_simp.cat`` for ``--model c11``: C11 with the simplified SC axiom of Batty, Donaldson and
Wickerson, POPL 2016, the model oracle/models/c11 implements), one process per file (herd7 drops
a second test of the same name in one run), and ``scopefuzz check --format herd --model M`` runs
on all of them.
Both logs are cut into per-test blocks and compared field by field:

- ``kind``: the first line's Allowed / Forbidden / Required;
- ``states``: the set of States lines (as sets of ``key=value;`` items) and the States count;
- ``text``: the States lines as text, in order (herd sorts them; each line lists registers by
  thread, then locations, each group in name order);
- ``verdict``: Ok / No / Undef;
- ``flags``: the ``Flag`` lines;
- ``condition``: the Condition line;
- ``observation``: Never / Sometimes / Always of the Observation line;
- ``witnesses``: Positive / Negative counts. herd counts candidate executions, scopefuzz counts
  projected states (oracle/herd_format.py), so these differ by design whenever several
  executions give one state: reported apart, as ``witnesses (executions >= states)`` when each
  herd count is at least scopefuzz's and zero exactly where scopefuzz's is, else as
  ``witnesses (otherwise)`` (a real difference).

Then ``mcompare7 -show s`` / ``-show v`` over the two logs (states and verdict tables); its
``-pos`` / ``-neg`` difference files are written under ``--keep`` when given. The report ends with
one line per field: equal / differing, and the differing tests.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: scopefuzz model -> herd7's cat for it (in herd7's libdir, herdtools7/herd/libdir)
CATS = {"rc11": "rc11.cat", "c11": "c11_simp.cat"}

FIELDS = ("kind", "states", "text", "verdict", "flags", "condition", "observation", "witnesses")


def find_herd() -> tuple[str | None, str | None, str]:
    """(herd7, mcompare7, reason when herd7 is missing)."""
    herd = os.environ.get("HERD7") or shutil.which("herd7")
    if not herd or not os.access(herd, os.X_OK):
        return None, None, ("herd7 not found (set HERD7=/path/to/herd7 or put it on PATH; "
                            "docs/oracle.md 'herd7 comparison' says how to build it)")
    mc = os.environ.get("MCOMPARE7")
    if not mc:
        side = pathlib.Path(herd).with_name("mcompare7")
        mc = str(side) if side.exists() else shutil.which("mcompare7")
    return herd, mc, ""


def c_tests(shared: pathlib.Path) -> list[pathlib.Path]:
    """The C-dialect litmus files: the conformance C11 suite, then the corpora's C tests."""
    files = sorted((shared / "conformance" / "C11").rglob("*.litmus"))
    for f in sorted((ROOT / "corpora").rglob("*.litmus")):
        with open(f, errors="replace") as fh:
            if fh.readline().split()[:1] == ["C"]:
                files.append(f)
    return files


def parse_log(text: str) -> dict[str, dict]:
    """herd-format log -> {test name: {field: value}} (a name's later blocks as ``name#2``...)."""
    out: dict[str, dict] = {}
    blocks = re.split(r"(?m)^(?=Test )", text)
    for b in blocks:
        lines = [ln.rstrip() for ln in b.splitlines()]
        if not lines or not lines[0].startswith("Test "):
            continue
        head = lines[0].split()
        name, kind = head[1], (head[2] if len(head) > 2 else "")
        rec: dict = {"kind": kind, "flags": [], "states": None, "nstates": -1}
        i = 1
        while i < len(lines):
            ln = lines[i]
            if ln.startswith("States "):
                n = int(ln.split()[1])
                rec["nstates"] = n
                rec["states"] = frozenset(frozenset(lines[i + 1 + k].split())
                                          for k in range(n))
                rec["text"] = lines[i + 1:i + 1 + n]
                i += n + 1
                continue
            if ln in ("Ok", "No", "Undef") or ln.startswith("No ("):
                rec["verdict"] = ln.split()[0]
            elif ln.startswith("Positive:"):
                m = re.match(r"Positive: (\d+) Negative: (\d+)", ln)
                rec["witnesses"] = (int(m.group(1)), int(m.group(2)))
            elif ln.startswith("Flag "):
                rec["flags"].append(ln[5:])
            elif ln.startswith("Condition "):
                rec["condition"] = ln[len("Condition "):]
            elif ln.startswith("Observation "):
                rec["observation"] = ln.split()[2]
            i += 1
        rec["flags"] = sorted(rec["flags"])
        k = 2
        key = name
        while key in out:               # two files, one name (imm-R2, imm-R2-alt): name#2
            key, k = f"{name}#{k}", k + 1
        out[key] = rec
    return out


def first_blocks(text: str) -> str:
    """The log with only the first ``Test`` block of each name."""
    seen, out = set(), []
    for b in re.split(r"(?m)^(?=Test )", text):
        name = b.split()[1] if b.startswith("Test ") else None
        if name is None or name not in seen:
            out.append(b)
            seen.add(name)
    return "".join(out)


def mcompare_rows(text: str) -> dict[str, list[str]]:
    """mcompare7's table -> {test: the cells of its first row after the test name}."""
    rows: dict[str, list[str]] = {}
    for ln in text.splitlines():
        if not ln or ln[0] in " -*" or "|" not in ln:
            continue
        name, *cols = ln.split("|")
        cells = [c.strip() for c in "|".join(cols[1:] if len(cols) > 1 else cols).split("  ")
                 if c.strip()]
        rows.setdefault(name.strip(), cells)
    return rows


def _halves_equal(tokens: list[str]) -> bool:
    """A two-column row's cells (herd7's, then scopefuzz's) are the same."""
    half = len(tokens) // 2
    return len(tokens) % 2 == 0 and tokens[:half] == tokens[half:]


def run_herd(herd: str, cat: str, files: list[pathlib.Path], timeout: float) -> tuple[str, dict]:
    """herd7's log over ``files`` (one process per file) and {file: error line} for files it
    refused or did not finish."""
    logs, errors = [], {}
    for f in files:
        try:
            p = subprocess.run([herd, "-model", cat, str(f)], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            errors[str(f)] = f"timeout after {timeout:.0f} s"
            continue
        if "Test " not in p.stdout:
            errors[str(f)] = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        logs.append(p.stdout)
    return "".join(logs), errors


def run_scopefuzz(model: str, files: list[pathlib.Path]) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SCOPEFUZZ_VERDICT_CACHE": "off"}
    p = subprocess.run([sys.executable, "-m", "fuzz.cli", "check", "--format", "herd",
                        "--model", model, *map(str, files)],
                       capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr)
    return p.stdout


def _per_state(herd: tuple, ours: tuple) -> bool:
    """herd's execution counts and scopefuzz's state counts agree as far as they can: at least
    as many executions as states on each side, and zero exactly where the other is zero."""
    return all(h >= o and (h == 0) == (o == 0) for h, o in zip(herd, ours))


def compare(herd_log: dict, sf_log: dict) -> dict[str, list[tuple[str, str]]]:
    """{field: [(test, 'herd ... | scopefuzz ...')]} over the tests in both logs."""
    diffs: dict[str, list] = {f: [] for f in FIELDS + ("witnesses!",)}
    for name in sorted(set(herd_log) & set(sf_log)):
        h, s = herd_log[name], sf_log[name]
        for field in FIELDS:
            a, b = h.get(field), s.get(field)
            if field == "states":
                if a != b or h["nstates"] != s["nstates"]:
                    only_h = sorted(" ".join(sorted(x)) for x in (a or set()) - (b or set()))
                    only_s = sorted(" ".join(sorted(x)) for x in (b or set()) - (a or set()))
                    diffs[field].append((name, f"herd only {only_h[:4]} | scopefuzz only "
                                               f"{only_s[:4]}"))
            elif field == "text" and a != b:
                first = next(k for k in range(min(len(a), len(b)) + 1)
                             if k == min(len(a), len(b)) or a[k] != b[k])
                diffs[field].append((name, f"line {first + 1}: herd {a[first:first + 1]} | "
                                           f"scopefuzz {b[first:first + 1]}"))
            elif field == "witnesses" and a != b and _per_state(a, b):
                diffs["witnesses"].append((name, f"herd {a} executions | scopefuzz {b} states"))
            elif a != b:
                key = "witnesses!" if field == "witnesses" else field
                diffs[key].append((name, f"herd {a} | scopefuzz {b}"))
    return diffs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"),
                    help="the shared folder holding conformance/C11 (default: ../shared)")
    ap.add_argument("--model", choices=sorted(CATS), default="rc11")
    ap.add_argument("--keep", default=None, help="write both logs and mcompare7's files here")
    ap.add_argument("--timeout", type=float, default=120.0, help="herd7 seconds per file")
    ap.add_argument("files", nargs="*", help="C litmus files to compare instead of the suites")
    args = ap.parse_args(argv)
    herd, mc, why = find_herd()
    if not herd:
        print(f"skipped: {why}")
        return 0
    shared = pathlib.Path(args.shared)
    if not args.files and not (shared / "conformance" / "C11").is_dir():
        print(f"skipped: no C suite at {shared / 'conformance' / 'C11'} (--shared DIR)")
        return 0
    files = [pathlib.Path(f) for f in args.files] or c_tests(shared)
    ver = subprocess.run([herd, "-version"], capture_output=True, text=True).stdout.strip()
    cat = CATS[args.model]
    print(f"herd7 {ver} -model {cat}  vs  scopefuzz check --format herd --model {args.model}: "
          f"{len(files)} C files")
    hlog, herrs = run_herd(herd, cat, files, args.timeout)
    slog = run_scopefuzz(args.model, files)
    keep = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp())
    keep.mkdir(parents=True, exist_ok=True)
    (keep / "herd7.log").write_text(hlog)
    (keep / "scopefuzz.log").write_text(slog)
    h, s = parse_log(hlog), parse_log(slog)
    for f, e in sorted(herrs.items()):
        print(f"herd7 could not run {f}: {e}")
    print(f"tests: herd7 {len(h)}, scopefuzz {len(s)}, both {len(set(h) & set(s))}")
    for name in sorted(set(h) ^ set(s)):
        print(f"  only in {'herd7' if name in h else 'scopefuzz'}: {name}")
    diffs = compare(h, s)
    for field in FIELDS + ("witnesses!",):
        d = diffs[field]
        label = {"witnesses": "witnesses (executions >= states)",
                 "witnesses!": "witnesses (otherwise)"}.get(field, field)
        print(f"{label:34} {'equal' if not d else f'differing in {len(d)}'}")
        for name, text in d:
            print(f"    {name}: {text}")
    if mc:
        # mcompare7 refuses a log holding one name twice with different hashes (herd7's own
        # log too: imm-R2 and imm-R2-alt share a name): the first block of each name is kept
        for src in ("herd7", "scopefuzz"):
            (keep / f"{src}.mc.log").write_text(first_blocks((keep / f"{src}.log").read_text()))
        logs = [str(keep / "herd7.mc.log"), str(keep / "scopefuzz.mc.log")]
        p = subprocess.run([mc, "-nohash", "-show", "d", "-pos", str(keep / "pos.txt"),
                            "-neg", str(keep / "neg.txt"), *logs], capture_output=True, text=True)
        rows = mcompare_rows(p.stdout)
        same = [t for t, cells in rows.items() if " ".join(cells).split()[-1:] == ["=="]]
        print(f"mcompare7 -nohash -show d (states, herd7.log against scopefuzz.log): "
              f"{len(rows)} tests, {len(same)} '==' (same states), exit {p.returncode}")
        for t in sorted(set(rows) - set(same)):
            print(f"    differs: {t}")
        p = subprocess.run([mc, "-nohash", "-show", "k", *logs], capture_output=True, text=True)
        rows = mcompare_rows(p.stdout)
        same = [t for t, cells in rows.items() if _halves_equal(" ".join(cells).split())]
        print(f"mcompare7 -nohash -show k (validation): {len(rows)} tests, {len(same)} with the "
              f"same column, exit {p.returncode}")
        for t in sorted(set(rows) - set(same)):
            print(f"    differs: {t}: {' | '.join(rows[t])}")
    else:
        print("mcompare7 not found (MCOMPARE7, next to herd7, or PATH): not run")
    print(f"logs in {keep}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

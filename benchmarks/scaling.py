"""How the oracle's time grows with program size (issue 16's families), beside herd7's figures.

Usage: ``.venv/bin/python benchmarks/scaling.py [--quick] [--max-events N] [--limit S]
[--shared DIR]``; ``scopefuzz bench --only scaling`` prints the same figures.

Families (events = the program's memory events, as herd counts them: initial writes and the
engine's final-memory reads not included), each test written out as litmus text here:

- ``sb-ring``: n threads (C, rc11, relaxed atomics), thread i stores ``x_i`` then loads
  ``x_(i+1 mod n)``: 2n events, 2^n allowed states;
- ``lb-ring``: thread i loads ``x_i`` then stores ``x_(i+1 mod n)``: 2n events;
- ``mp-chain``: thread 0 stores ``x_0`` then ``x_1``, thread i loads ``x_i`` and stores
  ``x_(i+1)``, the last thread loads ``x_(n-1)`` then ``x_0``: 2n events;
- ``one-loc``: n threads each storing its own value to ``x`` then loading ``x``: 2n events;
- ``amdgpu-4x4``: four AMDGPU threads in separate workgroups, each storing and loading both of
  two locations with relaxed agent-scope atomics (16 events); ``amdgpu-5x4-rmw``: five such
  threads, thread 0's first store an rmw (21 events). For these two: the time of one observed
  outcome (``oracle.allows``: the outcome of running the threads one after the other, allowed,
  and one with a value nobody writes, forbidden), then the full set (once; ``--no-full``
  leaves it out: the 21-event shape's allowed set is very large).

For each size: the full allowed set (``oracle.check``, result cache cleared before each
repetition), wall seconds as the worst case and the mean over the repetitions, and the worst
CPU seconds of the process (less distorted by other jobs on a shared machine). A family stops
growing once one size took more than ``--limit`` seconds. Last, the per-test rate of the RC11
conformance suite (``benchmarks/conformance.py``: the 2nd, warm pass in one process).

``--herd`` (herd7 from ``HERD7`` or ``PATH``; docs/oracle.md "herd7 comparison" builds it): alone,
the start-up comparison on a 16-event ring (``sb_ring(8)``) as whole processes: herd7 -model
rc11.cat, ``scopefuzz check`` with the verdict cache off, and with a cache hit; with
``--asymmetric``, herd7 and ``scopefuzz check --model rc11`` side by side on the C form of each
asymmetric case (:func:`amdgpu_to_c`: the system-scope program with relaxed C11 atomics),
whole-process seconds (worst, median over ``--reps``), CPU seconds and peak RSS, ``--timeout``
120 s by default.

In the family table, herd7 7.58's figures are those measured in issue 16 on this machine (same
programs, "—" where none was taken). Timings on a shared machine are noisy: compare interleaved runs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: herd7 7.58 (issue 16's table): family -> events -> seconds (text: a bound or a range)
HERD7 = {
    "sb-ring": {16: "0.26-0.35", 20: "1.5-2.2"},
    "lb-ring": {16: "0.26-0.35", 20: "1.5-2.2"},
    "mp-chain": {16: "0.26-0.35", 20: "1.5-2.2"},
    "one-loc": {10: ">120"},
}


def _c_test(name: str, nloc: int, threads: list[list[str]], cond: str) -> str:
    locs = [f"x{i}" for i in range(nloc)]
    init = " ".join(f"[{x}] = 0;" for x in locs)
    params = ", ".join(f"atomic_int* {x}" for x in locs)
    body = [f"P{t} ({params}) {{ " + " ".join(lines) + " }" for t, lines in enumerate(threads)]
    return f"C {name}\n{{ {init} }}\n" + "\n".join(body) + f"\nexists ({cond})\n"


def _st(x: str, v: int) -> str:
    return f"atomic_store_explicit({x}, {v}, memory_order_relaxed);"


def _ld(r: str, x: str) -> str:
    return f"int {r} = atomic_load_explicit({x}, memory_order_relaxed);"


def sb_ring(n: int) -> str:
    th = [[_st(f"x{i}", 1), _ld("r0", f"x{(i + 1) % n}")] for i in range(n)]
    return _c_test(f"SB-ring-{n}", n, th, " /\\ ".join(f"{i}:r0=0" for i in range(n)))


def lb_ring(n: int) -> str:
    th = [[_ld("r0", f"x{i}"), _st(f"x{(i + 1) % n}", 1)] for i in range(n)]
    return _c_test(f"LB-ring-{n}", n, th, " /\\ ".join(f"{i}:r0=1" for i in range(n)))


def mp_chain(n: int) -> str:
    th = [[_st("x0", 1), _st("x1", 1)]]
    th += [[_ld("r0", f"x{i}"), _st(f"x{i + 1}", 1)] for i in range(1, n - 1)]
    th.append([_ld("r0", f"x{n - 1}"), _ld("r1", "x0")])
    return _c_test(f"MP-chain-{n}", n, th, f"{n - 1}:r0=1 /\\ {n - 1}:r1=0")


def one_loc(n: int) -> str:
    th = [[_st("x0", i + 1), _ld("r0", "x0")] for i in range(n)]
    return _c_test(f"one-loc-{n}", 1, th, " /\\ ".join(f"{i}:r0={i + 1}" for i in range(n)))


def amdgpu_multi(nthreads: int, rmw: bool) -> str:
    cols = []
    for t in range(nthreads):
        v = t + 1
        first = f"rmw.add.agent r2, x, {v}" if (rmw and t == 0) else f"st.atom.agent x, {v}"
        cols.append([f"P{t}@wg {t}", first, f"st.atom.agent y, {v}", "ld.atom.agent r0, x",
                     "ld.atom.agent r1, y"])
    width = max(len(c) for col in cols for c in col) + 1
    rows = [" | ".join(col[k].ljust(width) for col in cols) + " ;" for k in range(5)]
    name = f"AMDGPU-{nthreads}x4{'-rmw' if rmw else ''}"
    return f"AMDGPU {name}\n{{ x = 0; y = 0; }}\n" + "\n".join(" " + r for r in rows) + \
        "\nexists (P0:r0 == 0 /\\ P1:r0 == 0)\n"


# --- issue 32: asymmetric AMDGPU programs (shapes nobody tuned the engine for) ----------------------

#: issue 32's program (five threads in separate workgroups, two locations, relaxed agent atomics,
#: one rmw, 21 events, no two threads interchangeable): threads 0 and 1 store both locations
#: twice and then load one, thread 2 loads x, y, x, y, thread 3 does an rmw on x then loads y and
#: stores y, thread 4 loads y, x, y (the other order). The issue describes it in words only; this
#: is that description written out.
ISSUE32 = """AMDGPU issue32-5t-21ev
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             | P2@wg 2             | P3@wg 3                | P4@wg 4             ;
 st.atom.agent x, 1  | st.atom.agent y, 3  | ld.atom.agent r0, x | rmw.add.agent r0, x, 5 | ld.atom.agent r0, y ;
 st.atom.agent y, 1  | st.atom.agent x, 3  | ld.atom.agent r1, y | ld.atom.agent r1, y    | ld.atom.agent r1, x ;
 st.atom.agent x, 2  | st.atom.agent y, 4  | ld.atom.agent r2, x | st.atom.agent y, 5     | ld.atom.agent r2, y ;
 st.atom.agent y, 2  | st.atom.agent x, 4  | ld.atom.agent r3, y |                        |                     ;
 ld.atom.agent r0, y | ld.atom.agent r0, x |                     |                        |                     ;
exists (P2:r0 == 2 /\\ P2:r2 == 1 /\\ P4:r0 == 4 /\\ P4:r1 == 0)
"""

#: scopes of the asymmetric family (every thread in its own workgroup)
ASYM_SCOPES = ("wg", "agent", "sys")


def asymmetric(nthreads: int, nlocs: int, events: int, scope: str, seed: int = 0) -> str:
    """An AMDGPU program of ``nthreads`` threads, each in its own workgroup, over ``nlocs``
    locations, with ``events`` memory events (a load or a store is one, an rmw two), relaxed
    atomics at ``scope``: the events are dealt to the threads unevenly and each thread draws its
    own mix of loads, stores and rmws (a seeded ``random.Random``: the same program every run),
    so that no two threads are interchangeable. Stores write distinct values; the condition asks
    for the first two loads of the program to see the last store to their location."""
    import random
    rng = random.Random(f"{nthreads}/{nlocs}/{events}/{scope}/{seed}")
    sizes = [2] * nthreads                       # at least a load and a store each
    for _ in range(events - 2 * nthreads):
        sizes[rng.randrange(nthreads)] += 1
    suffix = "" if scope == "sys" else f".{scope}"
    locs = [chr(ord("x") + i) if i < 3 else f"l{i}" for i in range(nlocs)]
    cols, value, loads, stores = [], 0, [], {}
    for t in range(nthreads):
        code, left, reg = [], sizes[t], 0
        mix = rng.choice(["ld", "st", "rmw", "mixed", "mixed"])
        while left > 0:
            kind = rng.choice({"ld": ["ld", "ld", "st"], "st": ["st", "st", "ld"],
                               "rmw": ["rmw", "ld", "st"], "mixed": ["ld", "st", "rmw"]}[mix])
            if kind == "rmw" and left < 2:
                kind = "ld"
            loc = locs[(t + len(code) + rng.randrange(2)) % nlocs]
            if kind == "ld":
                code.append(f"ld.atom{suffix} r{reg}, {loc}")
                loads.append((t, f"r{reg}", loc))
                reg, left = reg + 1, left - 1
            elif kind == "st":
                value += 1
                code.append(f"st.atom{suffix} {loc}, {value}")
                stores[loc] = value
                left -= 1
            else:
                value += 1
                code.append(f"rmw.add{suffix} r{reg}, {loc}, {value}")
                reg, left = reg + 1, left - 2
        cols.append([f"P{t}@wg {t}"] + code)
    depth = max(len(c) for c in cols)
    for c in cols:
        c += [""] * (depth - len(c))
    width = max(len(c) for col in cols for c in col) + 1
    rows = [" | ".join(col[k].ljust(width) for col in cols) + " ;" for k in range(depth)]
    atoms = [f"P{t}:{r} == {stores.get(loc, 0)}" for t, r, loc in loads[:2]] or ["x == 0"]
    init = " ".join(f"{x} = 0;" for x in locs)
    name = f"asym-{nthreads}t-{nlocs}l-{events}e-{scope}"
    cond = " /\\ ".join(atoms)
    return f"AMDGPU {name}\n{{ {init} }}\n" + "\n".join(" " + r for r in rows) + \
        f"\nexists ({cond})\n"


#: (name, test text) of the asymmetric cases: issue 32's program, then per scope 5-8 threads
#: over 2-3 locations at 16-32 events (the six-thread 24-30-event cases the issue's target names)
def asymmetric_cases(quick: bool = False) -> list[tuple[str, str]]:
    shapes = [(5, 2, 16), (5, 3, 20), (5, 2, 24), (6, 2, 24), (6, 3, 27), (6, 2, 30),
              (7, 3, 28), (8, 2, 32)]
    if quick:
        shapes = [(5, 2, 16), (6, 2, 24), (6, 3, 30)]
    out = [("issue32-5t-21ev", ISSUE32)]
    for scope in ASYM_SCOPES:
        for nt, nl, ev in shapes:
            out.append((f"asym {nt}t {nl}l {ev}e {scope}", asymmetric(nt, nl, ev, scope)))
    return out


#: what each measurement runs in its own process (argv: file, what): "verdict" (oracle.check and
#: its verdict), "count" (the verdict, then the number of states), "stream" (check --json's whole
#: text written to /dev/null as it is made); prints the in-process seconds
_CHILD = r"""
import sys, time, os
import litmus, oracle
from oracle.warmup import ready
from oracle.registry import get
from oracle.check import default_model
from oracle.states import dump_pieces
test = litmus.parse(open(sys.argv[1]).read())
ready(get(default_model(test)))
t0 = time.perf_counter()
c0 = time.process_time()
res = oracle.check(test)
v = res.verdict             # (a long search: the witness search's, oracle/witness.py)
n = -1
if sys.argv[2] in ("count", "stream"):
    n = len(res.states)
if sys.argv[2] == "stream":
    with open(os.devnull, "w") as f:
        for piece in dump_pieces({"test": test.name, "states": res.states}):
            f.write(piece)
print(v, n, time.perf_counter() - t0, time.process_time() - c0)
"""


def measure(text: str, what: str, timeout: float) -> tuple[str, int, float, float, bool, float]:
    """(verdict, states or -1, seconds in the process, peak RSS in MB, timed out, CPU seconds in
    the process) of ``what`` (see :data:`_CHILD`) on the test ``text``, in a child process
    killed after ``timeout`` s."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".litmus", delete=False) as f:
        f.write(text)
    try:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, f.name, what],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        t0 = time.perf_counter()
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                return "timeout", -1, timeout, usage.ru_maxrss / 1024, True, timeout
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out = proc.stdout.read().split()
        if len(out) != 4:
            return f"error {proc.returncode}", -1, 0.0, usage.ru_maxrss / 1024, False, 0.0
        return out[0], int(out[1]), float(out[2]), usage.ru_maxrss / 1024, False, float(out[3])
    finally:
        os.unlink(f.name)


def asymmetric_table(quick: bool = False, timeout: float = 60.0, reps: int = 1,
                     only: str | None = None, whats=("verdict", "count", "stream")):
    """Yield (case, what, verdict, states, worst s, median s, worst peak RSS MB, worst CPU s,
    median CPU s) per case and measurement (``whats``: verdict, count, stream), ``reps``
    processes each."""
    for name, text in asymmetric_cases(quick):
        if only and only not in name:
            continue
        for what in whats:
            runs = [measure(text, what, timeout) for _ in range(reps)]
            secs = [r[2] for r in runs]
            cpu = [r[5] for r in runs]
            v, n = runs[-1][0], runs[-1][1]
            yield name, what, v, n, max(secs), statistics.median(secs), \
                max(r[3] for r in runs), max(cpu), statistics.median(cpu)
            if any(r[4] for r in runs) and what != "stream":
                break                   # the next measurement does more: it would time out too


# --- issue 32: the same asymmetric programs in C, for herd7 ----------------------------------------

def amdgpu_to_c(text: str) -> str:
    """The C form of an asymmetric AMDGPU program (:func:`asymmetric`, :data:`ISSUE32`): each
    relaxed atomic at any scope becomes a relaxed C11 atomic (``ld`` ->
    ``atomic_load_explicit``, ``st`` -> ``atomic_store_explicit``, ``rmw.add`` ->
    ``atomic_fetch_add_explicit``), thread by thread in the same order, with the same condition.
    C has no scopes: the C program is the AMDGPU one at system scope (every thread in one scope
    instance), what herd7's rc11.cat and scopefuzz's rc11 both read."""
    import re
    lines = text.strip().splitlines()
    name = lines[0].split()[1]
    locs = re.findall(r"(\w+) = 0;", lines[1])
    header = [c.strip() for c in lines[2].strip().rstrip(";").split("|")]
    code: list[list[str]] = [[] for _ in header]
    for row in lines[3:-1]:
        for t, cell in enumerate(row.strip().rstrip(";").split("|")):
            words = cell.replace(",", " ").split()
            if not words:
                continue
            op, args = words[0].split(".")[0], words[1:]
            if op == "ld":
                code[t].append(_ld(args[0], args[1]))
            elif op == "st":
                code[t].append(_st(args[0], int(args[1])))
            elif op == "rmw":
                code[t].append(f"int {args[0]} = atomic_fetch_add_explicit({args[1]}, "
                               f"{int(args[2])}, memory_order_relaxed);")
            else:
                raise ValueError(f"amdgpu_to_c: no C form for {cell.strip()!r}")
    cond = re.search(r"exists \((.*)\)", lines[-1]).group(1)
    cond = re.sub(r"P(\d+):(\w+) == (-?\d+)", r"\1:\2=\3", cond)
    cond = re.sub(r"\b([a-z]\w*) == (-?\d+)", r"\1=\2", cond)
    init = " ".join(f"[{x}] = 0;" for x in locs)
    params = ", ".join(f"atomic_int* {x}" for x in locs)
    body = [f"P{t} ({params}) {{\n  " + "\n  ".join(c) + "\n}" for t, c in enumerate(code)]
    return f"C {name}-C\n{{ {init} }}\n" + "\n".join(body) + f"\nexists ({cond})\n"


#: (name, threads, events, C text) of the asymmetric shapes in C, by events: issue 32's program
#: and each shape once (the system-scope program: C has no scopes)
def asymmetric_c_cases(quick: bool = False) -> list[tuple[str, int, int, str]]:
    shapes = [(5, 2, 16), (5, 3, 20), (5, 2, 24), (6, 2, 24), (6, 3, 27), (6, 2, 30),
              (7, 3, 28), (8, 2, 32)]
    if quick:
        shapes = [(5, 2, 16), (6, 2, 24), (6, 3, 30)]
    out = [("issue32-5t-21ev C", 5, 21, amdgpu_to_c(ISSUE32))]
    for nt, nl, ev in shapes:
        out.append((f"asym {nt}t {nl}l {ev}e C", nt, ev,
                    amdgpu_to_c(asymmetric(nt, nl, ev, "sys"))))
    return sorted(out, key=lambda c: (c[2], c[1]))


def find_herd7() -> str | None:
    """herd7 from ``$HERD7`` or ``PATH`` (docs/oracle.md, "herd7 comparison", builds it)."""
    import shutil
    h = os.environ.get("HERD7") or shutil.which("herd7")
    return h if h and os.access(h, os.X_OK) else None


def whole_process(argv: list[str], timeout: float, env: dict | None = None
                  ) -> tuple[float, float, bool, str, float]:
    """(wall seconds, peak RSS in MB, timed out, stdout, CPU seconds: user + system, what a
    loaded machine distorts least) of one whole process ``argv``, killed after ``timeout`` s."""
    import subprocess
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    while True:
        pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return time.perf_counter() - t0, usage.ru_maxrss / 1024, False, proc.stdout.read(), \
                usage.ru_utime + usage.ru_stime
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            return timeout, usage.ru_maxrss / 1024, True, "", usage.ru_utime + usage.ru_stime
        time.sleep(0.005)


def _sf_env(cache: str | None) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT),
            "SCOPEFUZZ_VERDICT_CACHE": cache if cache else "off"}


def _verdict(out: str) -> str:
    """The verdict word of a herd log or of ``scopefuzz check``'s text line."""
    for ln in out.splitlines():
        w = ln.split()
        if w[:1] in (["Ok"], ["No"], ["Undef"]):
            return w[0]
        if w and w[-1].rstrip(")") in ("Ok", "No", "Undef"):
            return w[-1].rstrip(")")
        for v in ("Ok", "No", "Undef"):
            if f" {v} " in f" {ln} ":
                return v
    return "?"


def herd_side_by_side(herd: str, quick: bool = False, timeout: float = 120.0, reps: int = 1,
                      only: str | None = None):
    """Yield (case, tool, verdict, worst s, median s, worst peak MB, worst CPU s, note) for herd7
    (``-model rc11.cat``) and ``scopefuzz check --model rc11`` (verdict cache off), whole
    processes, on the C form of each asymmetric case. Once herd7 timed out on a case, it is not run on the
    later cases with as many threads and events or more: those rows say so."""
    import tempfile
    herd_out_at = None
    for name, nthreads, events, text in asymmetric_c_cases(quick):
        if only and only not in name:
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".litmus", delete=False) as f:
            f.write(text)
        try:
            tools = [("herd7", [herd, "-model", "rc11.cat", f.name], None),
                     ("scopefuzz", [sys.executable, "-m", "fuzz.cli", "check", "--model",
                                    "rc11", f.name], _sf_env(None))]
            for tool, argv, env in tools:
                if tool == "herd7" and herd_out_at is not None and nthreads >= herd_out_at[0] \
                        and events >= herd_out_at[2] and name != herd_out_at[1]:
                    yield name, tool, "-", timeout, timeout, 0.0, 0.0, \
                        f"> {timeout:.0f} s: not run (timed out on {herd_out_at[1]})"
                    continue
                runs = [whole_process(argv, timeout, env) for _ in range(reps)]
                secs = [r[0] for r in runs]
                out = any(r[2] for r in runs)
                if out and tool == "herd7" and herd_out_at is None:
                    herd_out_at = (nthreads, name, events)
                yield name, tool, "timeout" if out else _verdict(runs[-1][3]), max(secs), \
                    statistics.median(secs), max(r[1] for r in runs), max(r[4] for r in runs), \
                    f"> {timeout:.0f} s" if out else ""
        finally:
            os.unlink(f.name)


def startup(herd: str | None, reps: int = 5):
    """Yield (tool, worst s, median s, worst peak MB, median CPU s) for the 16-event ring
    (``sb_ring(8)``, C) as whole processes: herd7, scopefuzz check with the verdict cache off, and with a private
    cache that already holds the verdict."""
    import shutil
    import tempfile
    text = sb_ring(8)
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "ring16.litmus")
        with open(path, "w") as f:
            f.write(text)
        cache = os.path.join(d, "cache")
        sf = [sys.executable, "-m", "fuzz.cli", "check", path]
        whole_process(sf, 120, _sf_env(cache))           # fills the private verdict cache
        rows = [("scopefuzz check, cache off", sf, _sf_env(None)),
                ("scopefuzz check, cache hit", sf, _sf_env(cache))]
        if herd:
            rows.insert(0, ("herd7 -model rc11.cat", [herd, "-model", "rc11.cat", path], None))
        for tool, argv, env in rows:
            runs = [whole_process(argv, 120, env) for _ in range(reps)]
            secs = [r[0] for r in runs]
            yield tool, max(secs), statistics.median(secs), max(r[1] for r in runs), \
                statistics.median(r[4] for r in runs)
    finally:
        shutil.rmtree(d, ignore_errors=True)


#: family -> (events -> test text, event sizes)
FAMILIES = {
    "sb-ring": (lambda e: sb_ring(e // 2), range(6, 25, 2)),
    "lb-ring": (lambda e: lb_ring(e // 2), range(6, 25, 2)),
    "mp-chain": (lambda e: mp_chain(e // 2), range(6, 25, 2)),
    "one-loc": (lambda e: one_loc(e // 2), range(6, 25, 2)),
}
AMDGPU_SHAPES = {"amdgpu-4x4": (16, lambda: amdgpu_multi(4, False), 4),
                 "amdgpu-5x4-rmw": (21, lambda: amdgpu_multi(5, True), 5)}


def timed(fn, reps: int) -> tuple[float, float, float, object]:
    """(worst, mean) wall seconds of ``reps`` calls of ``fn`` (caches cleared before each), the
    worst CPU seconds of this process (what a loaded machine distorts least), and the last
    call's value."""
    import oracle
    secs, cpu = [], []
    out = None
    for _ in range(reps):
        oracle.clear_cache()
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        secs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return max(secs), statistics.mean(secs), max(cpu), out


def scaling(quick: bool = False, max_events: int = 24, limit: float = 20.0,
            full: bool = True):
    """Yield (family, events, states, worst s, mean s, worst CPU s, herd7 text, note) per
    measured size."""
    import litmus
    import oracle
    reps = 1 if quick else 3
    warm()
    for fam, (make, sizes) in FAMILIES.items():
        for ev in sizes:
            if ev > max_events:
                break
            test = litmus.parse(make(ev))
            worst, mean, cpu, res = timed(lambda: oracle.check(test), reps)
            yield fam, ev, len(res.states), worst, mean, cpu, HERD7.get(fam, {}).get(ev, "—"), ""
            if worst > limit:
                break
    for fam, (ev, make, nthreads) in AMDGPU_SHAPES.items():
        test = litmus.parse(make())
        observed = sequential_outcome(nthreads, fam.endswith("rmw"))
        w1, m1, c1, ok = timed(lambda: oracle.allows(test, observed), reps)
        assert ok, "the outcome of running the threads one after the other must be allowed"
        yield fam, ev, 1, w1, m1, c1, "—", "one allowed outcome"
        bad = dict(observed)
        bad["P0:r0"] = 99                      # no write of 99: forbidden
        w2, m2, c2, ok = timed(lambda: oracle.allows(test, bad), reps)
        assert not ok
        yield fam, ev, 0, w2, m2, c2, "—", "one forbidden outcome"
        if full:
            worst, mean, cpu, res = timed(lambda: oracle.check(test), 1)
            yield fam, ev, len(res.states), worst, mean, cpu, "—", "full set"


def warm() -> None:
    """Load the compiled code the timed calls run (check and outcome queries of C and AMDGPU
    programs: each signature is loaded from numba's cache on its first call, 0.2-0.4 s) on small
    members of the families, untimed, as ``check``'s own clock leaves loading out."""
    import litmus
    import oracle
    oracle.check(litmus.parse(sb_ring(2)))
    for nthreads, rmw in ((2, False), (2, True)):
        test = litmus.parse(amdgpu_multi(nthreads, rmw))
        oracle.allows(test, sequential_outcome(nthreads, rmw))
        oracle.check(test)
    oracle.clear_cache()


def sequential_outcome(nthreads: int, rmw: bool) -> dict:
    """The outcome of :func:`amdgpu_multi` when its threads run one after the other in thread
    order (so the model allows it): every thread reads its own stores, the rmw reads 0, the
    last thread's stores are the final values."""
    out = {}
    for t in range(nthreads):
        out[f"P{t}:r0"] = t + 1
        out[f"P{t}:r1"] = t + 1
    if rmw:
        out["P0:r2"] = 0
    out["x"] = out["y"] = nthreads
    return out


def conformance_rate(shared: pathlib.Path):
    """Tests per second of the RC11 suite (warm pass), or None when the suite is absent."""
    if not (shared / "conformance" / "expected" / "RC11.csv").is_file():
        return None
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import conformance
    agree, disagree, _, secs = conformance.run_suite(shared, "RC11")
    n = len(agree) + len(disagree)
    return n, secs


def figures(quick: bool = False, max_events: int = 24, limit: float = 20.0, shared=None):
    """``scopefuzz bench`` rows: (label, value, unit)."""
    rows = []
    for fam, ev, ns, worst, mean, cpu, herd, note in scaling(quick, max_events, limit,
                                                            full=not quick):
        what = f"{fam} {ev} events" + (f", {note}" if note else "")
        rows.append((f"{what}: worst (mean {mean:.3g} s, CPU {cpu:.3g} s; herd7 {herd} s)",
                     worst, "s"))
    shared = pathlib.Path(shared or os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
    rate = conformance_rate(shared)
    if rate is not None:
        n, secs = rate
        rows.append((f"RC11 conformance, {n} tests, per test in-process (herd7 645/s)",
                     n / secs, "tests/s"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repetition per size")
    ap.add_argument("--max-events", type=int, default=24)
    ap.add_argument("--limit", type=float, default=20.0,
                    help="stop a family after a size that took longer (seconds)")
    ap.add_argument("--shared", default=None)
    ap.add_argument("--no-full", action="store_true",
                    help="AMDGPU shapes: one outcome only, not the full allowed set")
    ap.add_argument("--asymmetric", action="store_true",
                    help="issue 32's asymmetric AMDGPU cases only: verdict, state count and "
                         "streamed state list per case, each in its own process (seconds and "
                         "peak RSS)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="--asymmetric: kill a measurement's process after this many seconds "
                         "(default 60; with --herd, 120)")
    ap.add_argument("--reps", type=int, default=1, help="--asymmetric: processes per figure")
    ap.add_argument("--only", default=None, help="--asymmetric: cases whose name holds this")
    ap.add_argument("--no-stream", action="store_true",
                    help="--asymmetric: the verdict and the state count, not the streamed list")
    ap.add_argument("--verdict-only", action="store_true",
                    help="--asymmetric: the verdict alone (no state count, no streamed list)")
    ap.add_argument("--herd", action="store_true",
                    help="with --asymmetric: herd7 (HERD7 or PATH) and scopefuzz side by side on "
                         "the C form of each case, whole processes (--timeout, default 120 s "
                         "here); alone: the start-up comparison on a 16-event ring")
    args = ap.parse_args(argv)
    if args.herd:
        herd = find_herd7()
        if herd is None:
            print("herd7 not found (set HERD7 or PATH; docs/oracle.md 'herd7 comparison' says "
                  "how to build it): herd7 rows skipped")
        if not args.asymmetric:
            print(f"{'16-event ring (sb-ring 8, C), whole process':<44} {'worst s':>8} "
                  f"{'median s':>8} {'CPU med':>8} {'peak MB':>8}")
            for tool, worst, med, rss, cpu in startup(herd, max(args.reps, 5)):
                print(f"{tool:<44} {worst:>8.3f} {med:>8.3f} {cpu:>8.3f} {rss:>8.0f}")
            return 0
        if herd is None:
            print("nothing to set beside: --asymmetric without --herd gives scopefuzz's figures")
            return 0
        timeout = args.timeout if args.timeout is not None else 120.0
        print(f"{'case (C form)':<24} {'tool':<10} {'verdict':<8} {'worst s':>8} "
              f"{'median s':>8} {'CPU worst':>9} {'peak MB':>8}  note")
        sys.stdout.flush()
        for name, tool, v, worst, med, rss, cpu, note in herd_side_by_side(
                herd, args.quick, timeout, args.reps, args.only):
            print(f"{name:<24} {tool:<10} {v:<8} {worst:>8.3f} {med:>8.3f} {cpu:>9.3f} "
                  f"{rss:>8.0f}  {note}")
            sys.stdout.flush()
        return 0
    if args.asymmetric:
        print(f"{'case':<26} {'what':<8} {'verdict':<8} {'states':>10} {'worst s':>8} "
              f"{'median s':>8} {'CPU worst':>9} {'CPU med':>8} {'peak MB':>8}   "
              f"(herd7 beside: --asymmetric --herd)")
        sys.stdout.flush()
        whats = ("verdict",) if args.verdict_only else \
            ("verdict", "count") if args.no_stream else ("verdict", "count", "stream")
        for name, what, v, n, worst, med, rss, cworst, cmed in asymmetric_table(
                args.quick, args.timeout if args.timeout is not None else 60.0, args.reps,
                args.only, whats):
            print(f"{name:<26} {what:<8} {v:<8} {n if n >= 0 else '':>10} {worst:>8.3f} "
                  f"{med:>8.3f} {cworst:>9.3f} {cmed:>8.3f} {rss:>8.0f}")
            sys.stdout.flush()
        return 0
    print(f"{'family':<16} {'events':>6} {'states':>7} {'worst s':>9} {'mean s':>9} "
          f"{'CPU s':>9} {'herd7 s':>10}  note")
    sys.stdout.flush()
    for fam, ev, ns, worst, mean, cpu, herd, note in scaling(args.quick, args.max_events,
                                                            args.limit, not args.no_full):
        print(f"{fam:<16} {ev:>6} {ns:>7} {worst:>9.4f} {mean:>9.4f} {cpu:>9.4f} {herd:>10}  "
              f"{note}")
        sys.stdout.flush()
    shared = pathlib.Path(args.shared or os.environ.get("SCOPEFUZZ_SHARED",
                                                        ROOT.parent / "shared"))
    rate = conformance_rate(shared)
    if rate is None:
        print("RC11 conformance: suite not found under", shared)
    else:
        n, secs = rate
        print(f"RC11 conformance: {n} tests, {n / secs:,.0f} tests/s per test in-process "
              f"(herd7: 645/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

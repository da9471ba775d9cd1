"""``scopefuzz bench`` section ``sim``: simulator throughput and weakness.

- randomized mode: litmus iterations/s (end to end ``Backend.run``, compile excluded by a warm-up
  run) for 2-, 3- and 4-thread tests, on all cores numba is allowed to use;
- exhaustive mode: per weakness test, the fraction of the oracle's allowed states the correct
  simulator reaches in some scheduling (states with undef positions count as reached when some
  outcome matches them), plus schedules explored; and the same fraction averaged over the
  classic corpus;
- the mutation score of the hand-written corpora: how many of their tests kill each mutant.
"""

from __future__ import annotations

import time

import litmus
import oracle
from hw import BackendError
from hw.sim import MUTANTS, make_backend
from litmus.expected import read_expected
from litmus.ir import prop_atoms

from ..compare import compare, reached
from . import ROOT

SB = """AMDGPU SB
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             ;
 st.atom.agent x, 1  | st.atom.agent y, 1  ;
 ld.atom.agent r0, y | ld.atom.agent r0, x ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""
LB = """AMDGPU LB
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             ;
 ld.atom.agent r0, x | ld.atom.agent r0, y ;
 st.atom.agent y, 1  | st.atom.agent x, 1  ;
exists (P0:r0 == 1 /\\ P1:r0 == 1)
"""
MP = """AMDGPU MP
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             ;
 st x, 1             | ld.atom.agent r0, y ;
 st.atom.agent y, 1  | ld r1, x            ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
MP_RELACQ = """AMDGPU MP+rel+acq
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                 ;
 st x, 1                | ld.atom.acq.agent r0, y ;
 st.atom.rel.agent y, 1 | ld r1, x                ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
STALE = """AMDGPU STALE-L1
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                      ;
 st x, 1                | ld.atom.acq.agent.noav r0, y ;
 st.atom.rel.agent y, 1 | ld r1, x                     ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""
WRC = """AMDGPU WRC
{ x = 0; y = 0; }
 P0@wg 0            | P1@wg 1             | P2@wg 2             ;
 st.atom.agent x, 1 | ld.atom.agent r0, x | ld.atom.agent r0, y ;
                    | st.atom.agent y, 1  | ld.atom.agent r1, x ;
exists (P1:r0 == 1 /\\ P2:r0 == 1 /\\ P2:r1 == 0)
"""
IRIW = """AMDGPU IRIW
{ x = 0; y = 0; }
 P0@wg 0            | P1@wg 1             | P2@wg 2            | P3@wg 3             ;
 st.atom.agent x, 1 | ld.atom.agent r0, x | st.atom.agent y, 1 | ld.atom.agent r0, y ;
                    | ld.atom.agent r1, y |                    | ld.atom.agent r1, x ;
exists (P1:r0 == 1 /\\ P1:r1 == 0 /\\ P3:r0 == 1 /\\ P3:r1 == 0)
"""


def reached_fraction(test, hist) -> tuple[int, int]:
    """(allowed states matched by some observed outcome, allowed states)."""
    return reached(oracle.check(test), hist)


def corpus_weakness(b) -> list[tuple[str, object, str]]:
    """Of the corpora's ``exists`` tests with expected verdict Ok whose condition only names
    values some store, rmw or initializer writes (an undef read returning 42 is not something
    hardware does on purpose), how many the simulator shows (exhaustive, else randomized)."""
    shown = total = 0
    for d in sorted((ROOT / "corpora").iterdir()):
        exp = d / "expected.csv"
        if not exp.exists():
            continue
        rows = [e.path for e in read_expected(exp).rows if e.verdict == "Ok"]
        for rel in rows:
            try:
                test = litmus.parse_file(d / rel)
            except Exception:
                continue
            if test.condition.quantifier != "exists":
                continue
            vals = {loc.init for loc in test.locations} | {0}
            for _, _, ins in test.instructions():
                vals |= set(ins.args)
            if any(a.op == "==" and a.value not in vals for a in prop_atoms(test.condition.prop)):
                continue
            try:
                res = oracle.check(test)
                h, _ = b.explore(test, 50_000)
                seen = compare(res, h, test.condition).condition_observed
                if not seen:
                    h = b.run(test, 200_000, 3)
                    seen = compare(res, h, test.condition).condition_observed
            except Exception:
                continue
            total += 1
            shown += seen
    return [("corpora exists-Ok tests whose condition the sim shows", shown,
             f"of {total} (conditions on values some write produces)")]


def mutation_score(iterations: int = 5000) -> list[tuple[str, object, str]]:
    """How many tests of the hand-written corpora (classic, av, async, barrier; oracle verdict
    not Undef) kill each mutant in randomized mode — the corpora's mutation score, as MC Mutants
    reports it. (Every mutant is also killed by its own test in corpora/mutants.)"""
    tests = []
    dirs = [str(ROOT / "corpora" / d) for d in ("classic", "av", "async", "barrier")]
    for path in litmus.litmus_files(dirs):
        try:
            test = litmus.parse_file(path)
            res = oracle.check(test)
        except Exception:
            continue
        if res.verdict != "Undef":
            tests.append((test, res))
    out, killed_mutants = [], 0
    for name in MUTANTS:
        b = make_backend(name)
        k = 0
        for test, res in tests:
            try:
                h = b.run(test, iterations, 1)
            except BackendError:
                continue
            k += compare(res, h, test.condition).forbidden > 0
        killed_mutants += k > 0
        out.append((f"mutant {name}: killed by corpora tests", k, f"of {len(tests)}"))
    out.insert(0, ("mutants killed by the hand-written corpora", killed_mutants,
                   f"of {len(MUTANTS)} ({iterations:,} iterations per test)"))
    return out


def run(args) -> list[tuple[str, object, str]]:
    quick = args.quick
    n = 1_000_000 if quick else 4_000_000
    import numba
    out: list[tuple[str, object, str]] = [("numba threads", numba.get_num_threads(), "")]
    b = make_backend(None)
    for label, text in (("2 threads, SB", SB), ("2 threads, MP+rel+acq", MP_RELACQ),
                        ("3 threads, WRC", WRC), ("4 threads, IRIW", IRIW)):
        test = litmus.parse(text)
        b.run(test, 1000, 1)
        t0 = time.perf_counter()
        h = b.run(test, n, 1)
        dt = time.perf_counter() - t0
        out.append((f"randomized {label}: iterations/s", n / dt, f"({n:,} iterations)"))
    for label, text in (("SB", SB), ("LB", LB), ("MP", MP), ("STALE-L1", STALE),
                        ("MP+rel+acq", MP_RELACQ)):
        test = litmus.parse(text)
        h, complete = b.explore(test, 1_000_000)
        hit, total = reached_fraction(test, h)
        out.append((f"exhaustive {label}: allowed states reached", 100.0 * hit / total,
                    f"% ({hit}/{total}; {h.params['schedules']:,} schedules"
                    f"{'' if complete else ', capped'})"))
    if not quick:
        out += corpus_weakness(b)
        out += mutation_score()
        fr, tests, t0 = [], 0, time.perf_counter()
        for path in litmus.litmus_files([str(ROOT / "corpora" / "classic")]):
            test = litmus.parse_file(path)
            try:
                h, _ = b.explore(test, 20_000)
                hit, total = reached_fraction(test, h)
            except Exception:
                continue
            if total:
                fr.append(hit / total)
                tests += 1
        if fr:
            out.append(("exhaustive classic corpus: mean allowed states reached",
                        100.0 * sum(fr) / len(fr),
                        f"% over {tests} tests (cap 20,000 schedules, "
                        f"{time.perf_counter() - t0:.1f}s)"))
    return out

"""Soundness of the correct simulator: it never shows an outcome the memory model forbids.

- exhaustively (every scheduling, up to a cap) on every corpora test small enough, for every
  target profile: each outcome must be allowed by the oracle; where the oracle cannot handle a
  test yet (async ops, barriers) the hand-derived verdict of ``expected.csv`` is used instead:
  a test whose verdict says the condition cannot hold must never show it;
- by a Hypothesis property on random programs from the fuzzer's strategies (randomized mode).
"""

from __future__ import annotations

import csv
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings

import litmus
from hw import BackendError
from hw.sim import make_backend
from litmus.outcome import condition_holds

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
DIRS = ("classic", "av", "async", "barrier", "mutants")
PROFILES = ("gfx942", "gfx90a", "gfx12", "gfx1250", "gfx908", "gfx90a,tgsplit",
            "gfx90a,mtype=NC")
CAP = 5000          # schedules per test and profile (most corpora tests finish well below)
MAX_SIZE = 16       # instructions: larger tests are left to the randomized property

oracle = pytest.importorskip("oracle")


def _expected() -> dict[pathlib.Path, str]:
    out = {}
    for d in DIRS:
        path = CORPORA / d / "expected.csv"
        if path.exists():
            with open(path, encoding="utf-8", newline="") as f:
                for row in csv.reader(f):
                    if len(row) == 2:
                        out[(CORPORA / d / row[0]).resolve()] = row[1].strip()
    return out


def _corpus() -> list[pathlib.Path]:
    files = []
    for d in DIRS:
        if (CORPORA / d).is_dir():
            files += sorted((CORPORA / d).rglob("*.litmus"))
    return files


def judge(test, path=None, expected=None):
    """A function outcome -> allowed, from the oracle or (when it cannot judge the test) from
    the expected verdict; None when neither applies (Undef, or nothing to compare with)."""
    try:
        res = oracle.check(test)
    except Exception:
        verdict = (expected or {}).get(pathlib.Path(path).resolve()) if path else None
        q = test.condition.quantifier
        if (q == "exists" and verdict == "No") or (q in ("~exists", "forall") and verdict == "Ok"):
            return lambda o: not condition_holds(test.condition, o)
        return None
    if res.verdict == "Undef":
        return None
    return res.allows


CORPUS = _corpus()
EXPECTED = _expected()


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(CORPORA)) for p in CORPUS])
def test_exhaustive_corpora_sound(path):
    test = litmus.parse_file(path)
    if test.size > MAX_SIZE:
        pytest.skip(f"{test.size} instructions: covered by the randomized property")
    allows = judge(test, path, EXPECTED)
    if allows is None:
        pytest.skip("verdict Undef (not run) or no verdict to compare with")
    checked = 0
    for prof in PROFILES:
        try:
            hist, _ = make_backend(prof).explore(test, CAP)
        except BackendError as e:
            assert "tgsplit" in str(e) or "deadlock" not in str(e), str(e)
            continue
        assert not hist.params.get("deadlocks"), f"{prof}: hangs in a defined test"
        bad = [o for o, _ in hist.outcomes() if not allows(o)]
        assert not bad, f"sim:{prof} shows forbidden {bad[0]}"
        checked += 1
    assert checked >= 1


def test_corpus_present():
    # the soundness test above is only meaningful with the corpora in place
    assert len(CORPUS) >= 50


fuzz_strategies = pytest.importorskip("fuzz.strategies")

FEATS = frozenset({"atomics", "plain", "av", "vol", "rmw", "cas", "fences", "noav", "lds",
                   "agents"})
SYNC_FEATS = FEATS | {"async", "barriers", "cluster", "named"}


def _random_sound(test, profiles):
    allows = judge(test)
    if allows is None:
        return
    for prof in profiles:
        try:
            hist = make_backend(prof).run(test, 3000, seed=7)
        except BackendError as e:       # every iteration hung: only allowed for Undef tests
            raise AssertionError(f"sim:{prof}: {e}\n{litmus.format_test(test)}")
        bad = [o for o, _ in hist.outcomes() if not allows(o)]
        assert not bad, f"sim:{prof} shows forbidden {bad[0]} for\n{litmus.format_test(test)}"
        assert not hist.params.get("deadlocks"), \
            f"sim:{prof} hangs on a defined test\n{litmus.format_test(test)}"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(fuzz_strategies.programs(FEATS, near_miss=0.5, shapes=("cycle", "coherence",
                                                               "atomicity", "random")))
def test_random_programs_sound(test):
    _random_sound(test, ("gfx942", "gfx12", "gfx90a,mtype=NC"))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(fuzz_strategies.programs(SYNC_FEATS, near_miss=0.5, shapes=("async", "barrier")))
def test_random_async_and_barrier_programs_sound(test):
    _random_sound(test, ("gfx942", "gfx1250"))


LANES = """AMDGPU cycle2-RRWW
"Found by soundness fuzzing: two lanes of one wave, wave-scope acquire after an LDS rmw."
{ y = 0; lds x = 0; }
 P0@wave 0, wg 0       | P1@wave 0, wg 0     ;
 rmw.add.wave r0, x, 0 | st.atom.wave y, 1   ;
 fence.acq.wave        | st.atom.rel.wg x, 1 ;
 ld.atom.wave r1, y    |                     ;
exists (P0:r0 == 1 /\\ P0:r1 == 0)
"""


def test_lanes_of_one_wave_regression():
    test = litmus.parse(LANES)
    res = oracle.check(test)
    assert res.verdict == "No"
    for prof in ("gfx942", "gfx12"):
        hist, complete = make_backend(prof).explore(test, 200_000)
        assert complete and all(res.allows(o) for o, _ in hist.outcomes())

"""Soundness of the correct simulator: it never shows an outcome the memory model forbids.

- exhaustively (every scheduling, up to a cap) on every corpora test small enough, for every
  target profile: each outcome must be allowed by the oracle;
- by a Hypothesis property on random programs from the fuzzer's strategies (randomized mode).
"""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings

import litmus
from hw import BackendError
from hw.sim import make_backend
from litmus.outcome import condition_holds

from defined_programs import assume_defined

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
DIRS = ("classic", "av", "async", "barrier", "mutants")
PROFILES = ("gfx942", "gfx90a", "gfx12", "gfx1250", "gfx908", "gfx90a,tgsplit",
            "gfx90a,mtype=NC")
CAP = 5000          # schedules per test and profile (most corpora tests finish well below)
MAX_SIZE = 16       # instructions: larger tests are left to the randomized property

import oracle  # noqa: E402


def _corpus() -> list[pathlib.Path]:
    files = []
    for d in DIRS:
        if (CORPORA / d).is_dir():
            files += sorted((CORPORA / d).rglob("*.litmus"))
    return files


def judge(test):
    """A function outcome -> allowed from the oracle; None for an Undef program (never run)."""
    res = oracle.check(test)
    if res.verdict == "Undef":
        return None
    return res.allows


def _exhaustible(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    """Corpora tests small enough to explore every schedule (larger ones are left to the
    randomized property) and defined (Undef programs are never run)."""
    out = []
    for p in paths:
        t = litmus.parse_file(p)
        if t.size <= MAX_SIZE and oracle.check(t).verdict != "Undef":
            out.append(p)
    return out


CORPUS = _corpus()
EXHAUSTIBLE = _exhaustible(CORPUS)


@pytest.mark.parametrize("path", EXHAUSTIBLE,
                         ids=[str(p.relative_to(CORPORA)) for p in EXHAUSTIBLE])
def test_exhaustive_corpora_sound(path):
    test = litmus.parse_file(path)
    allows = judge(test)
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
    assert len(CORPUS) >= 50 and len(EXHAUSTIBLE) >= 0.8 * len(CORPUS)


import fuzz.strategies as fuzz_strategies  # noqa: E402

FEATS = frozenset({"atomics", "plain", "av", "vol", "rmw", "cas", "fences", "noav", "lds",
                   "agents"})
SYNC_FEATS = FEATS | {"async", "barriers", "cluster", "named"}


def _random_sound(test, profiles):
    allows = assume_defined(test).allows      # Undef programs are never run
    for prof in profiles:
        try:
            hist = make_backend(prof).run(test, 3000, seed=7)
        except BackendError as e:       # every iteration hung: only allowed for Undef tests
            raise AssertionError(f"sim:{prof}: {e}\n{litmus.format_test(test)}")
        bad = [o for o, _ in hist.outcomes() if not allows(o)]
        assert not bad, f"sim:{prof} shows forbidden {bad[0]} for\n{litmus.format_test(test)}"
        assert not hist.params.get("deadlocks"), \
            f"sim:{prof} hangs on a defined test\n{litmus.format_test(test)}"


@settings(max_examples=40, deadline=None)
@given(fuzz_strategies.programs(FEATS, near_miss=0.5, shapes=("cycle", "coherence",
                                                               "atomicity", "random")))
def test_random_programs_sound(test):
    _random_sound(test, ("gfx942", "gfx12", "gfx90a,mtype=NC"))


@settings(max_examples=25, deadline=None)
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

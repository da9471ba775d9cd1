"""Programs over 64 events: the engine decides them itself (relation rows of several words) and
agrees with the models' Python references (``oracle/models/rc11/reference.py``,
``oracle/models/vulkan/reference.py``), which are independent of it.

- the Dat3M VULKAN programs over 64 events (xf-barrier*): the expected verdicts and race flags,
  and the reference's (stopping at the first state that decides the verdict / the race, as the
  reference is slow on them); those the engine cannot finish within its bounded try are decided
  by the reference (flag ``reference-partial``);
- generated C programs grown past 64 events by threads that each write a location of their own
  (they add events, initial writes and final reads, and exercise the product of independent
  locations): the same states, verdict and race flag as the reference, with and without the
  split into independent blocks;
- the AMDGPU builder still refuses programs over 64 events with a one-line error.
"""

from __future__ import annotations

import contextlib
import importlib
import csv

import pytest
from hypothesis import given, settings, strategies as st

import litmus
import oracle
import oracle.search
from oracle.check import pre_executions
from oracle.registry import get
from oracle.models.rc11.reference import check as rc11_ref
from oracle.models.vulkan.reference import check as vk_ref
from test_conformance_rc11 import c_programs


SB_C = """C SB
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed); int r0 = atomic_load_explicit(y, memory_order_relaxed); }
P1 (atomic_int* x, atomic_int* y) { atomic_store_explicit(y, 1, memory_order_relaxed); int r0 = atomic_load_explicit(x, memory_order_relaxed); }
exists (0:r0=0 /\\ 1:r0=0)
"""


def expected(conformance, suite):
    with open(conformance / "expected" / f"{suite}.csv") as f:
        return {row[0]: row[1] for row in csv.reader(f) if len(row) == 2}


def events(test, model):
    return max(pe.n for pe in pre_executions(get(model), test))


#: barrier programs over 64 events whose search the engine finishes within its bounded try
#: (oracle.check.FALLBACK_AFTER): four blocks of at most 24 events each
ENGINE_FINISHES = {f"VULKAN/Manual/xf-barrier-{s}.litmus" for s in
                   ("load-rlx-2", "store-rlx-1", "store-rlx-2")}


def test_vulkan_programs_above_64_events_get_the_expected_verdicts(conformance):
    """Over 64 events, the engine decides what it can finish within its bounded try; past it
    the reference decides the verdict and the race flag (flag ``reference-partial``). Either
    way the verdict and the flag are the suite's and the reference's."""
    want = expected(conformance, "VULKAN")
    want_dr = expected(conformance, "VULKAN-DR")
    big = sorted((conformance / "VULKAN").rglob("xf-barrier*.litmus"))
    assert big
    for path in big:
        rel = path.relative_to(conformance).as_posix()
        t = litmus.parse_file(path)
        assert events(t, "vulkan") > 64, rel
        r = oracle.check(t, "vulkan")
        if rel in ENGINE_FINISHES:
            assert "reference-partial" not in r.flags, rel
        assert r.verdict == {"1": "Ok", "0": "No"}[want[rel]], rel
        assert r.verdict == vk_ref(t, stop="verdict").verdict, rel
        if rel in want_dr:
            assert ("racy" not in r.flags) == (want_dr[rel] == "1"), rel
        assert ("racy" in r.flags) == ("racy" in vk_ref(t, stop="race").flags), rel


def test_the_reference_decides_what_the_engine_cannot_finish(monkeypatch):
    """A program over 64 events whose search runs past the bounded try is decided by the unit's
    fallback, and the result says so; under 64 events the engine never hands over."""
    check_module = importlib.import_module("oracle.check")
    text = pad(SB_C, 30)                  # 3 events per padding thread: over 64 events
    t = litmus.parse(text)
    assert events(t, "rc11") > 64
    oracle.clear_cache()
    full = oracle.check(t, "rc11")
    assert "reference-partial" not in full.flags
    monkeypatch.setattr(check_module, "FALLBACK_AFTER", 1)
    oracle.clear_cache()
    partial = oracle.check(t, "rc11")
    assert "reference-partial" in partial.flags
    assert partial.verdict == full.verdict
    small = litmus.parse(SB_C)
    oracle.clear_cache()
    assert "reference-partial" not in oracle.check(small, "rc11").flags
    oracle.clear_cache()


def pad(text: str, k: int) -> str:
    """The C program ``text`` with ``k`` more threads, thread i writing 1 to a location ``zi``
    of its own (three events each: its initial write, the write, its final read)."""
    head, rest = text.split("\n", 1)
    init, body = rest.split("\n", 1)
    decl = init.rstrip(" }") + " " + " ".join(f"[z{i}] = 0;" for i in range(k)) + " }"
    lines = body.split("\n")
    cond = next(i for i, ln in enumerate(lines) if ln.startswith("exists"))
    nth = sum(1 for ln in lines[:cond] if ln.startswith("P"))
    extra = [f"P{nth + i} (atomic_int* z{i}) {{ atomic_store_explicit(z{i}, 1, "
             f"memory_order_relaxed); }}" for i in range(k)]
    return "\n".join([head, decl] + lines[:cond] + extra + lines[cond:])


def same(eng, ref):
    key = lambda s: tuple(sorted(s.items()))  # noqa: E731
    assert sorted(map(key, eng.states)) == sorted(map(key, ref.states))
    assert eng.verdict == ref.verdict
    assert ("racy" in eng.flags) == ("racy" in ref.flags)


@contextlib.contextmanager
def split_above(value):
    """Explore programs whole up to ``value`` estimated candidates (inf: never split)."""
    old = oracle.search.SPLIT_ABOVE, oracle.search.QUERY_WHOLE_STEPS
    oracle.search.SPLIT_ABOVE = value
    oracle.search.QUERY_WHOLE_STEPS = 0      # no whole try first: split at once above ``value``
    try:
        yield
    finally:
        oracle.search.SPLIT_ABOVE, oracle.search.QUERY_WHOLE_STEPS = old


@contextlib.contextmanager
def engine_only():
    """No bounded try: the engine decides every program itself (oracle.check.FALLBACK_AFTER)."""
    check_module = importlib.import_module("oracle.check")
    old = check_module.FALLBACK_AFTER
    check_module.FALLBACK_AFTER = 1 << 62
    try:
        yield
    finally:
        check_module.FALLBACK_AFTER = old


@settings(max_examples=15, deadline=None)
@given(c_programs(), st.integers(20, 30), st.booleans())
def test_engine_agrees_with_the_reference_above_64_events(text, k, split):
    t = litmus.parse(pad(text, k))
    assert events(t, "rc11") > 64
    with split_above(oracle.search.SPLIT_ABOVE if split else float("inf")), engine_only():
        oracle.clear_cache()
        eng = oracle.check(t, "rc11")
    assert "reference-partial" not in eng.flags
    same(eng, rc11_ref(t))


def test_amdgpu_program_above_64_events_is_a_one_line_error():
    rows = " ;\n".join(" | ".join(["st.atom x, 1"] * 4) for _ in range(17))
    text = f"AMDGPU big\n{{ x = 0; }}\n P0 | P1 | P2 | P3 ;\n{rows} ;\nexists (x == 1)\n"
    with pytest.raises(oracle.OracleError) as e:
        oracle.check(litmus.parse(text))
    assert "more than 64 events" in str(e.value) and "\n" not in str(e.value)

"""Issue 32: a large allowed set kept lazily as its searches' products (oracle/states.py), the
verdict read from the condition's observables alone (oracle/check.py ``verdict_of``), streamed
output, and the memory ceiling (oracle/ceiling.py, ``check --max-memory``).

References are independent of the lazy code: the product of the factors expanded in Python with
``itertools.product``, deduplicated and sorted as Python tuples (undef after every value: the
contract's order), and :func:`litmus.outcome.verdict` over those plain dicts.
"""

from __future__ import annotations

import importlib
import itertools
import json
import pickle
import subprocess
import sys
import pathlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import litmus
import oracle
from litmus.ir import UNDEF, And, Atom, Condition, Not, Or
from litmus.outcome import matches, verdict
from oracle import ceiling
from oracle import states as states_mod
from oracle.errors import MemoryCeiling
from oracle.events import UNDEF_VAL
from oracle.explore import DEFINED
from oracle.states import States, matches_free

check_mod = importlib.import_module("oracle.check")
ROOT = pathlib.Path(__file__).resolve().parent.parent
U = UNDEF_VAL
KEYS = ["P0:r0", "P1:r0", "P1:r1", "P2:r0", "x"]


def _reference(searches, ncols: int) -> list[tuple]:
    """Distinct rows of the union of the searches' products, in the contract's order."""
    rows = set()
    for factors in searches:
        for combo in itertools.product(*[[tuple(r) for r in rows.tolist()]
                                         for _, rows in factors]):
            row = [0] * ncols
            for (cols, _), part in zip(factors, combo):
                for c, v in zip(cols, part):
                    row[c] = v
            rows.add(tuple(row))
    return sorted(rows, key=lambda t: [(v == U, v) for v in t])


def _dicts(rows, keys=KEYS) -> list[dict]:
    return [{k: (UNDEF if v == U else v) for k, v in zip(keys, r)} for r in rows]


values = st.sampled_from([0, 1, 2, -1, 7, U])


@st.composite
def searches(draw):
    """1-3 searches, each a split of the columns into factors with a few rows (duplicates
    allowed: the lazy set must make them distinct)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        cols = list(range(len(KEYS)))
        draw(st.randoms()).shuffle(cols)
        cuts = sorted(draw(st.sets(st.integers(1, len(KEYS) - 1), max_size=3)))
        groups = [sorted(cols[a:b]) for a, b in zip([0] + cuts, cuts + [len(KEYS)])]
        factors = []
        for g in groups:
            n = draw(st.integers(1, 6))
            rows = [[draw(values) for _ in g] for _ in range(n)]
            factors.append((g, np.array(rows, np.int64)))
        out.append(factors)
    return out


def _lazy(found) -> States:
    parts = [(factors, len(KEYS)) for factors in found]
    states_mod_small = states_mod.SMALL_SET
    try:
        states_mod.SMALL_SET = 0          # every set lazy, however small
        return States.from_parts(KEYS, parts)
    finally:
        states_mod.SMALL_SET = states_mod_small


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(searches(), st.integers(1, 40))
def test_lazy_set_streams_counts_and_writes_the_reference(found, block):
    want = _reference(found, len(KEYS))
    s = _lazy(found)
    assert s.is_lazy
    assert len(s) == len(want)                       # counted without expanding
    assert s.is_lazy
    streamed = [tuple(r) for b in s.stream(block) for r in b.tolist()]
    assert streamed == want                          # order kept across blocks of any size
    assert s.json() == json.dumps(_dicts(want))      # byte for byte
    assert s.is_lazy                                 # none of that expanded the set
    back = pickle.loads(pickle.dumps(s))
    assert back.is_lazy and list(back) == _dicts(want)
    assert s[0] == _dicts(want)[0] and list(s) == _dicts(want)   # random access expands it


def _atom(key: str, op: str, value: int) -> Atom:
    thread, name = (int(key[1:key.index(":")]), key.split(":")[1]) if ":" in key else (None, key)
    return Atom(thread, name, op, value)


outcomes = st.dictionaries(st.sampled_from(KEYS), st.sampled_from([0, 1, 2, 7, -1, DEFINED]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(searches(), outcomes, st.sampled_from(["free", "undef"]))
def test_allows_on_a_lazy_set_is_matching_against_every_state(found, outcome, absent):
    every = _dicts(_reference(found, len(KEYS)))
    if absent == "free":
        want = any(matches_free(s, outcome) for s in every)
    else:
        if DEFINED in outcome.values():
            return                        # (the undef reading takes concrete outcomes)
        want = any(matches(s, outcome) for s in every)
    s = _lazy(found)
    assert s.allows(outcome, absent) == want
    assert s.is_lazy                      # answered from the factors


atoms = st.builds(_atom, st.sampled_from(KEYS), st.sampled_from(["==", "!="]),
                  st.sampled_from([0, 1, 2, 7]))
props = st.recursive(atoms, lambda p: st.one_of(
    st.builds(lambda a: And(tuple(a)), st.lists(p, min_size=2, max_size=3)),
    st.builds(lambda a: Or(tuple(a)), st.lists(p, min_size=2, max_size=3)),
    st.builds(Not, p)), max_leaves=5)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(searches(), props, st.sampled_from(["exists", "~exists", "forall"]))
def test_verdict_from_the_projection_is_the_verdict_over_every_state(found, prop, q):
    cond = Condition(q, prop)
    want = verdict(cond, _dicts(_reference(found, len(KEYS))))
    s = _lazy(found)
    assert check_mod.verdict_of(cond, s, False) == want
    assert s.is_lazy                     # answered without expanding the set
    assert check_mod.verdict_of(cond, s, True) == "Undef"


def _sb_ring(n: int) -> str:
    locs = [f"x{i}" for i in range(n)]
    params = ", ".join(f"atomic_int* {x}" for x in locs)
    body = [f"P{i} ({params}) {{ atomic_store_explicit(x{i}, 1, memory_order_relaxed); "
            f"int r0 = atomic_load_explicit(x{(i + 1) % n}, memory_order_relaxed); }}"
            for i in range(n)]
    init = " ".join(f"[{x}] = 0;" for x in locs)
    return (f"C SB-ring-{n}\n{{ {init} }}\n" + "\n".join(body) + "\nexists (" +
            " /\\ ".join(f"{i}:r0=0" for i in range(n)) + ")\n")


def test_check_of_a_large_set_gives_verdict_and_count_without_expanding():
    oracle.clear_cache()
    test = litmus.parse(_sb_ring(12))            # 2^12 states: over SMALL_SET
    res = oracle.check(test)
    assert res.states.is_lazy and res.verdict == "Ok" and len(res.states) == 4096
    # every state: each r0 is 0 or 1, and all 4096 combinations are there
    assert sorted(tuple(s[f"P{i}:r0"] for i in range(12)) for s in res.states) == \
        sorted(itertools.product([0, 1], repeat=12))


def test_the_ceiling_stops_an_expansion_with_one_line_naming_the_count():
    s = _lazy([[([0, 1], np.array([[i, j] for i in range(60) for j in range(2)], np.int64)),
                ([2, 3, 4], np.array([[i, 0, 1] for i in range(60)], np.int64))]])
    assert len(s) == 7200
    ceiling.set_limit(1)
    try:
        with pytest.raises(MemoryCeiling) as e:
            s[5]                                 # random access needs the arrays
        msg = str(e.value)
        assert "\n" not in msg and "7,200 allowed states" in msg and "--max-memory" in msg \
            and "--outcome" in msg
        assert len(s) == 7200 and s.is_lazy      # the count needs no expansion ...
        assert s.allows({"P0:r0": 1}) and not s.allows({"P0:r0": 99})   # ... nor allows
    finally:
        ceiling.set_limit(None)
    assert s.allows({"P0:r0": 1, "P1:r0": 0})


@pytest.mark.parametrize("text,want", [("2G", 2 << 30), ("500M", 500 << 20), ("64k", 64 << 10),
                                       ("1000", 1000), ("1.5G", 3 << 29)])
def test_sizes(text, want):
    assert ceiling.parse_size(text) == want


@pytest.mark.parametrize("text", ["", "two", "-1G", "0", "5X"])
def test_bad_sizes(text):
    with pytest.raises(ValueError):
        ceiling.parse_size(text)


def test_cli_max_memory(tmp_path):
    f = tmp_path / "ring.litmus"
    f.write_text(_sb_ring(12))
    cmd = [sys.executable, "-m", "fuzz.cli", "check", str(f)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    # the verdict and the count need no expansion: a ceiling of 1 byte past the start-up is met
    # only by what streams (the text line) ...
    ok = subprocess.run(cmd + ["--json", "--max-memory", "4G"], capture_output=True,
                        text=True, env=env, timeout=300)
    assert ok.returncode == 0, ok.stderr
    obj = json.loads(ok.stdout)
    assert obj["verdict"] == "Ok" and len(obj["states"]) == 4096
    # ... herd's layout expands the set: past a tiny ceiling, one line naming the file, exit 2
    bad = subprocess.run(cmd + ["--format", "herd", "--max-memory", "1M"], capture_output=True,
                         text=True, env=env, timeout=300)
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{f}:1:1:") and "4,096 allowed states" \
        in lines[0] and "--max-memory" in lines[0]
    usage = subprocess.run(cmd + ["--max-memory", "lots"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert usage.returncode == 2 and "not a size" in usage.stderr

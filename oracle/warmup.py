"""Load the oracle's compiled code before it is used or timed, compiling it once if need be.

Numba compiles a function on its first call in a process, or loads it from the on-disk cache
(``cache=True``) when an earlier run left it there. Either costs time that has nothing to do with
the test at hand: about 0.2 s to load the engine from the cache, a minute or more to compile it.
:func:`ready` runs a small program of the model's dialect through the model unit's builder and
the search once per process, so that :func:`oracle.check` starts its clock after that work
(``seconds`` in ``check --json`` is the test's own time). :func:`warm` does the same for every
registered model and its explanation, for ``make setup`` (``scopefuzz warm``): after it, a user's
first run loads from the cache like any later run.

Whether a run compiles or loads is numba's business; when it compiles, the user is told so on
stderr (:func:`oracle.jitcache.announce_compiles`).
"""

from __future__ import annotations

import os
import subprocess
import sys

from litmus import parse
from litmus.ir import prop_atoms
from litmus.jitcache import cores
from litmus.jitprogress import group, label, uncached

from .ready import ready, sample  # noqa: F401 (re-exported: one home, oracle/ready.py)
from .registry import get as get_unit, names

#: A C program over 64 events (22 threads each storing to a location of its own: an initial
#: write, the store and a final read each), so that :func:`warm` also loads the search's
#: several-words-per-row variant (oracle/explore.py ``search_words``), which other samples never
#: reach.
WIDE_SAMPLE = ("C warmup-wide\n{ " + " ".join(f"[z{i}] = 0;" for i in range(22)) + " }\n"
               + "\n".join(f"P{i} (atomic_int* z{i}) {{ atomic_store_explicit(z{i}, 1, "
                           f"memory_order_relaxed); }}" for i in range(22))
               + "\nexists (z0 == 1)\n")

def warm(models: list[str] | None = None) -> list[str]:
    """Compile or load everything the oracle runs for ``models`` (default: every registered
    model): the check and an explanation of the sample's condition, and (with rc11) the search
    over several words per row (:data:`WIDE_SAMPLE`) and the closure of a symmetric program's
    outcomes (:mod:`oracle.symmetry`). Returns the models warmed (those with a
    sample of their dialect)."""
    from .explanation import explain
    done = []
    for name in models or names():
        unit = get_unit(name)
        test = sample(unit)
        if test is None:
            continue
        ready(unit)
        # the samples' conditions are conjunctions of equalities: that outcome
        explain(test, {a.key: a.value for a in prop_atoms(test.condition.prop)}, name).text()
        done.append(name)
        if name == "rc11":
            from .check import check
            from .symmetry import warm as warm_symmetry
            check(parse(WIDE_SAMPLE, "<warm-up wide>"), name)
            warm_symmetry()             # the images of a symmetric program's outcomes
    return done


# --- parts that compile apart (``scopefuzz warm --jobs N``: fuzz/warm.py PARTS) ------------------
def part_search() -> None:
    """The engine's search over one-word rows: the compiled code of every model's check."""
    ready(get_unit("rc11"))


def part_amdgpu() -> None:
    """The AMDGPU builder's compiled pass (:func:`oracle.models.amdgpu.static.derive`), without
    the search (compiled by :func:`part_search`)."""
    unit = get_unit("amdgpu")
    label("oracle", "the AMDGPU builder")
    try:
        unit.build(sample(unit))
    finally:
        label("oracle", None)


def part_wide() -> None:
    """The search over several words per row (programs over 64 events, :data:`WIDE_SAMPLE`)."""
    from .lang import load_model
    from .search import explore_pe
    unit = get_unit("rc11")
    label("oracle", "programs over 64 events")
    try:
        prog = load_model(unit.name)
        for pe in unit.build(parse(WIDE_SAMPLE, "<warm-up wide>")):
            explore_pe(pe, prog, unit)
    finally:
        label("oracle", None)


def part_symmetry() -> None:
    """The closure of a symmetric program's outcomes (:mod:`oracle.symmetry`)."""
    from .symmetry import warm as warm_symmetry
    label("oracle", "symmetric programs")
    try:
        warm_symmetry()
    finally:
        label("oracle", None)



# --- the search's callees, compiled ahead in two processes (a campaign's first run) --------------
# Numba compiles a function's callees while it types the function, one after the other, in the
# process that calls it: a campaign's first call of the search (``explore.search_one_word``)
# compiles about twenty functions in a row before the search's own body (its biggest). The callees
# below can be compiled on their own, each with the exact argument types the search calls it with (the
# cache key: a signature that differs by one type, say ``int64`` for ``Literal[int](1)``, is
# another compile), half here and half in a helper process at the same time
# (:func:`fuzz.warm.compile_ahead`); the search's compile then loads them from the cache.
# tests/test_first_run.py checks that these are the very signatures the search compiles.

def _search_types():
    """The numba types the search's callees take (every array C-contiguous; ``W`` the literal
    1 of ``explore.search_one_word``; an incremental memo the tuple ``engine.inc_memo`` returns)."""
    from numba import types as T

    def arr(dtype, ndim):
        return T.Array(dtype, ndim, "C")
    t = dict(U2=arr(T.uint64, 2), U1=arr(T.uint64, 1), OPS=arr(T.int32, 2), I1=arr(T.int64, 1),
             I2=arr(T.int64, 2), B1=arr(T.boolean, 1), ONE=T.literal(1), N=T.int64)
    t["MEMO"] = T.Tuple((t["I1"], t["I1"], t["I1"], arr(T.uint8, 1), t["U2"]))
    return t


def search_share(which: str) -> list:
    """(dispatcher, argument types) pairs of the search's callees: ``"here"`` those the campaign
    process compiles itself (the incremental evaluation's loop first, ``prepare_arrays``, the memos,
    the decision order, the outcome table's insert), ``"helper"`` those a helper process
    compiles meanwhile (``eval_rows`` and the incremental evaluations of the prefix and upper
    checks, which call it and the loop: the helper gets there after ``eval_rows``, by when the
    loop is in the cache; besides, both reach the small ``engine._closure_rows``, which each may
    compile: time lost, under a second, not an error), ``"explain"`` what an explanation and
    the block split call from Python (the one-word wrappers around the search's own kernels,
    ``engine.eval_rows_one_word`` and ``prepare.prepare_one_word``); in the order they are
    compiled."""
    from numba import types as T
    from . import engine, explore, prepare
    t = _search_types()
    U2, U1, OPS, I1, I2, B1, ONE, N, MEMO = (t[k] for k in
                                            ("U2", "U1", "OPS", "I1", "I2", "B1", "ONE", "N",
                                             "MEMO"))
    prep = (I2, U2, U2, ONE, I1, I1, I1, I1, I1, N)
    if which == "here":
        return [(engine._run_loop, (U2, OPS, N, N, N, ONE, U1)),
                (prepare.prepare_arrays, prep),
                (engine.inc_memo, (OPS, N, N, I1, T.literal(0))),
                (engine.inc_memo, (OPS, N, N, I1, T.literal(1))),
                (engine.inc_memo, (OPS, N, N, I1, T.literal(2))),
                (explore.decision_order, (B1, I1, I1, B1, I1, I1, U1, N, I1)),
                (explore._insert, (I2, I1, T.literal(0), I1, N)),
                (explore._insert, (I2, I1, N, I1, N))]
    if which == "helper":
        return [(engine.eval_rows, (U2, OPS, N, ONE, U1)),
                (explore._eval_prefix, (U2, U2, OPS, N, ONE, U1, MEMO)),
                (explore._eval_upper, (U2, U2, OPS, N, ONE, U1, MEMO, I1, I1, I2, I1, B1))]
    if which == "explain":
        return [(prepare.prepare_one_word, prep[:3] + prep[4:]),
                (engine.eval_rows_one_word, (U2, OPS, N, U1))]
    raise ValueError(f"no share {which!r}")


def share_cached(which: str) -> bool:
    """Does numba's cache hold every signature of one share of :func:`search_share` (its index
    names each; the index of a function says nothing about which of its signatures it has)?"""
    try:
        for disp, sig in search_share(which):
            keys = disp._cache._cache_file._load_index()
            if not any(tuple(k[0]) == tuple(sig) for k in keys):
                return False
    except (AttributeError, OSError, TypeError, ValueError):
        return False
    return True


def compile_share(which: str, what: str) -> None:
    """Compile (or load) one share of :func:`search_share` in this process, its compiles shown
    as ``the oracle (WHAT)``."""
    share = search_share(which)
    label("oracle", what)
    try:
        with group("oracle", [disp for disp, _ in share]):
            for disp, sig in share:
                disp.compile(sig)
    finally:
        label("oracle", None)


def part_search_helper() -> None:
    """A campaign's helper process: its share of the search's callees."""
    compile_share("helper", "the search's callees, helper process")


#: what the helper process of :func:`compile_search_ahead` runs (the line it prints is the one
#: ``scopefuzz warm --tell --part search-helper`` prints: :func:`compile_here_then_wait`)
_HELPER = ("from oracle.warmup import part_search_helper\n"
           "part_search_helper()\n"
           "print('done search-helper', flush=True)\n")

#: whether this process has already asked (:func:`compile_search_ahead`: once per process)
_ASKED = []


def compile_here_then_wait(proc, model: str | None = None) -> None:
    """This process's share of the search's callees (:func:`search_share` ``"here"``), then
    ``model``'s builder when named, while ``proc``, a helper compiling the ``"helper"`` share,
    runs; returns once the helper says ``done search-helper`` on its stdout (or ends). A failure
    here only means that the caller compiles that code itself when it first uses it."""
    try:
        compile_share("here", "the search's callees")
        if model:
            part_builder(model)
    except Exception:                   # compiled when first used instead
        pass
    for line in proc.stdout:            # until the helper's share is in the cache (EOF: it ended)
        if line.strip() == "done search-helper":
            break


def compile_search_ahead(say=None) -> bool:
    """Before a command's first check on a cold numba cache (a first ``scopefuzz check`` after a
    ``pip install``), on a machine with two cores or more: compile the search's callees in two
    halves at once, :func:`search_share` ``"here"`` in this process and ``"helper"`` in a helper
    process, and return once both are in the cache, so that the check then compiles the search's
    entry point alone, loading its callees (a campaign does the same with more parts:
    ``fuzz/warm.py: compile_ahead``). Returns whether a helper was started. Only the first call
    in a process does anything, and nothing when the search's entry point is in the cache, when
    both halves are, or on one core."""
    from . import explore
    if _ASKED:
        return False
    _ASKED.append(True)
    if not uncached([explore.search_one_word]) or cores() < 2 or \
            (share_cached("here") and share_cached("helper")):
        return False
    try:
        proc = subprocess.Popen([sys.executable, "-c", _HELPER], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, env=os.environ.copy(), text=True)
    except OSError:
        return False
    (say or (lambda text: print(f"scopefuzz: {text}", file=sys.stderr, flush=True)))(
        f"compiling the oracle's search on two cores: half of its callees in a helper process "
        f"(pid {proc.pid}), the rest here")
    compile_here_then_wait(proc)
    proc.wait()
    return True


def part_explain() -> None:
    """What an explanation (and the split of a larger program into blocks) calls from Python."""
    compile_share("explain", "explanations, helper process")


def part_builder(model: str) -> None:
    """The builder of ``model`` on its sample (compiled code only where the unit has some, the
    AMDGPU unit's pass), without the search."""
    unit = get_unit(model)
    test = sample(unit)
    if test is None:
        return
    label("oracle", f"model {model}")
    try:
        unit.build(test)
    finally:
        label("oracle", None)

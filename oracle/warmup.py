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

from litmus import parse
from litmus.dialect import find as find_dialect
from litmus.ir import prop_atoms

from .registry import ModelUnit, get as get_unit, names

#: A C program over 64 events (22 threads each storing to a location of its own: an initial
#: write, the store and a final read each), so that :func:`warm` also loads the search's
#: several-words-per-row variant (oracle/pack.py ``_search_words``), which other samples never
#: reach.
WIDE_SAMPLE = ("C warmup-wide\n{ " + " ".join(f"[z{i}] = 0;" for i in range(22)) + " }\n"
               + "\n".join(f"P{i} (atomic_int* z{i}) {{ atomic_store_explicit(z{i}, 1, "
                           f"memory_order_relaxed); }}" for i in range(22))
               + "\nexists (z0 == 1)\n")

_READY: set[str] = set()


def sample(unit: ModelUnit):
    """The warm-up program of the unit's first dialect that has one: the dialect record's
    ``sample`` (:class:`litmus.dialect.Dialect`, one home for every warm-up program: message
    passing with a release/acquire pair, every builder's common path and the search with more
    than one candidate); None when no dialect of the unit is registered with one."""
    for dialect in unit.dialects:
        record = find_dialect(dialect)
        if record is not None and record.sample:
            return parse(record.sample, f"<warm-up {dialect}>")
    return None


def ready(unit: ModelUnit) -> None:
    """Load (or compile) the compiled code :func:`oracle.check` runs for ``unit``: once per
    process, before the check's clock starts. A unit whose dialects have no sample warms the
    engine's search with another unit's sample (its own compiled code, if any, then loads inside
    its first check)."""
    if unit.name in _READY:
        return
    _READY.add(unit.name)
    test = sample(unit)
    if test is None:
        if _READY - {unit.name}:
            return                  # the engine is loaded already
        for other in names():
            if sample(get_unit(other)) is not None:
                ready(get_unit(other))
                return
        return
    from litmus.jitprogress import label
    from .lang import load_model
    from .search import explore_pe
    label("oracle", f"model {unit.name}")
    prog = load_model(unit.name)
    for pe in unit.build(test):
        explore_pe(pe, prog, unit)


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
    from litmus.jitprogress import label
    label("oracle", "the AMDGPU builder")
    try:
        unit.build(sample(unit))
    finally:
        label("oracle", None)


def part_wide() -> None:
    """The search over several words per row (programs over 64 events, :data:`WIDE_SAMPLE`)."""
    from litmus.jitprogress import label
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
    from litmus.jitprogress import label
    from .symmetry import warm as warm_symmetry
    label("oracle", "symmetric programs")
    try:
        warm_symmetry()
    finally:
        label("oracle", None)


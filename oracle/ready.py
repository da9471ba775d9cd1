"""Load the oracle's compiled code for one model unit before :func:`oracle.check` starts its clock
(:func:`ready`), with the dialect's warm-up program (:func:`sample`: the dialect record's).

Kept apart from :mod:`oracle.warmup` (``scopefuzz warm``'s parts, which run checks and
explanations) so that :mod:`oracle.check` imports this module and nothing that imports it back:
no import circle (tests/test_layers.py). oracle/warmup.py's docstring says why warming up matters.
"""

from __future__ import annotations

from litmus import parse
from litmus.dialect import find as find_dialect

from .registry import ModelUnit, get as get_unit, names
from litmus.jitprogress import label

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
    from .lang import load_model
    from .search import explore_pe
    label("oracle", f"model {unit.name}")
    prog = load_model(unit.name)
    for pe in unit.build(test):
        explore_pe(pe, prog, unit)

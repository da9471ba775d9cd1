"""How many consistent executions the engine's search visits with bounding off: each consistent
execution exactly once (pruning partial executions and choosing final-memory reads alone lose
none), so the count equals an independent reference's. With bounding on (what ``oracle.check``
does) subtrees that can add no outcome are skipped: at most the reference's count, and some
exactly when the reference has some."""

from oracle.check import pre_executions
from oracle.lang import load_model
from oracle.pack import options, search_pe
from oracle.registry import get


def exhaustive_consistent(test, model: str = "amdgpu") -> int:
    """The consistent executions the search visits over every pre-execution, bounding off."""
    unit = get(model)
    prog = load_model(model)
    return sum(int(search_pe(pe, prog, unit.hints,
                             options(pe.n, len(pe.observables), bound=False))[3])
               for pe in pre_executions(unit, test))


def same_visits(res, test, model: str, ref_consistent: int) -> bool:
    """The engine's counts agree with a reference's consistent executions (module doc)."""
    return (res.consistent <= ref_consistent and (res.consistent > 0) == (ref_consistent > 0)
            and exhaustive_consistent(test, model) == ref_consistent)

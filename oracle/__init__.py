"""oracle — allowed outcomes of litmus tests under a memory model (DESIGN.md "The oracle engine").

``check(test, model=None) -> Result``; ``explain(test, outcome, model=None)``; ``OracleError``.
Models are files in ``oracle/models`` written in the relational language of :mod:`oracle.lang`,
evaluated by the numba engine (:mod:`oracle.engine`) over pre-executions built per dialect.
"""

from .check import Result, check, clear_cache
from .errors import OracleError


def explain(test, outcome, model=None):
    """Why ``model`` forbids (or allows) ``outcome`` of ``test``: see :mod:`oracle.explanation`."""
    from .explanation import explain as _explain
    return _explain(test, outcome, model)


__all__ = ["OracleError", "Result", "check", "clear_cache", "explain"]

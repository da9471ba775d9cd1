"""oracle — allowed outcomes of litmus tests under a memory model (DESIGN.md "The oracle engine").

``check(test, model=None) -> Result``; ``explain(test, outcome, model=None)``; ``OracleError``.
Models are files in ``oracle/models`` written in the relational language of :mod:`oracle.lang`,
evaluated by the numba engine (:mod:`oracle.engine`) over pre-executions built per dialect.
"""

import os as _os

from litmus.jitcache import guard as _guard

#: the sources the package's compiled (numba) code is built from, constants included: a change to
#: any of them drops the on-disk numba cache (see litmus/jitcache.py)
_guard(_os.path.dirname(_os.path.abspath(__file__)),
       ["amdgpu_static.py", "engine.py", "events.py", "lang.py", "pack.py", "../litmus/rmw.py",
        "../litmus/rmw_jit.py"])

from .check import Result, check, clear_cache  # noqa: E402
from .errors import OracleError  # noqa: E402


def explain(test, outcome, model=None):
    """Why ``model`` forbids (or allows) ``outcome`` of ``test``: see :mod:`oracle.explanation`."""
    from .explanation import explain as _explain
    return _explain(test, outcome, model)


__all__ = ["OracleError", "Result", "check", "clear_cache", "explain"]

"""oracle — allowed outcomes of litmus tests under a memory model (DESIGN.md "The oracle engine").

``check(test, model=None) -> Result`` (the contract: :class:`OracleResult`);
``allows(test, outcome, model=None)`` / ``allows_many(test, outcomes, model=None)`` (only the
asked outcomes, :mod:`oracle.query`); ``Judge(test, model=None)`` (a Result's answers, each
computed on demand: what the harness asks, :mod:`oracle.judge`); ``explain(test, outcome, model=None)``; ``OracleError``. Each model is a unit in
``oracle/models/<name>/`` (:mod:`oracle.registry`): a model file in the relational language of
:mod:`oracle.lang`, evaluated by the numba engine (:mod:`oracle.engine`) over the pre-executions
its event builder makes.
"""

import os as _os

from litmus.jitcache import announce_compiles as _announce
from litmus.jitcache import guard as _guard
from litmus.jitcache import load_lightly as _load_lightly

#: the sources the package's compiled (numba) code is built from, constants included: a change to
#: any of them drops the on-disk numba cache (see litmus/jitcache.py; a model unit with compiled
#: code guards its own folder)
_guard(_os.path.dirname(_os.path.abspath(__file__)),
       ["engine.py", "events.py", "explore.py", "lang.py", "pack.py", "../litmus/rmw.py",
        "../litmus/rmw_jit.py"])
_announce("oracle", "the oracle")
_load_lightly("oracle")

from .check import Result, check  # noqa: E402
from .check import clear_cache as _clear_results  # noqa: E402
from .contracts import ConformanceModel, OracleResult  # noqa: E402
from .errors import OracleError  # noqa: E402
from .query import allows, allows_many, clear_answers as _clear_answers  # noqa: E402
from .judge import Judge  # noqa: E402


def clear_cache() -> None:
    """Forget every cached result and query answer."""
    _clear_results()
    _clear_answers()


def explain(test, outcome, model=None):
    """Why ``model`` forbids (or allows) ``outcome`` of ``test``: see :mod:`oracle.explanation`."""
    from .explanation import explain as _explain
    return _explain(test, outcome, model)


__all__ = ["ConformanceModel", "Judge", "OracleError", "OracleResult", "Result", "allows",
           "allows_many", "check", "clear_cache", "explain"]

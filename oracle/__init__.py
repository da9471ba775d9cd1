"""oracle — allowed outcomes of litmus tests under a memory model (DESIGN.md "The oracle engine").

``check(test, model=None) -> Result`` (the contract: :class:`OracleResult`);
``allows(test, outcome, model=None)`` / ``allows_many(test, outcomes, model=None)`` (only the
asked outcomes, :mod:`oracle.query`); ``Judge(test, model=None)`` (a Result's answers, each
computed on demand: what the harness asks, :mod:`oracle.judge`); ``explain(test, outcome, model=None)``; ``OracleError``. Each model is a unit in
``oracle/models/<name>/`` (:mod:`oracle.registry`): a model file in the relational language of
:mod:`oracle.lang`, evaluated by the numba engine (:mod:`oracle.engine`) over the pre-executions
its event builder makes.

The names above are imported when first used (PEP 562): ``import oracle`` and its light modules
(``oracle.commands``, ``oracle.errors``) load neither numpy nor numba, so a ``scopefuzz check``
answered from the verdict cache (:mod:`litmus.verdicts`) starts in a fraction of the time. The
numba cache is set up by :mod:`oracle._jit` before the first module with compiled functions is
loaded (:class:`_SetUpJitFirst`).
"""

import importlib as _importlib
import sys as _sys
import types as _types

#: the package's modules that define compiled functions: numba's cache is set up
#: (:mod:`oracle._jit`) before the first of them is loaded, whoever imports it
_COMPILED = frozenset({"oracle.engine", "oracle.explore", "oracle.pack", "oracle.prepare",
                      "oracle.symmetry", "oracle.models.amdgpu.static"})


class _SetUpJitFirst:
    """An import-system finder that finds nothing: seeing the first import of a module of
    :data:`_COMPILED`, it sets numba's cache up, removes itself, and lets the usual finders load
    the module."""

    def find_spec(self, name, path=None, target=None):
        if name in _COMPILED:
            try:
                _sys.meta_path.remove(self)
            except ValueError:
                pass
            _importlib.import_module("oracle._jit")
        return None


_sys.meta_path.insert(0, _SetUpJitFirst())

#: public name -> the module defining it
_LAZY = {
    "Result": "check", "check": "check", "ConformanceModel": "contracts",
    "OracleResult": "contracts", "OracleError": "errors", "allows": "query",
    "allows_many": "query", "Judge": "judge",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        # a submodule (``oracle.query.parse_outcome`` after ``import oracle``): imported now,
        # as the eager package made every one of them an attribute before
        if not name.startswith("_"):
            try:
                return _importlib.import_module(f".{name}", __name__)
            except ModuleNotFoundError as e:
                if e.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module 'oracle' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


class _Package(_types.ModuleType):
    """``oracle.check`` is the function, as it always was, even after the submodule of that
    name is imported (the import system then sets the package's attribute to the module)."""

    def __setattr__(self, name, value):
        if name == "check" and isinstance(value, _types.ModuleType):
            value = value.check
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def clear_cache() -> None:
    """Forget every cached result and query answer."""
    from .check import clear_cache as clear_results
    from .query import clear_answers
    clear_results()
    clear_answers()


def explain(test, outcome, model=None):
    """Why ``model`` forbids (or allows) ``outcome`` of ``test``: see :mod:`oracle.explanation`."""
    from .explanation import explain as _explain
    return _explain(test, outcome, model)


__all__ = ["ConformanceModel", "Judge", "OracleError", "OracleResult", "Result", "allows",
           "allows_many", "check", "clear_cache", "explain"]

"""scopefuzz's pytest plugin, as pytest loads it (entry point ``pytest11``): options and nothing else.

Installed with scopefuzz, this module is loaded by *every* pytest run in the environment, so it
imports only pytest and the standard library: a project with its own ``litmus``, ``oracle``, ``hw``
or ``fuzz`` package, or with ``*.litmus`` files of another tool (herd's AArch64 tests), is not
touched. Litmus files are collected only when asked: ``--litmus`` (every ``*.litmus`` file under the
paths pytest is given) or the ini option ``litmus_paths`` (``*.litmus`` files under those
directories). Only then is the implementation (:mod:`fuzz.pytest_plugin`) imported and registered;
if another project's package shadows one of scopefuzz's, that is one clear usage error.
The fixtures ``litmus_backend`` and ``litmus_oracle`` load the implementation when first used.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

#: scopefuzz's top-level packages (their names are generic: another project may have one)
PACKAGES = ("litmus", "oracle", "hw", "fuzz")
_IMPL = "scopefuzz-litmus"


def pytest_addoption(parser):
    g = parser.getgroup("scopefuzz", "litmus tests (scopefuzz)")
    g.addoption("--litmus", action="store_true", default=False,
                help="collect *.litmus files (scopefuzz's format) under the given paths as tests")
    g.addoption("--litmus-backend", default="sim", metavar="B",
                help="backend that runs collected litmus files: sim, sim:MUTANT, opencl, "
                     "opencl:P:D, or 'none' to check verdicts only (default: sim)")
    g.addoption("--litmus-iterations", type=int, default=2000, metavar="N",
                help="iterations per litmus test (default: 2000)")
    g.addoption("--litmus-seed", type=int, default=0, metavar="S", help="backend seed (default 0)")
    g.addoption("--litmus-devices", default=None, metavar="B1,B2,...",
                help="comma-separated backends; xdist worker gwK takes entry K mod N "
                     "(overrides --litmus-backend)")
    g.addoption("--litmus-model", default=None, metavar="M",
                help="memory model of the oracle (default: the dialect's)")
    g.addoption("--litmus-timeout", type=float, default=60.0, metavar="SECONDS",
                help="stop the oracle on one litmus file after SECONDS: the item fails as timed "
                     "out, with no verdict (default 60; 0: no limit)")
    g.addoption("--litmus-fuzz", type=float, default=None, metavar="SECONDS",
                help="add an item running a fuzz campaign of SECONDS against the backend")
    parser.addini("litmus_paths", type="paths", default=[],
                  help="directories whose *.litmus files are collected as scopefuzz litmus tests "
                       "(as if --litmus were given for them)")


def enabled(config) -> bool:
    """Litmus collection (or the fuzz item) was asked for."""
    return bool(config.getoption("--litmus") or config.getini("litmus_paths")
                or config.getoption("--litmus-fuzz"))


def shadowed_package() -> str | None:
    """A one-line reason when one of :data:`PACKAGES` would be imported from somewhere other than
    the installation this module belongs to (another project's package of the same name)."""
    home = os.path.dirname(os.path.abspath(__file__))
    for name in PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            where = getattr(spec, "origin", None) or "nowhere"
            return f"package {name!r} of scopefuzz is not importable (found: {where})"
        locs = [os.path.abspath(p) for p in spec.submodule_search_locations]
        if not any(os.path.dirname(p) == home for p in locs):
            return (f"package {name!r} resolves to {locs[0]}, not scopefuzz's (in {home}): "
                    f"another project's {name!r} package shadows it")
    return None


def implementation(config):
    """:mod:`fuzz.pytest_plugin`, registered with pytest on first use (a usage error when one of
    scopefuzz's packages is shadowed)."""
    impl = config.pluginmanager.get_plugin(_IMPL)
    if impl is not None:
        return impl
    why = shadowed_package()
    if why:
        raise pytest.UsageError(f"scopefuzz litmus plugin: {why}; litmus tests cannot run in "
                                "this environment (rename the other package or run from a "
                                "directory where it is not on sys.path)")
    impl = importlib.import_module("fuzz.pytest_plugin")
    config.pluginmanager.register(impl, _IMPL)
    return impl


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "litmus: a litmus test collected from a *.litmus file")
    if enabled(config):
        implementation(config)


@pytest.fixture(scope="session")
def litmus_backend(pytestconfig):
    """The backend this worker uses (its own device under --litmus-devices)."""
    b = implementation(pytestconfig).session(pytestconfig).backend()
    if b is None:
        pytest.fail("--litmus-backend=none: no backend to run on")
    return b


@pytest.fixture(scope="session")
def litmus_oracle(pytestconfig):
    """``check(test_or_path)`` -> the oracle's Result under --litmus-model."""
    return implementation(pytestconfig).oracle_checker(pytestconfig)

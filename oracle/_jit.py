"""Numba's cache for the oracle's compiled code, set up before any of it is defined.

``oracle/__init__.py`` imports this module just before the first module of the package that
defines compiled functions (``engine``, ``explore``, ``pack``, ``symmetry``, the AMDGPU unit's
``static``) is loaded, so the set-up runs once, before the first ``@njit(cache=True)``, and only
in a process that uses compiled code (``import oracle`` itself loads neither numpy nor numba: a
``check`` answered from the verdict cache never does, :mod:`litmus.verdicts`):

- :func:`litmus.jitcache.guard`: where the cache lives, and its files dropped when a source the
  compiled code depends on changed (the list below, constants included; a model unit with
  compiled code guards its own folder);
- :func:`litmus.jitcache.announce_compiles`: compiles are shown on stderr while they happen;
- :func:`litmus.jitcache.load_lightly`: cached functions load without numba's registries.
"""

import os as _os

from litmus.jitcache import announce_compiles as _announce
from litmus.jitcache import guard as _guard
from litmus.jitcache import load_lightly as _load_lightly

#: the sources the package's compiled (numba) code is built from (see litmus/jitcache.py)
SOURCES = ["engine.py", "events.py", "explore.py", "lang.py", "pack.py", "prepare.py",
           "../litmus/rmw.py", "../litmus/rmw_jit.py"]

_guard(_os.path.dirname(_os.path.abspath(__file__)), SOURCES)
_announce("oracle", "the oracle")
_load_lightly("oracle")

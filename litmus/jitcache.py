"""Numba's on-disk cache (``@njit(cache=True)``): where it lives, kept in step with the sources it
was built from, and the user told when a run compiles.

**Where.** Numba caches a module's compiled functions in the first writable place of: the
directory ``NUMBA_CACHE_DIR`` names, the module's ``__pycache__``, the user's cache directory
(``~/.cache/numba``). A read-only install run by a user without a writable home has none of
them, and numba then refuses to define the functions at all ("cannot cache function ...: no
locator available"). :func:`ensure_cache` runs before a package defines its compiled functions:
when numba would find no place, it points numba at a private temporary directory (one line on
stderr says so); when not even that can be written, compiled code is not cached (every run
compiles, and says so).

**In step.** Numba keys a cached function by the source file that defines it and nothing else.
A compiled function keeps, frozen into its machine code, the module-level constants it reads from
other modules (opcodes from :mod:`oracle.lang`, event columns from :mod:`oracle.events`, micro-op
codes from ``hw/sim/uops.py``) and the code of compiled functions it calls in other modules. After
a ``git pull`` that changes only one of those, numba would load stale machine code that disagrees
with the Python side: wrong verdicts, not an error. :func:`guard` hashes the package's sources
that compiled code depends on and, when the hash differs from the one stored next to the cache,
deletes the package's cache files (numba then compiles afresh and refills the cache). Numba
tolerates cache files disappearing under a concurrent reader (parallel pytest workers), and a
cache directory that cannot be written just skips the guard.

**Loaded lightly.** Before numba loads a function from its cache it refreshes the target
context: on the first load in a process that imports numba's implementation modules (its
``cpython``, ``np``, ``typed`` and ``random`` packages) and installs their typing and lowering
registries, a third of a short ``scopefuzz check``. Loading machine code uses neither:
:func:`load_lightly` makes a package's cached functions load after only what the loaded code
calls into (numba's runtime, ``rtsys.initialize``). Numba fills the registries itself before it
compiles anything (``compiler.compile_extra`` refreshes both contexts), so a cache miss, or a
later compilation in the same process, sees all of them.

**Saved one at a time.** Several processes fill one cache at once (``scopefuzz warm``'s parts,
a campaign's compile-ahead processes). Numba saves a function's overload by reading its index,
picking the first free data-file number, writing the index, then the data file: two processes
saving *different* signatures of one function at the same moment can pick the same number, and
the index can end up naming one signature with the other's machine code. :func:`guard` makes
every save in this process hold an exclusive lock on one file of the cache directory
(:func:`serialize_saves`: ``fcntl.flock``, milliseconds per save; loads take no lock, since numba
writes each file whole under a temporary name).

**Told.** :func:`announce_compiles` makes a package's compiles visible on stderr while they
happen (:mod:`litmus.jitprogress`: what compiles, k of n functions, seconds): a first run compiles
for seconds to minutes, and should not look like a hang. ``make setup`` (``scopefuzz warm``)
compiles everything once so that users never see it.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import sys
import tempfile
from .jitprogress import announce

STAMP = "numba-sources.sha1"

#: set once a package's cache location is settled: "" (numba's own choice), a temporary
#: directory, or None (no cache at all)
_SETTLED: dict = {}



def cores() -> int:
    """CPU cores this process may use: how many processes may share a first run's compiling
    (and a campaign's work) at once."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

def _writable_dir(path: str) -> bool:
    """Can a file be created in ``path`` (made if missing)? The test numba itself makes."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _subpath(package_dir: str) -> str:
    """Numba's subdirectory for the modules of ``package_dir`` inside a cache directory
    (``numba.core.caching._CacheLocator.get_suitable_cache_subpath``)."""
    from numba.core.caching import _CacheLocator
    return _CacheLocator.get_suitable_cache_subpath(os.path.join(package_dir, "x.py"))


def _user_cache_dir() -> str:
    from numba.misc.appdirs import AppDirs
    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def cache_dir(package_dir: str) -> str | None:
    """The directory numba caches the compiled code of ``package_dir``'s modules in, chosen as
    numba chooses it (``NUMBA_CACHE_DIR``, the package's ``__pycache__``, the user's cache
    directory: the first writable one), or None when caching is off or nothing is writable."""
    from numba.core import config
    if _SETTLED.get("cache") is None and "cache" in _SETTLED:
        return None
    if config.CACHE_DIR:
        path = os.path.join(config.CACHE_DIR, _subpath(package_dir))
        if _writable_dir(path):
            return path
    path = os.path.join(package_dir, "__pycache__")
    if _writable_dir(path):
        return path
    try:
        path = os.path.join(_user_cache_dir(), _subpath(package_dir))
    except (OSError, KeyError):         # no home directory at all
        return None
    return path if _writable_dir(path) else None


def ensure_cache(package_dir: str) -> str | None:
    """Make sure numba can define ``package_dir``'s cached functions; returns the cache directory
    (None: compiled code is not cached). Call it before the package defines them."""
    path = cache_dir(package_dir)
    if path is not None or "cache" in _SETTLED:
        return path
    from numba.core import config
    tmp = os.path.join(tempfile.gettempdir(), f"scopefuzz-numba-{_user_id()}")
    try:
        os.makedirs(tmp, mode=0o700, exist_ok=True)
    except OSError:
        pass
    if _writable_dir(tmp) and _private(tmp):
        config.CACHE_DIR = tmp
        os.environ["NUMBA_CACHE_DIR"] = tmp          # and for the processes this one starts
        _SETTLED["cache"] = tmp
        print(f"scopefuzz: cannot write numba's cache next to the package or in the user's cache "
              f"directory; caching compiled code in {tmp} (set NUMBA_CACHE_DIR to choose)",
              file=sys.stderr)
        return cache_dir(package_dir)
    _SETTLED["cache"] = None
    _no_cache()
    print("scopefuzz: no writable directory for numba's cache (package, home, temporary "
          "directory): compiled code is not cached, every run compiles it", file=sys.stderr)
    return None


def _user_id() -> str:
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid is not None else os.environ.get("USERNAME", "user")


def _private(path: str) -> bool:
    """A directory in a shared temporary directory is used only if this user owns it and no one
    else may write in it (another user could otherwise plant machine code in it)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    try:
        st = os.stat(path)
        if st.st_uid != getuid():
            return False
        if st.st_mode & 0o022:
            os.chmod(path, 0o700)
    except OSError:
        return False
    return True


def _no_cache() -> None:
    """Numba defines ``cache=True`` functions without a cache from now on (its decorator calls
    ``enable_caching``, which would fail to find a directory)."""
    from numba.core.dispatcher import Dispatcher
    Dispatcher.enable_caching = lambda self: None


def caching() -> bool:
    """Is compiled code cached on disk (False only when :func:`ensure_cache` found no place)?"""
    return not ("cache" in _SETTLED and _SETTLED["cache"] is None)


def digest(package_dir: str, sources: list[str]) -> str:
    h = hashlib.sha1()
    for name in sorted(sources):
        h.update(name.encode())
        with open(os.path.join(package_dir, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def guard(package_dir: str, sources: list[str]) -> bool:
    """Settle where ``package_dir``'s numba cache lives (:func:`ensure_cache`) and drop its
    cache files if ``sources`` (file names in it) changed since the cache was last validated.
    Returns True when files were dropped or the stamp was (re)written."""
    cache = ensure_cache(package_dir)
    if cache is None:
        return False
    serialize_saves()
    stamp = os.path.join(cache, STAMP)
    try:
        want = digest(package_dir, sources)
    except OSError:
        return False
    try:
        with open(stamp, encoding="ascii") as f:
            if f.read().strip() == want:
                return False
    except OSError:
        pass
    try:
        for path in glob.glob(os.path.join(cache, "*.nbi")) + glob.glob(os.path.join(cache, "*.nbc")):
            try:
                os.remove(path)
            except OSError:
                pass
        tmp = f"{stamp}.{os.getpid()}"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(want + "\n")
        os.replace(tmp, stamp)
    except OSError:
        return False
    return True


#: the lock file :func:`serialize_saves` takes, in the directory of the index being saved
SAVE_LOCK = ".scopefuzz-save.lock"


def serialize_saves() -> None:
    """From now on, numba's cache saves in this process (``IndexDataCacheFile.save``: the index
    and the data file of one overload) hold an exclusive ``flock`` on :data:`SAVE_LOCK` in the
    cache directory, so that concurrent processes saving signatures of the same function cannot
    interleave (see the module docstring). Without ``fcntl``, or with a numba whose cache lacks
    that method, saves stay as numba makes them."""
    if "saves" in _SETTLED:
        return
    _SETTLED["saves"] = True
    try:
        import fcntl
        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return
    save = getattr(IndexDataCacheFile, "save", None)
    if save is None:
        return

    def locked_save(self, key, data):
        try:
            fd = os.open(os.path.join(self._cache_path, SAVE_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        except (OSError, AttributeError):
            return save(self, key, data)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return save(self, key, data)
        finally:
            os.close(fd)            # (closing releases the lock)

    IndexDataCacheFile.save = locked_save


def announce_compiles(package: str, what: str) -> None:
    """From now on, numba compiling (rather than loading from the cache) functions of
    ``package`` (a module name prefix) in this process is reported on stderr while it happens:
    what compiles and how far along (:mod:`litmus.jitprogress`)."""
    announce(package, what, caching)


_LIGHT: set = set()


def _load_lightly(cache, sig, target_context):
    """``numba.core.caching.Cache.load_overload`` without the context refresh: the runtime the
    loaded code allocates through, then numba's own load (None on a miss: numba compiles)."""
    from numba.core.runtime import rtsys
    rtsys.initialize(target_context)
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, target_context)


def load_lightly(package: str) -> None:
    """From now on, the ``cache=True`` functions that modules of ``package`` (a module name
    prefix) define load from numba's cache without first filling the target context's
    registries (see the module's docstring). Functions defined before the call, other packages'
    functions, and a numba whose cache lacks the methods relied on load as numba loads them."""
    if package in _LIGHT:
        return
    from numba.core.caching import Cache
    from numba.core.dispatcher import Dispatcher
    if not all(hasattr(Cache, m) for m in ("_load_overload", "_guard_against_spurious_io_errors")):
        return
    first = not _LIGHT
    _LIGHT.add(package)
    if not first:
        return
    enable = Dispatcher.enable_caching

    def enable_caching(self):
        enable(self)
        module = getattr(self.py_func, "__module__", "") or ""
        cache = getattr(self, "_cache", None)
        if isinstance(cache, Cache) and any(module == p or module.startswith(p + ".")
                                            for p in _LIGHT):
            cache.load_overload = functools.partial(_load_lightly, cache)

    Dispatcher.enable_caching = enable_caching

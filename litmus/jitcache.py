"""Keep numba's on-disk cache (``@njit(cache=True)``) in step with the sources it was built from.

Numba keys a cached function by the source file that defines it and nothing else. A compiled
function keeps, frozen into its machine code, the module-level constants it reads from other
modules (opcodes from :mod:`oracle.lang`, event columns from :mod:`oracle.events`, micro-op codes
from ``hw/sim/uops.py``) and the code of compiled functions it calls in other modules. After a
``git pull`` that changes only one of those, numba would load stale machine code that disagrees
with the Python side: wrong verdicts, not an error.

:func:`guard` is called when a package with compiled code is imported, before anything is
compiled or loaded: it hashes the package's sources that compiled code depends on and, when the
hash differs from the one stored next to the cache, deletes the package's cache files (numba
then compiles afresh and refills the cache). Numba tolerates cache files disappearing under a
concurrent reader (parallel pytest workers), and an unwritable install just skips the guard.
"""

from __future__ import annotations

import glob
import hashlib
import os

STAMP = "numba-sources.sha1"


def digest(package_dir: str, sources: list[str]) -> str:
    h = hashlib.sha1()
    for name in sorted(sources):
        h.update(name.encode())
        with open(os.path.join(package_dir, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def guard(package_dir: str, sources: list[str]) -> bool:
    """Drop ``package_dir``'s numba cache files if ``sources`` (file names in it) changed since the
    cache was last validated. Returns True when files were dropped or the stamp was (re)written."""
    cache = os.path.join(package_dir, "__pycache__")
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
        os.makedirs(cache, exist_ok=True)
        tmp = f"{stamp}.{os.getpid()}"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(want + "\n")
        os.replace(tmp, stamp)
    except OSError:
        return False
    return True

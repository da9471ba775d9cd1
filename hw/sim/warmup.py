"""Load (or compile, once) the simulator's compiled kernels before a user's first run needs them.

``make setup`` (``scopefuzz warm``) calls :func:`warm`: a small program run in both of the
simulator's modes (randomized and exhaustive) makes numba compile every kernel entry point into
its on-disk cache, or load it from there when it is already up to date (oracle/jitcache.py keeps
the cache in step with the sources). A compile is announced on stderr (``hw/sim/__init__.py``).
"""

from __future__ import annotations

from litmus import parse
from litmus.dialect import get as get_dialect

from . import make_backend
from .backend import SimBackend

#: message passing across workgroups, the sample of the dialect the simulator runs
#: (:attr:`litmus.dialect.Dialect.sample`): every kernel path a run takes (loads, stores, release
#: and acquire sequences, final values)
SAMPLE = get_dialect(SimBackend.dialects[0]).sample


def warm() -> None:
    """Run :data:`SAMPLE` randomized and exhaustively on the default simulator."""
    backend = make_backend(None)
    test = parse(SAMPLE, "<sim warm-up>")
    backend.run(test, 64, 0)
    backend.explore(test, 64)


def warm_run() -> None:
    """Run :data:`SAMPLE` randomized only: what a campaign runs (never the exhaustive mode)."""
    make_backend(None).run(parse(SAMPLE, "<sim warm-up>"), 64, 0)

"""The numba-compiled :func:`litmus.rmw.apply_rmw` that the oracle's engine and the simulator's
kernel call (inlined into their compiled code). Only compiled code imports this module, so
``import litmus`` stays free of numba."""

from __future__ import annotations

from numba import njit

from .rmw import apply_rmw as _apply_rmw

apply_rmw = njit(cache=True, inline="always")(_apply_rmw)

__all__ = ["apply_rmw"]

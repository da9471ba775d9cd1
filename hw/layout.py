"""Where each test thread runs in the parallel testing environment (MC Mutants / GPUHarbor PTE).

One kernel launch runs many *instances* of a test at once. Every work-item plays *every* thread
role of the test, each for a different instance (MC Mutants' layout, generalised from two roles to
any number), so the code is the same for all work-items and barriers stay in uniform control flow.
The map from (workgroup, lane, role) to instance respects the test's scope tree:

- threads of one workgroup instance (a *wg role*) land in one workgroup; different wg roles land in
  different workgroups of one *block* of ``G`` consecutive workgroups (see :func:`role_table`) —
  different clusters and agents also become different workgroups, which is stronger (scopes that
  were not inclusive become inclusive, so the oracle allows a superset);
- threads of one wave (a *wave role*) land in one aligned chunk of ``wave_size`` lanes, different
  waves of one workgroup in different chunks, and no two threads of an instance on the same
  work-item.

:func:`role_table` builds the inverse map once per configuration with numpy, so the kernel only
reads ``roles[(wg * L + lane) * T + t]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from litmus import Test


@dataclass(frozen=True)
class Role:
    """Thread ``tid`` of the test: its workgroup role, wave role within it, lane within the wave."""

    tid: int
    wg: int
    wave: int
    lane: int


@dataclass(frozen=True)
class Layout:
    roles: tuple[Role, ...]
    n_wg_roles: int
    max_waves: int     # most waves in one workgroup role
    max_lanes: int     # most threads in one wave

    @property
    def n_threads(self) -> int:
        return len(self.roles)


def layout_of(test: Test) -> Layout:
    """Group the test's threads into workgroup roles and wave roles (first appearance order)."""
    wg_ids: dict = {}
    wave_ids: dict = {}
    lanes: dict = {}
    roles = []
    for tid in range(len(test.threads)):
        wg_key = test.instance(tid, "wg")
        g = wg_ids.setdefault(wg_key, len(wg_ids))
        waves_of_g = wave_ids.setdefault(g, {})
        v = waves_of_g.setdefault(test.instance(tid, "wave"), len(waves_of_g))
        k = lanes.get((g, v), 0)
        lanes[(g, v)] = k + 1
        roles.append(Role(tid, g, v, k))
    return Layout(tuple(roles), max(len(wg_ids), 1),
                  max((len(w) for w in wave_ids.values()), default=1),
                  max(lanes.values(), default=1))


def check_shape(layout: Layout, n_wgs: int, wg_size: int, wave_size: int) -> str | None:
    """Why this launch shape cannot host the layout, or None."""
    if n_wgs < layout.n_wg_roles or n_wgs % layout.n_wg_roles:
        return (f"{layout.n_wg_roles} workgroup roles need a multiple of {layout.n_wg_roles} "
                f"testing workgroups (got {n_wgs})")
    if wg_size % wave_size:
        return f"workgroup size {wg_size} is not a multiple of the wave size {wave_size}"
    if layout.max_lanes > wave_size:
        return f"{layout.max_lanes} threads in one wave exceed the wave size {wave_size}"
    if layout.max_waves > wg_size // wave_size:
        return (f"{layout.max_waves} waves in one workgroup need a workgroup size of at least "
                f"{layout.max_waves * wave_size} (got {wg_size})")
    return None


def block_of(wg, n_wgs: int, n_wg_roles: int, block_stride: int = 1):
    """(block, index in block) of workgroup ``wg``: see :func:`role_table`."""
    S, G = block_stride, n_wg_roles
    return (wg // (S * G)) * S + wg % S, (wg // S) % G


def block_member(block, j, n_wg_roles: int, block_stride: int = 1):
    """Workgroup ``j`` of ``block`` (inverse of :func:`block_of`)."""
    S, G = block_stride, n_wg_roles
    return (block // S) * S * G + j * S + block % S


def role_table(layout: Layout, n_wgs: int, wg_size: int, wave_size: int,
               lane_mult: int = 1, block_stride: int = 1) -> np.ndarray:
    """``roles[(wg * L + lane) * T + t]`` = the instance whose thread ``t`` that work-item runs.

    Workgroups come in *blocks* of ``G`` (the number of workgroup roles) whose members are
    ``block_stride`` (S) apart: S = 1 gives neighbours, which a GPU runs together; PoCL's CPU
    scheduler hands each of its threads a contiguous chunk of up to 64 workgroups, so S = 64 puts
    the members of a block on different threads at the same time. ``n_wgs`` must be a multiple of
    ``S * G``. Instance ``i = w0 * L + l0``
    has its home in workgroup ``w0`` (index ``h`` in its block) and runs workgroup role ``g`` in
    the block's workgroup ``(h + g) mod G``, so all threads of an instance sit in one block (the
    kernel can line a block up with a bounded spin before the test).
    ``lane_mult`` (odd) permutes lanes inside a wave chunk (MC Mutants' ``permute_id``). Every
    column ``t`` is a bijection onto ``range(n_wgs * wg_size)``.
    """
    problem = check_shape(layout, n_wgs, wg_size, wave_size)
    if problem:
        raise ValueError(problem)
    if lane_mult % 2 == 0 and wave_size > 1:
        raise ValueError("lane_mult must be odd")
    L, W, T, G = wg_size, wave_size, layout.n_threads, layout.n_wg_roles
    chunks = L // W
    n = n_wgs * L
    inst = np.arange(n, dtype=np.int64)
    w0, l0 = inst // L, inst % L
    if n_wgs % (block_stride * G):
        raise ValueError(f"{n_wgs} workgroups are not a multiple of block stride {block_stride} "
                         f"x {G} workgroup roles")
    b, h = block_of(w0, n_wgs, G, block_stride)
    c, q = l0 // W, l0 % W
    table = np.empty(n * T, dtype=np.uint32)
    for t, r in enumerate(layout.roles):
        w = block_member(b, (h + r.wg) % G, G, block_stride)
        lane = ((c + r.wave) % chunks) * W + (q * lane_mult + r.lane) % W
        table[(w * L + lane) * T + t] = inst
    return table

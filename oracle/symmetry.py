"""Thread symmetry: explore one execution per orbit of interchangeable threads, map the rest.

Threads of a pre-execution are *interchangeable* when swapping two of them (event for event, in
program order) maps the pre-execution onto itself up to the values they write: every set and
static relation of the table is preserved, so are each event's location and value attributes,
and the written values are renamed consistently (thread ``a``'s ``m``-th value becomes thread
``b``'s ``m``-th, and back) while every other value stays put. The model language never sees a
value (a model reads only the table's sets and relations and rf, co, Rdef, Rundef), so when no
event has a required value (branch paths, outcome queries) and no write computes its value
(rmw, async copies), such a swap maps each consistent execution onto a consistent execution
raising the same flags, and its outcome onto the outcome with the swapped threads' observables
and values renamed. The adjacent swaps of a class of k such threads generate all k!
permutations of it (:class:`Symmetry`, group ``G``: the product over the classes).

Every execution is then the image of exactly one *canonical* execution: the one whose co order
puts the classes' *ranked writes* (in each thread of a class, its first co-ordered write of one
location; the same position in every thread, as the swaps preserve the sets) in class order.
The search explores only canonical executions (:func:`oracle.explore._canon_ok`, option
``canon``) and :func:`close` adds every image of their outcomes. For ``n`` threads each writing
then reading one location, that is one co order of the writes instead of ``n!``: the 14-event
member's 458,752 outcomes come from 5,040 canonical executions.

Used by :func:`oracle.search.explore_pe` for full outcome sets whose whole search is large
(past its first try, the program split into blocks): on each block whose events include a
co-ordered write of a class's threads (:meth:`Symmetry.on_block`), as the swaps map each block
(a group of locations) onto itself and the block's outcomes are closed under them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .events import (C_LOC, C_REQ_MODE, C_REQ_VAL, C_THREAD, C_VALUE, C_WOP, C_WOPND, C_WSRC,
                     PreExecution, table_of, words)
from .explore import CANON_CLASS, _find, _insert

#: the largest group used: a class of more threads keeps its first ones (any subset of a class is
#: a class), so that the images of each orbit stay cheap to list
MAX_GROUP = 40_320
#: the largest class kept (8! = MAX_GROUP) and the most swaps :func:`find` checks (each costs
#: a pass over the table's relations: a program of many threads of one shape must not pay for
#: every pair)
MAX_CLASS = 8
MAX_SWAP_CHECKS = 256
#: the attribute columns the search reads and a swap must preserve (the value column is renamed;
#: C_INSTR and C_THREAD only order the search's decisions)
_KEPT = (C_LOC, C_WSRC, C_WOP, C_WOPND, C_REQ_MODE, C_REQ_VAL)


@dataclass
class Symmetry:
    """The interchangeable-thread classes of a pre-execution (``classes``: lists of threads,
    each class's threads interchangeable by the swaps of consecutive members) and what
    :meth:`on_block` needs to act on a block of its search: per thread its events in program
    order (``threads``), the co-ordered non-initial writes (``co``), the values of the events
    (``values``) and which are reads (``is_read``), the observable column of each observed
    event (``obs_col``)."""

    classes: list[list[int]]
    threads: dict[int, list[int]]
    co: np.ndarray
    values: np.ndarray
    is_read: np.ndarray
    obs_col: dict[int, int]
    nobs: int

    def on_block(self, group: int) -> "Action | None":
        """The symmetry's action on the search of the block of events ``group`` (a bit mask):
        the classes whose threads have a co-ordered write in the block, each thread's first one
        ranked (the same position in every thread of a class), or None when no class has."""
        kept = []
        for cls in self.classes:
            evs = [self.threads[th] for th in cls]
            inside = [tuple((group >> e) & 1 for e in ev) for ev in evs]
            if any(x != inside[0] for x in inside):
                continue                # the swaps do not keep the block (cannot happen when
                                        # blocks are unions of locations; checked all the same)
            m0 = next((m for m, e in enumerate(evs[0]) if self.co[e] and inside[0][m]), None)
            if m0 is not None:
                kept.append([cls, m0])
        # keep the group small enough to list: trim the largest classes
        while kept and math.prod(math.factorial(len(c)) for c, _ in kept) > MAX_GROUP:
            big = max(range(len(kept)), key=lambda i: len(kept[i][0]))
            kept[big][0] = kept[big][0][:-1]
            if len(kept[big][0]) < 2:
                del kept[big]
        if not kept:
            return None
        return self._action(kept)

    def _action(self, kept) -> "Action":
        values, is_read, obs_col = self.values, self.is_read, self.obs_col
        n = values.shape[0]
        canon = np.full(n, -1, np.int64)
        renamed = sorted({int(values[e]) for cls, _ in kept for th in cls
                          for e in self.threads[th] if not is_read[e]})
        vals = np.array(renamed, np.int64)
        code = {v: k for k, v in enumerate(renamed)}
        colmap = np.arange(self.nobs, dtype=np.int64)[None, :]
        vmap = vals[None, :].copy()
        for ci, (cls, m0) in enumerate(kept):
            for rank, th in enumerate(cls):
                canon[self.threads[th][m0]] = ci * CANON_CLASS + rank
            k = len(cls)
            perms = np.array(list(itertools.permutations(range(k))), np.int64)     # [g, k]
            g = perms.shape[0]
            evs = np.array([self.threads[th] for th in cls], np.int64)             # [k, len]
            colmap = np.repeat(colmap, g, axis=0)
            vmap = np.repeat(vmap, g, axis=0)
            tiled = np.tile(perms, (colmap.shape[0] // g, 1))                      # [G, k]
            for a in range(k):
                img = evs[tiled[:, a]]                                             # [G, len]
                for m, e in enumerate(evs[a].tolist()):
                    if e in obs_col:
                        colmap[:, obs_col[e]] = [obs_col[x] for x in img[:, m].tolist()]
                    if not is_read[e]:
                        vmap[:, code[int(values[e])]] = values[img[:, m]]
        return Action([c for c, _ in kept], canon, np.ascontiguousarray(colmap), vals,
                      np.ascontiguousarray(vmap))


@dataclass
class Action:
    """The group acting on one block's search. ``canon``: per event, ``class * CANON_CLASS +
    rank`` for a ranked write, else -1 (the search's option ``canon``). ``colmap[s, c]``: the
    observable column that group element ``s`` sends column ``c`` to; ``values``: the renamed
    values (sorted); ``vmap[s, k]``: the image of ``values[k]`` under element ``s``."""

    classes: list[list[int]]
    canon: np.ndarray
    colmap: np.ndarray
    values: np.ndarray
    vmap: np.ndarray

    @property
    def order(self) -> int:
        """The number of group elements (the identity included)."""
        return self.colmap.shape[0]

    def close(self, rows: np.ndarray, cols: list[int]) -> np.ndarray:
        """Every image under the group of the outcome rows (over the observable columns
        ``cols``, which the group maps onto themselves) of the block's canonical executions:
        the distinct rows of the block's outcome set."""
        inv = np.full(self.colmap.shape[1], -1, np.int64)
        inv[cols] = np.arange(len(cols))
        cm = np.ascontiguousarray(inv[self.colmap[:, cols]])
        if (cm < 0).any():
            raise ValueError("internal: a symmetry maps an observable out of its block")
        return _close(np.ascontiguousarray(rows, np.int64), cm, self.values, self.vmap)


def _bits(words: np.ndarray, n: int) -> np.ndarray:
    """Rows of uint64 words (``[..., W]``) as booleans ``[..., n]``, bit i of the row at i."""
    w = np.ascontiguousarray(words, np.uint64)
    lead = w.shape[:-1]
    b = np.unpackbits(w.reshape(-1, w.shape[-1]).view(np.uint8), axis=1, bitorder="little")
    return b[:, :n].astype(bool).reshape(*lead, n)


def find(pe: PreExecution) -> Symmetry | None:
    """The classes of interchangeable threads of ``pe`` (see the module docstring), or None when
    no two threads are interchangeable or values matter to the search."""
    t = table_of(pe)
    attrs = t.attrs
    n = attrs.shape[0]
    if n == 0 or (attrs[:, C_REQ_MODE] != 0).any() or (attrs[:, C_WSRC] >= 0).any() or \
            (attrs[:, C_WOP] != 0).any():
        return None
    W = words(n)
    masks = _bits(t.masks.reshape(t.masks.shape[0], W), n)           # [sets, n]
    rels = _bits(t.rels.reshape(t.rels.shape[0], n, W), n)           # [rels, n, n]
    is_read = masks[t.set_index["R"]] if "R" in t.set_index else np.zeros(n, bool)
    values = attrs[:, C_VALUE]
    threads: dict[int, list[int]] = {}
    for e, th in enumerate(attrs[:, C_THREAD].tolist()):
        if th >= 0:
            threads.setdefault(th, []).append(e)
    # candidate classes: threads whose events agree position by position on what a swap keeps
    kept = attrs[:, _KEPT]
    shape: dict[tuple, list[int]] = {}
    for th, evs in sorted(threads.items()):
        key = (tuple(map(tuple, kept[evs].tolist())), tuple(map(tuple, masks[:, evs].T.tolist())))
        shape.setdefault(key, []).append(th)
    obs_col = {a: c for c, (_, (kind, a)) in enumerate(pe.observables) if kind == "event"}
    consts = {a for _, (kind, a) in pe.observables if kind == "const"}
    classes = []
    tries = MAX_SWAP_CHECKS
    for ths in shape.values():
        # each thread joins the first class it can be swapped with (with the class's last
        # thread: the swaps of consecutive members generate every permutation of a class)
        found: list[list[int]] = []
        for th in ths:
            for cls in found:
                if len(cls) >= MAX_CLASS or tries <= 0:
                    continue
                tries -= 1
                if _swaps(threads[cls[-1]], threads[th], n, masks, rels, values, is_read,
                          obs_col, consts):
                    cls.append(th)
                    break
            else:
                found.append([th])
        classes += [cls for cls in found if len(cls) >= 2]
    if not classes:
        return None
    co = masks[t.set_index["CO"]] if "CO" in t.set_index else np.zeros(n, bool)
    if "IW" in t.set_index:
        co = co & ~masks[t.set_index["IW"]]
    return Symmetry(classes, threads, co, values, is_read, obs_col, len(pe.observables))


def _swaps(ea: list[int], eb: list[int], n: int, masks, rels, values, is_read, obs_col,
           consts) -> bool:
    """Whether swapping the threads of events ``ea`` and ``eb`` (position by position) maps the
    table onto itself, renaming their written values consistently and no other value."""
    p = np.arange(n)
    p[ea] = eb
    p[eb] = ea
    if not (masks[:, p] == masks).all() or not (rels[:, p][:, :, p] == rels).all():
        return False
    rename: dict[int, int] = {}
    for a, b in zip(ea, eb):
        if is_read[a]:
            continue
        va, vb = int(values[a]), int(values[b])
        if rename.setdefault(va, vb) != vb or rename.setdefault(vb, va) != va:
            return False
    # every other non-read event keeps its value; constant observables too
    for e in range(n):
        if is_read[e] or p[e] != e:
            continue
        v = int(values[e])
        if rename.get(v, v) != v:
            return False
    if any(rename.get(v, v) != v for v in consts):
        return False
    # the observables map onto observables
    return all(int(p[a]) in obs_col for a in obs_col)


@njit(cache=True)
def _close(rows, colmap, values, vmap):
    """The distinct images of ``rows`` under the group (``colmap``, ``values``, ``vmap``: see
    :class:`Action`). The set grows by whole orbits, so a row already in it has its whole
    orbit in it and is skipped: each orbit is listed once, from its first row."""
    nr = rows.shape[0]
    m = rows.shape[1]
    mm = max(m, 1)
    g = colmap.shape[0]
    states = np.zeros((max(16, nr), mm), np.int64)
    table = np.full(64, -1, np.int64)
    ns = 0
    code = np.empty(mm, np.int64)
    img = np.zeros(mm, np.int64)
    nv = values.shape[0]
    for r in range(nr):
        row = rows[r]
        if _find(states, table, row, m) >= 0:
            continue
        for c in range(m):
            k = np.searchsorted(values, row[c])
            code[c] = k if k < nv and values[k] == row[c] else -1
        for s in range(g):
            for c in range(m):
                img[colmap[s, c]] = vmap[s, code[c]] if code[c] >= 0 else row[c]
            states, table, ns, _ = _insert(states, table, ns, img, m)
    return states[:ns]


def warm() -> None:
    """Load (or compile) :func:`_close` for ``scopefuzz warm``, with the argument types a check
    passes it."""
    z = np.zeros((1, 1), np.int64)
    _close(z, z.copy(), np.zeros(1, np.int64), z.copy())

"""Pack a pre-execution into the arrays of the candidate search (:func:`oracle.engine.search`).

:func:`search_pe` packs and searches in one compiled call (what ``oracle.check`` uses);
:func:`pack` returns the packed arrays themselves (tests, inspection).

From the packed form of a pre-execution (:class:`oracle.events.Table`: event attribute rows, set
masks, relation matrix) one compiled pass (:func:`_prepare`) produces

- the model's base slots (every set and relation the compiled model names, by slot);
- per read that is a search digit: its candidate writes (same location, not excluded by ``nrf``,
  not breaking the read's required value when the write's value is a constant), plus undef where
  the read is in ``UndefOK``; reads in ``Indep`` separately (see ``engine.search``);
- per location copy: the co permutations of its co-ordered writes (set ``CO``, the initial write
  in ``IW`` first), its events, its coherence mask;
- per event: rmw write, read flag, value attributes; the rows of ``cohord`` and ``incl``.

The readable derivation of the same candidates (``tests/reference.py``: ``rf_candidates``,
``co_groups``) is what the pure-Python reference evaluator of the tests enumerates; the property
tests compare the two on generated programs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .errors import OracleError
from .events import C_LOC, C_REQ_MODE, C_REQ_VAL, C_VALUE, C_WOP, C_WOPND, C_WSRC, PreExecution, \
    table_of
from .engine import (ONE, ZERO64, Events, Locations, Model, Observables, Reads, _bit, _location_ok,
                     search)
from .lang import DYNAMIC, Program

#: sets and relations the search itself reads (index into ``special``): R, W and rmw always,
#: the others (search hints, :mod:`oracle.hints`) where the model unit declares them
_SPECIAL_SETS = ("R", "W", "CO", "IW", "UndefOK", "Indep", "CohR", "CohA", "CohRmw")
_SPECIAL_RELS = ("nrf", "rmw", "cohord", "incl")
_ALWAYS = frozenset({"R", "W", "rmw"})


@dataclass
class Packed:
    """A pre-execution packed into the engine's arrays: its base slots and the named tuples
    :class:`oracle.engine.Reads`, :class:`~oracle.engine.Locations`,
    :class:`~oracle.engine.Events` and :class:`~oracle.engine.Observables`."""

    pe: PreExecution
    slots: np.ndarray
    reads: Reads
    locs: Locations
    events: Events
    obs: Observables

    def values(self, src: dict[int, int], co_rows) -> list[int] | None:
        """Every event's value for one candidate (``src``: read -> write or -1 for undef;
        ``co_rows``: per location its row of ``co_perm``), resolved by the search's own location
        check; None where an rmw value does not resolve or a required value breaks. Events at
        no location get 0."""
        n = self.pe.n
        s = np.full(max(n, 1), -2, np.int64)
        for r, w in src.items():
            s[r] = w
        val = np.zeros(max(n, 1), np.int64)
        for x in range(self.locs.co_start.shape[0]):
            if not _location_ok(x, s, val, co_rows[x], self.locs, self.events):
                return None
        return val[:n].tolist()


#: (model, set vocabulary, relation vocabulary) -> slot maps; the vocabularies are kept in the
#: value and compared by identity, so a recycled id() never maps to stale indices
_MAPS: dict = {}


def _slot_maps(prog: Program, set_index: dict, rel_index: dict, hints: frozenset):
    key = (id(prog), id(set_index), id(rel_index), hints)
    hit = _MAPS.get(key)
    if hit is not None and hit[0] is prog and hit[1] is set_index and hit[2] is rel_index:
        return hit[3]
    set_slot, set_src, rel_slot, rel_src = [], [], [], []
    for name in prog.base[len(DYNAMIC):]:
        if name in set_index:
            set_slot.append(prog.slots[name])
            set_src.append(set_index[name])
        elif name in rel_index:
            rel_slot.append(prog.slots[name])
            rel_src.append(rel_index[name])
        else:
            raise OracleError(f"model {prog.name} uses {name!r}, which the event builder does "
                              f"not provide")
    use = hints | _ALWAYS
    special = np.array([set_index.get(s, -1) if s in use else -1 for s in _SPECIAL_SETS]
                       + [rel_index.get(r, -1) if r in use else -1 for r in _SPECIAL_RELS],
                       np.int64)
    maps = tuple(np.array(x, np.int64) for x in (set_slot, set_src, rel_slot, rel_src)) + (special,)
    if len(_MAPS) > 64:
        _MAPS.clear()
    _MAPS[key] = (prog, set_index, rel_index, maps)
    return maps


def _inputs(pe: PreExecution, prog: Program, hints: frozenset):
    """What the compiled pass takes besides the model: the table, the slot maps of ``prog`` for
    its vocabulary (and the search hints used), and the observables as (kind, argument) arrays
    (kind 1 = an event's value)."""
    t = table_of(pe)
    maps = _slot_maps(prog, t.set_index, t.rel_index, hints)
    obs = pe.observables
    if obs:
        obs_ka = np.array([(1 if k == "event" else 0, a) for _, (k, a) in obs], np.int64).T.copy()
    else:
        obs_ka = np.zeros((2, 0), np.int64)
    return t, maps, obs_ka[0], obs_ka[1]


def pack(pe: PreExecution, prog: Program, hints: frozenset) -> Packed:
    """The search's arrays of a pre-execution as a :class:`Packed` (for inspection, tests and
    explanations; :func:`search_pe` does the same work inside its one compiled call). ``hints``:
    the search hints the model unit declares (:mod:`oracle.hints`)."""
    t, (set_slot, set_src, rel_slot, rel_src, special), obs_kind, obs_arg = _inputs(pe, prog, hints)
    slots, rd, lc, ev = _prepare(t.attrs, t.masks, t.rels, set_slot, set_src, rel_slot, rel_src,
                                 special, prog.nslots)
    return Packed(pe, slots, rd, lc, ev, Observables(obs_kind, obs_arg))


def search_pe(pe: PreExecution, prog: Program, hints: frozenset, want_state: bool = True,
              max_steps: int = -1):
    """Pack and search in one compiled call (no intermediate arrays cross into Python):
    (states, nstates, candidates, consistent, flags, fail_counts), see
    :func:`oracle.engine.search`."""
    t, (set_slot, set_src, rel_slot, rel_src, special), obs_kind, obs_arg = _inputs(pe, prog, hints)
    return _search_table(t.attrs, t.masks, t.rels, set_slot, set_src, rel_slot, rel_src, special,
                         prog.nslots, prog.prelude, prog.ops, obs_kind, obs_arg,
                         len(prog.checks), want_state, max_steps)


# --- the compiled pass ---------------------------------------------------------------------------
# (oracle/__init__.py lists this module and engine.py among the sources whose change drops the
# numba cache: _search_table embeds engine.search)
_ONE, _ZERO = ONE, ZERO64


@njit(cache=True)
def _mask_of(masks, k):
    return masks[k] if k >= 0 else _ZERO


@njit(cache=True)
def _next_permutation(p):
    """Advance ``p`` to the next permutation in lexicographic order (itertools.permutations's
    order); False after the last one."""
    k = p.shape[0]
    i = k - 2
    while i >= 0 and p[i] >= p[i + 1]:
        i -= 1
    if i < 0:
        return False
    j = k - 1
    while p[j] <= p[i]:
        j -= 1
    p[i], p[j] = p[j], p[i]
    lo, hi = i + 1, k - 1
    while lo < hi:
        p[lo], p[hi] = p[hi], p[lo]
        lo += 1
        hi -= 1
    return True


@njit(cache=True)
def _prepare(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src, special, nslots):
    n = attrs.shape[0]
    nn = max(n, 1)
    # -- the model's base slots
    slots = np.zeros((nslots, nn), np.uint64)
    for q in range(set_slot.shape[0]):
        m = masks[set_src[q]]
        for i in range(n):
            slots[set_slot[q], i] = m & _bit(i)
    for q in range(rel_slot.shape[0]):
        for i in range(n):
            slots[rel_slot[q], i] = rels[rel_src[q], i]
    m_r, m_w, m_co, m_iw = (_mask_of(masks, special[0]), _mask_of(masks, special[1]),
                            _mask_of(masks, special[2]), _mask_of(masks, special[3]))
    m_undef, m_indep, m_cohr = (_mask_of(masks, special[4]), _mask_of(masks, special[5]),
                                _mask_of(masks, special[6]))
    coha, cohrmw = _mask_of(masks, special[7]), _mask_of(masks, special[8])
    k_nrf, k_rmw, k_cohord, k_incl = special[9], special[10], special[11], special[12]
    loc = attrs[:, C_LOC]
    # -- per-event arrays (size-1 placeholders for an empty program)
    cohord = np.zeros(nn, np.uint64)
    incl = np.zeros(nn, np.uint64)
    rmw_w = np.full(nn, -1, np.int64)
    is_read = np.zeros(nn, np.bool_)
    vattrs = np.zeros((6, nn), np.int64)
    vattrs[1, :] = -1
    full = ~_ZERO if n == 64 else (_bit(n) - _ONE)
    for i in range(n):
        if k_cohord >= 0:
            cohord[i] = rels[k_cohord, i]
        incl[i] = rels[k_incl, i] if k_incl >= 0 else full   # no scopes: all inclusive
        if k_rmw >= 0:
            row = rels[k_rmw, i]
            for j in range(63, -1, -1):
                if row & _bit(j):
                    rmw_w[i] = j
                    break
        is_read[i] = (m_r & _bit(i)) != _ZERO
        vattrs[0, i] = attrs[i, C_VALUE]
        vattrs[1, i] = attrs[i, C_WSRC]
        vattrs[2, i] = attrs[i, C_WOP]
        vattrs[3, i] = attrs[i, C_WOPND]
        vattrs[4, i] = attrs[i, C_REQ_MODE]
        vattrs[5, i] = attrs[i, C_REQ_VAL]
    # -- rf candidates per read, in event order
    nreads = 0
    for i in range(n):
        if m_r & _bit(i):
            nreads += 1
    rc = np.full((max(nreads, 1), n + 1), -1, np.int64)
    rlen = np.zeros(max(nreads, 1), np.int64)
    rid = np.zeros(max(nreads, 1), np.int64)
    q = 0
    for r in range(n):
        rb = _bit(r)
        if not (m_r & rb):
            continue
        rid[q] = r
        c = 0
        for w in range(n):
            if not (m_w & _bit(w)) or loc[w] != loc[r]:
                continue
            if k_nrf >= 0 and (rels[k_nrf, w] & rb):
                continue
            rm = attrs[r, C_REQ_MODE]
            if attrs[w, C_WSRC] < 0 and rm != 0 and \
                    ((rm == 1) != (attrs[w, C_VALUE] == attrs[r, C_REQ_VAL])):
                continue        # a constant write that breaks the read's required value
            rc[q, c] = w
            c += 1
        if m_undef & rb:
            rc[q, c] = -1
            c += 1
        rlen[q] = c
        q += 1
    maxc = 1
    imax = 0
    nind = 0
    for q in range(nreads):
        maxc = max(maxc, rlen[q])
        if m_indep & _bit(rid[q]):
            nind += 1
            imax = max(imax, rlen[q])
    ndig = nreads - nind
    cand = np.full((ndig, maxc if ndig else 1), -1, np.int64)
    ncand = np.zeros(ndig, np.int64)
    reads = np.zeros(ndig, np.int64)
    if nind:
        ind_cand = np.full((nind, imax), -1, np.int64)
    else:
        ind_cand = np.full((1, 1), -1, np.int64)
    ind_ncand = np.zeros(nind, np.int64)
    ind_reads = np.zeros(nind, np.int64)
    a = 0
    b = 0
    for q in range(nreads):
        if m_indep & _bit(rid[q]):
            ind_reads[b] = rid[q]
            ind_ncand[b] = rlen[q]
            for c in range(rlen[q]):
                ind_cand[b, c] = rc[q, c]
            b += 1
        else:
            reads[a] = rid[q]
            ncand[a] = rlen[q]
            for c in range(rlen[q]):
                cand[a, c] = rc[q, c]
            a += 1
    # -- location copies in increasing id: events, coherence mask, co permutations
    lids = np.zeros(nn, np.int64)
    nl = 0
    for i in range(n):
        if loc[i] >= 0:
            seen = False
            for x in range(nl):
                if lids[x] == loc[i]:
                    seen = True
                    break
            if not seen:
                lids[nl] = loc[i]
                nl += 1
    lids = np.sort(lids[:nl])
    loc_nev = np.zeros(nl, np.int64)
    wmax = 1
    for x in range(nl):
        for i in range(n):
            if loc[i] == lids[x]:
                loc_nev[x] += 1
        wmax = max(wmax, loc_nev[x])
    loc_events = np.zeros((max(nl, 1), wmax), np.int64)
    coh_mask = np.zeros(max(nl, 1), np.uint64)
    co_start = np.zeros(nl, np.int64)
    co_count = np.zeros(nl, np.int64)
    co_len = np.zeros(nl, np.int64)
    inits = np.full(max(nl, 1), -1, np.int64)
    rest = np.zeros((max(nl, 1), nn), np.int64)
    nrest = np.zeros(max(nl, 1), np.int64)
    total = 0
    width = 1
    for x in range(nl):
        c = 0
        for i in range(n):
            if loc[i] != lids[x]:
                continue
            loc_events[x, c] = i
            c += 1
            b_i = _bit(i)
            if (m_co | m_cohr) & b_i:
                coh_mask[x] |= b_i
            if m_co & b_i:
                if m_iw & b_i:
                    if inits[x] < 0:
                        inits[x] = i
                else:
                    rest[x, nrest[x]] = i
                    nrest[x] += 1
        k = nrest[x]
        fact = 1
        for j in range(2, k + 1):
            fact *= j
        co_start[x] = total
        co_count[x] = fact
        co_len[x] = k + (1 if inits[x] >= 0 else 0)
        width = max(width, co_len[x])
        total += fact
    co_perm = np.zeros((max(total, 1), width), np.int64)
    for x in range(nl):
        k = nrest[x]
        p = np.arange(k)
        row = co_start[x]
        off = 1 if inits[x] >= 0 else 0
        while True:
            if off:
                co_perm[row, 0] = inits[x]
            for j in range(k):
                co_perm[row, off + j] = rest[x, p[j]]
            row += 1
            if not _next_permutation(p):
                break
    read_loc = np.zeros(ndig, np.int64)
    for q in range(ndig):
        for x in range(nl):
            if lids[x] == loc[reads[q]]:
                read_loc[q] = x
                break
    return (slots, Reads(reads, cand, ncand, read_loc, ind_reads, ind_cand, ind_ncand),
            Locations(co_perm, co_start, co_count, co_len, loc_events, loc_nev, coh_mask),
            Events(is_read, vattrs[0], vattrs[1], vattrs[2], vattrs[3], vattrs[4], vattrs[5],
                   rmw_w, cohord, incl, coha, cohrmw))


@njit(cache=True)
def _search_table(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src, special, nslots,
                  prelude, ops, obs_kind, obs_arg, nchecks, want_state, max_steps):
    slots, rd, lc, ev = _prepare(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src,
                                 special, nslots)
    return search(slots, Model(prelude, ops, nchecks), attrs.shape[0], rd, lc, ev,
                  Observables(obs_kind, obs_arg), want_state, max_steps)

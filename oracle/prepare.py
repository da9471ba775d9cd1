"""The packed pre-execution as the search reads it: its named tuples and the compiled pass that
makes them (:func:`prepare_arrays`).

:mod:`oracle.pack` turns a pre-execution's table (event attribute rows, set masks, relation
matrix) into plain arrays; :func:`prepare_arrays` derives from them, in one compiled pass, what
the search (:mod:`oracle.explore`) walks: the model's base slots in rows of ``W`` words, per read
its candidate sources and kind, per location its events and co-ordered writes, per event its
value attributes and coherence rows (see :mod:`oracle.pack` for the list). The search's compiled
entry points call it first, inside the same compiled call; :func:`oracle.pack.pack` calls it
from Python for explanations and tests.

It is its own module because both sides need it: the search calls it, and the search's entry
points live in :mod:`oracle.explore`, which :mod:`oracle.pack` imports.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .engine import ZERO64, _wbit, full_word
from .events import (C_INSTR, C_LOC, C_REQ_MODE, C_REQ_VAL, C_THREAD, C_VALUE, C_WOP, C_WOPND,
                     C_WSRC)

# --- the packed pre-execution, as the search reads it (made by oracle.pack) -----------------------
#: every read: the event, its candidate sources (-1 = undef) and their count, its kind (DECIDE: a
#: search choice; COLAST: reads the co-last write; INDEP: chosen alone at the leaves), its location
Reads = namedtuple("Reads", ["reads", "cand", "ncand", "rkind", "rloc", "ridx"])
DECIDE, COLAST, INDEP = 0, 1, 2
#: per location: its events, its initial write (-1: none), its other co-ordered writes, the
#: coherence mask (CO | CohR) as W words
Locations = namedtuple("Locations", ["loc_events", "loc_nev", "co_init", "co_writes", "co_n",
                                     "coh_mask"])
#: per event: read flag, value attributes (constant, rmw source/op/operand, required value), its
#: rmw write (relation rmw) and the write taking its value from it (wsrc inverse), its location,
#: instruction and thread; the rows of cohord and incl; the CohA and CohRmw masks
Events = namedtuple("Events", ["is_read", "val_const", "wsrc", "wop", "wopnd", "req_mode",
                               "req_val", "rmw_w", "dep_w", "loc", "instr", "thread", "cohord",
                               "incl", "coha", "cohrmw"])
#: the compiled model: static prelude, per-candidate ops, prefix ops, number of checks, upper
#: ops (``Program.upper_ops``: checks evaluated on the upper graph of a partial execution), and
#: the static tables of the incremental evaluation of ops, prefix and upper
#: (:func:`oracle.engine.inc_tables`: one buffer per model, filled by the first search)
Model = namedtuple("Model", ["prelude", "ops", "prefix", "nchecks", "upper", "tables"])
#: the outcome: per observable, kind (1 = an event's value, 0 = a constant) and argument
Observables = namedtuple("Observables", ["kind", "arg"])
#: what to do: keep states; the step budget (-1: none); the block's event mask (W words) and
#: observables; bounding allowed; the flags the block can raise; forward checking; hint pruning;
#: asked outcomes (``targets``, none: every outcome) and outcomes found before (``found``);
#: whether to run the upper checks (``upper``); the canonical co constraint of a symmetric
#: program (``canon``, empty: none; :func:`_canon_ok`, :mod:`oracle.symmetry`); per asked value
#: whether it asks for any value *but* that one (``tne``, the shape of ``targets``: a condition's
#: ``!=`` atom); whether the search stops at the first asked outcome found (``first``: a verdict
#: needs one witness) rather than once each is found; the flags at whose first raising the search
#: stops (``stop_flags``: a witness of a flag that means undefined behaviour); per asked ``!=``
#: value the further values the observable must not hold either (``tex``, shape (targets, nobs,
#: K), ``WILD`` padding: ``k != 1 /\\ k != 2`` asks 1 with ``tne`` and 2 in ``tex``)
Options = namedtuple("Options", ["want_state", "max_steps", "emask", "omask", "bound",
                                 "raisable", "forward", "hints", "targets", "found", "upper",
                                 "canon", "tne", "first", "stop_flags", "tex"])


@njit(cache=True)
def _has(m, k, i):
    """Event ``i`` in set ``k`` of the masks (k < 0: an undeclared set, empty)."""
    return k >= 0 and (m[k, i >> 6] & _wbit(i)) != ZERO64


@njit(cache=True, inline='always')
def _rf_candidate(masks, rels, attrs, k_w, k_nrf, loc, r, w, W):
    """Whether write ``w`` is a candidate source of read ``r``: a write to its location, not
    excluded by ``nrf``, not a constant that breaks the read's required value."""
    if not _has(masks, k_w, w) or loc[w] != loc[r]:
        return False
    if k_nrf >= 0 and (rels[k_nrf, w * W + (r >> 6)] & _wbit(r)):
        return False
    rm = attrs[r, C_REQ_MODE]
    if attrs[w, C_WSRC] < 0 and rm != 0 and \
            ((rm == 1) != (attrs[w, C_VALUE] == attrs[r, C_REQ_VAL])):
        return False            # a constant write that breaks the read's required value
    return True


@njit(cache=True)
def prepare_arrays(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special, nslots):
    n = attrs.shape[0]
    nn = max(n, 1)
    nw = n * W
    # -- the model's base slots
    slots = np.zeros((nslots, max(nw, 1)), np.uint64)
    for q in range(set_slot.shape[0]):
        for i in range(n):
            if masks[set_src[q], i >> 6] & _wbit(i):
                slots[set_slot[q], i * W + (i >> 6)] = _wbit(i)
    for q in range(rel_slot.shape[0]):
        for x in range(nw):
            slots[rel_slot[q], x] = rels[rel_src[q], x]
    k_r, k_w, k_co, k_iw, k_undef, k_indep, k_cohr, k_coha, k_cohrmw, k_colast = \
        special[0], special[1], special[2], special[3], special[4], special[5], special[6], \
        special[7], special[8], special[9]
    k_nrf, k_rmw, k_cohord, k_incl = special[10], special[11], special[12], special[13]
    loc = attrs[:, C_LOC]
    # -- the arrays sized by events: slices of one buffer per type (size-1 placeholders for an
    # empty program; a location's arrays sized by events too, then cut to the locations)
    words = np.zeros(2 * max(nw, 1) + (2 + nn) * W, np.uint64)
    cohord = words[:max(nw, 1)]
    incl = words[max(nw, 1):2 * max(nw, 1)]
    coha = words[2 * max(nw, 1):2 * max(nw, 1) + W]
    cohrmw = words[2 * max(nw, 1) + W:2 * max(nw, 1) + 2 * W]
    coh_rows = words[2 * max(nw, 1) + 2 * W:].reshape((nn, W))
    ints = np.zeros(17 * nn, np.int64)
    vattrs = ints[:9 * nn].reshape((9, nn))
    rmw_w = ints[9 * nn:10 * nn]
    dep_w = ints[10 * nn:11 * nn]
    lids = ints[11 * nn:12 * nn]
    lidx = ints[12 * nn:13 * nn]
    ridx = ints[13 * nn:14 * nn]
    loc_nev = ints[14 * nn:15 * nn]
    co_init_buf = ints[15 * nn:16 * nn]
    co_n_buf = ints[16 * nn:]
    for i in range(nn):
        vattrs[1, i] = -1
        vattrs[6, i] = -1
        rmw_w[i] = -1
        dep_w[i] = -1
        lidx[i] = -1
        ridx[i] = -1
    bools = np.zeros(2 * nn, np.bool_)
    is_read = bools[:nn]
    for i in range(n):
        for x in range(W):
            if k_cohord >= 0:
                cohord[i * W + x] = rels[k_cohord, i * W + x]
            incl[i * W + x] = rels[k_incl, i * W + x] if k_incl >= 0 else full_word(n, x)
        if k_rmw >= 0:
            for j in range(n - 1, -1, -1):
                if rels[k_rmw, i * W + (j >> 6)] & _wbit(j):
                    rmw_w[i] = j
                    break
        is_read[i] = _has(masks, k_r, i)
        if _has(masks, k_coha, i):
            coha[i >> 6] |= _wbit(i)
        if _has(masks, k_cohrmw, i):
            cohrmw[i >> 6] |= _wbit(i)
        vattrs[0, i] = attrs[i, C_VALUE]
        vattrs[1, i] = attrs[i, C_WSRC]
        vattrs[2, i] = attrs[i, C_WOP]
        vattrs[3, i] = attrs[i, C_WOPND]
        vattrs[4, i] = attrs[i, C_REQ_MODE]
        vattrs[5, i] = attrs[i, C_REQ_VAL]
        vattrs[7, i] = attrs[i, C_INSTR]
        vattrs[8, i] = attrs[i, C_THREAD]
        if attrs[i, C_WSRC] >= 0:
            dep_w[attrs[i, C_WSRC]] = i
    # -- location copies in increasing id (kept sorted as they are found): events, coherence
    # mask, co-ordered writes
    nl = 0
    for i in range(n):
        if loc[i] < 0:
            continue
        j = nl
        while j > 0 and lids[j - 1] > loc[i]:
            j -= 1
        if j > 0 and lids[j - 1] == loc[i]:
            continue
        for x in range(nl, j, -1):
            lids[x] = lids[x - 1]
        lids[j] = loc[i]
        nl += 1
    wmax = 1
    for x in range(nl):
        for i in range(n):
            if loc[i] == lids[x]:
                loc_nev[x] += 1
                lidx[i] = x
        wmax = max(wmax, loc_nev[x])
    # -- reads and their candidate counts
    nreads = 0
    maxc = 1
    for r in range(n):
        if not is_read[r]:
            continue
        c = 0
        for w in range(n):
            if _rf_candidate(masks, rels, attrs, k_w, k_nrf, loc, r, w, W):
                c += 1
        if _has(masks, k_undef, r):
            c += 1
        maxc = max(maxc, c)
        nreads += 1
    ml = max(nl, 1)
    mr = max(nreads, 1)
    more = np.zeros(2 * ml * wmax + 4 * mr + mr * maxc, np.int64)
    loc_events = more[:ml * wmax].reshape((ml, wmax))
    co_writes = more[ml * wmax:2 * ml * wmax].reshape((ml, wmax))
    rlen = more[2 * ml * wmax:2 * ml * wmax + mr]
    rid = more[2 * ml * wmax + mr:2 * ml * wmax + 2 * mr]
    rkind = more[2 * ml * wmax + 2 * mr:2 * ml * wmax + 3 * mr]
    rloc = more[2 * ml * wmax + 3 * mr:2 * ml * wmax + 4 * mr]
    cand = more[2 * ml * wmax + 4 * mr:].reshape((mr, maxc))
    for x in range(2 * ml * wmax + 4 * mr, more.shape[0]):
        more[x] = -1                            # (cand: -1 past each read's candidates)
    coh_mask = coh_rows[:ml]
    co_init = co_init_buf[:ml]
    co_n = co_n_buf[:ml]
    all_co = bools[nn:nn + ml]                  # every write of the location is in CO
    for x in range(ml):
        co_init[x] = -1
        all_co[x] = True
    for x in range(nl):
        c = 0
        for i in range(n):
            if loc[i] != lids[x]:
                continue
            loc_events[x, c] = i
            c += 1
            if _has(masks, k_co, i) or _has(masks, k_cohr, i):
                coh_mask[x, i >> 6] |= _wbit(i)
            if _has(masks, k_w, i) and not _has(masks, k_co, i):
                all_co[x] = False
            if _has(masks, k_co, i):
                if _has(masks, k_iw, i) and co_init[x] < 0:
                    co_init[x] = i
                else:
                    co_writes[x, co_n[x]] = i
                    co_n[x] += 1
    # -- rf candidates per read, in event order
    q = 0
    for r in range(n):
        if not is_read[r]:
            continue
        rid[q] = r
        ridx[r] = q
        rloc[q] = lidx[r]
        if _has(masks, k_colast, r) and lidx[r] >= 0 and all_co[lidx[r]]:
            rkind[q] = COLAST
        elif _has(masks, k_indep, r):
            rkind[q] = INDEP
        else:
            rkind[q] = DECIDE
        c = 0
        for w in range(n):
            if _rf_candidate(masks, rels, attrs, k_w, k_nrf, loc, r, w, W):
                cand[q, c] = w
                c += 1
        if _has(masks, k_undef, r):
            cand[q, c] = -1
            c += 1
        rlen[q] = c
        q += 1
    return (slots, Reads(rid[:nreads], cand, rlen[:nreads], rkind[:nreads], rloc[:nreads], ridx),
            Locations(loc_events, loc_nev[:nl], co_init[:nl], co_writes, co_n[:nl], coh_mask),
            Events(is_read, vattrs[0], vattrs[1], vattrs[2], vattrs[3], vattrs[4], vattrs[5],
                   rmw_w, dep_w, lidx, vattrs[7], vattrs[8], cohord, incl, coha, cohrmw))


@njit(cache=True)
def prepare_one_word(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src, special, nslots):
    """:func:`prepare_arrays` with ``W`` the constant 1: the pass the search calls, which a check
    has put in numba's cache, behind a small wrapper (see :func:`prepare`)."""
    return prepare_arrays(attrs, masks, rels, 1, set_slot, set_src, rel_slot, rel_src, special,
                          nslots)


def prepare(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special, nslots):
    """:func:`prepare_arrays` called from Python (:func:`oracle.pack.pack`: explanations, the
    block split, tests). Rows of one word go through :func:`prepare_one_word`, so that a first
    run compiles a wrapper around the search's own pass rather than a second one for an
    ``int64`` ``W``."""
    if W == 1:
        return prepare_one_word(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src, special,
                                nslots)
    return prepare_arrays(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special,
                          nslots)

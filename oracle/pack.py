"""Pack a pre-execution into the arrays of the search (:func:`oracle.explore.explore`).

:func:`search_pe` packs and explores in one compiled call per block (what ``oracle.check`` and
``oracle.allows`` use); :func:`pack` returns the packed arrays themselves (explanations, tests).

From the packed form of a pre-execution (:class:`oracle.events.Table`: event attribute rows, set
masks, relation matrix) one compiled pass (:func:`_prepare`) produces

- the model's base slots (every set and relation the compiled model names, by slot), in rows of
  ``W = ceil(n / 64)`` words;
- per read: its candidate writes (same location, not excluded by ``nrf``, not breaking the read's
  required value when the write's value is a constant), plus undef where the read is in
  ``UndefOK``; its kind: a choice of the search, a final-memory read of the co-last write
  (``CoLast``, where every write of its location is co-ordered) or a read chosen alone at the
  leaves (``Indep``);
- per location copy: its events, its initial write (``IW``), its other co-ordered writes (set
  ``CO``), its coherence mask;
- per event: rmw write, the write taking its value from it, read flag, value attributes, location,
  instruction and thread; the rows of ``cohord`` and ``incl``.

The readable derivation of the same candidates (``tests/reference.py``: ``rf_candidates``,
``co_groups``) is what the pure-Python reference evaluator of the tests enumerates; the property
tests compare the two on generated programs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .errors import OracleError
from .events import (C_INSTR, C_LOC, C_REQ_MODE, C_REQ_VAL, C_THREAD, C_VALUE, C_WOP, C_WOPND,
                     C_WSRC, UNDEF_VAL, PreExecution, table_of)
from .engine import PENDING, ZERO64, _wbit, full_word, inc_tables, rmw_value
from .explore import (COLAST, DECIDE, INDEP, WILD, Events, Locations, Model, Observables, Options,
                      Reads, explore)
from .lang import DYNAMIC, Program

#: sets and relations the search itself reads (index into ``special``): R, W and rmw always,
#: the others (search hints, :mod:`oracle.hints`) where the model unit declares them
_SPECIAL_SETS = ("R", "W", "CO", "IW", "UndefOK", "Indep", "CohR", "CohA", "CohRmw", "CoLast")
_SPECIAL_RELS = ("nrf", "rmw", "cohord", "incl")
_ALWAYS = frozenset({"R", "W", "rmw"})


@dataclass
class Packed:
    """A pre-execution packed into the search's arrays: its base slots (rows of ``words``
    uint64) and the named tuples :class:`oracle.explore.Reads`, :class:`~oracle.explore.
    Locations`, :class:`~oracle.explore.Events` and :class:`~oracle.explore.Observables`."""

    pe: PreExecution
    slots: np.ndarray
    reads: Reads
    locs: Locations
    events: Events
    obs: Observables
    words: int

    def co_writes(self) -> list[tuple[int, list[int]]]:
        """Per location: (initial write or -1, the other co-ordered writes)."""
        lc = self.locs
        return [(int(lc.co_init[x]), [int(w) for w in lc.co_writes[x, :lc.co_n[x]]])
                for x in range(lc.co_init.shape[0])]

    def values(self, src: dict[int, int]) -> list[int] | None:
        """Every event's value for one candidate (``src``: read -> write or -1 for undef); None
        where an rmw value does not resolve or a required value breaks. Events at no location
        get 0."""
        n = self.pe.n
        ev = self.events
        val = [0 if not (ev.is_read[i] or ev.wsrc[i] >= 0) else PENDING for i in range(n)]
        for i in range(n):
            if val[i] == 0 and not ev.is_read[i]:
                val[i] = int(ev.val_const[i])
        for _ in range(n + 1):
            for i in range(n):
                if val[i] != PENDING:
                    continue
                if ev.is_read[i]:
                    w = src.get(i, -1)
                    val[i] = UNDEF_VAL if w < 0 else val[w]
                else:
                    v = val[int(ev.wsrc[i])]
                    if v != PENDING:
                        val[i] = int(rmw_value(int(ev.wop[i]), v, int(ev.wopnd[i])))
        for i in range(n):
            v = val[i]
            if v == PENDING:
                return None
            mode = int(ev.req_mode[i])
            if mode and v != UNDEF_VAL and (mode == 1) != (v == int(ev.req_val[i])):
                return None
        return val


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


def words_of(n: int) -> int:
    """uint64 words per relation row for ``n`` events."""
    return max(1, (n + 63) // 64)


def table_arrays(t) -> tuple[np.ndarray, np.ndarray, int]:
    """A table's set masks as ``uint64[sets, W]`` and relations as flat rows
    ``uint64[relations, n * W]`` (one-word tables keep their arrays: a 1-D mask vector and a
    2-D matrix are the same data)."""
    n = t.n
    W = words_of(n)
    masks = t.masks.reshape(t.masks.shape[0], -1) if t.masks.ndim == 1 else t.masks
    rels = t.rels.reshape(t.rels.shape[0], -1)
    if masks.shape[1] != W or rels.shape[1] != n * W:
        raise OracleError(f"internal: a table of {n} events has {masks.shape[1]}-word masks")
    return np.ascontiguousarray(masks), np.ascontiguousarray(rels), W


def _inputs(pe: PreExecution, prog: Program, hints: frozenset):
    """What the compiled pass takes besides the model: the table's arrays, the slot maps of
    ``prog`` for its vocabulary (and the search hints used), and the observables as (kind,
    argument) arrays (kind 1 = an event's value)."""
    t = table_of(pe)
    masks, rels, W = table_arrays(t)
    maps = _slot_maps(prog, t.set_index, t.rel_index, hints)
    kinds = []
    args = []
    for _, (k, a) in pe.observables:
        kinds.append(k == "event")
        args.append(a)
    obs = np.array(kinds + args, np.int64)          # (one conversion, two views)
    nobs = len(args)
    return t.attrs, masks, rels, W, maps, obs[:nobs], obs[nobs:]


def pack(pe: PreExecution, prog: Program, hints: frozenset) -> Packed:
    """The search's arrays of a pre-execution as a :class:`Packed` (for inspection, tests and
    explanations; :func:`search_pe` does the same work inside its compiled call). ``hints``:
    the search hints the model unit declares (:mod:`oracle.hints`)."""
    attrs, masks, rels, W, (set_slot, set_src, rel_slot, rel_src, special), obs_kind, obs_arg = \
        _inputs(pe, prog, hints)
    slots, rd, lc, ev = _prepare(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src,
                                 special, prog.nslots)
    return Packed(pe, slots, rd, lc, ev, Observables(obs_kind, obs_arg), W)


# --- the compiled pass ---------------------------------------------------------------------------
# (oracle/__init__.py lists this module, engine.py and explore.py among the sources whose change
# drops the numba cache: _search_one_word and _search_words embed explore.explore)

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
def _prepare(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special, nslots):
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


# _search_impl rebuilds these named tuples field by field: a field added to either must be added
# there too (numba would refuse the call; this says where)
assert len(Options._fields) == 16 and len(Model._fields) == 6, \
    "oracle/pack.py _search_impl: update the Options/Model fields it rebuilds"


# inlined (numba IR) into its two callers: compiled on its own, it would be one more level that
# links and re-optimizes explore()'s machine code (a first run's compile, ~15 s), for nothing
@njit(cache=True, inline='always')
def _search_impl(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special, nslots,
                 model, obs_kind, obs_arg, opt):
    # ``model`` and ``opt`` come as plain tuples (:func:`search_pe`): numba types a plain tuple
    # of arrays in its C dispatcher, a named tuple in Python (1.5-3 us a call); the named
    # tuples explore() reads are made here
    slots, rd, lc, ev = _prepare(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src,
                                 special, nslots)
    return explore(slots, Model(model[0], model[1], model[2], model[3], model[4], model[5]),
                   attrs.shape[0], W, rd, lc, ev, Observables(obs_kind, obs_arg),
                   Options(opt[0], opt[1], opt[2], opt[3], opt[4], opt[5], opt[6], opt[7],
                           opt[8], opt[9], opt[10], opt[11], opt[12], opt[13], opt[14],
                           opt[15]))


@njit(cache=True)
def _search_one_word(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src, special, nslots,
                     model, obs_kind, obs_arg, opt):
    """Programs of at most 64 events: every kernel compiled with ``W`` the constant 1."""
    return _search_impl(attrs, masks, rels, 1, set_slot, set_src, rel_slot, rel_src, special,
                        nslots, model, obs_kind, obs_arg, opt)


@njit(cache=True)
def _search_words(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special, nslots,
                  model, obs_kind, obs_arg, opt):
    """Programs of more than 64 events: ``W`` words per row, read at run time."""
    return _search_impl(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special,
                        nslots, model, obs_kind, obs_arg, opt)


#: id(program) -> (program, its Model, the Model as a plain tuple): made once per loaded model,
#: not once per search
_MODELS: dict = {}


def model_arrays(prog: Program) -> Model:
    """The compiled model's arrays (:class:`oracle.explore.Model`)."""
    return _model_entry(prog)[1]


def _model_entry(prog: Program):
    hit = _MODELS.get(id(prog))
    if hit is not None and hit[0] is prog:
        return hit
    model = Model(prog.prelude, prog.ops, prog.prefix_ops, len(prog.checks), prog.upper_ops,
                  inc_tables((prog.ops, prog.prefix_ops, prog.upper_ops), prog.nslots))
    if len(_MODELS) > 64:
        _MODELS.clear()
    hit = _MODELS[id(prog)] = (prog, model, tuple(model))
    return hit


_NO_ROWS = np.zeros((0, 0), np.int64)


def every_event(n: int) -> np.ndarray:
    """The event mask of events ``0 .. n - 1`` (:func:`oracle.engine.full_word` of each word),
    computed here in Python: calling the compiled ``full_word`` from Python would load one more
    function from numba's cache, a start-up cost of its own for every process that checks."""
    return np.array([(1 << min(max(n - 64 * k, 0), 64)) - 1 for k in range(words_of(n))],
                    np.uint64)


def options(n: int, nobs: int, *, max_steps: int = -1, emask=None, omask=None,
            bound: bool = True, raisable: int = -1, forward: bool = True, hints: bool = True,
            targets=None, found=None, want_state: bool = True, upper: bool = True,
            canon=None, tne=None, first: bool = False, stop_flags: int = 0,
            tex=None) -> Options:
    """The search's :class:`~oracle.explore.Options`; by default the whole program (every event,
    every observable), every outcome, bounding on with every flag assumed raisable, no canonical
    co constraint (``canon``: :mod:`oracle.symmetry`); ``tne`` marks the asked values that are
    ``!=`` values (the shape of ``targets``; none by default), ``first`` stops at the first asked
    outcome found, ``stop_flags`` at the first raising of one of those flags; ``tex`` (shape
    (targets, nobs, K), ``WILD`` padding) the further values a ``!=`` asked value excludes."""
    if emask is None or omask is None or targets is None or found is None:
        every, all_obs, none = _defaults(n, nobs)
        emask = every if emask is None else emask
        omask = all_obs if omask is None else omask
        targets = none if targets is None else targets
        found = none if found is None else found
    if tne is None:
        tne = np.zeros(targets.shape, np.bool_)
    if tex is None:
        tex = np.full(targets.shape + (1,), WILD, np.int64)
    return Options(want_state, max_steps, emask, omask, bound, np.int64(raisable), forward,
                   hints, targets, found, upper, _NO_CANON if canon is None else canon, tne,
                   first, np.int64(stop_flags), tex)


_NO_CANON = np.zeros(0, np.int64)


#: (events, observables) -> the default arrays of :func:`options` (the search only reads them)
_DEFAULTS: dict = {}


def _defaults(n: int, nobs: int):
    """Every event's mask, every observable, no outcome rows: made once per size, since the
    compiled search reads its options' arrays and never writes them."""
    hit = _DEFAULTS.get((n, nobs))
    if hit is None:
        if len(_DEFAULTS) > 4096:
            _DEFAULTS.clear()
        hit = _DEFAULTS[(n, nobs)] = (every_event(n), np.ones(nobs, np.bool_),
                                      np.zeros((0, nobs), np.int64))
    return hit


def search_pe(pe: PreExecution, prog: Program, hints: frozenset,
              opt: Options | tuple | None = None, attrs: np.ndarray | None = None):
    """Pack and explore one pre-execution (one block of it, per ``opt``) in one compiled call:
    (states, nstates, candidates, consistent, flags, fail_counts, hit), see
    :func:`oracle.explore.explore`. ``opt``: :func:`options`, or the same fields as a plain
    tuple; ``attrs``: the table's event rows with other required values (an outcome query)."""
    t_attrs, masks, rels, W, (set_slot, set_src, rel_slot, rel_src, special), obs_kind, obs_arg = \
        _inputs(pe, prog, hints)
    if attrs is None:
        attrs = t_attrs
    if opt is None:
        opt = options(pe.n, obs_kind.shape[0])
    # (plain tuples: see _search_impl)
    if W == 1:
        return _search_one_word(attrs, masks, rels, set_slot, set_src, rel_slot, rel_src, special,
                                prog.nslots, _model_entry(prog)[2], obs_kind, obs_arg, tuple(opt))
    return _search_words(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special,
                         prog.nslots, _model_entry(prog)[2], obs_kind, obs_arg, tuple(opt))

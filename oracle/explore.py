"""Construction-based exploration: build each consistent execution of a pre-execution once.

The search (:func:`explore`) extends a partial execution one event at a time, in an order
compatible with program order (instruction index, then thread; :func:`decision_order`):

- a read gets its source: a write to its location (one placed already or one placed later: the
  event set of a litmus program is known in advance) or undef, among the candidates packed by
  :mod:`oracle.pack`;
- a write ordered by co (set ``CO``) gets its place in its location's co order among the writes
  placed so far (the initial write is always first); each co order is built once, by insertion.

After every choice the partial execution is checked, and abandoned with everything below it,
when

- a value it fixes breaks a read's required value (paths of branching programs, outcome
  queries) — values flow as soon as they are known: a read takes its source's value, an rmw
  write the value computed from its read's;
- the coherence hints the model unit declares (:mod:`oracle.hints`) say so (one-word programs):
  :func:`_coherence_ok` closes the location's coherence edges and looks for a cycle with
  ``cohord``; before that, a coherent read (set ``CohR``) skips without trying it every placed
  write co-before the co-latest placed write ``cohord``-before it (:func:`_cowr_bar`,
  :func:`_cowr_fails`: reading one would close the cycle ``cohord ; fr``), and bounding leaves
  those writes out of the read's possible values;
- a write's co place breaks the canonical co constraint of a symmetric program (option
  ``canon``, :func:`_canon_ok`: the ranked writes of a class of interchangeable threads follow
  their ranks in co; :mod:`oracle.symmetry` maps the canonical executions' outcomes onto the
  rest);
- a check of the model that can already fail on a prefix fails (``Program.prefix_ops``: the
  checks whose relation only grows as rf, co, Rdef and Rundef grow, :func:`oracle.lang.
  monotonicity`), evaluated incrementally (:func:`oracle.engine.eval_inc_rows`);
- an *upper check* fails (``Program.upper_ops``, :func:`oracle.lang.upper_checks`: a check
  ``empty Rdef \\ X`` with ``X`` growing with rf and Rdef only, as the AMDGPU read-value rules'
  ``undefined-read``), evaluated on the *upper graph*: the rf edges chosen so far plus every
  candidate source of each read not given one yet (:func:`_eval_upper`). Every completion lies
  below it, so a read given a value that the upper graph's ``X`` leaves out stays out of ``X``
  in each completion. Without it such a read failed only at the leaves: programs whose reads
  are mostly undef by rule (rmws on one location across non-inclusive scopes) visited millions
  of complete executions for a few consistent ones;
- every outcome it can still reach is known already (*bounding*: each observable's possible
  values are its value, or its candidates' values while undecided; when their product is small
  and every tuple of it has been found, the subtree can add nothing — only once every flag the
  model can raise here has been raised), or, for an outcome query, none of the asked outcomes
  not found yet is among them.

Complete executions are checked against the whole model; a final-memory read declared to read
the co-last write (hint ``CoLast``) takes it directly once its location's co order is complete,
and reads in ``Indep`` are chosen alone at the leaves (the product of their valid choices).

One call explores the events of one *block* (``emask``): the whole program, or a group of
locations that no relation of the model couples with the others (:mod:`oracle.couple`); the
model's checks then look at the block's events only.

For programs with many candidates the search first prunes every read's candidates one by one
against the prefix checks and the upper checks (*forward checking*: a source that alone, with
only the initial writes ordered, makes a check fail is dropped), so that bounding sees the values
reads can really take.

An outcome query's asked value may be ``WILD`` (any value) or ``DEFINED`` (any value but undef:
the one value an undef observable does not match, :func:`_value_matches`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .engine import (ONE, PENDING, S_CO, S_RDEF, S_RF, S_RUNDEF, ZERO64, _wbit, eval_inc_rows,
                     eval_rows, inc_memo, rmw_value)
from .events import UNDEF_VAL
from .prepare import COLAST, DECIDE, INDEP, Model, Observables, Options, prepare_arrays

#: ``canon[e]`` of a ranked write: its class times CANON_CLASS plus its rank in the class
CANON_CLASS = 1 << 20

BOUND_LIMIT = 64        # largest product of possible values that bounding enumerates
#: an asked outcome's value for an observable it does not constrain
WILD = UNDEF_VAL + 2
#: an asked outcome's value for an observable that must hold a value, any value but undef (the
#: one target value undef does not match: :attr:`oracle.judge.Judge.all_undef` asks, per
#: observable, whether an allowed state defines it)
DEFINED = UNDEF_VAL + 3
FORWARD_MIN = 4096      # forward checking once the product of the radices exceeds this


@njit(cache=True)
def decision_order(is_read, rkind, loc, co_isw, instr, thread, emask, n, out):
    """The events the search decides, in a po-compatible order: instruction index, then thread,
    then event (an rmw's read before its write), into ``out``; returns their count. ``co_isw``:
    a non-initial co-ordered write. The keys are distinct (the event is one), so any sort gives
    this order: insertion sort, in place (no allocation; a level per decided event)."""
    k = 0
    for e in range(n):
        if not (emask[e >> 6] & _wbit(e)):
            continue
        if (is_read[e] and rkind[e] == DECIDE) or co_isw[e]:
            key = _order_key(e, instr, thread)
            j = k
            while j > 0 and _order_key(out[j - 1], instr, thread) > key:
                out[j] = out[j - 1]
                j -= 1
            out[j] = e
            k += 1
    return k


@njit(cache=True, inline='always')
def _order_key(e, instr, thread):
    return (instr[e] + 2) * (1 << 40) + (thread[e] + 2) * (1 << 20) + e


@njit(cache=True, inline='always')
def _carve(buf, at, k):
    """The next ``k`` entries of work buffer ``buf`` from ``at`` (a view) and the entry after."""
    return buf[at:at + k], at + k


# --- outcome sets: rows of an int64 matrix with an open-addressing hash -----------------------------
@njit(cache=True, inline='always')
def _row_hash(row, m):
    h = np.uint64(0x9E3779B97F4A7C15)
    for o in range(m):
        h ^= np.uint64(row[o] & 0x7FFFFFFFFFFFFFFF) + np.uint64(0x9E3779B97F4A7C15) + \
            (h << np.uint64(6)) + (h >> np.uint64(2))
    return h


@njit(cache=True)
def _find(states, table, row, m):
    """Index of ``row`` in ``states`` (via ``table``) or -1."""
    mask = np.uint64(table.shape[0] - 1)
    h = _row_hash(row, m) & mask
    while True:
        s = table[np.int64(h)]
        if s < 0:
            return -1
        same = True
        for o in range(m):
            if states[s, o] != row[o]:
                same = False
                break
        if same:
            return s
        h = (h + ONE) & mask


@njit(cache=True)
def _insert(states, table, ns, row, m):
    """Add ``row`` unless present: (states, table, ns, added) — the arrays grow as needed."""
    if _find(states, table, row, m) >= 0:
        return states, table, ns, False
    if ns == states.shape[0]:
        bigger = np.empty((states.shape[0] * 2, max(m, 1)), np.int64)
        bigger[:ns] = states[:ns]
        states = bigger
    states[ns, :m] = row[:m]
    ns += 1
    if 2 * ns > table.shape[0]:
        table = np.full(table.shape[0] * 2, -1, np.int64)
        for s in range(ns):
            h = _row_hash(states[s], m) & np.uint64(table.shape[0] - 1)
            while table[np.int64(h)] >= 0:
                h = (h + ONE) & np.uint64(table.shape[0] - 1)
            table[np.int64(h)] = s
    else:
        mask = np.uint64(table.shape[0] - 1)
        h = _row_hash(row, m) & mask
        while table[np.int64(h)] >= 0:
            h = (h + ONE) & mask
        table[np.int64(h)] = ns - 1
    return states, table, ns, True


# --- the coherence hints (one-word programs) ----------------------------------------------------------
@njit(cache=True, inline='always')
def _coherence_ok(l, src, corder, cn, lc, ev, pos, e):
    """Pruning by the coherence hints (:mod:`oracle.hints`) on location ``l``: the reads the
    builder declares coherent (``coh_mask``: set CohR; ``coha``: set CohA, for an rf edge between
    two of its events related by ``incl``) add their rf and fr edges to co, over the pairs in
    ``incl``; a cycle ``cohord ; eco+``, an rmw read whose write is co-before its source
    (coherent reads and ``cohrmw``: set CohRmw) or a write co-between a coherent rmw read's
    source and its write fails. Sound for a partial execution because eco only grows as more
    reads are chosen and more writes placed, and each hint promises that what it prunes is
    inconsistent under the unit's model. ``corder[l, :cn[l]]`` is the co order of the placed
    writes after the initial write; undecided reads have source -2.

    Every event it touches is one of the location's events, so only their entries of the work
    arrays ``pos`` and ``e`` are reset and the closure runs over them alone."""
    loc_events, loc_nev, co_init, coh_mask = lc.loc_events, lc.loc_nev, lc.co_init, lc.coh_mask
    is_read, incl, coha, cohrmw, rmw_w, cohord = ev.is_read, ev.incl, ev.coha[0], ev.cohrmw[0], \
        ev.rmw_w, ev.cohord
    m = loc_nev[l]
    lmask = ZERO64
    for q in range(m):
        a = loc_events[l, q]
        pos[a] = -1
        e[a] = ZERO64
        lmask |= _wbit(a)
    k = cn[l]
    off = 0
    if co_init[l] >= 0:
        pos[co_init[l]] = 0
        off = 1
    for i in range(k):
        pos[corder[l, i]] = i + off
    # co among the placed writes (and the initial write first), over incl
    for i in range(-off, k):
        wi = co_init[l] if i < 0 else corder[l, i]
        for j in range(i + 1, k):
            wj = corder[l, j]
            if incl[wi] & _wbit(wj):
                e[wi] |= _wbit(wj)
    any_edge = False
    for q in range(m):
        r = loc_events[l, q]
        if not is_read[r]:
            continue
        w = src[r]
        if w < 0:
            continue
        wr = rmw_w[r]
        known = (coh_mask[l, 0] & _wbit(r)) != ZERO64 or \
            ((coha & _wbit(r)) != ZERO64 and (coha & _wbit(w)) != ZERO64 and
             (incl[w] & _wbit(r)) != ZERO64)
        if wr >= 0 and (known or (cohrmw & _wbit(r)) != ZERO64) and pos[wr] >= 0 and \
                pos[w] >= 0 and pos[wr] < pos[w]:
            return False                      # rmw ; co ; rf cycle
        if not known:
            continue
        any_edge = True
        if incl[w] & _wbit(r):
            e[w] |= _wbit(r)
        if pos[w] >= 0:
            for j in range(pos[w] + 1 - off, k):
                wj = corder[l, j]
                if incl[r] & _wbit(wj):
                    e[r] |= _wbit(wj)
                    if wr >= 0 and pos[wr] > j + off and (incl[wj] & _wbit(wr)):
                        return False          # rmw atomicity: something co-between
    if not any_edge:
        return True
    for q in range(m):                         # closure (Warshall) over the location's events
        kk = loc_events[l, q]
        rk = e[kk]
        if rk == ZERO64:
            continue
        bk = _wbit(kk)
        for q2 in range(m):
            i = loc_events[l, q2]
            if e[i] & bk:
                e[i] |= rk
    for q in range(m):
        a = loc_events[l, q]
        h = cohord[a] & lmask
        ba = _wbit(a)
        while h:
            if e[np.int64(trailing_zeros(h))] & ba:
                return False                  # a hb b eco+ a
            h &= h - ONE
    return True


# --- values -------------------------------------------------------------------------------------------
@njit(cache=True, inline='always')
def _set_value(e0, v0, val, src, ev, lc, trail, ttop, work):
    """Give event ``e0`` the value ``v0`` and pass it on: to the decided reads of a write, to the
    write taking its value from a read (rmw, async copy). Every event given a value is pushed on
    ``trail`` (undone by the caller). Returns (ok, new trail top): not ok when a value breaks a
    required value (undef satisfies any)."""
    req_mode, req_val, dep_w, wop, wopnd = ev.req_mode, ev.req_val, ev.dep_w, ev.wop, ev.wopnd
    is_read, loc = ev.is_read, ev.loc
    loc_events, loc_nev = lc.loc_events, lc.loc_nev
    nw = 0
    work[nw] = e0
    nw += 1
    val[e0] = v0
    trail[ttop] = e0
    ttop += 1
    while nw > 0:
        nw -= 1
        e = work[nw]
        v = val[e]
        if req_mode[e] != 0 and v != UNDEF_VAL and (req_mode[e] == 1) != (v == req_val[e]):
            return False, ttop
        if is_read[e]:
            w = dep_w[e]
            if w >= 0 and val[w] == PENDING:
                val[w] = rmw_value(wop[w], v, wopnd[w])
                trail[ttop] = w
                ttop += 1
                work[nw] = w
                nw += 1
        else:
            l = loc[e]
            if l < 0:
                continue
            for q in range(loc_nev[l]):
                r = loc_events[l, q]
                if is_read[r] and src[r] == e and val[r] == PENDING:
                    val[r] = v
                    trail[ttop] = r
                    ttop += 1
                    work[nw] = r
                    nw += 1
    return True, ttop


@njit(cache=True, inline='always')
def _set_bit(slots, s, i, j, W):
    slots[s, i * W + (j >> 6)] |= _wbit(j)


@njit(cache=True, inline='always')
def _clear_bit(slots, s, i, j, W):
    slots[s, i * W + (j >> 6)] &= ~_wbit(j)


@njit(cache=True, inline='always')
def _cowr_bar(e, l, corder, cn, co_placed, coh_mask, coh_pred, incl):
    """For an undecided coherent read ``e`` (set CohR) of location ``l`` under the coherence
    hints: the co position (in ``corder[l]``, the initial write at -1) of the co-latest placed
    write ``w'`` with ``w' cohord e`` and ``(e, w')`` in ``incl``, or -2 when there is none. Every
    placed write co-before position ``bar`` is no possible source of ``e``: ``e`` reading it
    gives ``e fr w'``, and ``w' cohord e fr w'`` is the cycle :func:`_coherence_ok` prunes."""
    if not (coh_mask[l, 0] & _wbit(e)):
        return -2
    bar = -2
    blk = coh_pred[e] & incl[e]
    if blk == ZERO64:
        return -2
    for i in range(cn[l]):
        if blk & _wbit(corder[l, i]):
            bar = i
    return bar


@njit(cache=True, inline='always')
def _cowr_fails(e, l, w, corder, cn, co_init, co_placed, coh_mask, coh_pred, incl):
    """Whether coherent read ``e`` of location ``l`` cannot read the placed write ``w``: ``w`` is
    co-before the bar of :func:`_cowr_bar` (the initial write is co-before every write)."""
    if w < 0 or not (w == co_init[l] or co_placed[w] > 0):
        return False
    bar = _cowr_bar(e, l, corder, cn, co_placed, coh_mask, coh_pred, incl)
    if bar < 0:
        return False
    if w == co_init[l]:
        return True
    return co_placed[w] - 1 < bar


@njit(cache=True, inline='always')
def _canon_ok(e, l, dig, corder, cn, canon):
    """Whether write ``e`` may take place ``dig`` in location ``l``'s co order under the canonical
    constraint of a symmetric program (:mod:`oracle.symmetry`): the ranked writes of one class
    (``canon[w] >= 0``, same ``canon[w] // CANON_CLASS``) follow their ranks in co. Every
    execution is the image of exactly one execution meeting it under the program's symmetries,
    so the search explores those and the symmetries give the rest."""
    ce = canon[e]
    if ce < 0:
        return True
    cls = ce // CANON_CLASS
    for i in range(cn[l]):
        cw = canon[corder[l, i]]
        if cw < 0 or cw // CANON_CLASS != cls:
            continue
        if (cw < ce) != (i < dig):
            return False
    return True


@njit(cache=True, inline='always')
def _possible(o, pv, val, src, obs_kind, obs_arg, is_read, ridx, rkind, rloc, cand, ncand,
              co_init, co_writes, co_n, corder, cn, co_placed, hints, coh_mask, coh_pred, incl):
    """The values observable ``o`` can still take, into ``pv`` (deduplicated): its count, or -1
    when unknown (a value that depends on a choice not made yet through an rmw). Under the
    coherence hints a coherent read's placed candidates co-before a write it must not read
    before (:func:`_cowr_bar`) are left out: choosing them fails at once."""
    if obs_kind[o] == 0:
        pv[0] = obs_arg[o]
        return 1
    e = obs_arg[o]
    if val[e] != PENDING:
        pv[0] = val[e]
        return 1
    if not is_read[e] or src[e] != -2:
        return -1
    q = ridx[e]
    c = 0
    if rkind[q] == COLAST:
        l = rloc[q]
        last = corder[l, cn[l] - 1] if cn[l] > 0 else co_init[l]
        if last >= 0:
            if val[last] == PENDING:
                return -1
            pv[c] = val[last]
            c += 1
        for i in range(co_n[l]):
            w = co_writes[l, i]
            if co_placed[w] > 0:
                continue
            v = val[w]
            if v == PENDING:
                return -1
            seen = False
            for x in range(c):
                if pv[x] == v:
                    seen = True
            if not seen:
                pv[c] = v
                c += 1
        return c
    bar = -2
    if hints:
        bar = _cowr_bar(e, rloc[q], corder, cn, co_placed, coh_mask, coh_pred, incl)
    for i in range(ncand[q]):
        w = cand[q, i]
        if bar >= 0 and w >= 0:
            l = rloc[q]
            if w == co_init[l]:
                continue                       # the initial write is co-before every write
            if co_placed[w] > 0 and co_placed[w] - 1 < bar:
                continue
        v = UNDEF_VAL if w < 0 else val[w]
        if v == PENDING:
            return -1
        seen = False
        for x in range(c):
            if pv[x] == v:
                seen = True
        if not seen:
            pv[c] = v
            c += 1
    return c


@njit(cache=True, inline='always')
def _bounded(pv, pcnt, oidx, nob, states, table, targets, tne, tex, hit, full_mode, row, pick):
    """Bounding over the block's observables ``oidx[:nob]`` with possible values ``pv``/``pcnt``:
    True when the subtree cannot matter — in full mode, every tuple of the product (at most
    BOUND_LIMIT) is among the found states; for an outcome query, no asked outcome not found yet
    is compatible with the possible values (:func:`_value_matches`: undef matches any value
    but ``DEFINED``, which a possible value other than undef matches; a ``!=`` value any
    value but that one and those of ``tex``)."""
    if full_mode:
        total = 1
        for x in range(nob):
            if pcnt[x] < 0:
                return False
            total *= pcnt[x]
            if total > BOUND_LIMIT:
                return False
        if total == 0:
            return True
        for x in range(nob):
            pick[x] = 0
        while True:
            for x in range(nob):
                row[oidx[x]] = pv[x, pick[x]]
            if _find(states, table, row, row.shape[0]) < 0:
                return False
            x = nob - 1
            while x >= 0:
                pick[x] += 1
                if pick[x] < pcnt[x]:
                    break
                pick[x] = 0
                x -= 1
            if x < 0:
                return True
    for t in range(targets.shape[0]):
        if hit[t]:
            continue
        ok = True
        for x in range(nob):
            if pcnt[x] < 0:
                continue
            want = targets[t, oidx[x]]
            if want == WILD:
                continue
            ne = tne[t, oidx[x]]
            found = False
            for i in range(pcnt[x]):
                if _value_matches(pv[x, i], want, ne) and \
                        not (ne and _excluded(pv[x, i], tex, t, oidx[x])):
                    found = True
                    break
            if not found:
                ok = False
                break
        if ok:
            return False
    return True


def _search_for(WORDS: int):
    """The search's compiled entry point, for rows of ``WORDS`` words (1: every kernel compiled
    with ``W`` the constant 1, for programs of at most 64 events; 0: ``W`` read at run time).

    One compiled function holds the whole search (the packing pass, then the exploration), so
    that a first run compiles it once: an entry point calling a separately compiled search
    would link the search's machine code into its own module and optimize it all again (about
    10 s of a campaign's first run). ``WORDS`` is a closure variable, a constant to numba (the
    branch on it is pruned before typing, so ``W`` is ``Literal[int](1)`` in the one-word
    kernel), and part of the cache key (numba hashes a closure's cell contents), so the two
    entry points cache apart."""

    def search(attrs, masks, rels, W_arg, set_slot, set_src, rel_slot, rel_src, special,
               nslots, model_t, obs_kind, obs_arg, opt_t):
        """Pack, then explore the executions of the events of block ``opt.emask``; see the
        module docstring.

        The arguments are :func:`oracle.pack.search_pe`'s packed arrays (``W_arg`` read only when
        ``WORDS`` is 0) and ``model_t``, ``opt_t`` the fields of :class:`Model` and
        :class:`Options` as plain tuples. :func:`prepare_arrays` makes the base slots (flat rows
        of ``W`` words) and the named tuples :class:`Reads`, :class:`Locations` and
        :class:`Events` afresh in every call: the search writes ``slots`` (the dynamic slots and
        the ops' slots) and ``rd.cand``/``rd.ncand`` (forward checking drops candidates in place).

        Returns (states, nstates, model evaluations, consistent, flags, fail_counts, hit).
        ``states`` rows hold every observable (those outside the block are 0); ``nstates`` is -1
        when the step budget ran out. ``fail_counts[c]`` counts failures of check ``c`` (on
        complete or partial executions), ``fail_counts[nchecks]`` the partial executions pruned by
        values and hints, ``fail_counts[nchecks + 1]`` those pruned by bounding. ``hit[t]``:
        asked outcome ``t`` was found. ``consistent`` counts the consistent executions visited
        (bounding skips some). Its work arrays are slices of three buffers sized by the program:
        a call's fixed cost follows the program's size, not the engine's limits."""
        if WORDS == 1:
            W = 1
        else:
            W = W_arg
        # ``model_t`` and ``opt_t`` come as plain tuples (:func:`oracle.pack.search_pe`): numba
        # types a plain tuple of arrays in its C dispatcher, a named tuple in Python (1.5-3 us a
        # call); the named tuples the search reads are made here
        slots, rd, lc, ev = prepare_arrays(attrs, masks, rels, W, set_slot, set_src, rel_slot,
                                           rel_src, special, nslots)
        model = Model(model_t[0], model_t[1], model_t[2], model_t[3], model_t[4], model_t[5])
        obs = Observables(obs_kind, obs_arg)
        opt = Options(opt_t[0], opt_t[1], opt_t[2], opt_t[3], opt_t[4], opt_t[5], opt_t[6], opt_t[7],
                      opt_t[8], opt_t[9], opt_t[10], opt_t[11], opt_t[12], opt_t[13], opt_t[14],
                      opt_t[15])
        n = attrs.shape[0]
        prelude, ops, prefix, nchecks, upper = model.prelude, model.ops, model.prefix, \
            model.nchecks, model.upper
        reads, rkind, rloc, ridx = rd.reads, rd.rkind, rd.rloc, rd.ridx
        cand, ncand = rd.cand, rd.ncand            # forward checking drops candidates in place
        co_init, co_writes, co_n = lc.co_init, lc.co_writes, lc.co_n
        is_read, req_mode, req_val = ev.is_read, ev.req_mode, ev.req_val
        emask, omask, targets = opt.emask, opt.omask, opt.targets
        obs_kind, obs_arg = obs.kind, obs.arg
        nobs = obs.kind.shape[0]
        nt = targets.shape[0]
        full_mode = nt == 0
        nr = reads.shape[0]
        nl = co_init.shape[0]
        nw = n * W
        eval_rows(slots, prelude, n, W, emask)
        # memos of the incremental evaluations (their static tables: once per model, model.tables);
        # the prefix and upper checks run on their own copies of the slots, since each memo assumes
        # that only its own op array writes the slots it computes. A program without prefix (or
        # upper) checks needs neither copy nor memo: those names then stand for unused stand-ins
        memo = inc_memo(ops, slots.shape[0], slots.shape[1], model.tables, 0)
        use_prefix = prefix.shape[0] > 0
        use_upper = opt.upper and upper.shape[0] > 0
        pslots = slots.copy() if use_prefix else slots[:0]
        memo_p = inc_memo(prefix, slots.shape[0], slots.shape[1], model.tables, 1) if use_prefix \
            else memo
        uslots = slots.copy() if use_upper else slots[:0]       # the upper graph's (upper checks)
        memo_u = inc_memo(upper, slots.shape[0], slots.shape[1], model.tables, 2) if use_upper \
            else memo
        fail_counts = np.zeros(nchecks + 2, np.int64)
        hit = np.zeros(nt, np.bool_)
        # -- outcome sets
        mo = max(nobs, 1)
        cap = 16
        states = np.zeros((cap, mo), np.int64)
        table = np.full(64, -1, np.int64)
        nfound = 0
        for s in range(opt.found.shape[0]):
            states, table, nfound, _ = _insert(states, table, nfound, opt.found[s], nobs)
        nbase = nfound
        # -- the search's work arrays: slices of three zeroed buffers (int64, uint64, bool), sized by
        # the program (events, reads, locations, observables), made in three allocations; per level
        # arrays have one entry per event (a level decides one event)
        mn = max(n, 1)
        ml = max(nl, 1)
        mr = max(nr, 1)
        wmax = 1
        for l in range(nl):
            wmax = max(wmax, co_n[l])
        cmax = max(cand.shape[1], wmax + 1, 1)
        ccol = max(cand.shape[1], 1)
        ints = np.zeros(19 * mn + 9 + ml * (wmax + 2) + mo * (4 + cmax) + mr * (3 + ccol), np.int64)
        at = 0
        src, at = _carve(ints, at, mn)
        val, at = _carve(ints, at, mn)
        co_placed, at = _carve(ints, at, mn)       # 1 + a placed write's co position, 0: not placed
        rk_ev, at = _carve(ints, at, mn)
        pos, at = _carve(ints, at, mn)
        order, at = _carve(ints, at, mn)
        lv_kind, at = _carve(ints, at, mn)
        lv_arg, at = _carve(ints, at, mn)
        radix, at = _carve(ints, at, mn)
        digit, at = _carve(ints, at, mn)
        lv_ttop, at = _carve(ints, at, mn + 1)
        trail, at = _carve(ints, at, 4 * mn + 4)
        work, at = _carve(ints, at, 4 * mn + 4)
        rows, at = _carve(ints, at, ml * wmax)
        corder = rows.reshape((ml, wmax))
        cn, at = _carve(ints, at, ml)
        placed_before, at = _carve(ints, at, ml)
        oidx, at = _carve(ints, at, mo)
        pcnt, at = _carve(ints, at, mo)
        prow, at = _carve(ints, at, mo)
        pick, at = _carve(ints, at, mo)
        rows, at = _carve(ints, at, mo * cmax)
        pv = rows.reshape((mo, cmax))
        ind, at = _carve(ints, at, mr)
        nvalid, at = _carve(ints, at, mr)
        ipick, at = _carve(ints, at, mr)
        valid = ints[at:at + mr * ccol].reshape((mr, ccol))
        words = np.zeros(2 * mn, np.uint64)
        ework = words[:mn]
        coh_pred = words[mn:]                       # cohord's columns (one-word programs)
        bools = np.zeros(5 * mn, np.bool_)
        in_block = bools[:mn]
        co_isw = bools[mn:2 * mn]
        applied = bools[2 * mn:3 * mn]
        lv_colast = bools[3 * mn:4 * mn]
        rem = bools[4 * mn:]
        # -- per-event search state
        for e in range(mn):
            src[e] = -2
            rk_ev[e] = -1
        for e in range(n):
            val[e] = PENDING if (is_read[e] or ev.wsrc[e] >= 0) else ev.val_const[e]
            in_block[e] = (emask[e >> 6] & _wbit(e)) != ZERO64
        for l in range(nl):
            for i in range(co_n[l]):
                co_isw[co_writes[l, i]] = True
        for q in range(nr):
            rk_ev[reads[q]] = rkind[q]
        D = decision_order(is_read, rk_ev, ev.loc, co_isw, ev.instr, ev.thread, emask, n, order)
        # -- co: the initial write before every co-ordered write of its location, from the start
        for i in range(nw):
            slots[S_RF, i] = ZERO64
            slots[S_CO, i] = ZERO64
            slots[S_RDEF, i] = ZERO64
            slots[S_RUNDEF, i] = ZERO64
        for l in range(nl):
            if co_init[l] >= 0:
                for i in range(co_n[l]):
                    _set_bit(slots, S_CO, co_init[l], co_writes[l, i], W)
        # -- per level: kind (0 read, 1 write), read index or location, radix
        for d in range(D):
            e = order[d]
            if is_read[e] and not co_isw[e]:
                lv_kind[d] = 0
                lv_arg[d] = ridx[e]
                radix[d] = ncand[ridx[e]]
            else:
                l = ev.loc[e]
                lv_kind[d] = 1
                lv_arg[d] = l
                radix[d] = placed_before[l] + 1
                placed_before[l] += 1
        # rem[d]: whether a choice is left after level d (no prefix check where none is: the
        # complete execution is checked next)
        for d in range(D - 2, -1, -1):
            rem[d] = rem[d + 1] or radix[d + 1] > 1
        canon = opt.canon
        use_canon = canon.shape[0] > 0
        hints = opt.hints and W == 1
        if hints:
            for a in range(n):
                h = ev.cohord[a]
                while h:
                    coh_pred[np.int64(trailing_zeros(h))] |= _wbit(a)
                    h &= h - ONE
        # -- observables of the block
        nob = 0
        for o in range(nobs):
            if omask[o]:
                oidx[nob] = o
                nob += 1
        # -- the Indep reads of the block
        ni = 0
        for q in range(nr):
            if rkind[q] == INDEP and in_block[reads[q]]:
                ind[ni] = q
                ni += 1
        # -- the locations whose co is complete from the start take their co-last reads now
        ttop = 0
        for l in range(nl):
            if co_n[l] == 0:
                ok, ttop = _colast(l, slots, W, src, val, rd, lc, ev, corder, cn, trail, ttop, work,
                                   in_block)
                if not ok:
                    return states[:0], 0, 0, 0, np.int64(0), fail_counts, hit
        lv_ttop[0] = ttop
        candidates = 0
        consistent = 0
        flags_all = np.int64(0)
        steps = 0
        # -- forward checking at the root
        if opt.forward and use_prefix and D > 0:
            size = 1.0
            for d in range(D):
                size *= radix[d]
            if size > FORWARD_MIN:
                for d in range(D):
                    if lv_kind[d] != 0:
                        continue
                    q = lv_arg[d]
                    r = reads[q]
                    keep = 0
                    for c in range(ncand[q]):
                        w = cand[q, c]
                        ok = True
                        if w >= 0:
                            _set_bit(slots, S_RF, w, r, W)
                            _set_bit(slots, S_RDEF, r, r, W)
                        else:
                            _set_bit(slots, S_RUNDEF, r, r, W)
                        src[r] = w
                        if hints and not _coherence_ok(rloc[q], src, corder, cn, lc, ev, pos, ework):
                            ok = False
                        if ok:
                            failed, _ = _eval_prefix(slots, pslots, prefix, n, W, emask, memo_p)
                            ok = failed < 0
                        if ok and use_upper and w >= 0:
                            failed, _ = _eval_upper(slots, uslots, upper, n, W, emask, memo_u, src,
                                                    reads, cand, ncand, in_block)
                            ok = failed < 0
                        src[r] = -2
                        if w >= 0:
                            _clear_bit(slots, S_RF, w, r, W)
                            _clear_bit(slots, S_RDEF, r, r, W)
                        else:
                            _clear_bit(slots, S_RUNDEF, r, r, W)
                        if ok:
                            cand[q, keep] = w
                            keep += 1
                    ncand[q] = keep
                    radix[d] = keep
                    if keep == 0:
                        return states[:0], 0, 0, 0, np.int64(0), fail_counts, hit
        # -- the search
        d = 0
        done = False
        while d >= 0:
            steps += 1
            if opt.max_steps >= 0 and steps + candidates > opt.max_steps:
                return states[:0], -1, candidates, consistent, flags_all, fail_counts, hit
            if D > 0:
                if applied[d]:
                    _undo(d, lv_kind[d], lv_arg[d], order[d], digit[d], slots, W, src, val, trail,
                          lv_ttop, lv_colast, rd, lc, corder, cn, co_placed)
                    applied[d] = False
                    digit[d] += 1
                if digit[d] >= radix[d]:
                    digit[d] = 0
                    d -= 1
                    continue
                if hints and lv_kind[d] == 0 and _cowr_fails(order[d], rloc[lv_arg[d]],
                                                             cand[lv_arg[d], digit[d]], corder, cn,
                                                             co_init, co_placed, lc.coh_mask,
                                                             coh_pred, ev.incl):
                    fail_counts[nchecks] += 1         # what _coherence_ok would prune, cheaper
                    digit[d] += 1
                    continue
                if use_canon and lv_kind[d] == 1 and not _canon_ok(order[d], lv_arg[d], digit[d],
                                                                    corder, cn, canon):
                    digit[d] += 1                      # not canonical: a symmetric image's
                    continue
                ok, ttop = _apply_choice(d, lv_kind[d], lv_arg[d], order[d], digit[d], slots, W,
                                         src, val, rd, lc, ev, corder, cn, co_placed, trail,
                                         lv_ttop[d], work, lv_colast, in_block)
                applied[d] = True
                lv_ttop[d + 1] = ttop
                if not ok:
                    fail_counts[nchecks] += 1
                    continue
                e = order[d]
                if hints:
                    l = ev.loc[e]
                    if not _coherence_ok(l, src, corder, cn, lc, ev, pos, ework):
                        fail_counts[nchecks] += 1
                        continue
                if opt.bound and rem[d] and nob > 0 and (not full_mode or (nfound > 0 and
                                              (flags_all & opt.raisable) == opt.raisable)):
                    total = 1
                    for x in range(nob):
                        pcnt[x] = _possible(oidx[x], pv[x], val, src, obs_kind, obs_arg, is_read,
                                            ridx, rkind, rloc, cand, ncand, co_init, co_writes, co_n,
                                            corder, cn, co_placed, hints, lc.coh_mask, coh_pred,
                                            ev.incl)
                        if full_mode:                # no use going on past the largest product
                            total = total * pcnt[x] if pcnt[x] >= 0 else BOUND_LIMIT + 1
                            if total > BOUND_LIMIT or total > nfound:
                                break
                    if (not full_mode or (total <= BOUND_LIMIT and total <= nfound)) and \
                            _bounded(pv, pcnt, oidx, nob, states, table, targets, opt.tne, opt.tex, hit,
                                     full_mode, prow, pick):
                        fail_counts[nchecks + 1] += 1
                        continue
                if d < D - 1:
                    if use_prefix and rem[d]:
                        failed, _ = _eval_prefix(slots, pslots, prefix, n, W, emask, memo_p)
                        if failed >= 0:
                            fail_counts[failed] += 1
                            continue
                    if use_upper and rem[d]:
                        failed, _ = _eval_upper(slots, uslots, upper, n, W, emask, memo_u, src,
                                                reads, cand, ncand, in_block)
                        if failed >= 0:
                            fail_counts[failed] += 1
                            continue
                    d += 1
                    digit[d] = 0
                    applied[d] = False
                    continue
            elif done:
                break
            else:
                done = True
            # -- a complete execution of the block
            complete = True
            for e in range(n):
                if in_block[e] and val[e] == PENDING and not (is_read[e] and
                                                             rk_ev[e] == INDEP):
                    complete = False
                    break
            if not complete:                       # rmw values that depend on each other
                fail_counts[nchecks] += 1
                if D == 0:
                    break
                continue
            if ni == 0:
                candidates += 1
                failed, fl = eval_inc_rows(slots, ops, n, W, emask, memo)
                if failed >= 0:
                    fail_counts[failed] += 1
                else:
                    consistent += 1
                    flags_all |= fl
                    if opt.want_state:
                        for o in range(nobs):
                            prow[o] = (val[obs.arg[o]] if obs.kind[o] == 1 else obs.arg[o]) \
                                if omask[o] else 0
                        states, table, nfound, _ = _insert(states, table, nfound, prow, nobs)
                        if not full_mode and _mark_hits(prow, targets, opt.tne, opt.tex, hit, oidx, nob,
                                                          opt.first):
                            return states[nbase:nfound], nfound - nbase, candidates, consistent, \
                                flags_all, fail_counts, hit
            else:
                # independent reads: each one's choices alone (the others unassigned), then the
                # product of the valid ones
                dead = False
                for f in range(ni):
                    q = ind[f]
                    e = reads[q]
                    nvalid[f] = 0
                    for c in range(ncand[q]):
                        w = cand[q, c]
                        v = UNDEF_VAL if w < 0 else val[w]
                        if req_mode[e] != 0 and v != UNDEF_VAL and \
                                (req_mode[e] == 1) != (v == req_val[e]):
                            continue
                        if w >= 0:
                            _set_bit(slots, S_RF, w, e, W)
                            _set_bit(slots, S_RDEF, e, e, W)
                        else:
                            _set_bit(slots, S_RUNDEF, e, e, W)
                        candidates += 1
                        failed, fl = eval_inc_rows(slots, ops, n, W, emask, memo)
                        if w >= 0:
                            _clear_bit(slots, S_RF, w, e, W)
                            _clear_bit(slots, S_RDEF, e, e, W)
                        else:
                            _clear_bit(slots, S_RUNDEF, e, e, W)
                        if failed >= 0:
                            fail_counts[failed] += 1
                        else:
                            valid[f, nvalid[f]] = w
                            nvalid[f] += 1
                            flags_all |= fl
                    if nvalid[f] == 0:
                        dead = True
                        break
                if not dead:
                    prod_count = 1
                    for f in range(ni):
                        prod_count *= nvalid[f]
                    consistent += prod_count
                    if opt.want_state:
                        ipick[:ni] = 0
                        while True:
                            for f in range(ni):
                                w = valid[f, ipick[f]]
                                val[reads[ind[f]]] = UNDEF_VAL if w < 0 else val[w]
                            for o in range(nobs):
                                prow[o] = (val[obs.arg[o]] if obs.kind[o] == 1 else obs.arg[o]) \
                                    if omask[o] else 0
                            states, table, nfound, _ = _insert(states, table, nfound, prow, nobs)
                            if not full_mode and _mark_hits(prow, targets, opt.tne, opt.tex, hit, oidx,
                                                              nob, opt.first):
                                for f in range(ni):
                                    val[reads[ind[f]]] = PENDING
                                return states[nbase:nfound], nfound - nbase, candidates, \
                                    consistent, flags_all, fail_counts, hit
                            f = ni - 1
                            while f >= 0:
                                ipick[f] += 1
                                if ipick[f] < nvalid[f]:
                                    break
                                ipick[f] = 0
                                f -= 1
                            if f < 0:
                                break
                        for f in range(ni):
                            val[reads[ind[f]]] = PENDING
            if (flags_all & opt.stop_flags) != 0:          # a witness of an asked flag: enough
                return states[nbase:nfound], nfound - nbase, candidates, consistent, flags_all, \
                    fail_counts, hit
            if D == 0:
                break
        return states[nbase:nfound], nfound - nbase, candidates, consistent, flags_all, \
            fail_counts, hit

    # (its name in numba's cache files and in the compile progress lines)
    search.__name__ = search.__qualname__ = "search_one_word" if WORDS == 1 else "search_words"
    return njit(cache=True)(search)


#: programs of at most 64 events: every kernel compiled with ``W`` the constant 1
search_one_word = _search_for(1)
#: programs of more than 64 events: ``W`` words per row, read at run time
search_words = _search_for(0)

# the entry points rebuild these named tuples field by field: a field added to either must be
# added there too (numba would refuse the call; this says where)
assert len(Options._fields) == 16 and len(Model._fields) == 6, \
    "oracle/explore.py _search_for: update the Options/Model fields it rebuilds"


@njit(cache=True)
def _eval_prefix(slots, pslots, prefix, n, W, emask, memo_p):
    """The prefix checks on the current partial execution (its dynamic slots copied over)."""
    for s in range(4):
        for x in range(n * W):
            pslots[s, x] = slots[s, x]
    return eval_inc_rows(pslots, prefix, n, W, emask, memo_p)


@njit(cache=True)
def _eval_upper(slots, uslots, upper, n, W, emask, memo_u, src, reads, cand, ncand, in_block):
    """The upper checks (``Program.upper_ops``, checks ``empty Rdef \\ X``) on the *upper graph*
    of the current partial execution: its rf edges plus every candidate source of each read of
    the block not given one yet (those reads in Rdef), so that every completion's rf and Rdef are
    subsets of it; the reads given a value so far go in slot Rundef, which the upper ops read in
    place of Rdef (``X`` depends on neither co nor Rundef). ``X`` only grows with rf and Rdef, so
    a read given a value that the upper ``X`` leaves out is left out by every completion: the
    check fails on each (:func:`oracle.lang.upper_checks`)."""
    for x in range(n * W):
        uslots[S_RF, x] = slots[S_RF, x]
        uslots[S_RDEF, x] = slots[S_RDEF, x]
        uslots[S_RUNDEF, x] = slots[S_RDEF, x]
        uslots[S_CO, x] = slots[S_CO, x]
    for q in range(reads.shape[0]):
        r = reads[q]
        if not in_block[r] or src[r] != -2:
            continue
        for c in range(ncand[q]):
            w = cand[q, c]
            if w >= 0:
                _set_bit(uslots, S_RF, w, r, W)
                _set_bit(uslots, S_RDEF, r, r, W)
    return eval_inc_rows(uslots, upper, n, W, emask, memo_u)


@njit(cache=True, inline='always')
def _value_matches(v, want, ne):
    """Whether an observable's value ``v`` matches an asked value ``want``: ``WILD`` matches
    anything, ``DEFINED`` any value but undef, a value itself or undef (undef matches any
    value); with ``ne`` (a ``!=`` atom) any value but ``want``, or undef (which stands for any
    value, so for one other than ``want`` too)."""
    if want == WILD:
        return True
    if want == DEFINED:
        return v != UNDEF_VAL
    if ne:
        return v == UNDEF_VAL or v != want
    return v == UNDEF_VAL or v == want


@njit(cache=True, inline='always')
def _excluded(v, tex, t, o):
    """Whether ``v`` (not undef: undef stands for any value, one outside the set too) is one of
    the further excluded values ``tex[t, o]`` of a ``!=`` asked value."""
    if v == UNDEF_VAL:
        return False
    for j in range(tex.shape[2]):
        if tex[t, o, j] == v:
            return True
    return False


@njit(cache=True, inline='always')
def _mark_hits(row, targets, tne, tex, hit, oidx, nob, first):
    """Mark the asked outcomes that state ``row`` matches (:func:`_value_matches`); True when
    every asked outcome is found, or with ``first`` when one is."""
    every = True
    some = False
    for t in range(targets.shape[0]):
        if not hit[t]:
            ok = True
            for x in range(nob):
                o = oidx[x]
                if not _value_matches(row[o], targets[t, o], tne[t, o]) or \
                        tne[t, o] and _excluded(row[o], tex, t, o):
                    ok = False
                    break
            if ok:
                hit[t] = True
                some = True
            else:
                every = False
        else:
            some = True
    return every or (first and some)


@njit(cache=True, inline='always')
def _colast(l, slots, W, src, val, rd, lc, ev, corder, cn, trail, ttop, work, in_block):
    """Location ``l``'s co order is complete: its co-last reads (``COLAST``) read the co-last
    write. Returns (ok, trail top)."""
    last = corder[l, cn[l] - 1] if cn[l] > 0 else lc.co_init[l]
    for q0 in range(lc.loc_nev[l]):
        r = lc.loc_events[l, q0]
        if not ev.is_read[r] or not in_block[r]:
            continue
        q = rd.ridx[r]
        if rd.rkind[q] != COLAST:
            continue
        if last < 0:
            return False, ttop
        allowed = False
        for c in range(rd.ncand[q]):
            if rd.cand[q, c] == last:
                allowed = True
        if not allowed:
            return False, ttop
        src[r] = last
        _set_bit(slots, S_RF, last, r, W)
        _set_bit(slots, S_RDEF, r, r, W)
        if val[last] != PENDING:
            ok, ttop = _set_value(r, val[last], val, src, ev, lc, trail, ttop, work)
            if not ok:
                return False, ttop
    return True, ttop


@njit(cache=True, inline='always')
def _uncolast(l, slots, W, src, rd, lc):
    """Undo :func:`_colast` (the values it gave are on the trail)."""
    for q0 in range(lc.loc_nev[l]):
        r = lc.loc_events[l, q0]
        q = rd.ridx[r]
        if q < 0 or rd.rkind[q] != COLAST or src[r] < 0:
            continue
        _clear_bit(slots, S_RF, src[r], r, W)
        _clear_bit(slots, S_RDEF, r, r, W)
        src[r] = -2


@njit(cache=True, inline='always')
def _apply_choice(d, kind, arg, e, dig, slots, W, src, val, rd, lc, ev, corder, cn, co_placed,
                  trail, ttop, work, lv_colast, in_block):
    """Make choice ``dig`` at level ``d``: read ``e`` (read index ``arg``) reads its candidate
    ``dig``, or write ``e`` of location ``arg`` takes place ``dig`` in co. Returns (ok, trail
    top); the caller undoes the choice whatever ok says."""
    lv_colast[d] = False
    if kind == 0:
        w = rd.cand[arg, dig]
        src[e] = w
        if w < 0:
            _set_bit(slots, S_RUNDEF, e, e, W)
            return _set_value(e, UNDEF_VAL, val, src, ev, lc, trail, ttop, work)
        _set_bit(slots, S_RF, w, e, W)
        _set_bit(slots, S_RDEF, e, e, W)
        if val[w] != PENDING:
            return _set_value(e, val[w], val, src, ev, lc, trail, ttop, work)
        return True, ttop
    l = arg
    k = cn[l]
    for i in range(k, dig, -1):
        corder[l, i] = corder[l, i - 1]
    corder[l, dig] = e
    cn[l] = k + 1
    for i in range(dig, k + 1):                # the positions from the new write's on
        co_placed[corder[l, i]] = i + 1
    for i in range(dig):
        _set_bit(slots, S_CO, corder[l, i], e, W)
    for i in range(dig + 1, k + 1):
        _set_bit(slots, S_CO, e, corder[l, i], W)
    if cn[l] == lc.co_n[l]:
        lv_colast[d] = True
        return _colast(l, slots, W, src, val, rd, lc, ev, corder, cn, trail, ttop, work,
                       in_block)
    return True, ttop


@njit(cache=True, inline='always')
def _undo(d, kind, arg, e, dig, slots, W, src, val, trail, lv_ttop, lv_colast, rd, lc, corder,
          cn, co_placed):
    """Undo the choice of level ``d`` (values given since it, its rf or co edges)."""
    for t in range(lv_ttop[d], lv_ttop[d + 1]):
        val[trail[t]] = PENDING
    if kind == 0:
        w = src[e]
        if w >= 0:
            _clear_bit(slots, S_RF, w, e, W)
            _clear_bit(slots, S_RDEF, e, e, W)
        else:
            _clear_bit(slots, S_RUNDEF, e, e, W)
        src[e] = -2
        return
    l = arg
    if lv_colast[d]:
        _uncolast(l, slots, W, src, rd, lc)
    k = cn[l]
    for i in range(dig):
        _clear_bit(slots, S_CO, corder[l, i], e, W)
    for x in range(W):
        slots[S_CO, e * W + x] = ZERO64
    for i in range(dig, k - 1):
        corder[l, i] = corder[l, i + 1]
        co_placed[corder[l, i]] = i + 1
    cn[l] = k - 1
    co_placed[e] = 0

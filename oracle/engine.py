"""The numba engine: enumerate candidate executions and evaluate a compiled model on each.

Relations are bit matrices, one ``uint64`` row per event (row i, bit j = the pair (i, j)), so a
program has at most 64 events. :func:`eval_ops` runs a model's flat op array
(:mod:`oracle.lang`) over a slot array; :func:`search` is a backtracking search over the
candidate choices (a co permutation per location, a source write or undef per read): a partial
choice is abandoned as soon as one location is complete and its values break a read's required
value, its rmw values cannot be resolved, or it breaks per-location coherence where that must hold. Both are compiled once
(``cache=True``); models and programs are data.

Consecutive candidates of the search differ in a digit or two, so the search evaluates the model
with :func:`eval_inc`, which reruns only the ops whose inputs changed value since the previous
candidate (same results as :func:`eval_ops` from scratch; ``tests/test_engine_incremental.py``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from litmus.rmw_jit import apply_rmw

from .lang import (ACYCLIC, COPY, DIFF, DOM, EMPTY, FIXEND, FIXSTART, FLAG_EMPTY, FLAG_NONEMPTY,
                   ID, INTER, INV, IRREFL, OPT, PLUS, PROD, RAN, SEQ, SEQ_LD, SEQ_RD, STAR, UNION,
                   UNIV, ZERO)
from .events import UNDEF_VAL

PENDING = UNDEF_VAL + 1
ONE = np.uint64(1)
ZERO64 = np.uint64(0)

# slots filled per candidate (lang.DYNAMIC order)
S_RF, S_CO, S_RDEF, S_RUNDEF = 0, 1, 2, 3

# --- the packed pre-execution, as the search reads it (made by oracle.pack) ----------------------
#: per read that is a search digit: the read, its candidate writes (-1 = undef) and their count,
#: its location's index; the independent reads (set Indep) and theirs
Reads = namedtuple("Reads", ["reads", "cand", "ncand", "read_loc", "ind_reads", "ind_cand",
                             "ind_ncand"])
#: per location: the co permutations (rows ``co_start .. co_start + co_count``, ``co_len``
#: writes each), its events, its coherence mask (CO | CohR)
Locations = namedtuple("Locations", ["co_perm", "co_start", "co_count", "co_len", "loc_events",
                                     "loc_nev", "coh_mask"])
#: per event: read flag, value attributes (constant, rmw source/op/operand, required value), rmw
#: write; the rows of cohord and incl; the CohA and CohRmw masks
Events = namedtuple("Events", ["is_read", "val_const", "wsrc", "wop", "wopnd", "req_mode",
                               "req_val", "rmw_w", "cohord", "incl", "coha", "cohrmw"])
#: the compiled model: static prelude, per-candidate ops, number of checks
Model = namedtuple("Model", ["prelude", "ops", "nchecks"])
#: the outcome: per observable, kind (1 = an event's value, 0 = a constant) and argument
Observables = namedtuple("Observables", ["kind", "arg"])


@njit(cache=True)
def _bit(j):
    return np.uint64(1) << np.uint64(j)


@njit(cache=True)
def _closure(m, n):
    for k in range(n):
        bk = _bit(k)
        rk = m[k]
        if rk == ZERO64:              # nothing to pass on through k
            continue
        for i in range(n):
            if m[i] & bk:
                m[i] |= rk


@njit(cache=True)
def _has_cycle(m, n):
    """Whether the relation in rows ``m[:n]`` has a cycle: peel off, round by round, the events
    that no remaining event points to; a cycle is what can never be peeled. Rounds are as many as
    the longest path, each a pass over the remaining rows (no n x n closure)."""
    left = ~ZERO64 if n == 64 else (_bit(n) - ONE)
    while left:
        pointed = ZERO64
        r = left
        while r:
            pointed |= m[np.int64(trailing_zeros(r))]
            r &= r - ONE
        free = left & ~pointed
        if free == ZERO64:
            return True
        left &= ~free
    return False


@njit(cache=True)
def eval_ops(slots, ops, n, full):
    """Run the op array. Returns (index of the first failed check or -1, flag bitmask)."""
    flags = np.int64(0)
    pc = 0
    nops = ops.shape[0]
    while pc < nops:
        code = ops[pc, 0]
        d = ops[pc, 1]
        a = ops[pc, 2]
        b = ops[pc, 3]
        if code == UNION:
            for i in range(n):
                slots[d, i] = slots[a, i] | slots[b, i]
        elif code == INTER:
            for i in range(n):
                slots[d, i] = slots[a, i] & slots[b, i]
        elif code == DIFF:
            for i in range(n):
                slots[d, i] = slots[a, i] & ~slots[b, i]
        elif code == SEQ:
            for i in range(n):
                r = slots[a, i]
                acc = ZERO64
                while r:                  # one step per set bit (lowest first)
                    acc |= slots[b, np.int64(trailing_zeros(r))]
                    r &= r - ONE
                slots[d, i] = acc
        elif code == SEQ_RD:              # b within id: keep the columns in b
            m = ZERO64
            for i in range(n):
                m |= slots[b, i]
            for i in range(n):
                slots[d, i] = slots[a, i] & m
        elif code == SEQ_LD:              # a within id: keep the rows in a
            for i in range(n):
                slots[d, i] = slots[b, i] if slots[a, i] != ZERO64 else ZERO64
        elif code == INV:
            for i in range(n):
                slots[d, i] = ZERO64
            for i in range(n):
                r = slots[a, i]
                bi = _bit(i)
                while r:
                    slots[d, np.int64(trailing_zeros(r))] |= bi
                    r &= r - ONE
        elif code == PLUS or code == STAR:
            for i in range(n):
                slots[d, i] = slots[a, i]
            _closure(slots[d], n)
            if code == STAR:
                for i in range(n):
                    slots[d, i] |= _bit(i)
        elif code == OPT:
            for i in range(n):
                slots[d, i] = slots[a, i] | _bit(i)
        elif code == DOM:
            for i in range(n):
                slots[d, i] = _bit(i) if slots[a, i] != ZERO64 else ZERO64
        elif code == RAN:
            m = ZERO64
            for i in range(n):
                m |= slots[a, i]
            for i in range(n):
                slots[d, i] = _bit(i) & m
        elif code == PROD:
            m = ZERO64
            for i in range(n):
                m |= slots[b, i]
            for i in range(n):
                slots[d, i] = m if slots[a, i] != ZERO64 else ZERO64
        elif code == ZERO or code == FIXSTART:
            for i in range(n):
                slots[d, i] = ZERO64
        elif code == ID:
            for i in range(n):
                slots[d, i] = _bit(i)
        elif code == UNIV:
            for i in range(n):
                slots[d, i] = full
        elif code == COPY:
            for i in range(n):
                slots[d, i] = slots[a, i]
        elif code == FIXEND:
            changed = False
            for i in range(n):
                if slots[a, i] != slots[d, i]:
                    changed = True
                slots[d, i] = slots[a, i]
            if changed:
                pc = b + 1
                continue
        elif code == ACYCLIC:
            if _has_cycle(slots[d], n):
                return a, flags
        elif code == IRREFL:
            for i in range(n):
                if slots[d, i] & _bit(i):
                    return a, flags
        elif code == EMPTY:
            for i in range(n):
                if slots[d, i] != ZERO64:
                    return a, flags
        elif code == FLAG_EMPTY or code == FLAG_NONEMPTY:
            nonempty = False
            for i in range(n):
                if slots[d, i] != ZERO64:
                    nonempty = True
            if nonempty == (code == FLAG_NONEMPTY):
                flags |= np.int64(1) << np.int64(a)
        pc += 1
    return -1, flags


# --- incremental evaluation across consecutive candidates ------------------------------------------
#
# The search changes one digit at a time (usually one read's rf source), so most ops see the same
# inputs as for the previous candidate: when the new rf edge creates no sw, hb is unchanged and so
# are av, every vis_* fixpoint, lo and see. eval_inc keeps, per op, whether one of its inputs
# changed value since it last ran ("dirty"); an op that runs and changes its slot makes its
# readers dirty. A fixpoint loop is one unit, dirty when a slot it reads from outside changed.
# A check or flag that did not run repeats its last outcome. Ops after a failed check are not
# reached and keep their dirty marks until a later candidate reaches them, so a skipped op is
# always exact.

@njit(cache=True, inline='always')
def _apply(slots, code, d, a, b, n, full, tmp):
    """Compute one pure op into row ``d``; True when the row's value changed."""
    diff = ZERO64
    if code == SEQ:
        for i in range(n):
            r = slots[a, i]
            acc = ZERO64
            while r:
                acc |= slots[b, np.int64(trailing_zeros(r))]
                r &= r - ONE
            diff |= acc ^ slots[d, i]
            slots[d, i] = acc
    elif code == UNION:
        for i in range(n):
            v = slots[a, i] | slots[b, i]
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == INTER:
        for i in range(n):
            v = slots[a, i] & slots[b, i]
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == DIFF:
        for i in range(n):
            v = slots[a, i] & ~slots[b, i]
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == DOM:
        for i in range(n):
            v = _bit(i) if slots[a, i] != ZERO64 else ZERO64
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == INV:
        for i in range(n):
            tmp[i] = ZERO64
        for i in range(n):
            r = slots[a, i]
            bi = _bit(i)
            while r:
                tmp[np.int64(trailing_zeros(r))] |= bi
                r &= r - ONE
        for i in range(n):
            diff |= tmp[i] ^ slots[d, i]
            slots[d, i] = tmp[i]
    elif code == PLUS or code == STAR:
        for i in range(n):
            tmp[i] = slots[a, i]
        _closure(tmp, n)
        if code == STAR:
            for i in range(n):
                tmp[i] |= _bit(i)
        for i in range(n):
            diff |= tmp[i] ^ slots[d, i]
            slots[d, i] = tmp[i]
    elif code == OPT:
        for i in range(n):
            v = slots[a, i] | _bit(i)
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == RAN:
        m = ZERO64
        for i in range(n):
            m |= slots[a, i]
        for i in range(n):
            v = _bit(i) & m
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == PROD:
        m = ZERO64
        for i in range(n):
            m |= slots[b, i]
        for i in range(n):
            v = m if slots[a, i] != ZERO64 else ZERO64
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == ZERO or code == FIXSTART:
        for i in range(n):
            diff |= slots[d, i]
            slots[d, i] = ZERO64
    elif code == ID:
        for i in range(n):
            diff |= _bit(i) ^ slots[d, i]
            slots[d, i] = _bit(i)
    elif code == UNIV:
        for i in range(n):
            diff |= full ^ slots[d, i]
            slots[d, i] = full
    elif code == COPY or code == FIXEND:
        for i in range(n):
            diff |= slots[a, i] ^ slots[d, i]
            slots[d, i] = slots[a, i]
    elif code == SEQ_RD:
        m = ZERO64
        for i in range(n):
            m |= slots[b, i]
        for i in range(n):
            v = slots[a, i] & m
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    elif code == SEQ_LD:
        for i in range(n):
            v = slots[b, i] if slots[a, i] != ZERO64 else ZERO64
            diff |= v ^ slots[d, i]
            slots[d, i] = v
    return diff != ZERO64


@njit(cache=True)
def _run_loop(slots, ops, start, end, n, full, tmp):
    """Run the fixpoint loop ``ops[start..end]`` (FIXSTART .. FIXEND) from scratch."""
    pc = start
    while pc <= end:
        code = ops[pc, 0]
        changed = _apply(slots, code, ops[pc, 1], ops[pc, 2], ops[pc, 3], n, full, tmp)
        if code == FIXEND and changed:
            pc = ops[pc, 3] + 1
            continue
        pc += 1


@njit(cache=True, inline='always')
def _is_sink(code):
    """A check or a flag (reads its dst column, writes nothing)."""
    return ACYCLIC <= code <= FLAG_NONEMPTY


@njit(cache=True, inline='always')
def _inputs(ops, pc):
    """The slots op ``pc`` reads (-1: none); a check or flag reads its dst column."""
    code = ops[pc, 0]
    if code == UNION or code == INTER or code == DIFF or code == SEQ or code == PROD or \
            code == SEQ_RD or code == SEQ_LD:
        return np.int64(ops[pc, 2]), np.int64(ops[pc, 3])
    if _is_sink(code):
        return np.int64(ops[pc, 1]), np.int64(-1)
    if code == ZERO or code == ID or code == UNIV or code == FIXSTART:
        return np.int64(-1), np.int64(-1)
    return np.int64(ops[pc, 2]), np.int64(-1)


@njit(cache=True)
def _readers(ops, loop_end, writer, cptr, cidx, mark, fill):
    """Count (``fill`` False: into ``cptr[s + 1]``, marking every unit to run) or list (into
    ``cidx`` from ``cptr[s]`` on, moving it) the units reading each slot."""
    lo = -1
    hi = -1
    for pc in range(ops.shape[0]):
        if loop_end[pc] >= 0:
            lo = pc
            hi = loop_end[pc]
        unit = lo if lo <= pc <= hi else pc
        if not fill and unit == pc:
            mark[pc] = 1
        a, b = _inputs(ops, pc)
        if b == a:
            b = -1
        for s in (a, b):
            if s < 0:
                continue
            if unit != pc and unit <= writer[s] <= hi:
                continue                        # written by the same loop
            if fill:
                cidx[cptr[s]] = unit
                cptr[s] += 1
            else:
                cptr[s + 1] += 1


@njit(cache=True)
def inc_state(ops, nslots, width):
    """A fresh memo for :func:`eval_inc` over ``ops`` (``nslots`` slots of ``width`` entries).

    Units are the ops outside fixpoint loops and the loops themselves (named by their FIXSTART
    index). The readers of slot ``s`` are the units ``cidx[cptr[s]:cptr[s + 1]]`` (a loop reads
    the slots its body reads but does not write). ``mark[u]`` has bit 1 when unit ``u`` must run
    (an input changed value since it last ran; every unit at first) and bit 2 for a check that
    failed or a flag that was raised when it last ran (visited again, its outcome repeated).
    Build one per pre-execution, after its prelude ran."""
    nops = ops.shape[0]
    m = max(nops, 1)
    ints = np.empty(3 * m + 2 * nslots + 1, np.int64)     # one allocation, sliced
    loop_end = ints[:m]
    writer = ints[m:m + nslots]                 # slot -> op writing it
    cptr = ints[m + nslots:m + 2 * nslots + 1]
    cidx = ints[m + 2 * nslots + 1:]            # at most two readings per op
    loop_end[:] = -1
    writer[:] = -1
    cptr[:] = 0
    longest = 1
    for pc in range(nops):
        code = ops[pc, 0]
        if code == FIXEND:
            loop_end[ops[pc, 3]] = pc
            longest = max(longest, pc - ops[pc, 3] + 1)
        if not _is_sink(code):
            writer[ops[pc, 1]] = pc
    mark = np.zeros((m + 8) // 8 * 8, np.uint8)    # whole words (skipped 8 at a time)
    mark[m] = 1                                 # nothing evaluated yet
    _readers(ops, loop_end, writer, cptr, cidx, mark, False)
    for s in range(nslots):
        cptr[s + 1] += cptr[s]
    _readers(ops, loop_end, writer, cptr, cidx, mark, True)
    for s in range(nslots, 0, -1):              # listing moved every start one list on
        cptr[s] = cptr[s - 1]
    cptr[0] = 0
    w = max(width, 1)
    buf = np.zeros((longest + 5, w), np.uint64)  # tmp row, snapshot rows, previous dynamic slots
    return loop_end, cptr, cidx, mark, buf


@njit(cache=True, inline='always')
def _touch(mark, cptr, cidx, s):
    """Slot ``s`` changed: its readers must run again."""
    for k in range(cptr[s], cptr[s + 1]):
        mark[cidx[k]] |= np.uint8(1)


@njit(cache=True)
def _eval_first(slots, ops, n, full, mark, prev):
    """The first evaluation with a fresh memo: plain :func:`eval_ops` (no change tracking), then
    the marks it leaves: units before the failed check ran (a raised flag stays visited), the
    failed check repeats its failure while its input is unchanged, later units must run."""
    mark[max(ops.shape[0], 1)] = 0
    for s in range(4):
        for i in range(n):
            prev[s, i] = slots[s, i]
    failed, flags = eval_ops(slots, ops, n, full)
    stop = ops.shape[0]
    if failed >= 0:
        for pc in range(ops.shape[0]):
            code = ops[pc, 0]
            if (code == ACYCLIC or code == IRREFL or code == EMPTY) and ops[pc, 2] == failed:
                stop = pc
                break
        mark[stop] = 2
    for pc in range(stop):
        if mark[pc]:
            code = ops[pc, 0]
            raised = (code == FLAG_EMPTY or code == FLAG_NONEMPTY) and \
                (flags >> np.int64(ops[pc, 2])) & 1
            mark[pc] = 2 if raised else 0
    return failed, flags


@njit(cache=True)
def eval_inc(slots, ops, n, full, st):
    """:func:`eval_ops` for the next candidate, recomputing only what changed since the previous
    call with the same memo ``st`` (:func:`inc_state`): the dynamic slots (rf co Rdef Rundef) are
    compared with their previous contents, and a unit runs only when one of its inputs changed
    value (a check or flag otherwise repeats its last outcome). Units are visited in program
    order, so the first failed check is the same as :func:`eval_ops`'s and every unit reached
    holds the same value; units after it keep their marks for the next call."""
    loop_end, cptr, cidx, mark, buf = st
    tmp = buf[0]
    prev = buf[1:5]
    snap = buf[5:]
    nops = ops.shape[0]
    if mark[max(nops, 1)]:                     # the first candidate: everything runs anyway
        return _eval_first(slots, ops, n, full, mark, prev)
    for s in range(4):                         # lang.DYNAMIC
        diff = ZERO64
        for i in range(n):
            diff |= slots[s, i] ^ prev[s, i]
            prev[s, i] = slots[s, i]
        if diff != ZERO64:
            _touch(mark, cptr, cidx, s)
    flags = np.int64(0)
    words = mark.view(np.uint64)
    pc = -1
    while pc < nops - 1:
        pc += 1
        if (pc & 7) == 0 and words[pc >> 3] == ZERO64:
            pc += 7                            # eight units with nothing to do
            continue
        mk = mark[pc]
        if mk == 0:
            continue
        mark[pc] = mk & np.uint8(2)
        code = ops[pc, 0]
        d = ops[pc, 1]
        if code == FIXSTART:                   # the loop as one unit
            end = loop_end[pc]
            for q in range(pc, end + 1):
                dq = ops[q, 1]
                for i in range(n):
                    snap[q - pc, i] = slots[dq, i]
            _run_loop(slots, ops, pc, end, n, full, tmp)
            for q in range(pc, end + 1):
                dq = ops[q, 1]
                diff = ZERO64
                for i in range(n):
                    diff |= snap[q - pc, i] ^ slots[dq, i]
                if diff != ZERO64:
                    _touch(mark, cptr, cidx, dq)
        elif not _is_sink(code):
            if _apply(slots, code, d, ops[pc, 2], ops[pc, 3], n, full, tmp):
                _touch(mark, cptr, cidx, d)
        else:
            if mk & np.uint8(1):
                r = False
                if code == ACYCLIC:
                    r = _has_cycle(slots[d], n)
                elif code == IRREFL:
                    for i in range(n):
                        if slots[d, i] & _bit(i):
                            r = True
                else:
                    nonempty = False
                    for i in range(n):
                        if slots[d, i] != ZERO64:
                            nonempty = True
                    r = nonempty if code != FLAG_EMPTY else not nonempty
                mk = np.uint8(2) if r else np.uint8(0)
            if mk & np.uint8(2):
                mark[pc] = np.uint8(2)
                if code == FLAG_EMPTY or code == FLAG_NONEMPTY:
                    flags |= np.int64(1) << np.int64(ops[pc, 2])
                else:
                    return ops[pc, 2], flags
            else:
                mark[pc] = np.uint8(0)
    return -1, flags

@njit(cache=True)
def rmw_value(op, old, operand):
    """The value an rmw write gets from its read's value ``old`` (litmus/rmw.py); an rmw that
    read undef writes undef."""
    if old == UNDEF_VAL:
        return UNDEF_VAL
    return apply_rmw(op, old, operand)


@njit(cache=True)
def _location_ok(l, src, val, co_row, lc, ev):
    """Checks on one location once its co and every read of it are chosen: rmw values resolve
    and required values hold. (Coherence is :func:`_coherence_ok`'s job: a plain acyclicity
    check of po | rf | co | fr would be unsound where co relates writes without inclusive
    scopes, which the model's coherence ignores.)"""
    loc_events, loc_nev = lc.loc_events, lc.loc_nev
    is_read, val_const, wsrc, wop, wopnd = ev.is_read, ev.val_const, ev.wsrc, ev.wop, ev.wopnd
    req_mode, req_val = ev.req_mode, ev.req_val
    m = loc_nev[l]
    # values of this location's events (rmw chains stay within a location)
    for q in range(m):
        e = loc_events[l, q]
        if is_read[e] or wsrc[e] >= 0:
            val[e] = PENDING
        else:
            val[e] = val_const[e]
    changed = True
    while changed:
        changed = False
        for q in range(m):
            e = loc_events[l, q]
            if val[e] != PENDING:
                continue
            if is_read[e]:
                sv = src[e]
                if sv == -2:                  # an independent read, chosen later
                    val[e] = UNDEF_VAL
                    changed = True
                elif sv == -1:
                    val[e] = UNDEF_VAL
                    changed = True
                elif val[sv] != PENDING:
                    val[e] = val[sv]
                    changed = True
            else:
                v = val[wsrc[e]]
                if v != PENDING:
                    val[e] = rmw_value(wop[e], v, wopnd[e])
                    changed = True
    for q in range(m):
        e = loc_events[l, q]
        v = val[e]
        if v == PENDING:
            return False
        if req_mode[e] != 0 and v != UNDEF_VAL:
            if (req_mode[e] == 1) != (v == req_val[e]):
                return False
    return True


@njit(cache=True)
def _coherence_ok(l, src, co_row, lc, ev, pos, e):
    """Pruning by the coherence hints (:mod:`oracle.hints`): the reads the builder declares
    coherent (``coh_mask``: set CohR; ``coha``: set CohA, for an rf edge between two of its
    events related by ``incl``) add their rf and fr edges to co, over the pairs in ``incl``; a
    cycle ``cohord ; eco+``, an rmw read whose write is co-before its source (coherent reads and
    ``cohrmw``: set CohRmw) or a write co-between a coherent rmw read's source and its write
    fails. Sound for a partial choice because eco only grows as more reads are chosen, and each
    hint promises that what it prunes is inconsistent under the unit's model.

    Every event it touches (co writes, the reads, their sources and rmw writes) is one of the
    location's events ``loc_events[l]``, so only their entries of the work arrays ``pos`` and
    ``e`` are reset and the closure runs over them alone."""
    co_perm, co_len, loc_events, loc_nev, coh_mask = lc.co_perm, lc.co_len, lc.loc_events, \
        lc.loc_nev, lc.coh_mask
    is_read, incl, coha, cohrmw, rmw_w, cohord = ev.is_read, ev.incl, ev.coha, ev.cohrmw, \
        ev.rmw_w, ev.cohord
    m = loc_nev[l]
    k = co_len[l]
    lmask = ZERO64
    for q in range(m):
        a = loc_events[l, q]
        pos[a] = -1
        e[a] = ZERO64
        lmask |= _bit(a)
    for i in range(k):
        pos[co_perm[co_row, i]] = i
    for i in range(k):
        wi = co_perm[co_row, i]
        for j in range(i + 1, k):
            wj = co_perm[co_row, j]
            if incl[wi] & _bit(wj):
                e[wi] |= _bit(wj)
    any_edge = False
    for q in range(m):
        r = loc_events[l, q]
        if not is_read[r]:
            continue
        w = src[r]
        if w < 0:
            continue
        wr = rmw_w[r]
        known = (coh_mask[l] & _bit(r)) != ZERO64 or \
            ((coha & _bit(r)) != ZERO64 and (coha & _bit(w)) != ZERO64 and
             (incl[w] & _bit(r)) != ZERO64)
        if wr >= 0 and (known or (cohrmw & _bit(r)) != ZERO64) and pos[wr] >= 0 and \
                pos[w] >= 0 and pos[wr] < pos[w]:
            return False                      # rmw ; co ; rf cycle
        if not known:
            continue
        any_edge = True
        if incl[w] & _bit(r):
            e[w] |= _bit(r)
        if pos[w] >= 0:
            for j in range(pos[w] + 1, k):
                wj = co_perm[co_row, j]
                if incl[r] & _bit(wj):
                    e[r] |= _bit(wj)
                    if wr >= 0 and pos[wr] > j and (incl[wj] & _bit(wr)):
                        return False          # rmw atomicity: something co-between
    if not any_edge:
        return True
    for q in range(m):                         # closure (Warshall) over the location's events
        kk = loc_events[l, q]
        rk = e[kk]
        if rk == ZERO64:
            continue
        bk = _bit(kk)
        for q2 in range(m):
            i = loc_events[l, q2]
            if e[i] & bk:
                e[i] |= rk
    for q in range(m):
        a = loc_events[l, q]
        h = cohord[a] & lmask
        ba = _bit(a)
        while h:
            if e[np.int64(trailing_zeros(h))] & ba:
                return False                  # a hb b eco+ a
            h &= h - ONE
    return True


@njit(cache=True)
def _add_state(states, nstates, cap, val, obs_kind, obs_arg, cur):
    """Append the outcome of ``val`` unless it is already there (grows the array); ``cur`` is a
    work row of length ``nobs``."""
    nobs = obs_kind.shape[0]
    for o in range(nobs):
        cur[o] = val[obs_arg[o]] if obs_kind[o] == 1 else obs_arg[o]
    for s_i in range(nstates):
        same = True
        for o in range(nobs):
            if states[s_i, o] != cur[o]:
                same = False
                break
        if same:
            return states, nstates, cap
    if nstates == cap:
        bigger = np.empty((cap * 2, nobs), np.int64)
        bigger[:cap] = states
        states = bigger
        cap *= 2
    states[nstates] = cur
    return states, nstates + 1, cap


@njit(cache=True)
def search(slots, model, n, rd, lc, ev, obs, want_state, max_steps):
    """Backtracking search over candidates: per location (in order), its co permutation, then
    the source of each of its reads; a location whose choices fail :func:`_location_ok` is
    abandoned with everything below it. Complete candidates are evaluated by the model.

    Reads in ``ind_reads`` (set ``Indep``: reads that are sinks of every relation in a consistent
    execution, such as final-memory reads) are not digits: for each complete choice of the others,
    each independent read's choices are evaluated alone (the other independent reads unassigned,
    in neither Rdef nor Rundef) and the outcomes are the product of the valid choices.

    Returns (states, nstates, model evaluations, consistent, flags, fail_counts): the last entry
    of ``fail_counts`` counts partial choices pruned before the model ran. With ``max_steps`` >= 0
    the search gives up once its loop steps plus model evaluations exceed it and returns
    nstates = -1 (a campaign's budget per program; -1 means no limit).

    ``slots`` holds the model's base slots; ``model``, ``rd``, ``lc``, ``ev`` and ``obs`` are
    the named tuples :class:`Model`, :class:`Reads`, :class:`Locations`, :class:`Events` and
    :class:`Observables`."""
    prelude, ops, nchecks = model.prelude, model.ops, model.nchecks
    reads, cand, ncand, read_loc = rd.reads, rd.cand, rd.ncand, rd.read_loc
    ind_reads, ind_cand, ind_ncand = rd.ind_reads, rd.ind_cand, rd.ind_ncand
    co_perm, co_start, co_count, co_len = lc.co_perm, lc.co_start, lc.co_count, lc.co_len
    loc_events, loc_nev = lc.loc_events, lc.loc_nev
    val_const, wsrc, req_mode, req_val = ev.val_const, ev.wsrc, ev.req_mode, ev.req_val
    obs_kind, obs_arg = obs.kind, obs.arg
    full = ~ZERO64 if n == 64 else (_bit(n) - ONE)
    eval_ops(slots, prelude, n, full)
    memo = inc_state(ops, slots.shape[0], slots.shape[1])
    nr = reads.shape[0]
    nl = co_start.shape[0]
    # digits: for each location, its co digit then its reads' digits
    nd = nl + nr
    ni = ind_reads.shape[0]
    nobs = obs_kind.shape[0]
    # every int64 work array is a slice of one buffer (one allocation per search)
    md = max(nd, 1)
    mn = max(n, 1)
    mi = max(ni, 1)
    mc = max(ind_cand.shape[1], 1)
    work = np.zeros(9 * md + 3 * mn + 2 * max(nl, 1) + mi + mi * mc + nobs, np.int64)
    dig_kind = work[0:md]                        # 0 co, 1 read, 2 dummy
    dig_idx = work[md:2 * md]
    dig_end = work[2 * md:3 * md]                # 1: last digit of its location
    radix = work[3 * md:4 * md]
    digit = work[4 * md:5 * md]
    loc_of_digit = work[5 * md:6 * md]
    src = work[6 * md:6 * md + mn]
    val = work[6 * md + mn:6 * md + 2 * mn]
    wpos = work[6 * md + 2 * mn:6 * md + 3 * mn]     # work array of _coherence_ok
    at = 6 * md + 3 * mn
    co_row = work[at:at + max(nl, 1)]
    at += max(nl, 1)
    nvalid = work[at:at + mi]
    at += mi
    valid = work[at:at + mi * mc].reshape(mi, mc)
    at += mi * mc
    cur = work[at:at + nobs]
    at += nobs
    moff = work[at:at + md]                      # memo of the location checks, see below
    lidx = work[at + md:at + 2 * md]
    voff = work[at + 2 * md:at + 3 * md]
    selfc = work[at + 3 * md:at + 3 * md + max(nl, 1)]
    # a program with no memory location has exactly one candidate (empty rf and co): one dummy
    # digit (kind 2) of radix 1 stands for it
    dig_kind[:] = 2
    radix[:] = 1
    src[:] = -2
    k = 0
    for l in range(nl):
        dig_kind[k] = 0
        dig_idx[k] = l
        radix[k] = co_count[l]
        k += 1
        for q in range(nr):
            if read_loc[q] == l:
                dig_kind[k] = 1
                dig_idx[k] = q
                radix[k] = ncand[q]
                k += 1
        dig_end[k - 1] = 1
    if nd == 0:
        nd = 1
    cap = 64
    states = np.empty((cap, nobs), np.int64)
    nstates = 0
    candidates = 0
    consistent = 0
    flags_all = np.int64(0)
    fail_counts = np.zeros(nchecks + 1, np.int64)
    for d in range(nd):
        if radix[d] == 0:
            return states[:0], 0, 0, 0, flags_all, fail_counts
    we = np.empty(mn, np.uint64)               # work array of _coherence_ok
    cur_loc = 0
    for d in range(nd):
        if dig_kind[d] == 0:
            cur_loc = dig_idx[d]
        loc_of_digit[d] = cur_loc
    # The coherence pruning depends on a location's digits only (its co row, its reads' sources),
    # and so do _location_ok's values and verdict when every rmw source of the location's events
    # is one of them (``selfc``; an async copy's write takes its value from another location).
    # The search meets the same choices of a location again under every choice of the locations
    # before it, so outcomes are remembered per digit, indexed by the location's digits so far
    # (mixed radix): at a read digit 0 unknown, 1 passes, 2 fails; at a location's last digit
    # the pruning's outcome in bits 0-1 and, for a self-contained location, _location_ok's in
    # bits 2-3 with the values it gave the events. Off when the tables would be large.
    for l in range(nl):
        lm = ZERO64
        for q in range(loc_nev[l]):
            lm |= _bit(loc_events[l, q])
        selfc[l] = 1
        for q in range(loc_nev[l]):
            w = wsrc[loc_events[l, q]]
            if w >= 0 and (lm & _bit(w)) == ZERO64:
                selfc[l] = 0
    msize = 0
    vsize = 0
    span = 1
    for d in range(nd):
        span = radix[d] if dig_kind[d] != 1 else span * radix[d]
        moff[d] = msize
        msize += span
        if dig_end[d] and dig_kind[d] != 2:
            voff[d] = vsize
            vsize += span * loc_nev[loc_of_digit[d]]
    use_memo = msize <= 1 << 16
    use_vmemo = use_memo and vsize <= 1 << 16
    memo_loc = np.zeros(msize if use_memo else 0, np.uint8)
    memo_val = np.empty(vsize if use_vmemo else 0, np.int64)
    d = 0
    steps = 0
    while d >= 0:
        steps += 1
        if max_steps >= 0 and steps + candidates > max_steps:
            return states[:0], -1, candidates, consistent, flags_all, fail_counts
        if digit[d] >= radix[d]:
            digit[d] = 0
            if dig_kind[d] == 1:
                src[reads[dig_idx[d]]] = -2
            d -= 1
            if d >= 0:
                digit[d] += 1
            continue
        if dig_kind[d] == 0:
            co_row[dig_idx[d]] = co_start[dig_idx[d]] + digit[d]
            lidx[d] = digit[d]
        elif dig_kind[d] == 1:
            q = dig_idx[d]
            src[reads[q]] = cand[q, digit[d]]
            lidx[d] = lidx[d - 1] * radix[d] + digit[d]
            # reads of this location not chosen yet are -2 (skipped): the check is monotone
            if not dig_end[d]:
                known = memo_loc[moff[d] + lidx[d]] if use_memo else np.uint8(0)
                if known == 0:
                    ok = _coherence_ok(loc_of_digit[d], src, co_row[loc_of_digit[d]], lc, ev,
                                       wpos, we)
                    known = np.uint8(1) if ok else np.uint8(2)
                    if use_memo:
                        memo_loc[moff[d] + lidx[d]] = known
                if known == 2:
                    fail_counts[nchecks] += 1
                    digit[d] += 1
                    continue
        if dig_end[d]:
            l = loc_of_digit[d]
            cached = use_memo and dig_kind[d] != 2
            code = memo_loc[moff[d] + lidx[d]] if cached else np.uint8(0)
            r2 = code & np.uint8(3)
            lk = (code >> np.uint8(2)) & np.uint8(3) if selfc[l] else np.uint8(0)
            if r2 != 2 and lk != 2:
                if lk == 1 and use_vmemo:      # the values of the location's events, as before
                    v0 = voff[d] + lidx[d] * loc_nev[l]
                    for q in range(loc_nev[l]):
                        val[loc_events[l, q]] = memo_val[v0 + q]
                else:
                    lk = np.uint8(1) if _location_ok(l, src, val, co_row[l], lc, ev) \
                        else np.uint8(2)
                    if lk == 1 and use_vmemo and selfc[l]:
                        v0 = voff[d] + lidx[d] * loc_nev[l]
                        for q in range(loc_nev[l]):
                            memo_val[v0 + q] = val[loc_events[l, q]]
                if lk == 1 and r2 == 0:
                    r2 = np.uint8(1) if _coherence_ok(l, src, co_row[l], lc, ev, wpos, we) \
                        else np.uint8(2)
                if cached:
                    memo_loc[moff[d] + lidx[d]] = r2 | (lk << np.uint8(2)) if selfc[l] else r2
            if r2 == 2 or lk == 2:
                fail_counts[nchecks] += 1
                digit[d] += 1
                continue
        if d < nd - 1:
            d += 1
            digit[d] = 0
            continue
        # -- a complete candidate: dynamic slots, then the model
        for i in range(n):
            slots[S_RF, i] = ZERO64
            slots[S_CO, i] = ZERO64
            slots[S_RDEF, i] = ZERO64
            slots[S_RUNDEF, i] = ZERO64
        for q in range(nr):
            r = reads[q]
            sv = src[r]
            if sv >= 0:
                slots[S_RF, sv] |= _bit(r)
                slots[S_RDEF, r] = _bit(r)
            else:
                slots[S_RUNDEF, r] = _bit(r)
        for l in range(nl):
            row = co_row[l]
            m = co_len[l]
            for i in range(m):
                for j in range(i + 1, m):
                    slots[S_CO, co_perm[row, i]] |= _bit(co_perm[row, j])
        if ni == 0:
            candidates += 1
            failed, fl = eval_inc(slots, ops, n, full, memo)
            if failed >= 0:
                fail_counts[failed] += 1
                digit[d] += 1
                continue
            consistent += 1
            flags_all |= fl
            if want_state:
                states, nstates, cap = _add_state(states, nstates, cap, val, obs_kind, obs_arg, cur)
            digit[d] += 1
            continue
        # independent reads: each one's choices alone (the others unassigned), then the product
        nvalid[:] = 0
        dead = False
        for f in range(ni):
            e = ind_reads[f]
            for c in range(ind_ncand[f]):
                w = ind_cand[f, c]
                v = UNDEF_VAL if w < 0 else val[w]
                if req_mode[e] != 0 and v != UNDEF_VAL and (req_mode[e] == 1) != (v == req_val[e]):
                    continue
                if w >= 0:
                    slots[S_RF, w] |= _bit(e)
                    slots[S_RDEF, e] = _bit(e)
                else:
                    slots[S_RUNDEF, e] = _bit(e)
                candidates += 1
                failed, fl = eval_inc(slots, ops, n, full, memo)
                if w >= 0:
                    slots[S_RF, w] &= ~_bit(e)
                slots[S_RDEF, e] = ZERO64
                slots[S_RUNDEF, e] = ZERO64
                if failed >= 0:
                    fail_counts[failed] += 1
                else:
                    valid[f, nvalid[f]] = w
                    nvalid[f] += 1
                    flags_all |= fl
            if nvalid[f] == 0:
                dead = True
                break
        if dead:
            digit[d] += 1
            continue
        prod_count = 1
        for f in range(ni):
            prod_count *= nvalid[f]
        consistent += prod_count
        if want_state:
            pick = np.zeros(ni, np.int64)
            while True:
                for f in range(ni):
                    w = valid[f, pick[f]]
                    val[ind_reads[f]] = UNDEF_VAL if w < 0 else val[w]
                states, nstates, cap = _add_state(states, nstates, cap, val, obs_kind, obs_arg, cur)
                f = ni - 1
                while f >= 0:
                    pick[f] += 1
                    if pick[f] < nvalid[f]:
                        break
                    pick[f] = 0
                    f -= 1
                if f < 0:
                    break
        digit[d] += 1
    return states[:nstates], nstates, candidates, consistent, flags_all, fail_counts

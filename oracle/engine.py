"""The numba evaluator of compiled models: a model's op array over bit-matrix relations.

A relation over ``n`` events is ``n`` rows of ``W = ceil(n / 64)`` uint64 words; a slot array
holds one relation per slot, row ``i`` word ``k`` at ``slots[s, i * W + k]`` (bit ``j & 63`` of
word ``j >> 6`` is the pair (i, j)). For ``W == 1`` that is one word per row, the layout of
programs of at most 64 events. Every kernel takes ``W`` as an argument: the search's compiled
entry passes the constant 1 for small programs, so numba compiles a copy of each kernel in which
``W`` is the literal 1 and every word loop disappears (:mod:`oracle.explore`), and a second copy
with ``W`` read at run time for wider programs.

:func:`eval_rows` runs an op array (:mod:`oracle.lang`) over a slot array; :func:`eval_inc_rows`
does the same for the next candidate of a search, rerunning only the ops whose inputs changed
value since the previous call (``tests/test_engine_incremental.py`` checks that both agree).
Checks and flags look only at the events of an *event mask* (``emask``, W words): the search
evaluates the model on one group of locations at a time when the model couples no others
(:mod:`oracle.couple`); the mask of every event gives the usual evaluation. :func:`eval_ops` and
:func:`eval_inc` are the one-word forms (explanations, tests).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable
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


@njit(cache=True)
def _bit(j):
    return np.uint64(1) << np.uint64(j)


#: bit ``j`` of a row as a uint64 (public: the model units' static derivations use it)
bit = _bit


@njit(cache=True, inline='always')
def _wbit(j):
    """Bit ``j & 63`` as a uint64 (the word is ``j >> 6``)."""
    return np.uint64(1) << np.uint64(j & 63)


@njit(cache=True, inline='always')
def full_word(n, k):
    """Word ``k`` of the mask of events ``0 .. n - 1``."""
    r = n - (k << 6)
    if r >= 64:
        return ~ZERO64
    if r <= 0:
        return ZERO64
    return (ONE << np.uint64(r)) - ONE


def event_mask(n: int, W: int) -> np.ndarray:
    """The event mask of events ``0 .. n - 1`` in ``W`` words (:func:`full_word` of each word),
    computed in Python for Python callers: a compiled one would be one more function to load
    from numba's cache (or, on a first run, to compile)."""
    return np.array([(1 << min(max(n - 64 * k, 0), 64)) - 1 for k in range(W)], np.uint64)


@njit(cache=True, inline='always')
def _row_nonzero(m, i, W):
    for k in range(W):
        if m[i * W + k] != ZERO64:
            return True
    return False


@njit(cache=True)
def _closure_rows(m, n, W):
    """Transitive closure in place (Warshall) of the relation in ``m`` (flat rows)."""
    for kk in range(n):
        wk = kk >> 6
        bk = _wbit(kk)
        if not _row_nonzero(m, kk, W):      # nothing to pass on through kk
            continue
        for i in range(n):
            if m[i * W + wk] & bk:
                for x in range(W):
                    m[i * W + x] |= m[kk * W + x]


@njit(cache=True)
def _closure(m, n):
    """One-word form of :func:`_closure_rows`."""
    _closure_rows(m, n, 1)


@njit(cache=True)
def _cycle_rows(m, n, W, emask):
    """Whether the relation in ``m`` restricted to the events of ``emask`` has a cycle: peel
    off, round by round, the events that no remaining event points to; a cycle is what can never
    be peeled. Rounds are as many as the longest path, each a pass over the remaining rows (no
    n x n closure)."""
    if W == 1:
        left = emask[0] & full_word(n, 0)
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
    left = np.empty(W, np.uint64)
    pointed = np.empty(W, np.uint64)
    some = False
    for k in range(W):
        left[k] = emask[k] & full_word(n, k)
        if left[k]:
            some = True
    while some:
        pointed[:] = ZERO64
        for k in range(W):
            r = left[k]
            while r:
                i = (k << 6) + np.int64(trailing_zeros(r))
                for x in range(W):
                    pointed[x] |= m[i * W + x]
                r &= r - ONE
        freed = False
        some = False
        for k in range(W):
            free = left[k] & ~pointed[k]
            if free:
                freed = True
            left[k] &= ~free
            if left[k]:
                some = True
        if not freed:
            return True
    return False


@njit(cache=True)
def _has_cycle(m, n):
    """One-word form of :func:`_cycle_rows` over every event."""
    em = np.empty(1, np.uint64)
    em[0] = full_word(n, 0)
    return _cycle_rows(m, n, 1, em)


@njit(cache=True, inline='always')
def _check(code, m, n, W, emask):
    """A check or flag over the events of ``emask``: True when the relation in ``m`` has a cycle
    (ACYCLIC), a reflexive pair (IRREFL) or any pair (EMPTY and the flags)."""
    if code == ACYCLIC:
        return _cycle_rows(m, n, W, emask)
    if code == IRREFL:
        for i in range(n):
            b = _wbit(i)
            if (emask[i >> 6] & b) and (m[i * W + (i >> 6)] & b):
                return True
        return False
    for i in range(n):
        if emask[i >> 6] & _wbit(i):
            for k in range(W):
                if m[i * W + k] & emask[k]:
                    return True
    return False


@njit(cache=True, inline='always')
def _apply(slots, code, d, a, b, n, W, tmp):
    """Compute one pure op into slot ``d``; True when its value changed. ``tmp`` is a work row
    of ``n * W`` words (``d`` is never ``a`` or ``b``: the compiler writes every op to a slot of
    its own)."""
    nw = n * W
    diff = ZERO64
    if code == SEQ:
        for i in range(n):
            for k in range(W):
                tmp[k] = ZERO64
            for wk in range(W):
                r = slots[a, i * W + wk]
                while r:
                    j = (wk << 6) + np.int64(trailing_zeros(r))
                    for k in range(W):
                        tmp[k] |= slots[b, j * W + k]
                    r &= r - ONE
            for k in range(W):
                diff |= tmp[k] ^ slots[d, i * W + k]
                slots[d, i * W + k] = tmp[k]
    elif code == UNION:
        for x in range(nw):
            v = slots[a, x] | slots[b, x]
            diff |= v ^ slots[d, x]
            slots[d, x] = v
    elif code == INTER:
        for x in range(nw):
            v = slots[a, x] & slots[b, x]
            diff |= v ^ slots[d, x]
            slots[d, x] = v
    elif code == DIFF:
        for x in range(nw):
            v = slots[a, x] & ~slots[b, x]
            diff |= v ^ slots[d, x]
            slots[d, x] = v
    elif code == DOM:
        for i in range(n):
            nz = _row_nonzero(slots[a], i, W)
            for k in range(W):
                v = _wbit(i) if (nz and k == (i >> 6)) else ZERO64
                diff |= v ^ slots[d, i * W + k]
                slots[d, i * W + k] = v
    elif code == INV:
        for x in range(nw):
            tmp[x] = ZERO64
        for i in range(n):
            bi = _wbit(i)
            wi = i >> 6
            for wk in range(W):
                r = slots[a, i * W + wk]
                while r:
                    j = (wk << 6) + np.int64(trailing_zeros(r))
                    tmp[j * W + wi] |= bi
                    r &= r - ONE
        for x in range(nw):
            diff |= tmp[x] ^ slots[d, x]
            slots[d, x] = tmp[x]
    elif code == PLUS or code == STAR:
        for x in range(nw):
            tmp[x] = slots[a, x]
        _closure_rows(tmp, n, W)
        if code == STAR:
            for i in range(n):
                tmp[i * W + (i >> 6)] |= _wbit(i)
        for x in range(nw):
            diff |= tmp[x] ^ slots[d, x]
            slots[d, x] = tmp[x]
    elif code == OPT:
        for i in range(n):
            for k in range(W):
                v = slots[a, i * W + k]
                if k == (i >> 6):
                    v |= _wbit(i)
                diff |= v ^ slots[d, i * W + k]
                slots[d, i * W + k] = v
    elif code == RAN or code == SEQ_RD or code == PROD:
        src = a if code == RAN else b       # the rows whose union is the column mask
        for k in range(W):
            tmp[k] = ZERO64
        for i in range(n):
            for k in range(W):
                tmp[k] |= slots[src, i * W + k]
        for i in range(n):
            nz = code != PROD or _row_nonzero(slots[a], i, W)
            for k in range(W):
                if code == RAN:
                    v = tmp[k] & _wbit(i) if k == (i >> 6) else ZERO64
                elif code == SEQ_RD:
                    v = slots[a, i * W + k] & tmp[k]
                else:
                    v = tmp[k] if nz else ZERO64
                diff |= v ^ slots[d, i * W + k]
                slots[d, i * W + k] = v
    elif code == ZERO or code == FIXSTART:
        for x in range(nw):
            diff |= slots[d, x]
            slots[d, x] = ZERO64
    elif code == ID:
        for i in range(n):
            for k in range(W):
                v = _wbit(i) if k == (i >> 6) else ZERO64
                diff |= v ^ slots[d, i * W + k]
                slots[d, i * W + k] = v
    elif code == UNIV:
        for i in range(n):
            for k in range(W):
                v = full_word(n, k)
                diff |= v ^ slots[d, i * W + k]
                slots[d, i * W + k] = v
    elif code == COPY or code == FIXEND:
        for x in range(nw):
            diff |= slots[a, x] ^ slots[d, x]
            slots[d, x] = slots[a, x]
    elif code == SEQ_LD:
        for i in range(n):
            nz = _row_nonzero(slots[a], i, W)
            for k in range(W):
                v = slots[b, i * W + k] if nz else ZERO64
                diff |= v ^ slots[d, i * W + k]
                slots[d, i * W + k] = v
    return diff != ZERO64


@njit(cache=True, inline='always')
def _is_sink(code):
    """A check or a flag (reads its dst column, writes nothing)."""
    return ACYCLIC <= code <= FLAG_NONEMPTY


@njit(cache=True)
def eval_rows(slots, ops, n, W, emask):
    """Run the op array from scratch. Returns (index of the first failed check or -1, flag
    bitmask); checks and flags look at the events of ``emask`` only."""
    flags = np.int64(0)
    tmp = np.empty(max(n * W, 1), np.uint64)
    pc = 0
    nops = ops.shape[0]
    while pc < nops:
        code = ops[pc, 0]
        d = ops[pc, 1]
        if code == FIXEND:
            changed = _apply(slots, code, d, ops[pc, 2], ops[pc, 3], n, W, tmp)
            if changed:
                pc = ops[pc, 3] + 1
                continue
        elif not _is_sink(code):
            _apply(slots, code, d, ops[pc, 2], ops[pc, 3], n, W, tmp)
        else:
            r = _check(code, slots[d], n, W, emask)
            if code == FLAG_EMPTY or code == FLAG_NONEMPTY:
                if r == (code == FLAG_NONEMPTY):
                    flags |= np.int64(1) << np.int64(ops[pc, 2])
            elif r:
                return ops[pc, 2], flags
        pc += 1
    return -1, flags


@njit(cache=True)
def eval_rows_one_word(slots, ops, n, emask):
    """:func:`eval_rows` with ``W`` the constant 1: the kernel the search calls, which a check
    has put in numba's cache, behind a small wrapper (see :func:`run_rows`)."""
    return eval_rows(slots, ops, n, 1, emask)


def run_rows(slots, ops, n, W, emask):
    """:func:`eval_rows` called from Python (explanations, candidates, the block split). Rows of
    one word go through :func:`eval_rows_one_word`, so that a first run compiles a wrapper around
    the search's own ``eval_rows`` kernel rather than a second one for an ``int64`` ``W``
    (with its callees, about 20 s of a campaign's first run)."""
    if W == 1:
        return eval_rows_one_word(slots, ops, n, emask)
    return eval_rows(slots, ops, n, W, emask)


@njit(cache=True)
def eval_ops(slots, ops, n, full):
    """:func:`eval_rows` for one-word rows (at most 64 events), every event ``full`` checked."""
    em = np.empty(1, np.uint64)
    em[0] = full
    return eval_rows(slots, ops, n, 1, em)


# --- incremental evaluation across consecutive candidates ------------------------------------------
#
# The search changes one choice at a time (a read's rf source, a write's place in co), so most
# ops see the same inputs as for the previous candidate: when the new rf edge creates no sw, hb is
# unchanged and so are av, every vis_* fixpoint, lo and see. eval_inc_rows keeps, per op, whether
# one of its inputs changed value since it last ran ("dirty"); an op that runs and changes its
# slot makes its readers dirty. A fixpoint loop is one unit, dirty when a slot it reads from
# outside changed. A check or flag that did not run repeats its last outcome. Ops after a failed
# check are not reached and keep their dirty marks until a later candidate reaches them, so a
# skipped op is always exact.

@njit(cache=True)
def _run_loop(slots, ops, start, end, n, W, tmp):
    """Run the fixpoint loop ``ops[start..end]`` (FIXSTART .. FIXEND) from scratch."""
    pc = start
    while pc <= end:
        code = ops[pc, 0]
        changed = _apply(slots, code, ops[pc, 1], ops[pc, 2], ops[pc, 3], n, W, tmp)
        if code == FIXEND and changed:
            pc = ops[pc, 3] + 1
            continue
        pc += 1


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


#: the header of an op-array table buffer (:func:`inc_tables`): filled flag, longest loop
_TAB_HEAD = 2


@register_jitable
def _tables_len(nops, nslots):
    """int64 words of the static tables of an op array of ``nops`` ops over ``nslots`` slots:
    the header, ``loop_end``, ``writer``, ``cptr``, ``cidx`` (two readings per op) and the first
    memo's ``mark`` row (whole words)."""
    m = max(nops, 1)
    return _TAB_HEAD + 3 * m + 2 * nslots + 1 + (m + 8) // 8 * 8


def inc_tables(op_arrays, nslots: int) -> np.ndarray:
    """One int64 buffer for the static tables of several op arrays (a model's ``ops``,
    ``prefix`` and ``upper``), to be filled by the first :func:`inc_memo` that reads them: what
    :func:`inc_state` computes from the op array alone (which unit reads which slot, the fixpoint
    loops), so that each search builds only its mutable memo. Word ``k`` of the header is where
    op array ``k``'s tables start (the last word: where they end). Plain Python, for the side
    that loads a model: nothing compiled is called (a start-up cost of its own)."""
    k = len(op_arrays)
    offs = [k + 1]
    for ops in op_arrays:
        offs.append(offs[-1] + _tables_len(len(ops), nslots))
    buf = np.zeros(offs[-1], np.int64)
    buf[:k + 1] = offs
    return buf


@njit(cache=True, inline='always')
def _table_views(tab, m, nslots):
    """The static tables of an op array of ``m`` ops (at least 1) in its part ``tab`` of a table
    buffer, as views: ``loop_end``, ``writer``, ``cptr``, ``cidx`` and the first memo's marks
    (the layout :func:`_tables_len` counts)."""
    a = _TAB_HEAD + m
    b = a + nslots
    c = b + nslots + 1
    d = c + 2 * m
    return tab[_TAB_HEAD:a], tab[a:b], tab[b:c], tab[c:d], tab[d:]


@njit(cache=True)
def _fill_tables(ops, nslots, tab):
    """Fill op array ``ops``'s static tables into ``tab`` (:func:`_tables_len` words): the
    fixpoint loops' ends, the writer of each slot, the units reading each slot (``cidx[cptr[s]:
    cptr[s + 1]]``), the first memo's marks (every unit to run, nothing evaluated yet) and the
    longest loop; word 0 says they are filled."""
    nops = ops.shape[0]
    m = max(nops, 1)
    loop_end, writer, cptr, cidx, mark0 = _table_views(tab, m, nslots)     # writer: slot -> op
    loop_end[:] = -1
    writer[:] = -1
    cptr[:] = 0
    mark0[:] = 0
    longest = 1
    for pc in range(nops):
        code = ops[pc, 0]
        if code == FIXEND:
            loop_end[ops[pc, 3]] = pc
            longest = max(longest, pc - ops[pc, 3] + 1)
        if not _is_sink(code):
            writer[ops[pc, 1]] = pc
    mark = np.zeros(mark0.shape[0], np.uint8)
    mark[m] = 1                                 # nothing evaluated yet
    _readers(ops, loop_end, writer, cptr, cidx, mark, False)
    for s in range(nslots):
        cptr[s + 1] += cptr[s]
    _readers(ops, loop_end, writer, cptr, cidx, mark, True)
    for s in range(nslots, 0, -1):              # listing moved every start one list on
        cptr[s] = cptr[s - 1]
    cptr[0] = 0
    for i in range(mark.shape[0]):
        mark0[i] = mark[i]
    tab[1] = longest
    tab[0] = 1


@njit(cache=True)
def inc_memo(ops, nslots, width, tables, k):
    """A fresh memo for :func:`eval_inc_rows` over ``ops`` (``nslots`` slots of ``width`` words:
    ``n * W``), op array ``k`` of the table buffer ``tables`` (:func:`inc_tables`), whose static
    part it fills on first use (later memos share it: :func:`eval_inc_rows` only reads it). Only
    the mutable part is made per memo: the marks and the work rows.

    Units are the ops outside fixpoint loops and the loops themselves (named by their FIXSTART
    index). The readers of slot ``s`` are the units ``cidx[cptr[s]:cptr[s + 1]]`` (a loop reads
    the slots its body reads but does not write). ``mark[u]`` has bit 1 when unit ``u`` must run
    (an input changed value since it last ran; every unit at first) and bit 2 for a check that
    failed or a flag that was raised when it last ran (visited again, its outcome repeated).
    Build one per pre-execution, after its prelude ran."""
    nops = ops.shape[0]
    m = max(nops, 1)
    tab = tables[tables[k]:tables[k + 1]]
    if tab.shape[0] != _tables_len(nops, nslots):
        raise ValueError("inc_memo: the table buffer was made for another op array")
    if tab[0] == 0:
        _fill_tables(ops, nslots, tab)
    loop_end, _, cptr, cidx, mark0 = _table_views(tab, m, nslots)
    mark = np.empty(mark0.shape[0], np.uint8)  # whole words (skipped 8 at a time)
    for i in range(mark0.shape[0]):
        mark[i] = mark0[i]
    w = max(width, 1)
    buf = np.zeros((tab[1] + 5, w), np.uint64)  # tmp row, snapshot rows, previous dynamic slots
    return loop_end, cptr, cidx, mark, buf


@njit(cache=True)
def inc_state(ops, nslots, width):
    """A fresh memo for :func:`eval_inc_rows` over ``ops`` with tables of its own
    (:func:`inc_memo`; the search shares one table buffer per model instead)."""
    tables = np.zeros(2 + _tables_len(ops.shape[0], nslots), np.int64)
    tables[0] = 2
    tables[1] = tables.shape[0]
    return inc_memo(ops, nslots, width, tables, 0)


@njit(cache=True, inline='always')
def _touch(mark, cptr, cidx, s):
    """Slot ``s`` changed: its readers must run again."""
    for k in range(cptr[s], cptr[s + 1]):
        mark[cidx[k]] |= np.uint8(1)


@njit(cache=True)
def _eval_first(slots, ops, n, W, emask, mark, prev):
    """The first evaluation with a fresh memo: plain :func:`eval_rows` (no change tracking),
    then the marks it leaves: units before the failed check ran (a raised flag stays visited),
    the failed check repeats its failure while its input is unchanged, later units must run."""
    mark[max(ops.shape[0], 1)] = 0
    nw = n * W
    for s in range(4):
        for x in range(nw):
            prev[s, x] = slots[s, x]
    failed, flags = eval_rows(slots, ops, n, W, emask)
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
def eval_inc_rows(slots, ops, n, W, emask, st):
    """:func:`eval_rows` for the next candidate, recomputing only what changed since the
    previous call with the same memo ``st`` (:func:`inc_state`) and the same ``emask``: the
    dynamic slots (rf co Rdef Rundef) are compared with their previous contents, and a unit runs
    only when one of its inputs changed value (a check or flag otherwise repeats its last
    outcome). Units are visited in program order, so the first failed check is the same as
    :func:`eval_rows`'s and every unit reached holds the same value; units after it keep their
    marks for the next call."""
    loop_end, cptr, cidx, mark, buf = st
    tmp = buf[0]
    prev = buf[1:5]
    snap = buf[5:]
    nops = ops.shape[0]
    if mark[max(nops, 1)]:                     # the first candidate: everything runs anyway
        return _eval_first(slots, ops, n, W, emask, mark, prev)
    nw = n * W
    for s in range(4):                         # lang.DYNAMIC
        diff = ZERO64
        for x in range(nw):
            diff |= slots[s, x] ^ prev[s, x]
            prev[s, x] = slots[s, x]
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
                for x in range(nw):
                    snap[q - pc, x] = slots[dq, x]
            _run_loop(slots, ops, pc, end, n, W, tmp)
            for q in range(pc, end + 1):
                dq = ops[q, 1]
                diff = ZERO64
                for x in range(nw):
                    diff |= snap[q - pc, x] ^ slots[dq, x]
                if diff != ZERO64:
                    _touch(mark, cptr, cidx, dq)
        elif not _is_sink(code):
            if _apply(slots, code, d, ops[pc, 2], ops[pc, 3], n, W, tmp):
                _touch(mark, cptr, cidx, d)
        else:
            if mk & np.uint8(1):
                r = _check(code, slots[d], n, W, emask)
                if code == FLAG_EMPTY:
                    r = not r
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
def eval_inc(slots, ops, n, full, st):
    """:func:`eval_inc_rows` for one-word rows, every event ``full`` checked."""
    em = np.empty(1, np.uint64)
    em[0] = full
    return eval_inc_rows(slots, ops, n, 1, em, st)


@njit(cache=True)
def rmw_value(op, old, operand):
    """The value an rmw write gets from its read's value ``old`` (litmus/rmw.py); an rmw that
    read undef writes undef."""
    if old == UNDEF_VAL:
        return UNDEF_VAL
    return apply_rmw(op, old, operand)
    if op == 4:
        return old & operand
    if op == 5:
        return old | operand
    if op == 6:
        return old ^ operand
    if op == 7:
        return max(old, operand)
    if op == 8:
        return min(old, operand)
    if op == 9:
        return old
    return operand

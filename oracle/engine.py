"""The numba engine: enumerate candidate executions and evaluate a compiled model on each.

Relations are bit matrices, one ``uint64`` row per event (row i, bit j = the pair (i, j)), so a
program has at most 64 events. :func:`eval_ops` runs a model's flat op array
(:mod:`oracle.lang`) over a slot array; :func:`search` is a backtracking search over the
candidate choices (a co permutation per location, a source write or undef per read): a partial
choice is abandoned as soon as the values it fixes break a read's required value or a chain of
rmw values cannot be resolved, before the model is evaluated. Both are compiled once
(``cache=True``); models and programs are data.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .lang import (ACYCLIC, COPY, DIFF, DOM, EMPTY, FIXEND, FIXSTART, FLAG_EMPTY, FLAG_NONEMPTY,
                   ID, INTER, INV, IRREFL, OPT, PLUS, PROD, RAN, SEQ, STAR, UNION, UNIV, ZERO)
from .events import UNDEF_VAL

PENDING = UNDEF_VAL + 1
ONE = np.uint64(1)
ZERO64 = np.uint64(0)

# slots filled per candidate (lang.DYNAMIC order)
S_RF, S_CO, S_RDEF, S_RUNDEF = 0, 1, 2, 3


@njit(cache=True)
def _bit(j):
    return np.uint64(1) << np.uint64(j)


@njit(cache=True)
def _closure(m, n):
    for k in range(n):
        bk = _bit(k)
        rk = m[k]
        for i in range(n):
            if m[i] & bk:
                m[i] |= rk


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
                j = 0
                while r:
                    if r & ONE:
                        acc |= slots[b, j]
                    r >>= ONE
                    j += 1
                slots[d, i] = acc
        elif code == INV:
            for i in range(n):
                slots[d, i] = ZERO64
            for i in range(n):
                r = slots[a, i]
                j = 0
                while r:
                    if r & ONE:
                        slots[d, j] |= _bit(i)
                    r >>= ONE
                    j += 1
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
            t = slots[d].copy()
            _closure(t, n)
            for i in range(n):
                if t[i] & _bit(i):
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


@njit(cache=True)
def rmw_value(op, old, operand):
    if old == UNDEF_VAL:
        return UNDEF_VAL
    if op == 1:
        return old + operand
    if op == 2:
        return old - operand
    if op == 3:
        return operand
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
    return operand


@njit(cache=True)
def compute_values(src, is_read, val_const, wsrc, wop, wopnd, n):
    """Values of every event given the rf sources (``src[r]`` = write, -1 undef, -2 not a read).
    Returns the value array, or None-like (first element PENDING) when rmw values form a cycle."""
    val = np.empty(n, np.int64)
    for e in range(n):
        if is_read[e] or wsrc[e] >= 0:
            val[e] = PENDING
        else:
            val[e] = val_const[e]
    changed = True
    while changed:
        changed = False
        for e in range(n):
            if val[e] != PENDING:
                continue
            if is_read[e]:
                s = src[e]
                if s == -1:
                    val[e] = UNDEF_VAL
                    changed = True
                elif val[s] != PENDING:
                    val[e] = val[s]
                    changed = True
            else:
                v = val[wsrc[e]]
                if v != PENDING:
                    val[e] = rmw_value(wop[e], v, wopnd[e])
                    changed = True
    return val


@njit(cache=True)
def search(slots, ops, n, reads, cand, ncand, co_perm, co_start, co_count, co_len,
           is_read, val_const, wsrc, wop, wopnd, req_mode, req_val, obs_kind, obs_arg,
           nchecks, want_state, want_check):
    """Enumerate every candidate; return (states, nstates, candidates, consistent, flags,
    fail_counts). ``fail_counts[c]`` counts candidates whose first failed check is c (the last
    entry counts value-rule rejections before the model ran)."""
    full = ~ZERO64 if n == 64 else (_bit(n) - ONE)
    nr = reads.shape[0]
    nl = co_start.shape[0]
    nd = nl + nr
    radix = np.empty(nd, np.int64)
    for l in range(nl):
        radix[l] = co_count[l]
    for k in range(nr):
        radix[nl + k] = ncand[k]
    nobs = obs_kind.shape[0]
    cap = 64
    states = np.empty((cap, nobs), np.int64)
    nstates = 0
    candidates = 0
    consistent = 0
    flags_all = np.int64(0)
    fail_counts = np.zeros(nchecks + 1, np.int64)
    for k in range(nd):
        if radix[k] == 0:
            return states[:0], 0, 0, 0, flags_all, fail_counts
    digit = np.zeros(nd, np.int64)
    src = np.full(n, -2, np.int64)
    while True:
        candidates += 1
        # -- rf and values
        for k in range(nr):
            src[reads[k]] = cand[k, digit[nl + k]]
        val = compute_values(src, is_read, val_const, wsrc, wop, wopnd, n)
        ok = True
        for e in range(n):
            v = val[e]
            if v == PENDING:
                ok = False
                break
            if req_mode[e] != 0 and v != UNDEF_VAL:
                if (req_mode[e] == 1) != (v == req_val[e]):
                    ok = False
                    break
        if not ok:
            fail_counts[nchecks] += 1
        else:
            # -- dynamic slots
            for i in range(n):
                slots[S_RF, i] = ZERO64
                slots[S_CO, i] = ZERO64
                slots[S_RDEF, i] = ZERO64
                slots[S_RUNDEF, i] = ZERO64
            for k in range(nr):
                r = reads[k]
                s = src[r]
                if s >= 0:
                    slots[S_RF, s] |= _bit(r)
                    slots[S_RDEF, r] = _bit(r)
                else:
                    slots[S_RUNDEF, r] = _bit(r)
            for l in range(nl):
                row = co_start[l] + digit[l]
                m = co_len[l]
                for i in range(m):
                    for j in range(i + 1, m):
                        slots[S_CO, co_perm[row, i]] |= _bit(co_perm[row, j])
            failed, fl = eval_ops(slots, ops, n, full)
            if failed >= 0:
                fail_counts[failed] += 1
            else:
                consistent += 1
                flags_all |= fl
                # -- the outcome
                if want_state:
                    cur = np.empty(nobs, np.int64)
                    for o in range(nobs):
                        cur[o] = val[obs_arg[o]] if obs_kind[o] == 1 else obs_arg[o]
                    dup = False
                    for s_i in range(nstates):
                        same = True
                        for o in range(nobs):
                            if states[s_i, o] != cur[o]:
                                same = False
                                break
                        if same:
                            dup = True
                            break
                    if not dup:
                        if nstates == cap:
                            bigger = np.empty((cap * 2, nobs), np.int64)
                            bigger[:cap] = states
                            states = bigger
                            cap *= 2
                        states[nstates] = cur
                        nstates += 1
        # -- next candidate (odometer, last digit fastest)
        k = nd - 1
        while k >= 0:
            digit[k] += 1
            if digit[k] < radix[k]:
                break
            digit[k] = 0
            k -= 1
        if k < 0:
            break
    return states[:nstates], nstates, candidates, consistent, flags_all, fail_counts

"""Which locations the model couples: blocks of a pre-execution the search may explore apart.

The search's choices are per location: a read's source is a write to its location, a write's
place is in its location's co order. Split the locations into *blocks*; the candidates of the
program are then the products of the blocks' candidates. When, for every block, whether the
model accepts an execution depends only on the choices of each block separately, the
consistent executions are exactly the products of each block's consistent executions, and the
allowed outcomes the product of each block's outcomes (an observable is a read's value, so it
belongs to one block). :func:`blocks` decides this per pre-execution, from the model's op array
and the pre-execution's static relations, by the rule below; every part of it over-approximates,
so a split it finds is sound, and when in doubt it keeps locations together.

**The rule.** Give every slot of the compiled model two static bounds over this pre-execution,
``L`` (pairs in the relation for every candidate) and ``U`` (pairs in it for some candidate):
rf is between 0 and its candidate pairs, co between the initial-write pairs and every pair of
co-ordered writes of one location, Rdef/Rundef between 0 and the reads that may read a write /
undef; then ``a | b`` is ``[La | Lb, Ua | Ub]``, ``a \\ b`` is ``[La \\ Ub, Ua \\ Lb]``, the
other operators are monotone and apply to both bounds, and a fixpoint is iterated on both.
``Var = U \\ L`` are the pairs whose membership can change with the choices. Then *demand*:
which varying pairs can decide a check or a flag —

- ``empty N`` and the flags: every pair of ``N``; ``irreflexive N``: the pairs (x, x);
  ``acyclic N``: the pairs on a cycle of ``U(N)``;
- an operator demands, of an operand, the varying pairs that can contribute to a demanded pair:
  for ``a ; b`` the pairs (x, y) of ``a`` and (y, z) of ``b`` with (x, z) demanded and both in
  ``U``; for ``a+`` the varying edges on a ``U``-path between the ends of a demanded pair; for
  ``dom``/``ran``/``prod`` the rows/columns they read; unions, intersections, differences and
  inverses pass demand on pair by pair (an intersection only where the other side may hold);
- a fixpoint loop with a demanded varying pair: every location is coupled (no split).

The blocks are the finest partition of the events such that (1) a location's events are in one
block and a write taking its value from a read (an rmw, an async copy) is in the read's block;
(2) every demanded varying pair of every slot lies within one block; (3) for ``empty``/flag
checks every pair of ``U(N)``, and for ``acyclic N`` every pair on a cycle of ``U(N)``, lies
within one block; (4) for a closure, the start of a demanded pair and every varying edge on a path
to its end lie within one block. Under (1)-(4) every demanded pair within a block is a function
of that block's choices (by induction over the ops: a varying pair of an operand that feeds a
demanded pair is itself demanded, hence within the block; pairs that cannot vary are the same in
every candidate), and a check holds exactly when it holds on each block's pairs: an ``empty``
relation is empty on each block, a cycle lies within one block, a reflexive pair is in one block.
So the search evaluates each block's checks on the events of that block only (``emask``).

A model with ``flag empty`` (raised when a relation is empty: an "and" over blocks, not an "or")
is never split. The rule also says which flags a block can raise at all (``U`` of the flag's
relation meets the block): bounding waits only for those.
"""

from __future__ import annotations

import numpy as np

from .engine import event_mask, run_rows
from .lang import (ACYCLIC, COPY, DIFF, DOM, EMPTY, FIXEND, FIXSTART, FLAG_EMPTY, FLAG_NONEMPTY,
                   ID, INTER, INV, IRREFL, OPT, PLUS, PROD, RAN, SEQ, SEQ_LD, SEQ_RD, STAR, UNION,
                   UNIV, ZERO, Program)
from .prepare import COLAST


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def _seq(a: list, b: list) -> list:
    out = []
    for row in a:
        acc = 0
        for j in _bits(row):
            acc |= b[j]
        out.append(acc)
    return out


def _inv(a: list, n: int) -> list:
    out = [0] * n
    for i, row in enumerate(a):
        for j in _bits(row):
            out[j] |= 1 << i
    return out


def _plus(a: list, n: int) -> list:
    m = list(a)
    for k in range(n):
        rk = m[k]
        if not rk:
            continue
        bk = 1 << k
        for i in range(n):
            if m[i] & bk:
                m[i] |= rk
    return m


class _Interval:
    """``L`` and ``U`` of every slot (rows of Python ints), by abstract evaluation of the ops."""

    def __init__(self, n: int):
        self.n = n
        self.full = (1 << n) - 1
        self.L: dict[int, list] = {}
        self.U: dict[int, list] = {}

    def const(self, s: int, rows: list) -> None:
        self.L[s] = rows
        self.U[s] = rows

    def run(self, ops) -> None:
        pc = 0
        nops = len(ops)
        loop_start: dict[int, int] = {}
        while pc < nops:
            code, d, a, b = (int(x) for x in ops[pc])
            if code == FIXSTART:
                loop_start[pc] = pc
                self.L[d] = [0] * self.n
                self.U[d] = [0] * self.n
            elif code == FIXEND:
                # iterate the whole loop on both bounds until stable
                changed = self.L[d] != self.L[a] or self.U[d] != self.U[a]
                self.L[d] = list(self.L[a])
                self.U[d] = list(self.U[a])
                if changed:
                    pc = b + 1
                    continue
            elif code < ACYCLIC or code in (SEQ_RD, SEQ_LD):
                self.L[d] = self._op(code, self.L, self.U, a, b, lower=True)
                self.U[d] = self._op(code, self.U, self.L, a, b, lower=False)
            pc += 1

    def _op(self, code, X, Y, a, b, lower):
        """One bound of op ``code``: ``X`` holds that bound of the operands, ``Y`` the other one
        (the right side of a difference takes the other bound)."""
        n, full = self.n, self.full
        if code == UNION:
            return [x | y for x, y in zip(X[a], X[b])]
        if code == INTER:
            return [x & y for x, y in zip(X[a], X[b])]
        if code == DIFF:
            return [x & ~y for x, y in zip(X[a], Y[b])]
        if code in (SEQ, SEQ_RD, SEQ_LD):
            return _seq(X[a], X[b])
        if code == INV:
            return _inv(X[a], n)
        if code in (PLUS, STAR):
            m = _plus(X[a], n)
            if code == STAR:
                m = [r | (1 << i) for i, r in enumerate(m)]
            return m
        if code == OPT:
            return [r | (1 << i) for i, r in enumerate(X[a])]
        if code == DOM:
            return [(1 << i) if r else 0 for i, r in enumerate(X[a])]
        if code == RAN:
            m = 0
            for r in X[a]:
                m |= r
            return [m & (1 << i) for i in range(n)]
        if code == PROD:
            m = 0
            for r in X[b]:
                m |= r
            return [m if r else 0 for r in X[a]]
        if code == ZERO:
            return [0] * n
        if code == ID:
            return [1 << i for i in range(n)]
        if code == UNIV:
            return [full] * n
        if code == COPY:
            return list(X[a])
        raise AssertionError(code)


class _Union:
    def __init__(self, n: int):
        self.p = list(range(n))

    def find(self, x: int) -> int:
        while self.p[x] != x:
            self.p[x] = self.p[self.p[x]]
            x = self.p[x]
        return x

    def join(self, x: int, y: int) -> None:
        x, y = self.find(x), self.find(y)
        if x != y:
            self.p[max(x, y)] = min(x, y)

    def rows(self, rows: list) -> None:
        """Every pair of the relation ``rows`` in one block."""
        for i, r in enumerate(rows):
            for j in _bits(r):
                self.join(i, j)


def _rows_of(arr: np.ndarray, n: int, W: int) -> list:
    out = []
    for i in range(n):
        v = 0
        for k in range(W):
            v |= int(arr[i * W + k]) << (64 * k)
        out.append(v)
    return out


class Split:
    """The outcome of :func:`blocks`: ``groups`` (per block, its events' mask as a Python int),
    ``raisable`` (per block, the flags it can raise, as a bitmask)."""

    def __init__(self, groups: list[int], raisable: list[int]):
        self.groups = groups
        self.raisable = raisable


def blocks(packed, prog: Program) -> Split:
    """The blocks of a packed pre-execution (:class:`oracle.pack.Packed`) under ``prog``; see
    the module docstring."""
    n, W = packed.pe.n, packed.words
    slots = packed.slots.copy()
    run_rows(slots, prog.prelude, n, W, event_mask(n, W))
    iv = _Interval(n)
    static_done = set()
    for s in range(4, prog.nslots):
        iv.const(s, _rows_of(slots[s], n, W))
        static_done.add(s)
    rd, lc, ev = packed.reads, packed.locs, packed.events
    rfU = [0] * n
    rdefU = [0] * n
    rundefU = [0] * n
    for q in range(rd.reads.shape[0]):
        r = int(rd.reads[q])
        for c in range(int(rd.ncand[q])):
            w = int(rd.cand[q, c])
            if w >= 0:
                rfU[w] |= 1 << r
                rdefU[r] = 1 << r
            else:
                rundefU[r] = 1 << r
    coU = [0] * n
    coL = [0] * n
    for x in range(lc.co_init.shape[0]):
        ws = [int(w) for w in lc.co_writes[x, :lc.co_n[x]]]
        init = int(lc.co_init[x])
        for w in ws:
            for v in ws:
                if v != w:
                    coU[w] |= 1 << v
            if init >= 0:
                coU[init] |= 1 << w
                coL[init] |= 1 << w
    iv.L[0], iv.U[0] = [0] * n, rfU
    iv.L[1], iv.U[1] = coL, coU
    iv.L[2], iv.U[2] = [0] * n, rdefU
    iv.L[3], iv.U[3] = [0] * n, rundefU
    ops = prog.ops
    iv.run(ops)
    flags_empty = any(int(o[0]) == FLAG_EMPTY for o in ops)
    uf = _Union(n)
    # (1) a location in one block; a write in the block of the read it takes its value from
    for x in range(lc.loc_nev.shape[0]):
        evs = [int(e) for e in lc.loc_events[x, :lc.loc_nev[x]]]
        for e in evs[1:]:
            uf.join(evs[0], e)
    for e in range(n):
        if int(ev.wsrc[e]) >= 0:
            uf.join(e, int(ev.wsrc[e]))
    coupled = flags_empty or not _demand(ops, iv, n, uf)
    groups, raisable = [], []
    full = (1 << n) - 1
    decides = 0                                  # events the search chooses something for
    for q in range(rd.reads.shape[0]):
        decides |= 1 << int(rd.reads[q])
    for x in range(lc.co_init.shape[0]):
        for w in lc.co_writes[x, :lc.co_n[x]]:
            decides |= 1 << int(w)
    if coupled:
        by = {0: full}
    else:
        by: dict[int, int] = {}
        for e in range(n):
            r = uf.find(e)
            by[r] = by.get(r, 0) | (1 << e)
        # blocks with nothing to choose go with the first block that has something
        keep = [m for m in by.values() if m & decides]
        rest = 0
        for m in by.values():
            if not m & decides:
                rest |= m
        if not keep:
            keep = [full]
        else:
            keep[0] |= rest
        by = dict(enumerate(keep))
    for m in by.values():
        fl = 0
        for pc in range(ops.shape[0]):
            code, d, a = int(ops[pc, 0]), int(ops[pc, 1]), int(ops[pc, 2])
            if code == FLAG_NONEMPTY:
                if any(iv.U[d][i] & m for i in _bits(m)):
                    fl |= 1 << a
            elif code == FLAG_EMPTY:
                if not any(iv.L[d][i] & m for i in _bits(m)):
                    fl |= 1 << a
        groups.append(m)
        raisable.append(fl)
    return Split(groups, raisable)


def _demand(ops, iv: _Interval, n: int, uf: _Union) -> bool:
    """Propagate demand backwards over ``ops`` and join in ``uf`` what must share a block;
    False when a fixpoint loop holds a demanded varying pair (no split)."""
    L, U = iv.L, iv.U
    var = {s: [u & ~l for u, l in zip(U[s], L[s])] for s in U}
    dem: dict[int, list] = {}

    def want(s: int, rows: list) -> None:
        v = var.get(s)
        if v is None:
            return
        cur = dem.setdefault(s, [0] * n)
        for i in range(n):
            cur[i] |= rows[i] & v[i]

    nops = ops.shape[0]
    in_loop = [False] * nops
    for pc in range(nops):
        if int(ops[pc, 0]) == FIXEND:
            for k in range(int(ops[pc, 3]), pc + 1):
                in_loop[k] = True
    for pc in range(nops):
        code, d = int(ops[pc, 0]), int(ops[pc, 1])
        if code in (EMPTY, FLAG_EMPTY, FLAG_NONEMPTY):
            uf.rows(U[d])
            want(d, U[d])
        elif code == IRREFL:
            want(d, [1 << i for i in range(n)])
        elif code == ACYCLIC:
            back = _inv(_plus(U[d], n), n)       # back[i]: the events i reaches
            cyc = [U[d][i] & back[i] for i in range(n)]
            uf.rows(cyc)
            want(d, cyc)
    for pc in range(nops - 1, -1, -1):
        code, d, a, b = (int(x) for x in ops[pc])
        if code >= ACYCLIC and code not in (SEQ_RD, SEQ_LD):
            continue
        D = dem.get(d)
        if D is None or not any(D):
            continue
        if in_loop[pc]:
            return False
        uf.rows(D)
        if code in (UNION, OPT, COPY):
            want(a, D)
            if code == UNION:
                want(b, D)
        elif code == INTER:
            want(a, [x & u for x, u in zip(D, U[b])])
            want(b, [x & u for x, u in zip(D, U[a])])
        elif code == DIFF:
            want(a, D)
            want(b, [x & u for x, u in zip(D, U[a])])
        elif code in (SEQ, SEQ_RD, SEQ_LD):
            da, db = [0] * n, [0] * n
            for x in range(n):
                z = D[x]
                if not z:
                    continue
                for y in _bits(U[a][x]):
                    hit = U[b][y] & z
                    if hit:
                        da[x] |= 1 << y
                        db[y] |= hit
            want(a, da)
            want(b, db)
        elif code == INV:
            want(a, _inv(D, n))
        elif code == DOM:
            want(a, [U[a][i] if D[i] else 0 for i in range(n)])
        elif code == RAN:
            cols = 0
            for r in D:
                cols |= r
            want(a, [U[a][i] & cols for i in range(n)])
        elif code == PROD:
            rows = 0
            cols = 0
            for i in range(n):
                if D[i]:
                    rows |= 1 << i
                    cols |= D[i]
            want(a, [(1 << i) & rows & U[a][i] for i in range(n)])
            want(b, [(1 << i) & cols & U[b][i] for i in range(n)])
        elif code in (PLUS, STAR):
            star = [r | (1 << i) for i, r in enumerate(_plus(U[a], n))]
            back = _inv(star, n)                 # back[u]: the x with x U* u
            va = var.get(a, [0] * n)
            da = [0] * n
            for u in range(n):
                for v in _bits(va[u]):
                    for x in _bits(back[u]):
                        if D[x] & star[v]:
                            da[u] |= 1 << v
                            uf.join(x, u)        # (4): the edge's block is the pair's
            want(a, da)
    return True

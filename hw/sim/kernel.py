"""The numba hot loop: execute a lowered micro-op program under one scheduling.

Machine state (all small int arrays, reset per iteration):

- per thread: program counter, registers, barrier wait targets, joined named barrier;
- in-flight memory operations (``q*`` arrays): issued in program order, they *perform* later,
  out of order, except that operations of one CU on one global address stay in issue order
  (the per-CU, per-channel queues of the L2) and LDS operations of one thread stay in order;
  ``s_waitcnt``-style waits block until all but the ``k`` newest operations of a counter have
  performed (``k == 0`` on a vector-memory counter also waits for earlier operations of the
  other waves of the CU: the CU's write-acknowledge path is in order);
- per CU a non-coherent L1 (value + valid bit): a level-0 load hits it at issue when the line is
  valid and nothing of the CU to that address is in flight; lines are filled by level-0 loads
  and updated by the CU's own stores; ``INV1`` drops them all. A load may name another L1 slot
  (``GLD`` field e): the ``isa`` backend's scalar cache, which no vector store or ``INV1`` of the
  CU touches. At the start of an iteration each
  line may hold the location's initial value (a warm cache), so stale reads need no fill first;
- the L2: one coherent copy per location for RW/CC memory, one non-coherent copy per agent
  (with a dirty bit) for NC memory, none for UC memory; memory behind it;
- LDS per workgroup; barrier objects (expected count, arrive count, generation).

- ``WB2`` (the NC L2 writeback) is an in-flight operation too, on its row's counter (field d): it
  issues once the wave's earlier vector-memory operations have performed and writes back the
  lines dirty when it performs, so only a wait after it guarantees the writeback.

Every scheduling decision goes through :func:`_choose`: random (xorshift64*) in randomized mode,
or replayed from / recorded into a choice vector in exhaustive mode (stateless model checking:
the driver enumerates every choice vector depth-first). In randomized mode each iteration also
draws a delay level: some in-flight operations are *slow* and perform only when nothing else can
act, which makes long reorderings likely without adding any schedule the machine forbids.

:func:`simulate` takes four named tuples (numba compiles them as structs of arrays): the lowered
:class:`Program` (what :class:`hw.sim.lower.Machine` holds), the :class:`Sched` ule source, the
machine :class:`State` and the outcome :class:`Table`. The drivers :func:`run_random` and
:func:`run_exhaustive` take the Machine's arrays (``Machine.args()``), allocate the state and
build the tuples.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from litmus.rmw_jit import apply_rmw

from .uops import (BARINIT, BARJOIN, BARLEAVE, BARRIVE, BARWAIT, CLUSTER_SLOT, CNT_LGKM, CNT_LOAD,
                   CNT_STORE, CNT_VM, DMA, GCAS, GLD, GRMW, GST, GSTR, INV1, INV2, LCAS, LLD,
                   LRMW, LST, MT_NC, MT_UC, NCNT, NOP, SKIPNE, SLOTS, WAIT, WB2)

QMAX = 256
MAXD = 8192

#: the lowered program (``Machine.args()`` without the cache/agent counts): micro-ops, thread
#: layout, memory types and initial values, barrier counts, warm-cache candidates, observables
Program = namedtuple("Program", "prog plen tcu tag twg tcl gmt ginit ainit reginit bexp0 "
                                "warm_l1 warm_l2 obs_kind obs_a obs_b nwg")
#: where scheduling choices come from: the generator ``rng`` (randomized mode) or the choice vector
#: ``ch`` (exhaustive mode: replayed up to ``nprefix``, then first choices; ``nopt`` options per
#: depth, ``depth`` reached)
Sched = namedtuple("Sched", "rng ch nopt depth nprefix")
#: the machine state, reset per iteration: threads (pc, regs, issued counts, barrier targets,
#: joined named barrier), caches and memory, LDS, in-flight queue (q*), barrier objects and the
#: runnable-action list
State = namedtuple("State", "pc regs l1v l1ok l2v l2ok l2d mem lds "
                            "qt qpc qst qc qi qlive qval qnoack issued "
                            "bexp barr bgen arrg joined clarr acts qg qcu qslow")
#: the open-addressing outcome table (``keys``, ``counts``, ``used``) and ``stats``
Table = namedtuple("Table", "keys counts used stats")


@njit(cache=True, inline="always")
def _next(rng):
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True)
def _choose(n, mode, rng, ch, nopt, depth, nprefix):
    if n <= 1:
        return 0
    if mode == 0:
        return np.int64(((_next(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))
    d = depth[0]
    depth[0] = d + 1
    if d >= ch.shape[0]:          # deeper than the choice vector: not explored (incomplete)
        return 0
    c = 0
    if d < nprefix:
        c = ch[d]
    ch[d] = c
    nopt[d] = n
    return c


@njit(cache=True)
def _read(cu, ag, g, level, gmt, l1v, l1ok, l2v, l2ok, l2d, mem, fill):
    mt = gmt[g]
    if mt == MT_UC:
        return mem[g]
    if mt == MT_NC:
        if level == 2:
            v = l2v[ag, g] if l2d[ag, g] else mem[g]
        elif l2ok[ag, g]:
            v = l2v[ag, g]
        else:
            v = mem[g]
            l2v[ag, g] = v
            l2ok[ag, g] = 1
    else:
        v = l2v[0, g]
    if fill and level == 0:
        l1v[cu, g] = v
        l1ok[cu, g] = 1
    elif fill and l1ok[cu, g]:
        # a load that bypasses the L1 leaves no older copy of its line behind: a present line
        # is refreshed with the value read (the seed: a load-visible makes the write visible to
        # the thread's later reads of the location, so a later plain load or DMA of the same
        # CU may not read the stale line)
        l1v[cu, g] = v
    return v


@njit(cache=True)
def _write(cu, ag, g, level, v, gmt, l1v, l1ok, l2v, l2ok, l2d, mem):
    mt = gmt[g]
    if mt == MT_UC:
        mem[g] = v
        return
    if mt == MT_NC:
        l2v[ag, g] = v
        l2ok[ag, g] = 1
        if level == 2:
            mem[g] = v
            l2d[ag, g] = 0
        else:
            l2d[ag, g] = 1
    else:
        l2v[0, g] = v
    if l1ok[cu, g]:
        l1v[cu, g] = v


@njit(cache=True)
def _bar_check(obj, bexp, barr, bgen):
    if bexp[obj] > 0 and barr[obj] >= bexp[obj]:
        bgen[obj] += 1
        barr[obj] = 0


@njit(cache=True)
def _thread_end(t, pc, plen, twg, tcl, nwg, bexp, barr, bgen):
    """Thread ``t`` has ended: it drops the workgroup barrier; if it was the last thread of its
    workgroup still running, the workgroup drops the cluster barrier (its expected count counts
    workgroups; seeds/amdgpu-execution-synchronization.txt: a thread that ends drops -3 if it had
    joined it, and every thread of a cluster joins it at launch)."""
    obj = twg[t] * 17
    bexp[obj] -= 1
    _bar_check(obj, bexp, barr, bgen)
    for u in range(plen.shape[0]):      # (an empty thread has ended once its pc is 1)
        if u != t and twg[u] == twg[t] and (pc[u] < plen[u] or plen[u] == 0 and pc[u] == 0):
            return
    obj = nwg * 17 + tcl[t]
    bexp[obj] -= 1
    _bar_check(obj, bexp, barr, bgen)


@njit(cache=True)
def _bind(t, k, prog, twg, tcl, nwg, arrg, bgen):
    """The barrier wait at row ``k`` of thread ``t``, which has no arrive of the thread pending
    (lower._link_barrier_waits), takes the phase of its barrier that is open now."""
    bid = prog[t, k, 1]
    if bid == -1:
        arrg[t, 0] = bgen[twg[t] * 17] + 1
    elif bid == -3:
        arrg[t, CLUSTER_SLOT] = bgen[nwg * 17 + tcl[t]] + 1
    elif prog[t, k, 4] > 0:
        arrg[t, prog[t, k, 4]] = bgen[twg[t] * 17 + prog[t, k, 4]] + 1


@njit(cache=True)
def _barwait(t, k, prog, twg, tcl, nwg, joined, arrg, bgen):
    """The barrier wait at row ``k`` of thread ``t``: False while the phase it waits for has not
    completed; else it passes at once (passing it later adds no behaviour, like a satisfied
    s_waitcnt) and the thread's next barrier operation, if it is a wait with no arrive of the
    thread pending, takes the phase open now (oracle/models/amdgpu/barriers.py: a wait executes when the
    wave's previous barrier operation is done; the time in between is not modelled)."""
    bid = prog[t, k, 1]
    if bid == -1:
        obj = twg[t] * 17
        slot = 0
    elif bid == -3:
        obj = nwg * 17 + tcl[t]
        slot = CLUSTER_SLOT
    else:
        slot = joined[t]
        if prog[t, k, 2] == 1:
            slot = bid
        obj = twg[t] * 17 + slot
    if slot != 0 or bid < 0:        # (a named wait with nothing joined is UB in the model)
        if arrg[t, slot] < 0:
            arrg[t, slot] = bgen[obj] + 1
        if bgen[obj] < arrg[t, slot]:
            return False
        arrg[t, slot] = -1
    if prog[t, k, 3] > 0:
        _bind(t, prog[t, k, 3] - 1, prog, twg, tcl, nwg, arrg, bgen)
    return True


@njit(cache=True)
def _wait_ok(t, mask, k, wave, nq, qlive, qnoack, qc, qt, qi, qcu, issued, tcu):
    """s_waitcnt: all but the k newest ops of each counter in ``mask`` have performed; with
    k == 0 and ``wave == 0`` also the earlier ops of the CU's other waves on vector-memory
    counters (the CU-wide acknowledge path); ``wave != 0`` (WAIT field c, profile option
    ``wavecnt``: bit 0 set, bit u + 1 for each other thread u of the wave) counts the wave's own
    operations only, as the hardware counters do (AMDGPUUsage: completion is "reported to a
    wavefront in execution order"); lanes of one wave run as separate threads here."""
    for q in range(nq):
        if qlive[q] and qnoack[q] == 0 and (mask >> qc[q]) & 1:
            if qt[q] == t:
                if qi[q] < issued[t, qc[q]] - k:
                    return False
            elif k == 0 and qc[q] != CNT_LGKM and qcu[q] == tcu[t] and \
                    (wave == 0 or (wave >> (qt[q] + 1)) & 1):
                return False
    return True


@njit(cache=True)
def simulate(P, mode, sched, out, S, niter, table):
    """Run ``niter`` iterations of program ``P`` on state ``S``, scheduled by ``sched`` in
    ``mode`` (0 randomized, 1 exhaustive: a literal at each call site, so numba compiles one
    specialization per mode), writing each outcome into ``out`` and counting it into ``table``;
    ``stats[0]`` counts deadlocked iterations, ``stats[1]`` a full table (then it stops)."""
    (prog, plen, tcu, tag, twg, tcl, gmt, ginit, ainit, reginit, bexp0,
     warm_l1, warm_l2, obs_kind, obs_a, obs_b, nwg) = P
    rng, ch, nopt, depth, nprefix = sched
    (pc, regs, l1v, l1ok, l2v, l2ok, l2d, mem, lds,
     qt, qpc, qst, qc, qi, qlive, qval, qnoack, issued,
     bexp, barr, bgen, arrg, joined, clarr, acts, qg, qcu, qslow) = S
    keys, counts, used, stats = table
    T = plen.shape[0]
    G = ginit.shape[0]
    # per thread: 1 + the row of its first barrier operation if that is a wait with no arrive of
    # the thread pending (it takes the phase open at launch), else 0
    first_bind = np.zeros(T, np.int64)
    for t in range(T):
        for k in range(plen[t]):
            op = prog[t, k, 0]
            if op == BARRIVE or op == BARWAIT or op == BARINIT or op == BARLEAVE:
                if op == BARWAIT and prog[t, k, 5] == 1:
                    first_bind[t] = k + 1
                break
    for _it in range(niter):
        # ---- reset -----------------------------------------------------------------------------
        for t in range(T):
            pc[t] = 0
            joined[t] = 0
            for r in range(regs.shape[1]):
                regs[t, r] = reginit[t, r]
            for c in range(NCNT):
                issued[t, c] = 0
            for s in range(SLOTS):
                arrg[t, s] = -1
        for g in range(G):
            mem[g] = ginit[g]
            for a in range(l2v.shape[0]):
                l2v[a, g] = ginit[g]
                l2ok[a, g] = 0
                l2d[a, g] = 0
            for c in range(l1v.shape[0]):
                l1v[c, g] = ginit[g]
                l1ok[c, g] = 0
        for w in range(lds.shape[0]):
            for a in range(lds.shape[1]):
                lds[w, a] = ainit[a]
        for b in range(bexp.shape[0]):
            bexp[b] = bexp0[b]
            barr[b] = 0
            bgen[b] = 0
        for w in range(clarr.shape[0]):
            clarr[w] = -1
        for t in range(T):
            if first_bind[t] > 0:
                _bind(t, first_bind[t] - 1, prog, twg, tcl, nwg, arrg, bgen)
        # warm caches: each candidate line may start valid with the initial value
        for i in range(warm_l1.shape[0]):
            if _choose(2, mode, rng, ch, nopt, depth, nprefix) == 1:
                l1ok[warm_l1[i, 0], warm_l1[i, 1]] = 1
        for i in range(warm_l2.shape[0]):
            if _choose(2, mode, rng, ch, nopt, depth, nprefix) == 1:
                l2ok[warm_l2[i, 0], warm_l2[i, 1]] = 1
        # randomized mode: the iteration's delay level (0: uniform scheduling; d > 0: each
        # in-flight operation is "slow" with probability 2**-d when issued and performs only when
        # nothing else can act). Every schedule stays one the machine allows; slow operations make
        # long reorderings (a store overtaken by a chain of later events) likely instead of rare.
        # Exhaustive mode never draws it (its choice vectors are unchanged).
        delay = 0
        if mode == 0:
            delay = _choose(4, mode, rng, ch, nopt, depth, nprefix)
        nq = 0
        stamp = 0
        finished = 0
        for t in range(T):
            if plen[t] == 0:              # an empty thread ends at once and drops the barriers
                finished += 1
                pc[t] = 1
                _thread_end(t, pc, plen, twg, tcl, nwg, bexp, barr, bgen)
        # ---- main loop -------------------------------------------------------------------------
        while True:
            na = 0
            fin0 = finished
            # threads that can issue their next micro-op; satisfied waits are passed at once (a
            # wait has no effect but blocking, so passing it later adds no behaviour)
            for t in range(T):
                ok = True
                while pc[t] < plen[t]:
                    op = prog[t, pc[t], 0]
                    if op == WAIT:
                        if not _wait_ok(t, prog[t, pc[t], 1], prog[t, pc[t], 2], prog[t, pc[t], 3],
                                        nq, qlive,
                                        qnoack, qc, qt, qi, qcu, issued, tcu):
                            ok = False
                            break
                    elif op == BARWAIT:
                        if not _barwait(t, pc[t], prog, twg, tcl, nwg, joined, arrg, bgen):
                            ok = False
                            break
                    else:
                        break
                    pc[t] += 1
                    if pc[t] == plen[t]:
                        finished += 1
                        _thread_end(t, pc, plen, twg, tcl, nwg, bexp, barr, bgen)
                if pc[t] >= plen[t] or not ok:
                    continue
                if prog[t, pc[t], 0] == WB2:
                    for q in range(nq):
                        if qlive[q] and qt[q] == t and qc[q] != CNT_LGKM:
                            ok = False
                            break
                if ok:
                    acts[na] = t
                    na += 1
            # in-flight operations that may perform now: one CU's ops on one address in issue
            # order (qg = address, or -1-thread for LDS ops, which stay in order per thread)
            for slow in range(2):
                if slow == 1 and na > 0:      # slow operations: only when nothing else can act
                    break
                for q in range(nq):
                    if not qlive[q] or qslow[q] != slow:
                        continue
                    ok = True
                    for p in range(nq):
                        if qlive[p] and qst[p] < qst[q] and qg[p] == qg[q] and qcu[p] == qcu[q]:
                            ok = False
                            break
                    if ok:
                        acts[na] = T + q
                        na += 1
            if na == 0:
                if finished != fin0:
                    # a thread passed its last waits and ended during this scan: its barrier
                    # drops may release a wait scanned before it
                    continue
                break
            a = acts[_choose(na, mode, rng, ch, nopt, depth, nprefix)]
            if a < T:
                # ---- issue -----------------------------------------------------------------
                t = a
                row = prog[t, pc[t]]
                op = row[0]
                cu = tcu[t]
                ag = tag[t]
                enqueue = False
                if op == GLD:
                    g = row[2]
                    issued[t, row[4]] += 1
                    c1 = cu if row[5] == 0 else row[5] - 1     # the cache this load reads
                    hit = False
                    if row[3] == 0 and gmt[g] != MT_UC and l1ok[c1, g]:
                        hit = True
                        for p in range(nq):
                            if qlive[p] and qcu[p] == cu and qg[p] == g:
                                hit = False
                                break
                    if hit:
                        regs[t, row[1]] = l1v[c1, g]
                    else:
                        enqueue = True
                elif op == GST or op == GRMW or op == GCAS or op == GSTR or op == DMA:
                    issued[t, row[4]] += 1
                    enqueue = True
                elif op >= LLD and op <= LCAS:
                    issued[t, CNT_LGKM] += 1
                    enqueue = True
                elif op == INV1:
                    for g in range(G):
                        l1ok[cu, g] = 0
                elif op == WB2:
                    # the writeback is in flight on the row's counter (field d) and writes back
                    # the lines dirty when it performs (AMDGPUUsage: the s_waitcnt after
                    # buffer_wbl2 "ensures that ... the L2 writeback have completed"); it issues
                    # once the wave's earlier vector-memory operations have performed (above)
                    issued[t, row[4]] += 1
                    enqueue = True
                elif op == INV2:
                    for g in range(G):
                        if gmt[g] == MT_NC:
                            if l2d[ag, g]:
                                mem[g] = l2v[ag, g]
                                l2d[ag, g] = 0
                            l2ok[ag, g] = 0
                elif op == BARRIVE:
                    bid = row[1]
                    if bid == -1:
                        obj = twg[t] * 17
                        arrg[t, 0] = bgen[obj] + 1
                        barr[obj] += 1
                        _bar_check(obj, bexp, barr, bgen)
                    elif bid == -3:
                        obj = nwg * 17 + tcl[t]
                        arrg[t, CLUSTER_SLOT] = bgen[obj] + 1
                        if row[2] == 1:      # mutant: one arrival per wave of the workgroup
                            barr[obj] += bexp0[twg[t] * 17]
                            _bar_check(obj, bexp, barr, bgen)
                        elif clarr[twg[t]] != bgen[obj]:
                            clarr[twg[t]] = bgen[obj]
                            barr[obj] += 1
                            _bar_check(obj, bexp, barr, bgen)
                    elif bid > 0:
                        obj = twg[t] * 17 + bid
                        arrg[t, bid] = bgen[obj] + 1
                        barr[obj] += 1
                        _bar_check(obj, bexp, barr, bgen)
                elif op == BARINIT:
                    obj = twg[t] * 17 + row[1]
                    bexp[obj] = row[2]
                    barr[obj] = 0
                elif op == BARJOIN:
                    joined[t] = row[1]
                elif op == SKIPNE:
                    if regs[t, row[1]] != row[2]:
                        pc[t] += row[3]
                elif op == BARLEAVE:
                    if joined[t] > 0:
                        obj = twg[t] * 17 + joined[t]
                        bexp[obj] -= 1
                        _bar_check(obj, bexp, barr, bgen)
                        joined[t] = 0
                if (op == BARRIVE or op == BARINIT or op == BARLEAVE) and row[3] > 0:
                    # the next barrier operation is a wait with no arrive of the thread pending:
                    # it takes the phase open now
                    _bind(t, row[3] - 1, prog, twg, tcl, nwg, arrg, bgen)
                if enqueue:
                    slot_q = -1
                    for q in range(nq):
                        if not qlive[q]:
                            slot_q = q
                            break
                    if slot_q < 0:
                        slot_q = nq
                        nq += 1
                    qt[slot_q] = t
                    qpc[slot_q] = pc[t]
                    qst[slot_q] = stamp
                    stamp += 1
                    qlive[slot_q] = 1
                    qcu[slot_q] = cu
                    if op >= LLD and op <= LCAS:
                        qc[slot_q] = CNT_LGKM
                        qnoack[slot_q] = 0
                        qg[slot_q] = -1 - t
                    elif op == WB2:
                        qg[slot_q] = -1 - T - t       # no address: ordered by nothing else
                        qc[slot_q] = row[4]
                        qnoack[slot_q] = 0
                    else:
                        qg[slot_q] = row[2]
                        qc[slot_q] = row[4]
                        qnoack[slot_q] = 1 if ((op == GST or op == DMA) and row[6] == 1) else 0
                    qi[slot_q] = issued[t, qc[slot_q]] - 1
                    qslow[slot_q] = 0
                    if delay > 0 and (_next(rng) & np.uint64((1 << delay) - 1)) == 0:
                        qslow[slot_q] = 1
                    if op == GSTR:
                        qval[slot_q] = apply_rmw(row[6], regs[t, row[1]], row[5])
                pc[t] += 1
                if pc[t] == plen[t]:           # a thread that ends drops the barriers
                    finished += 1
                    _thread_end(t, pc, plen, twg, tcl, nwg, bexp, barr, bgen)
            else:
                # ---- perform ---------------------------------------------------------------
                q = a - T
                t = qt[q]
                row = prog[t, qpc[q]]
                op = row[0]
                cu = tcu[t]
                ag = tag[t]
                w = twg[t]
                if op == GLD:
                    c1 = cu if row[5] == 0 else row[5] - 1
                    regs[t, row[1]] = _read(c1, ag, row[2], row[3], gmt, l1v, l1ok, l2v, l2ok, l2d,
                                            mem, True)
                elif op == GST:
                    _write(cu, ag, row[2], row[3], row[5], gmt, l1v, l1ok, l2v, l2ok, l2d, mem)
                elif op == GSTR:
                    _write(cu, ag, row[2], row[3], qval[q], gmt, l1v, l1ok, l2v, l2ok, l2d, mem)
                elif op == GRMW:
                    lvl = row[3] if row[3] > 0 else 1
                    old = _read(cu, ag, row[2], lvl, gmt, l1v, l1ok, l2v, l2ok, l2d, mem, True)
                    _write(cu, ag, row[2], lvl, apply_rmw(row[6], old, row[5]), gmt, l1v, l1ok, l2v,
                           l2ok, l2d, mem)
                    regs[t, row[1]] = old
                elif op == GCAS:
                    lvl = row[3] if row[3] > 0 else 1
                    old = _read(cu, ag, row[2], lvl, gmt, l1v, l1ok, l2v, l2ok, l2d, mem, True)
                    succeed = old == row[5]
                    if succeed and row[7] == 1:
                        succeed = _choose(2, mode, rng, ch, nopt, depth, nprefix) == 0
                    if succeed:
                        _write(cu, ag, row[2], lvl, row[6], gmt, l1v, l1ok, l2v, l2ok, l2d, mem)
                    regs[t, row[1]] = old
                elif op == DMA:
                    g = row[2]
                    if row[3] == 0 and gmt[g] != MT_UC and l1ok[cu, g]:
                        v = l1v[cu, g]
                    else:
                        v = _read(cu, ag, g, row[3], gmt, l1v, l1ok, l2v, l2ok, l2d, mem, False)
                    lds[w, row[1]] = v
                elif op == LLD:
                    regs[t, row[1]] = lds[w, row[2]]
                elif op == LST:
                    lds[w, row[2]] = row[5]
                elif op == LRMW:
                    old = lds[w, row[2]]
                    lds[w, row[2]] = apply_rmw(row[6], old, row[5])
                    regs[t, row[1]] = old
                elif op == LCAS:
                    old = lds[w, row[2]]
                    if old == row[5]:
                        lds[w, row[2]] = row[6]
                    regs[t, row[1]] = old
                elif op == WB2:
                    for g in range(G):
                        if gmt[g] == MT_NC and l2d[ag, g]:
                            mem[g] = l2v[ag, g]
                            l2d[ag, g] = 0
                qlive[q] = 0
                while nq > 0 and qlive[nq - 1] == 0:
                    nq -= 1
        # ---- end of the kernel -----------------------------------------------------------------
        status = 0
        if finished < T or nq > 0:
            status = 1
        for i in range(obs_kind.shape[0]):
            if obs_kind[i] == 0:
                out[i] = regs[obs_a[i], obs_b[i]]
            else:
                g = obs_a[i]
                mt = gmt[g]
                if mt == MT_UC:
                    out[i] = mem[g]
                elif mt == MT_NC:
                    v = mem[g]
                    for ag in range(l2v.shape[0]):
                        if l2d[ag, g]:
                            v = l2v[ag, g]
                    out[i] = v
                else:
                    out[i] = l2v[0, g]
        if status != 0:
            stats[0] += 1
        elif not _count(keys, counts, used, out):
            stats[1] += 1
            return


@njit(cache=True, inline="always")
def _hash_row(row):
    h = np.uint64(1469598103934665603)
    for i in range(row.shape[0]):
        h ^= np.uint64(row[i] & 0xFFFFFFFFFFFF)
        h *= np.uint64(1099511628211)
        h ^= h >> np.uint64(29)
    return h


@njit(cache=True)
def _count(keys, counts, used, row):
    """Add ``row`` to an open-addressing table; returns False when the table is full."""
    cap = counts.shape[0]
    h = np.int64(_hash_row(row) % np.uint64(cap))
    for _ in range(cap):
        if used[h] == 0:
            if used.sum() * 10 > cap * 7:
                return False
            used[h] = 1
            for i in range(row.shape[0]):
                keys[h, i] = row[i]
            counts[h] = 1
            return True
        same = True
        for i in range(row.shape[0]):
            if keys[h, i] != row[i]:
                same = False
                break
        if same:
            counts[h] += 1
            return True
        h += 1
        if h == cap:
            h = 0
    return False


# The drivers allocate the machine state themselves, array by array, right where they call
# simulate: allocating it in a shared helper (even one numba inlines) measured 13-17 % slower
# randomized iterations/s (benchmarks/bench_sim.py's SB and MP+rel+acq, interleaved runs).

@njit(cache=True, parallel=True)
def run_random(prog, plen, tcu, tag, twg, tcl, gmt, ginit, ainit, reginit, bexp0,
               warm_l1, warm_l2, obs_kind, obs_a, obs_b, nwg, ncu, nag,
               iterations, seed, nchunks, keys, counts, used, stats):
    """Randomized mode: ``iterations`` runs split into ``nchunks`` chunks run in parallel, each
    with its own generator seeded from (seed, chunk), counted into per-chunk tables.
    ``stats[c] = (deadlocks, overflow)``."""
    P = Program(prog, plen, tcu, tag, twg, tcl, gmt, ginit, ainit, reginit, bexp0,
                warm_l1, warm_l2, obs_kind, obs_a, obs_b, nwg)
    T = plen.shape[0]
    G = ginit.shape[0]
    R = reginit.shape[1]
    A = ainit.shape[0]
    NB = bexp0.shape[0]
    NO = obs_kind.shape[0]
    for c in prange(nchunks):
        lo = iterations * c // nchunks
        hi = iterations * (c + 1) // nchunks
        rng = np.zeros(1, np.uint64)
        z = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(c + 1) * np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(31)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(29)
        if z == 0:
            z = np.uint64(88172645463325252)
        rng[0] = z
        ch = np.zeros(1, np.int64)
        nopt = np.zeros(1, np.int64)
        depth = np.zeros(1, np.int64)
        out = np.zeros(NO, np.int64)
        pc = np.zeros(T, np.int64)
        regs = np.zeros((T, max(R, 1)), np.int64)
        l1v = np.zeros((ncu, G), np.int64)
        l1ok = np.zeros((ncu, G), np.uint8)
        l2v = np.zeros((nag, G), np.int64)
        l2ok = np.zeros((nag, G), np.uint8)
        l2d = np.zeros((nag, G), np.uint8)
        mem = np.zeros(G, np.int64)
        lds = np.zeros((max(nwg, 1), max(A, 1)), np.int64)
        qt = np.zeros(QMAX, np.int64)
        qpc = np.zeros(QMAX, np.int64)
        qst = np.zeros(QMAX, np.int64)
        qc = np.zeros(QMAX, np.int64)
        qi = np.zeros(QMAX, np.int64)
        qlive = np.zeros(QMAX, np.uint8)
        qval = np.zeros(QMAX, np.int64)
        qnoack = np.zeros(QMAX, np.uint8)
        issued = np.zeros((T, NCNT), np.int64)
        bexp = np.zeros(NB, np.int64)
        barr = np.zeros(NB, np.int64)
        bgen = np.zeros(NB, np.int64)
        arrg = np.zeros((T, SLOTS), np.int64)
        joined = np.zeros(T, np.int64)
        clarr = np.zeros(max(nwg, 1), np.int64)
        acts = np.zeros(T + QMAX, np.int64)
        qg = np.zeros(QMAX, np.int64)
        qcu = np.zeros(QMAX, np.int64)
        qslow = np.zeros(QMAX, np.uint8)
        S = State(pc, regs, l1v, l1ok, l2v, l2ok, l2d, mem, lds,
                  qt, qpc, qst, qc, qi, qlive, qval, qnoack, issued,
                  bexp, barr, bgen, arrg, joined, clarr, acts, qg, qcu, qslow)
        simulate(P, 0, Sched(rng, ch, nopt, depth, 0), out, S, hi - lo,
                 Table(keys[c], counts[c], used[c], stats[c]))


@njit(cache=True)
def run_exhaustive(prog, plen, tcu, tag, twg, tcl, gmt, ginit, ainit, reginit, bexp0,
                   warm_l1, warm_l2, obs_kind, obs_a, obs_b, nwg, ncu, nag,
                   max_schedules, keys, counts, used, stats):
    """Exhaustive mode: every scheduling (and warm-cache choice), depth-first over choice
    vectors, up to ``max_schedules``. ``stats = (schedules, deadlocks, overflow, complete)``."""
    P = Program(prog, plen, tcu, tag, twg, tcl, gmt, ginit, ainit, reginit, bexp0,
                warm_l1, warm_l2, obs_kind, obs_a, obs_b, nwg)
    T = plen.shape[0]
    G = ginit.shape[0]
    R = reginit.shape[1]
    A = ainit.shape[0]
    NB = bexp0.shape[0]
    NO = obs_kind.shape[0]
    rng = np.ones(1, np.uint64)
    ch = np.zeros(MAXD, np.int64)
    nopt = np.zeros(MAXD, np.int64)
    depth = np.zeros(1, np.int64)
    out = np.zeros(NO, np.int64)
    pc = np.zeros(T, np.int64)
    regs = np.zeros((T, max(R, 1)), np.int64)
    l1v = np.zeros((ncu, G), np.int64)
    l1ok = np.zeros((ncu, G), np.uint8)
    l2v = np.zeros((nag, G), np.int64)
    l2ok = np.zeros((nag, G), np.uint8)
    l2d = np.zeros((nag, G), np.uint8)
    mem = np.zeros(G, np.int64)
    lds = np.zeros((max(nwg, 1), max(A, 1)), np.int64)
    qt = np.zeros(QMAX, np.int64)
    qpc = np.zeros(QMAX, np.int64)
    qst = np.zeros(QMAX, np.int64)
    qc = np.zeros(QMAX, np.int64)
    qi = np.zeros(QMAX, np.int64)
    qlive = np.zeros(QMAX, np.uint8)
    qval = np.zeros(QMAX, np.int64)
    qnoack = np.zeros(QMAX, np.uint8)
    issued = np.zeros((T, NCNT), np.int64)
    bexp = np.zeros(NB, np.int64)
    barr = np.zeros(NB, np.int64)
    bgen = np.zeros(NB, np.int64)
    arrg = np.zeros((T, SLOTS), np.int64)
    joined = np.zeros(T, np.int64)
    clarr = np.zeros(max(nwg, 1), np.int64)
    acts = np.zeros(T + QMAX, np.int64)
    qg = np.zeros(QMAX, np.int64)
    qcu = np.zeros(QMAX, np.int64)
    qslow = np.zeros(QMAX, np.uint8)
    S = State(pc, regs, l1v, l1ok, l2v, l2ok, l2d, mem, lds,
              qt, qpc, qst, qc, qi, qlive, qval, qnoack, issued,
              bexp, barr, bgen, arrg, joined, clarr, acts, qg, qcu, qslow)
    nprefix = 0
    n = 0
    stats[3] = 0
    st2 = np.zeros(2, np.int64)
    table = Table(keys, counts, used, st2)
    truncated = False
    while n < max_schedules:
        depth[0] = 0
        simulate(P, 1, Sched(rng, ch, nopt, depth, nprefix), out, S, 1, table)
        n += 1
        stats[1] = st2[0]
        if st2[1]:
            stats[2] += 1
            break
        if depth[0] > MAXD:
            truncated = True
        d = min(depth[0], MAXD) - 1
        while d >= 0 and ch[d] + 1 >= nopt[d]:
            d -= 1
        if d < 0:
            stats[3] = 0 if truncated else 1
            break
        ch[d] += 1
        nprefix = d + 1
    stats[0] = n

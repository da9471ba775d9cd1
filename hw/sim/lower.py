"""Lowering: litmus instructions -> micro-op sequences, following LLVM's code sequences per target
(notes llvm-amdgpu.md §4.1-§4.5, §5.4, §2.3) — and the machine layout of a test.

Release part of an operation at scope S (before it), acquire part (after it):

=========  ======================================  ==============================================
scope      release                                 acquire
=========  ======================================  ==============================================
wave       lgkmcnt(0) if lanes (see below)         lgkmcnt(0) if lanes
wg         lgkmcnt(0) [+ vmcnt(0) in tgsplit];      lgkmcnt(0) [+ vmcnt(0), L1 inv in tgsplit];
           GFX12: loadcnt/storecnt/dscnt(0)        GFX12 (CU mode): dscnt(0)
agent      vmcnt(0) lgkmcnt(0) (GFX12: all three)  vmcnt(0) lgkmcnt(0), L1 invalidate
sys        L2 writeback, then the agent waits      the agent waits, L2 invalidate, L1 invalidate
=========  ======================================  ==============================================

Cluster scope acts as agent (on GFX1250 it is SCOPE_SE, which this machine, having no SE cache,
treats the same way). Load/store cache levels: wave → may hit L1; wg → L1 (bypass in tgsplit);
cluster/agent → bypass L1 (glc / sc1 / SCOPE_DEV); sys → system level. RMWs always go to L2.
A seq_cst load starts with a full wait; seq_cst stores are release stores, rmws and fences
acq_rel. ``.noav`` drops the cache writeback/invalidate of the release/acquire but keeps the waits.
LDS accesses use workgroup scope whatever their syncscope. LLVM emits nothing for wavefront
scope because a wave executes its (diverged) lanes in order; the simulator runs the lanes of one
wave as separate instruction streams, so when a thread shares its wave with another it keeps that
order with an ``lgkmcnt(0)`` at wavefront releases and acquires (vector-memory ops of one CU are
already in order per address).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from litmus import Test
from litmus.ir import is_acquire, is_release

from ..opencl.codegen import EMITTERS, languages_for
from .kernel import QMAX
from .mutants import DROPPABLE, MUTANTS, NO_EDITS, Edits
from .profiles import Profile
from .uops import (BARINIT, BARJOIN, BARLEAVE, BARRIVE, BARWAIT, CNT_LGKM, CNT_LOAD, CNT_STORE,
                   CNT_VM, DMA, GCAS, GLD, GRMW, GST, GSTR, INV1, INV2, LCAS, LLD, LRMW, LST,
                   MTYPES, NFIELDS, RMW_OPS, SKIPNE, WAIT, WB2)

RANK = {"thread": 0, "wave": 1, "wg": 2, "cluster": 3, "agent": 4, "sys": 5}


class LoweringError(ValueError):
    """The simulator cannot run this test (a one-line reason)."""


@dataclass
class Machine:
    """A lowered test: micro-op arrays plus the layout the kernel needs."""

    prog: np.ndarray
    plen: np.ndarray
    tcu: np.ndarray
    tag: np.ndarray
    twg: np.ndarray
    tcl: np.ndarray
    gmt: np.ndarray
    ginit: np.ndarray
    ainit: np.ndarray
    reginit: np.ndarray
    bexp0: np.ndarray
    warm_l1: np.ndarray
    warm_l2: np.ndarray
    obs_kind: np.ndarray
    obs_a: np.ndarray
    obs_b: np.ndarray
    nwg: int
    ncu: int
    nag: int
    observables: list
    listing: list        # per thread, the micro-ops as (source instruction index, row)

    def args(self):
        return (self.prog, self.plen, self.tcu, self.tag, self.twg, self.tcl, self.gmt,
                self.ginit, self.ainit, self.reginit, self.bexp0, self.warm_l1, self.warm_l2,
                self.obs_kind, self.obs_a, self.obs_b, self.nwg, self.ncu, self.nag)


def _drop(seq, names):
    """``seq`` without the micro-ops named in ``names`` (:data:`hw.sim.mutants.DROPPABLE`)."""
    for name in names:
        seq = [u for u in seq if not DROPPABLE[name](u)]
    return seq


class _Lowerer:
    def __init__(self, test: Test, profile: Profile, edits: Edits):
        self.test = test
        self.p = profile
        self.e = edits
        self.gidx = {loc.name: i for i, loc in enumerate(test.globals)}
        waves = [test.instance(t, "wave") for t in range(len(test.threads))]
        #: threads that share their wave with another thread (lanes of one wave)
        self.lanes = [waves.count(w) > 1 for w in waves]
        self.tid = 0
        self.aidx = {loc.name: i for i, loc in enumerate(test.lds_locations)}

    # -- scopes and levels ---------------------------------------------------------------------
    def scope(self, s: str, lds: bool = False) -> str:
        if lds and RANK[s] > RANK["wg"]:
            s = "wg"
        if s == "wg" and self.p.tgsplit and self.e.tgsplit_wg_as_wave:
            s = "wave"
        return s

    def level(self, s: str) -> int:
        r = RANK[s]
        if r <= RANK["wave"]:
            return 0
        if r == RANK["wg"]:
            return 1 if self.p.tgsplit else 0
        if r < RANK["sys"]:
            return 1
        return 2

    # -- release / acquire parts -----------------------------------------------------------------
    def _waits(self, mem_waits: bool):
        p = self.p
        out = []
        if mem_waits:
            if p.family == "gfx9":
                out.append((WAIT, CNT_VM, 0))
            else:
                out += [(WAIT, CNT_LOAD, 0), (WAIT, CNT_STORE, 0)]
        out.append((WAIT, CNT_LGKM, 0))
        return out

    def _part(self, s: str, noav: bool, sequence, drops):
        """The release or acquire part at scope ``s``: nothing at thread scope (or when a
        mutant's ``.noav`` drops the ordering); at wavefront scope an ``lgkmcnt(0)`` when the
        thread shares its wave (the simulator runs the lanes of one wave as separate instruction
        streams: the wait stands for the wave executing its diverged lanes in order); wider,
        ``sequence(rank)``. Then the micro-ops a mutant drops."""
        r = RANK[s]
        if r <= RANK["thread"] or (self.e.noav_drops_order and noav):
            return []
        if r == RANK["wave"]:
            seq = [(WAIT, CNT_LGKM, 0)] if self.lanes[self.tid] else []
        else:
            seq = sequence(r)
        return _drop(seq, drops)

    def release(self, s: str, noav: bool):
        def sequence(r):
            if r == RANK["wg"]:
                return self._waits(self.p.tgsplit or self.p.family == "gfx12")
            seq = self._waits(True)
            # the writeback is in flight on the store counter until the wait after it
            wb = (WB2, 0, 0, 0, self.p.store_counter)
            return [wb] + seq if r == RANK["sys"] and not noav else seq
        return self._part(s, noav, sequence, self.e.release_drops)

    def acquire(self, s: str, noav: bool):
        def sequence(r):
            if r == RANK["wg"]:
                seq = self._waits(True) + [(INV1,)] if self.p.tgsplit else [(WAIT, CNT_LGKM, 0)]
            else:
                seq = self._waits(True) + ([(INV2,)] if r == RANK["sys"] else []) + [(INV1,)]
            # .noav: no cache invalidates, the waits stay
            return [u for u in seq if u[0] not in (INV1, INV2)] if noav else seq
        return self._part(s, noav, sequence, self.e.acquire_drops)

    # -- one instruction -----------------------------------------------------------------------
    def lower(self, tid: int, code, regs: dict[str, int]):
        p, e = self.p, self.e
        self.tid = tid
        out: list[tuple[int, tuple]] = []
        marks: list[int] = []          # counter ops issued at each pending asyncmark
        issued = {c: 0 for c in range(5)}

        def emit(i, *uops):
            for u in uops:
                out.append((i, u))
                if u[0] in (GLD, GST, GRMW, GCAS, GSTR, DMA):
                    issued[u[4]] += 1

        for i, ins in enumerate(code):
            if ins is None:
                continue
            b = ins.base
            loc = ins.loc
            lds = loc is not None and self.test.is_lds(loc) and b != "async.ld"
            lc = p.load_counter
            sc = p.store_counter
            if b in ("ld", "st", "rmw", "cas"):
                s = self.scope(ins.scope or "sys", lds)
                acc = ins.access
                order = ins.order or "rlx"
                if acc == "plain":
                    s_lvl = 0
                elif acc == "vol":
                    s_lvl = 2
                else:
                    s_lvl = self.level(s)
                if e.sys_atomics_at_l2 and acc == "atom" and s_lvl == 2:
                    s_lvl = 1
                atomic = acc == "atom"
                pre, post = [], []
                if atomic and is_release(order) and b != "ld":
                    pre = self.release(s, ins.noav)
                if atomic and b == "ld" and order == "sc" and not e.sc_load_no_wait:
                    pre = self._waits(True)
                acq_order = order
                if b == "cas" and ins.fail_order and is_acquire(ins.fail_order):
                    acq_order = "acq" if order in ("rlx", "rel") else order
                if atomic and is_acquire(acq_order) and b != "st":
                    post = self.acquire(s, ins.noav)
                    if e.cas_acquire_on_success_only and b == "cas" and post and not lds:
                        # the acquire sequence only on the success path of the expansion
                        post = [(WAIT, lc, 0), (SKIPNE, regs[ins.reg], ins.args[0],
                                                len(post))] + post
                if acc == "vol":
                    post = post + ([(WAIT, CNT_LGKM, 0)] if lds else
                                   [(WAIT, lc if b == "ld" else sc, 0)])
                if lds:
                    a = self.aidx[loc]
                    if b == "ld":
                        core = [(LLD, regs[ins.reg], a)]
                    elif b == "st":
                        core = [(LST, 0, a, 0, 0, ins.args[0])]
                    elif b == "rmw":
                        core = [(LRMW, regs[ins.reg], a, 0, 0, ins.args[0], RMW_OPS[ins.op])]
                    else:
                        core = [(LCAS, regs[ins.reg], a, 0, 0, ins.args[0], ins.args[1])]
                else:
                    g = self.gidx[loc]
                    if b == "ld":
                        core = [(GLD, regs[ins.reg], g, s_lvl, lc)]
                    elif b == "st":
                        noack = 1 if (e.near_store_ack and acc in ("atom", "av")
                                      and s_lvl >= 1) else 0
                        core = [(GST, 0, g, s_lvl, sc, ins.args[0], noack)]
                    elif b == "rmw":
                        lvl = max(s_lvl, 1)
                        if e.rmw_split:
                            core = [(GLD, regs[ins.reg], g, lvl, lc), (WAIT, lc, 0),
                                    (GSTR, regs[ins.reg], g, lvl, sc, ins.args[0],
                                     RMW_OPS[ins.op])]
                        else:
                            core = [(GRMW, regs[ins.reg], g, lvl, lc, ins.args[0],
                                     RMW_OPS[ins.op])]
                    else:
                        core = [(GCAS, regs[ins.reg], g, max(s_lvl, 1), lc, ins.args[0],
                                 ins.args[1], 1 if e.cas_spurious else 0)]
                emit(i, *pre, *core, *post)
            elif b == "fence":
                s = self.scope(ins.scope or "sys")
                seq = []
                if is_release(ins.order):
                    seq += self.release(s, ins.noav)
                if is_acquire(ins.order):
                    seq += self.acquire(s, ins.noav)
                # a workgroup release fence right before s_barrier is merged into the
                # barrier's full waitcnt on targets without BackOffBarrier
                nxt = next((c for c in code[i + 1:] if c is not None), None)
                if (not p.backoff_barrier and nxt is not None and nxt.base == "barrier"
                        and ins.order == "rel" and RANK[s] == RANK["wg"]):
                    seq = []
                emit(i, *seq)
            elif b == "async.ld":
                g = self.gidx[loc]
                a = self.aidx[ins.lds]
                # the DMA's LDS write must not overtake the wave's earlier LDS accesses (they
                # happen before it): SIInsertWaitcnts orders them with lgkmcnt(0)
                emit(i, (WAIT, CNT_LGKM, 0), (DMA, a, g, 0, p.async_counter))
            elif b == "async.mark":
                marks.append(issued[p.async_counter])
            elif b == "async.wait":
                n = ins.args[0]
                keep = n + e.asyncmark_extra_marks
                if len(marks) > keep:
                    mark = marks[len(marks) - keep - 1]
                    cnt = p.async_counter
                    k = issued[cnt] - mark
                    if e.asyncwait_wrong_counter:
                        cnt, k = (CNT_LGKM if p.family == "gfx9" else CNT_LOAD), 0
                    emit(i, (WAIT, cnt, k))
                if len(marks) > n:
                    del marks[:len(marks) - n]
            elif b == "barrier":
                seq = []
                if not p.backoff_barrier and not e.barrier_no_waits:
                    seq = self._waits(True)
                emit(i, *seq, (BARRIVE, -1), (BARWAIT, -1))
            elif b == "bar.signal":
                bid = ins.args[0]
                per_wave = 1 if (bid == -3 and e.cluster_arrive_per_wave) else 0
                emit(i, (BARRIVE, bid, per_wave))
            elif b == "bar.wait":
                emit(i, (BARWAIT, ins.args[0], 1 if e.named_wait_on_operand else 0))
            elif b == "bar.init":
                emit(i, (BARINIT, ins.args[0], ins.args[1]))
            elif b == "bar.join":
                emit(i, (BARJOIN, ins.args[0]))
            elif b == "bar.leave":
                emit(i, (BARLEAVE,))
            else:
                raise LoweringError(f"the simulator cannot lower {b!r}")
        return out


def _merge_waits(uops):
    """Kernel form of waits: ``(WAIT, counter bitmask, k)``; adjacent waits with the same k
    become one (as SIInsertWaitcnts merges them into one s_waitcnt)."""
    out = []
    i = 0
    while i < len(uops):
        u = uops[i]
        i += 1
        if u[0] == SKIPNE:            # the skipped block is merged on its own
            block = _merge_waits(uops[i:i + u[3]])
            out.append((SKIPNE, u[1], u[2], len(block)))
            out += block
            i += u[3]
            continue
        if u[0] == WAIT:
            u = (WAIT, 1 << u[1], u[2])
            if out and out[-1][0] == WAIT and out[-1][2] == u[2]:
                out[-1] = (WAIT, out[-1][1] | u[1], u[2])
                continue
        out.append(u)
    return out


_BARRIER_STEPS = (BARRIVE, BARWAIT, BARINIT, BARLEAVE)


def _link_barrier_waits(rows):
    """Which phase a barrier wait waits for (oracle/models/amdgpu/barriers.py, DESIGN.md "Barriers"): the phase
    of the thread's own pending arrive on its barrier, else the phase open when the thread's
    previous barrier operation is done (at launch for a first one; joins and the time between
    barrier operations do not count). The kernel binds such a wait then: this marks it (BARWAIT
    field 5 = 1, field 4 = the named barrier it waits on) and gives each barrier arrive, wait,
    init and leave in field 3 the index + 1 of the marked wait that is the thread's next barrier
    operation after it (0: none)."""
    rows = [list(r) + [0] * (6 - len(r)) for r in rows]
    pending: set[int] = set()        # barriers with an arrive of the thread not waited for
    joined = 0
    for r in rows:
        op = r[0]
        if op == BARJOIN:
            joined = r[1]
        elif op == BARLEAVE:
            joined = 0
        elif op == BARRIVE:
            pending.add(r[1])
        elif op == BARWAIT:
            key = r[1] if r[1] < 0 or r[2] == 1 else joined
            r[4] = key if key > 0 else 0
            r[5] = 0 if key in pending else 1
            pending.discard(key)
    for k, r in enumerate(rows):
        if r[0] in _BARRIER_STEPS:
            j = k + 1
            while j < len(rows) and rows[j][0] not in _BARRIER_STEPS:
                j += 1
            if j < len(rows) and rows[j][0] == BARWAIT and rows[j][5]:
                r[3] = j + 1
    return [tuple(r) for r in rows]


def _dense(keys):
    d = {}
    for k in keys:
        d.setdefault(k, len(d))
    return d


#: the test dialects the lowering reads (litmus header words): the simulator models AMD GPUs
DIALECTS = ("AMDGPU",)


def refusal(dialect: str) -> str:
    """Why the simulator does not run tests of ``dialect`` (one line), naming the OpenCL kernel
    language and GPU platform that do when some OpenCL emitter lowers the dialect (its declared
    ``READS`` and ``PLATFORM``: PTX tests on NVIDIA GPUs)."""
    why = (f"the simulator models AMD GPU hardware: it runs {'/'.join(DIALECTS)}-dialect tests, "
           f"not {dialect}")
    for name in languages_for(dialect):
        platform = EMITTERS[name].PLATFORM
        if platform:
            why += (f" ({dialect} tests run on an {platform} GPU: --backend opencl on an "
                    f"{platform} platform, kernels of codegen --dialect {name})")
            break
    return why


def lower(test: Test, profile: Profile, mutant: str | None = None) -> Machine:
    """Lower ``test`` for ``profile`` (with ``mutant``'s :class:`~hw.sim.mutants.Edits`
    applied) into a :class:`Machine`."""
    if test.dialect not in DIALECTS:
        raise LoweringError(refusal(test.dialect))
    T = len(test.threads)
    if T == 0:
        raise LoweringError("the test has no threads")
    if profile.tgsplit and test.lds_locations:
        raise LoweringError("tgsplit mode has no LDS; the test declares LDS locations")
    wg_of = [test.instance(t, "wg") for t in range(T)]
    wgs = _dense(wg_of)
    cls = _dense(test.instance(t, "cluster") for t in range(T))
    ags = _dense(test.instance(t, "agent") for t in range(T))
    cu_key = [test.instance(t, "wave") if profile.tgsplit else wg_of[t] for t in range(T)]
    cus = _dense(cu_key)
    lw = _Lowerer(test, profile, MUTANTS[mutant].edits if mutant else NO_EDITS)
    regmaps = []
    listings = []
    for t in range(T):
        regs = {r: j for j, r in enumerate(test.registers(t))}
        regmaps.append(regs)
        listings.append(lw.lower(t, test.threads[t].code, regs))
    inflight = sum(1 for lst in listings for _, u in lst
                   if u[0] in (GLD, GST, GRMW, GCAS, GSTR, DMA, LLD, LST, LRMW, LCAS))
    if inflight > QMAX:
        raise LoweringError(f"{inflight} memory micro-ops: more than the simulator's "
                            f"{QMAX} in-flight slots")
    L = max(1, max(len(x) for x in listings))
    prog = np.zeros((T, L, NFIELDS), np.int64)
    plen = np.zeros(T, np.int64)
    # wavecnt: a wait's field c is 1 | (the other threads of its wave, one bit each from bit 1):
    # the simulator runs the lanes of one wave as separate streams, which share the counters
    if profile.wavecnt and T > 62:
        raise LoweringError(f"{T} threads: wavecnt supports at most 62")
    wave_of = [test.instance(t, "wave") for t in range(T)]
    wavemask = [1 | sum(1 << (u + 1) for u in range(T) if u != t and wave_of[u] == wave_of[t])
                for t in range(T)]
    for t, lst in enumerate(listings):
        rows = _link_barrier_waits(_merge_waits([u for _, u in lst]))
        plen[t] = len(rows)
        for j, u in enumerate(rows):
            prog[t, j, :len(u)] = u
            if u[0] == WAIT and profile.wavecnt:
                prog[t, j, 3] = wavemask[t]    # per-wave counters (kernel._wait_ok)
    R = max(1, max(len(r) for r in regmaps))
    reginit = np.zeros((T, R), np.int64)
    for t, regs in enumerate(regmaps):
        for r, j in regs.items():
            reginit[t, j] = test.register_init(t, r)
    G = len(test.globals)
    ginit = np.array([loc.init for loc in test.globals] or [0], np.int64)[:max(G, 1)]
    if G == 0:
        ginit = np.zeros(0, np.int64)
    gmt = np.full(G, MTYPES[profile.mtype], np.int64)
    ainit = np.array([loc.init for loc in test.lds_locations], np.int64)
    nwg, ncl = len(wgs), len(cls)
    bexp0 = np.zeros(nwg * 17 + ncl, np.int64)
    for t in range(T):
        bexp0[wgs[wg_of[t]] * 17] += 1
    for c in cls.values():
        bexp0[nwg * 17 + c] = len({wgs[wg_of[t]] for t in range(T)
                                   if cls[test.instance(t, "cluster")] == c})
    tcu = np.array([cus[cu_key[t]] for t in range(T)], np.int64)
    tag = np.array([ags[test.instance(t, "agent")] for t in range(T)], np.int64)
    twg = np.array([wgs[wg_of[t]] for t in range(T)], np.int64)
    tcl = np.array([cls[test.instance(t, "cluster")] for t in range(T)], np.int64)
    # warm-cache candidates: L1 lines a CU may read through L1; NC L2 lines of an agent
    warm1, warm2 = set(), set()
    for t, lst in enumerate(listings):
        for _, u in lst:
            if u[0] in (GLD, DMA) and u[3] == 0:
                warm1.add((int(tcu[t]), u[2]))
            if u[0] in (GLD, GST, GRMW, GCAS, GSTR, DMA) and profile.mtype == "NC":
                warm2.add((int(tag[t]), u[2]))
    warm_l1 = np.array(sorted(warm1), np.int64).reshape(-1, 2)
    warm_l2 = np.array(sorted(warm2), np.int64).reshape(-1, 2)
    observables = test.observables()
    kind, oa, ob = [], [], []
    for key in observables:
        if ":" in key:
            th, r = key.split(":", 1)
            t = int(th[1:])
            kind.append(0), oa.append(t), ob.append(regmaps[t][r])
        else:
            kind.append(1), oa.append(lw.gidx[key]), ob.append(0)
    return Machine(prog, plen, tcu, tag, twg, tcl, gmt, ginit, ainit, reginit, bexp0,
                   warm_l1, warm_l2, np.array(kind, np.int64), np.array(oa, np.int64),
                   np.array(ob, np.int64), nwg, len(cus), max(1, len(ags)), observables,
                   listings)

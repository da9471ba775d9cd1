"""Event graph builder for the AMDGPU dialect (DESIGN.md "The AMDGPU model", "Events").

Turns a :class:`litmus.Test` into pre-executions (one per choice of cas success/failure and per
barrier schedule) whose sets and relations are the vocabulary of ``oracle/models/amdgpu``:

sets   ``R W F`` reads, writes, fences; ``IW`` initial writes; ``FR`` final-memory reads (one per
       global location: a sys-scope atomic read that everything happens-before);
       ``A`` atomic accesses; ``ACQ REL SC`` acquire-or-stronger / release-or-stronger / seq_cst
       operations (fences included); ``MA MV`` MakeAvailable / MakeVisible (release/acquire
       without ``.noav``); ``SA LV`` store-available writes / load-visible reads (atomics,
       ``st.av``/``ld.vis``, volatile, every LDS access); ``LDS`` LDS accesses;
       ``lvl_S`` events whose scope is S or wider (S in thread wave wg cluster agent sys);
       ``CO`` writes ordered by co (atomic writes and IW); ``UndefOK`` reads that may read undef;
       ``CohR`` the other reads: rule 2 always defines them, so per-location coherence holds;
       ``BARR BWAIT BOP`` barrier arrives, waits and other barrier operations; ``ASYNC`` the
       read and write of an ``async.ld``; ``AWAIT`` ``async.wait`` events.
rels   ``po`` program order (rmw read po-before its write); ``rmw`` read -> write of one rmw;
       ``loc`` same location copy; ``int``/``ext`` same/different thread; ``sin`` (X, Y): Y's
       thread lies in X's scope instance; ``sinav`` the same for X's availability scope (the
       scope of its own store-available / load-visible: workgroup for every LDS access, whatever
       scope it names; else its scope); ``incl`` inclusive scopes; ``same_S`` same instance of
       scope S; ``ini`` initial writes -> every other event; ``fin`` every event -> final reads;
       ``poa`` program order into async ops (an event po-before the issuing instruction -> the
       op's read and write); ``aso`` the edges out of async ops, once completed (its read -> its
       write; the op -> a wait completing a later mark and what follows it); ``bxb``
       barrier-executes-before (per schedule); ``nrf`` (W, R) pairs no consistent execution can
       use (R po-before W; W hidden by a later po-earlier write), pruned before the search;
       ``cohord`` = po | poa | ini | fin | aso, the static part of hb that the search's
       per-location coherence pruning respects.

Initial writes and final reads are scope-inclusive with everything (DESIGN.md).

The builder works in two passes and emits the packed form (:class:`oracle.events.Table`) directly:
this module walks the instructions once and writes one attribute row per event, whose ``C_KIND``
column is a bitmask over :data:`SETS` (the sets an instruction decides); then
:func:`oracle.models.amdgpu.static.derive` (numba) computes every relation and the derived sets from
those rows. Event labels are made only when an explanation asks for them.
"""

from __future__ import annotations

import itertools

import numpy as np

from litmus.ir import Test
from litmus.scopes import SCOPE_RANK

from .static import B_PO, B_RMWW, NKIND, RELS, SETS, derive
from .barriers import enumerate_schedules, thread_ops
from oracle.events import NCOLS, WORD, REQ_EQ, REQ_NE, RMW_CODES, PreExecution, Table
from oracle.errors import TooManyEvents

SET_INDEX = {name: k for k, name in enumerate(SETS)}
REL_INDEX = {name: k for k, name in enumerate(RELS)}

# kind bits (C_KIND): the per-instruction sets, in SETS order (B_PO and B_RMWW: static.py)
(B_R, B_W, B_F, B_IW, B_FR, B_A, B_ACQ, B_REL, B_SC, B_MA, B_MV, B_SA, B_LV, B_CO, B_BARR,
 B_BWAIT, B_BOP, B_ASYNC, B_AWAIT) = (1 << k for k in range(NKIND))

R_THREAD, R_WAVE, R_WG, R_CLUSTER, R_AGENT, R_SYS = range(6)
_RANK = SCOPE_RANK
_ACQ = {"acq": True, "acq_rel": True, "sc": True}
_REL = {"rel": True, "acq_rel": True, "sc": True}
_COPY = RMW_CODES["copy"]


def build(test: Test) -> list[PreExecution]:
    """Every pre-execution of ``test``: one per choice of cas success/failure and per distinct
    barrier schedule (barrier-executes-before, relation ``bxb``)."""
    cas_sites = [(tid, k) for tid, th in enumerate(test.threads) for k, ins in enumerate(th.code)
                 if ins.base == "cas"]
    has_barriers = any(ins.base == "barrier" or ins.base.startswith("bar.")
                       for th in test.threads for ins in th.code)
    sched = enumerate_schedules(test) if has_barriers else None
    out = []
    for choice in itertools.product((True, False), repeat=len(cas_sites)) if cas_sites else ((),):
        pe = _build_one(test, dict(zip(cas_sites, choice)))
        if sched is None:
            out.append(pe)
            continue
        pe.ub = list(sched.ub)
        for part in sched.participates or [frozenset()]:
            out.append(pe.with_relation("bxb", _bxb(pe, sched, part)))
    return out


def _bxb(pe: PreExecution, sched, part) -> np.ndarray:
    """barrier-executes-before over barrier events: (po among barrier ops | participates)+."""
    n = pe.n
    rows = [0] * n
    bev = pe.barrier_events           # (thread, op index) -> event
    for (tid, k), e in bev.items():
        for (tid2, k2), e2 in bev.items():
            if tid2 == tid and k2 > k:
                rows[e] |= 1 << e2
    for (w, k, w2, k2) in part:
        for t in sched.waves[w]:
            for t2 in sched.waves[w2]:
                a, b = bev.get((t, k)), bev.get((t2, k2))
                if a is not None and b is not None:
                    rows[a] |= 1 << b
    changed = True
    while changed:
        changed = False
        for i in range(n):
            r = acc = rows[i]
            while r:                    # one step per set bit
                low = r & -r
                acc |= rows[low.bit_length() - 1]
                r ^= low
            if acc != rows[i]:
                rows[i] = acc
                changed = True
    return np.array(rows, np.uint64)


def _instances(test: Test) -> list[list[int]]:
    """Per thread, its scope instance id at each level (thread wave wg cluster agent sys): equal
    ids = same instance (litmus.scopes.instance: a left-out workgroup or wave is the thread's
    own, here the id ``-1 - tid``)."""
    waves: dict = {}
    wgs: dict = {}
    clusters: dict = {}
    out = []
    for t, th in enumerate(test.threads):
        p = th.placement
        cl = (p.agent, p.cluster)
        wg = cl + (-1 - t if p.wg is None else p.wg,)
        wave = wg + (-1 - t if p.wave is None or p.wg is None else p.wave,)
        out.append([t, waves.setdefault(wave, len(waves)), wgs.setdefault(wg, len(wgs)),
                    clusters.setdefault(cl, len(clusters)), p.agent, 0])
    return out


def _build_one(test: Test, cas_ok: dict) -> PreExecution:
    """One pre-execution: pass 1 here (instructions -> attribute rows), pass 2 in numba."""
    threads = test.threads
    inst = _instances(test)
    rows: list[tuple] = []          # one attribute row per event (columns C_*)
    specs: list[tuple] = []         # how to label each event (see _label)
    loc_names: list[str] = []
    lds_copy: list[bool] = []

    # location copies: a global has one; an LDS location one per workgroup that uses it
    loc_by_name = {}
    for loc in reversed(test.locations):
        loc_by_name[loc.name] = loc                 # the first declaration wins
    lds_names = {name for name, loc in loc_by_name.items() if loc.lds}
    loc_ids: dict[tuple, int] = {}

    def loc_id(name: str, tid: int) -> int:
        key = (name, inst[tid][R_WG]) if name in lds_names else (name, None)
        lid = loc_ids.get(key)
        if lid is None:
            lid = loc_ids[key] = len(loc_ids)
            lds = key[1] is not None
            loc_names.append(f"{name}@wg{lid}" if lds else name)
            lds_copy.append(lds)
        return lid

    # globals first: an async copy's LDS write takes its value from a read of a global, and the
    # search resolves locations in id order (events.PreExecution: a value source at another
    # location must have a lower id)
    for loc in test.locations:
        if not loc.lds:
            loc_id(loc.name, 0)
    for loc in test.locations:
        if loc.lds:
            for tid, th in enumerate(threads):
                if any(ins.loc == loc.name or ins.lds == loc.name for ins in th.code):
                    loc_id(loc.name, tid)

    # initial writes: sys-scope atomic, store-available
    k_init = B_W | B_IW | B_A | B_SA | B_CO
    for (name, _), lid in loc_ids.items():
        v = loc_by_name[name].init
        rows.append((-1, lid, v, -1, 0, 0, 0, 0, -1, R_SYS, k_init, -1))
        specs.append(("init", name, v))

    reg_event: dict[tuple[int, str], int] = {}
    barrier_events: dict = {}
    k_bar = {"arrive": B_BARR | B_PO, "wait": B_BWAIT | B_PO}
    for tid, th in enumerate(threads):
        bops = None
        bk = 0
        marks: list[int] = []
        for k, ins in enumerate(th.code):
            base = ins.base
            if base == "barrier" or base.startswith("bar."):
                if bops is None:
                    bops = thread_ops(test, tid)
                while bk < len(bops) and bops[bk][3] == k:
                    barrier_events[(tid, bk)] = len(rows)
                    rows.append((tid, -1, 0, -1, 0, 0, 0, 0, k, R_WG,
                                 k_bar.get(bops[bk][0], B_BOP | B_PO), -1))
                    specs.append(("bar", bops[bk]))
                    bk += 1
                continue
            if base == "async.mark":
                marks.append(k)
                continue
            if base == "async.wait":
                done = marks[:max(len(marks) - ins.args[0], 0)]
                rows.append((tid, -1, 0, -1, 0, 0, 0, 0, k, R_THREAD, B_AWAIT | B_PO,
                             done[-1] if done else -1))      # the last completed mark
                specs.append(("await", ins.args[0]))
                continue
            if base == "async.ld":
                src = loc_id(ins.loc, tid)
                dst = loc_id(ins.lds, tid)
                r = len(rows)
                rows.append((tid, src, 0, -1, 0, 0, 0, 0, k, R_SYS, B_R | B_ASYNC, -1))
                rows.append((tid, dst, 0, r, _COPY, 0, 0, 0, k, R_WG, B_W | B_SA | B_ASYNC, -1))
                specs.append(("ins", tid, k, "async.r"))
                specs.append(("ins", tid, k, "async.w"))
                continue
            order = ins.order
            acq = order in _ACQ
            rel = order in _REL
            sc = B_SC if order == "sc" else 0
            access = ins.access
            if base == "fence":
                rank = R_SYS if ins.scope is None else _RANK[ins.scope]
                kind = B_F | B_PO | sc
                if acq:
                    kind |= B_ACQ if ins.noav else B_ACQ | B_MV
                if rel:
                    kind |= B_REL if ins.noav else B_REL | B_MA
                rows.append((tid, -1, 0, -1, 0, 0, 0, 0, k, rank, kind, -1))
                specs.append(("ins", tid, k, "F"))
                continue
            lds = ins.loc in lds_names
            if access == "vol" or ins.scope is None:
                rank = R_SYS
            else:
                rank = _RANK[ins.scope]
            if lds:
                rank = min(rank, R_WG) if access in ("atom", "vis", "av", "vol") else R_WG
            lid = loc_id(ins.loc, tid)
            atomic = access == "atom"
            if base == "ld":
                kind = B_R | B_PO
                if atomic:
                    kind |= B_A | sc
                    if acq:
                        kind |= B_ACQ if ins.noav else B_ACQ | B_MV
                if atomic or access == "vis" or access == "vol" or lds:
                    kind |= B_LV
                reg_event[(tid, ins.reg)] = len(rows)
                rows.append((tid, lid, 0, -1, 0, 0, 0, 0, k, rank, kind, -1))
                specs.append(("ins", tid, k, "R"))
            elif base == "st":
                kind = B_W | B_PO
                if atomic:
                    kind |= B_A | B_CO | sc
                    if rel:
                        kind |= B_REL if ins.noav else B_REL | B_MA
                if atomic or access == "av" or access == "vol" or lds:
                    kind |= B_SA
                rows.append((tid, lid, ins.args[0], -1, 0, 0, 0, 0, k, rank, kind, -1))
                specs.append(("ins", tid, k, "W"))
            else:  # rmw / cas: a read, and (unless a failed cas) a write
                ok = True if base == "rmw" else cas_ok[(tid, k)]
                rorder = order if ok else ins.fail_order
                kind = B_R | B_A | B_LV | B_PO
                if rorder in _ACQ:
                    kind |= B_ACQ if ins.noav else B_ACQ | B_MV
                if rorder == "sc":
                    kind |= B_SC
                r = len(rows)
                if base == "cas":
                    rows.append((tid, lid, 0, -1, 0, 0, REQ_EQ if ok else REQ_NE, ins.args[0],
                                 k, rank, kind, -1))
                else:
                    rows.append((tid, lid, 0, -1, 0, 0, 0, 0, k, rank, kind, -1))
                specs.append(("ins", tid, k, "rmw.r" if ok else "cas.fail"))
                reg_event[(tid, ins.reg)] = r
                if ok:
                    kind = B_W | B_A | B_SA | B_CO | B_PO | B_RMWW | sc
                    if rel:
                        kind |= B_REL if ins.noav else B_REL | B_MA
                    if base == "rmw":       # C_AUX: the rmw's read (relation rmw)
                        rows.append((tid, lid, 0, r, RMW_CODES[ins.op], ins.args[0], 0, 0, k,
                                     rank, kind, r))
                    else:                   # a successful cas writes a constant
                        rows.append((tid, lid, ins.args[1], -1, 0, 0, 0, 0, k, rank, kind, r))
                    specs.append(("ins", tid, k, "rmw.w"))

    # final-memory reads, one per global location
    finals = []
    for loc in test.locations:
        if not loc.lds:
            finals.append(len(rows))
            rows.append((-1, loc_ids[(loc.name, None)], 0, -1, 0, 0, 0, 0, -1, R_SYS,
                         B_R | B_FR | B_A | B_LV, -1))
            specs.append(("final", loc.name))

    n = len(rows)
    if n > WORD:
        raise TooManyEvents(f"program has more than {WORD} events (the AMDGPU event builder's "
                            f"limit)")
    attrs = np.array(rows, np.int64) if n else np.zeros((0, NCOLS), np.int64)
    masks, rels = derive(attrs, np.array(inst, np.int64), np.array(lds_copy or [False], np.bool_),
                         len(SETS), len(RELS))
    table = Table(attrs, SET_INDEX, masks, REL_INDEX, rels, lambda i: _label(test, specs[i]))
    pe = PreExecution(None, None, None, [], loc_names, [], barrier_events, table)

    # observables: registers (last event writing them, or the initial value), then globals
    obs = pe.observables
    for tid in range(len(threads)):
        for reg in test.registers(tid):
            e = reg_event.get((tid, reg))
            obs.append((f"P{tid}:{reg}", ("event", e) if e is not None
                        else ("const", test.register_init(tid, reg))))
    for loc, f in zip(test.globals, finals):
        obs.append((loc.name, ("event", f)))
    return pe


def _label(test: Test, spec: tuple) -> str:
    """The text of one event for explanations (``W x=1``, ``R.atom.acq.agent y``, ``F.rel``)."""
    what = spec[0]
    if what == "init":
        return f"W {spec[1]}={spec[2]} (init)"
    if what == "final":
        return f"R {spec[1]} (final)"
    if what == "await":
        return f"async.wait {spec[1]}"
    if what == "bar":
        kind, bid, arg, _ = spec[1]
        return {"arrive": f"B.arrive {bid}", "wait": f"B.wait {bid}", "init": f"B.init {bid},{arg}",
                "join": f"B.join {bid}", "drop": "B.leave"}[kind]
    _, tid, k, role = spec
    ins = test.threads[tid].code[k]
    if role == "async.r":
        return f"R.async {ins.loc}"
    if role == "async.w":
        return f"W.async {ins.lds}"
    sfx = []
    if ins.order and ins.order != "rlx":
        sfx.append(ins.order)
    if ins.scope and ins.scope != "sys" and ins.base != "ld" and ins.base != "st" \
            or ins.access in ("atom", "vis", "av") and ins.scope != "sys":
        sfx.append(ins.scope)
    tag = ("." + ".".join(sfx)) if sfx else ""
    acc = "" if ins.access in ("plain", None) else "." + ins.access
    if role == "F":
        return f"F{tag}"
    if role == "R":
        return f"R{acc}{tag} {ins.loc}"
    if role == "W":
        return f"W{acc}{tag} {ins.loc}={ins.args[0]}"
    if ins.base == "rmw":
        label = f"rmw.{ins.op}{tag}"
    elif role == "cas.fail":
        fo = ins.fail_order
        label = f"cas.fail{'.' + fo if fo != 'rlx' else ''}"
    else:
        label = f"cas{tag}"
    if role == "rmw.w":
        return f"W {label} {ins.loc}" if ins.base == "rmw" else f"W {label} {ins.loc}={ins.args[1]}"
    return f"R {label} {ins.loc}"

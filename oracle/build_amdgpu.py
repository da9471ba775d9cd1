"""Event graph builder for the AMDGPU dialect (DESIGN.md "The AMDGPU model", "Events").

Turns a :class:`litmus.Test` into pre-executions (one per choice of cas success/failure) whose
sets and relations are the vocabulary of ``oracle/models/amdgpu``:

sets   ``R W F`` reads, writes, fences; ``IW`` initial writes; ``FR`` final-memory reads (one per
       global location: a sys-scope atomic read that everything happens-before);
       ``A`` atomic accesses; ``ACQ REL SC`` acquire-or-stronger / release-or-stronger / seq_cst
       operations (fences included); ``MA MV`` MakeAvailable / MakeVisible (release/acquire
       without ``.noav``); ``SA LV`` store-available writes / load-visible reads (atomics,
       ``st.av``/``ld.vis``, volatile, every LDS access); ``LDS`` LDS accesses;
       ``lvl_S`` events whose scope is S or wider (S in thread wave wg cluster agent sys);
       ``CO`` writes ordered by co (atomic writes and IW); ``UndefOK`` reads that may read undef;
       ``CohR`` the other reads: rule 2 always defines them, so per-location coherence holds.
rels   ``po`` program order (rmw read po-before its write); ``rmw`` read -> write of one rmw;
       ``loc`` same location copy; ``int``/``ext`` same/different thread; ``sin`` (X, Y): Y's
       thread lies in X's scope instance; ``incl`` inclusive scopes; ``same_S`` same instance of
       scope S; ``ini`` initial writes -> every other event; ``fin`` every event -> final reads;
       ``nrf`` (W, R) pairs no consistent execution can use (R po-before W; W hidden by a later
       po-earlier write), pruned before the search; ``cohord`` = po | ini | fin, the static
       part of hb that the search's per-location coherence pruning respects.

Initial writes and final reads are scope-inclusive with everything (DESIGN.md).
"""

from __future__ import annotations

import copy
import itertools

from litmus.ir import Test, is_acquire, is_release
from litmus.scopes import SCOPE_RANK, SCOPES
from litmus.scopes import instance as scope_instance     # = Test.instance, one call less

from .barriers import thread_ops
from .barriers import enumerate_schedules
from .errors import OracleError
from .events import REQ_EQ, REQ_NE, RMW_CODES, Event, PreExecution

LEVELS = SCOPES                      # thread wave wg cluster agent sys
WG_RANK = SCOPE_RANK["wg"]


def build(test: Test) -> list[PreExecution]:
    """Every pre-execution of ``test``: one per choice of cas success/failure and per distinct
    barrier schedule (barrier-executes-before, relation ``bxb``)."""
    cas_sites = [(tid, i) for tid, i, ins in test.instructions() if ins.base == "cas"]
    has_barriers = any(ins.is_barrier for _, _, ins in test.instructions())
    sched = enumerate_schedules(test) if has_barriers else None
    out = []
    for choice in itertools.product((True, False), repeat=len(cas_sites)):
        pe = _build_one(test, dict(zip(cas_sites, choice)))
        if sched is None:
            pe.rels["bxb"] = [0] * pe.n
            out.append(pe)
            continue
        pe.ub = list(sched.ub)
        for part in sched.participates or [frozenset()]:
            q = copy.copy(pe)
            q.rels = dict(pe.rels)
            q.rels["bxb"] = _bxb(pe, sched, part)
            out.append(q)
    return out


def _bxb(pe: PreExecution, sched, part) -> list[int]:
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
    return rows


def _scope_rank(test: Test, ins, lds: bool) -> int:
    if ins.access == "vol":
        r = SCOPE_RANK["sys"]
    elif ins.scope is None:
        r = SCOPE_RANK["sys"]
    else:
        r = SCOPE_RANK[ins.scope]
    if lds and ins.is_memory_access:
        r = min(r, WG_RANK) if ins.access in ("atom", "vis", "av", "vol") else WG_RANK
    return r


def _build_one(test: Test, cas_ok: dict) -> PreExecution:
    pe = PreExecution()
    nth = len(test.threads)
    tid_of: list[int] = []
    rank_of: list[int] = []

    # location copies: a global has one; an LDS location one per workgroup that uses it
    loc_by_name = {loc.name: loc for loc in reversed(test.locations)}   # the first one wins
    lds_names = {name for name, loc in loc_by_name.items() if loc.lds}
    loc_ids: dict[tuple, int] = {}

    def loc_id(name: str, tid: int | None) -> int:
        lds = name in lds_names
        key = (name, test.instance(tid, "wg") if lds else None)
        if key not in loc_ids:
            loc_ids[key] = len(loc_ids)
            pe.loc_names.append(name if not lds else f"{name}@wg{len(loc_ids) - 1}")
        return loc_ids[key]

    for loc in test.locations:
        if loc.lds:
            for tid in range(nth):
                if any(name == loc.name for ins in test.threads[tid].code
                       for name in ins.locations()):
                    loc_id(loc.name, tid)
        else:
            loc_id(loc.name, None)

    def add(ev: Event, rank: int, *sets: str) -> int:
        i = pe.add(ev, *sets)
        tid_of.append(ev.thread)
        rank_of.append(rank)
        return i

    # initial writes: sys-scope atomic, store-available
    init_of: dict[int, int] = {}
    for (name, wg), lid in loc_ids.items():
        v = loc_by_name[name].init
        init_of[lid] = add(Event(f"W {name}={v} (init)", -1, lid, value=v), SCOPE_RANK["sys"],
                           "W", "IW", "A", "SA", "CO")

    reg_event: dict[tuple[int, str], int] = {}
    thread_events: list[list[int]] = []
    thread_all: list[list[int]] = []            # po events plus the thread's async events
    asyncs: list[tuple[int, int, int, int]] = []  # (thread, instruction, read, write)
    wait_done: dict[int, int] = {}              # async.wait event -> last completed mark
    pe.barrier_events = {}
    for tid, th in enumerate(test.threads):
        evs: list[int] = []
        extra: list[int] = []
        bops = thread_ops(test, tid)
        bk = 0
        marks: list[int] = []
        for k, ins in enumerate(th.code):
            if ins.is_barrier:
                while bk < len(bops) and bops[bk][3] == k:
                    kind, bid = bops[bk][0], bops[bk][1]
                    lab = {"arrive": f"B.arrive {bid}", "wait": f"B.wait {bid}",
                           "init": f"B.init {bid},{bops[bk][2]}", "join": f"B.join {bid}",
                           "drop": "B.leave"}[kind]
                    i = add(Event(lab, tid, instr=k), SCOPE_RANK["wg"],
                            {"arrive": "BARR", "wait": "BWAIT"}.get(kind, "BOP"))
                    pe.barrier_events[(tid, bk)] = i
                    evs.append(i)
                    bk += 1
                continue
            if ins.base == "async.mark":
                marks.append(k)
                continue
            if ins.base == "async.wait":
                i = add(Event(f"async.wait {ins.args[0]}", tid, instr=k), SCOPE_RANK["thread"],
                        "AWAIT")
                done = marks[:max(len(marks) - ins.args[0], 0)]
                wait_done[i] = done[-1] if done else -1     # position of the last completed mark
                evs.append(i)
                continue
            if ins.base == "async.ld":
                src = loc_id(ins.loc, tid)
                dst = loc_id(ins.lds, tid)
                r = add(Event(f"R.async {ins.loc}", tid, src, instr=k), SCOPE_RANK["sys"], "R")
                w = add(Event(f"W.async {ins.lds}", tid, dst, wsrc=r, wop=RMW_CODES["copy"],
                              instr=k), WG_RANK, "W", "SA", "ASYNC")
                pe.mark(r, "ASYNC")
                extra += [r, w]
                asyncs.append((tid, k, r, w))
                continue
            lds = ins.loc is not None and ins.loc in lds_names
            rank = _scope_rank(test, ins, lds)
            sfx = []
            if ins.order and ins.order != "rlx":
                sfx.append(ins.order)
            if ins.scope and ins.scope != "sys" and ins.base != "ld" and ins.base != "st" \
                    or ins.access in ("atom", "vis", "av") and ins.scope != "sys":
                sfx.append(ins.scope)
            tag = ("." + ".".join(sfx)) if sfx else ""
            if ins.base == "fence":
                i = add(Event(f"F{tag}", tid, instr=k), rank, "F")
                _order_sets(pe, i, ins.order, ins.noav, fence=True)
                evs.append(i)
                continue
            lid = loc_id(ins.loc, tid)
            atomic = ins.access == "atom"
            acc = "" if ins.access in ("plain", None) else "." + ins.access
            if ins.base == "ld":
                i = add(Event(f"R{acc}{tag} {ins.loc}", tid, lid, instr=k), rank, "R")
                if atomic:
                    pe.mark(i, "A")
                    _order_sets(pe, i, ins.order, ins.noav)
                if atomic or ins.access in ("vis", "vol") or lds:
                    pe.mark(i, "LV")
                reg_event[(tid, ins.reg)] = i
                evs.append(i)
            elif ins.base == "st":
                v = ins.args[0]
                i = add(Event(f"W{acc}{tag} {ins.loc}={v}", tid, lid, value=v, instr=k), rank,
                        "W")
                if atomic:
                    pe.mark(i, "A", "CO")
                    _order_sets(pe, i, ins.order, ins.noav)
                if atomic or ins.access in ("av", "vol") or lds:
                    pe.mark(i, "SA")
                evs.append(i)
            else:  # rmw / cas
                if ins.base == "rmw":
                    ok, rorder, label = True, ins.order, f"rmw.{ins.op}{tag}"
                else:
                    ok = cas_ok[(tid, k)]
                    rorder = ins.order if ok else ins.fail_order
                    label = f"cas{tag}" if ok else f"cas.fail{'.' + rorder if rorder != 'rlx' else ''}"
                r = add(Event(f"R {label} {ins.loc}", tid, lid, instr=k), rank, "R", "A", "LV")
                if ins.base == "cas":
                    pe.events[r].req_mode = REQ_EQ if ok else REQ_NE
                    pe.events[r].req_val = ins.args[0]
                _order_sets(pe, r, rorder, ins.noav, reading=True)
                reg_event[(tid, ins.reg)] = r
                evs.append(r)
                if ok:
                    if ins.base == "rmw":
                        ev = Event(f"W {label} {ins.loc}", tid, lid, wsrc=r,
                                   wop=RMW_CODES[ins.op], wopnd=ins.args[0], instr=k)
                    else:
                        ev = Event(f"W {label} {ins.loc}={ins.args[1]}", tid, lid,
                                   value=ins.args[1], instr=k)
                    w = add(ev, rank, "W", "A", "SA", "CO")
                    _order_sets(pe, w, ins.order, ins.noav, writing=True)
                    pe.relate("rmw", r, w)
                    evs.append(w)
        thread_events.append(evs)
        thread_all.append(evs + extra)

    # final-memory reads, one per global location
    finals = []
    for loc in test.globals:
        lid = loc_ids[(loc.name, None)]
        finals.append(add(Event(f"R {loc.name} (final)", -1, lid), SCOPE_RANK["sys"],
                          "R", "FR", "A", "LV"))

    n = pe.n
    for s in ("R", "W", "F", "IW", "FR", "A", "ACQ", "REL", "SC", "MA", "MV", "SA", "LV", "CO",
              "UndefOK", "LDS", "BARR", "BWAIT", "BOP", "ASYNC", "AWAIT"):
        pe.sets.setdefault(s, set())
    for lname in LEVELS:
        pe.sets["lvl_" + lname] = {i for i in range(n) if rank_of[i] >= SCOPE_RANK[lname]}
    for i, ev in enumerate(pe.events):
        if ev.loc_id >= 0 and "@wg" in pe.loc_names[ev.loc_id]:
            pe.mark(i, "LDS")

    # relations as bitmask rows
    allm = (1 << n) - 1
    tmask = [0] * nth
    for t, evs in enumerate(thread_all):
        for e in evs:
            tmask[t] |= 1 << e
    inits, fins = pe.sets["IW"], set(finals)
    special = 0
    for e in list(inits) + finals:
        special |= 1 << e
    po = [0] * n
    for evs in thread_events:
        acc = 0                          # the thread's events after e
        for e in reversed(evs):
            po[e] = acc
            acc |= 1 << e
    pe.rels["po"] = po
    pe.rels["rmw"] = pe.rel_rows("rmw")
    locm: dict[int, int] = {}
    for i, e in enumerate(pe.events):
        if e.loc_id >= 0:
            locm[e.loc_id] = locm.get(e.loc_id, 0) | 1 << i
    pe.rels["loc"] = [locm.get(e.loc_id, 0) for e in pe.events]
    pe.rels["int"] = [tmask[t] if t >= 0 else 0 for t in tid_of]
    pe.rels["ext"] = [(allm & ~tmask[t]) if t >= 0 else (allm & ~(1 << i))
                      for i, t in enumerate(tid_of)]
    # instance tables: per level, per thread
    placements = [th.placement for th in test.threads]
    inst = {lv: [scope_instance(placements[t], t, lv) for t in range(nth)] for lv in LEVELS}
    groups = {}
    for lv in LEVELS:
        g = {}
        for t in range(nth):
            g[inst[lv][t]] = g.get(inst[lv][t], 0) | tmask[t]
        groups[lv] = g
    sin = []
    for i in range(n):
        t = tid_of[i]
        if t < 0:
            sin.append(allm)
        else:
            lv = LEVELS[rank_of[i]]
            sin.append(special | groups[lv][inst[lv][t]])
    pe.rels["sin"] = sin
    # sin^-1, one pass per distinct row (few: one per thread and level, plus the full row)
    by_row: dict[int, int] = {}
    for a_, row in enumerate(sin):
        by_row[row] = by_row.get(row, 0) | 1 << a_
    sint = [0] * n
    for row, who in by_row.items():
        while row:
            low = row & -row
            sint[low.bit_length() - 1] |= who
            row ^= low
    pe.rels["incl"] = [sin[i] & sint[i] for i in range(n)]
    for lv in LEVELS[:-1]:
        pe.rels["same_" + lv] = [allm if t < 0 else special | groups[lv][inst[lv][t]]
                                 for t in tid_of]
    ini_row = allm & ~special_init(pe)
    pe.rels["ini"] = [ini_row if i in inits else 0 for i in range(n)]
    finm = 0
    for f in finals:
        finm |= 1 << f
    pe.rels["fin"] = [0 if i in fins else finm for i in range(n)]
    pe.rels["aso"] = _async_order(pe, thread_events, asyncs, wait_done)

    # observables: registers (last event writing them, or the initial value), then globals
    for tid in range(nth):
        for reg in test.registers(tid):
            key = f"P{tid}:{reg}"
            if (tid, reg) in reg_event:
                pe.observables.append((key, ("event", reg_event[(tid, reg)])))
            else:
                pe.observables.append((key, ("const", test.register_init(tid, reg))))
    for loc, f in zip(test.globals, finals):
        pe.observables.append((loc.name, ("event", f)))

    _static_pruning(pe, thread_events, init_of)
    _undef_ok(pe)
    return pe


def _async_order(pe: PreExecution, thread_events, asyncs, wait_done) -> list[int]:
    """hb edges of async ops (seeds/amdgpu-async-operations.txt): everything po-before the issue
    -> the op's read and write; read -> write; the op -> the first ``async.wait`` at which a mark
    po-after the issue is completed, and everything po-after that wait. Nothing else: an op never
    waited for is ordered only by thread end (``fin``)."""
    rows = [0] * pe.n
    for (tid, k, r, w) in asyncs:
        rows[r] |= 1 << w
        for e in thread_events[tid]:
            ev = pe.events[e]
            if ev.instr < k:
                rows[e] |= (1 << r) | (1 << w)
        after = None
        for e in thread_events[tid]:
            ev = pe.events[e]
            if e in wait_done and ev.instr > k and wait_done[e] > k:
                after = ev.instr
                break
        if after is not None:
            for e in thread_events[tid]:
                if pe.events[e].instr >= after:
                    rows[r] |= 1 << e
                    rows[w] |= 1 << e
    return rows


def special_init(pe: PreExecution) -> int:
    m = 0
    for i in pe.sets["IW"]:
        m |= 1 << i
    return m


def _order_sets(pe, i, order, noav, fence=False, reading=False, writing=False):
    """ACQ/REL/SC and MakeAvailable/MakeVisible membership of one event."""
    ev_reads = reading or (not fence and i in pe.sets.get("R", ()))
    ev_writes = writing or (not fence and i in pe.sets.get("W", ()))
    acq = is_acquire(order) and (fence or ev_reads)
    rel = is_release(order) and (fence or ev_writes)
    if acq:
        pe.mark(i, "ACQ")
        if not noav:
            pe.mark(i, "MV")
    if rel:
        pe.mark(i, "REL")
        if not noav:
            pe.mark(i, "MA")
    if order == "sc":
        pe.mark(i, "SC")


def _static_pruning(pe: PreExecution, thread_events, init_of) -> None:
    """``nrf``: (W, R) pairs excluded by program order alone.

    R po W means R hb W, so R may not see W. W1 po W2 po R (same location) means W1 lo W2 lo R, so
    R may not see W1; and the initial write is lo-before every write, so a read po-after a write
    to its location never sees the initial write. Everything is lo-before a final-memory read.
    """
    nrf = [0] * pe.n
    po = pe.rels["po"]
    events = pe.events
    iw, fr = pe.sets["IW"], pe.sets["FR"]
    by_loc: dict[int, list[int]] = {}
    for w in sorted(pe.sets["W"]):
        by_loc.setdefault(events[w].loc_id, []).append(w)
    for r in pe.sets["R"]:
        same = by_loc.get(events[r].loc_id, ())
        if r in fr:
            earlier = [w for w in same if w not in iw]
        else:
            earlier = [w for w in same if po[w] >> r & 1]
        em = 0
        for w in earlier:
            em |= 1 << w
        por = po[r]
        rb = 1 << r
        for w in same:
            if por >> w & 1 or (earlier and w in iw) or po[w] & em:
                nrf[w] |= rb
    pe.rels["nrf"] = nrf


def _undef_ok(pe: PreExecution) -> None:
    """Reads that may read undef. A read cannot when it is atomic and every write it may ever see
    (the writes to its location not excluded by ``nrf``) is atomic, with pairwise inclusive scopes
    (the read included): rule 2 always applies then (rule 1 never does: the initial write is
    lo-before every access)."""
    nrf = pe.rels["nrf"]
    incl = pe.rels["incl"]
    events = pe.events
    amask = 0
    for a in pe.sets["A"]:
        amask |= 1 << a
    by_loc: dict[int, int] = {}
    for w in pe.sets["W"]:
        lw = events[w].loc_id
        by_loc[lw] = by_loc.get(lw, 0) | 1 << w
    for r in pe.sets["R"]:
        gm = 1 << r                     # the read and every write it may ever see
        ws = by_loc.get(events[r].loc_id, 0)
        while ws:
            low = ws & -ws
            w = low.bit_length() - 1
            if not nrf[w] >> r & 1:
                gm |= low
            ws ^= low
        safe = gm & ~amask == 0
        if safe:
            g = gm
            while g:
                low = g & -g
                if incl[low.bit_length() - 1] & gm != gm:
                    safe = False
                    break
                g ^= low
        if not safe:
            pe.mark(r, "UndefOK")
        else:
            pe.mark(r, "CohR")
    pe.sets.setdefault("CohR", set())
    # an atomic read of an atomic write with inclusive scopes is, if defined, a rule-2 read
    pe.sets["CohA"] = set(pe.sets["A"])
    # the model's 'atomicity-order' check (irreflexive rmw ; co ; rf) holds for every defined read
    pe.sets["CohRmw"] = {r for r, row in enumerate(pe.rels["rmw"]) if row}
    # a final-memory read whose choice passes the checks has no outgoing edge in any relation
    # (everything is hb-before it, so coherence forbids fr out of it): its choice is independent
    pe.sets["Indep"] = set(pe.sets["FR"])
    # the static part of hb that per-location coherence must respect (used to prune the search)
    pe.rels["cohord"] = [p | i | f | a for p, i, f, a in zip(pe.rels["po"], pe.rels["ini"],
                                                             pe.rels["fin"], pe.rels["aso"])]

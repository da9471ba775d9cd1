"""Barrier executions (seeds/amdgpu-execution-synchronization.txt, DESIGN.md "Barriers").

Programs are straight-line, so what barriers do does not depend on memory values: this module
enumerates every schedule of the barrier operations of all waves (a depth-first search over
interleavings with memoized states) and returns, per distinct outcome, *barrier-participates-in*
(arrive/drop -> the wait that depends on it) and the undefined behaviour reached.

Objects: the workgroup barrier ``-1`` (one per workgroup, initialized and joined by every wave
at launch, expected count = waves in the workgroup, dropped when a wave ends), the cluster
barrier ``-3`` (one per cluster, expected count = workgroups in the cluster, at most one wave
per workgroup may arrive in a phase; never dropped) and named barriers ``1..16`` (one per
workgroup; ``bar.init B, K`` / ``bar.join B`` / ``bar.leave``; a wait or leave acts on the
last joined named barrier; not dropped at thread end).

Phases: arrives and drops accumulate in the object's open phase; when the arrive count reaches
the expected count the phase completes. A wait waits on the phase its wave last arrived in (if
not yet waited for), else on the open phase; it blocks until that phase completes. The phase's
arrives and drops barrier-participate-in the wait. A wave's operations are those of its threads
(the lanes): lanes must execute the same barrier operations.

UB (each a reason string): a deadlock (some schedule leaves a wait that can never complete);
a first modification that is not an init; a wait or leave without a join; a drop making the
expected count negative; a non-positive init count; an arrive followed in its thread by a drop
before the arrive's phase completed while some wait depends on that phase; two waves of one
workgroup arriving in one cluster-barrier phase; lanes of one wave disagreeing.
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus.ir import Test

MAX_STATES = 200_000


@dataclass(frozen=True)
class BOp:
    kind: str          # arrive wait init join drop
    bid: int           # barrier id as written (-1, -3, 1..16); drop of a named: 0 = last joined
    arg: int = 0       # init count
    event: int = -1    # index in the wave's op list -> events of every lane (filled by caller)


def thread_ops(test: Test, tid: int) -> list[tuple[str, int, int, int]]:
    """(kind, bid, arg, instruction index) of thread ``tid``'s barrier instructions."""
    out = []
    for k, ins in enumerate(test.threads[tid].code):
        b = ins.base
        if b == "barrier":
            out += [("arrive", -1, 0, k), ("wait", -1, 0, k)]
        elif b == "bar.signal":
            out.append(("arrive", ins.args[0], 0, k))
        elif b == "bar.wait":
            out.append(("wait", ins.args[0], 0, k))
        elif b == "bar.init":
            out.append(("init", ins.args[0], ins.args[1], k))
        elif b == "bar.join":
            out.append(("join", ins.args[0], 0, k))
        elif b == "bar.leave":
            out.append(("drop", 0, 0, k))
    return out


@dataclass
class Schedules:
    """Distinct barrier-participates-in relations (sets of (wave, op index, wave, wait index)),
    the UB reasons reached, and the waves (lists of thread ids)."""

    participates: list[frozenset]
    ub: list[str]
    waves: list[list[int]]
    ops: list[list[tuple]]


def enumerate_schedules(test: Test) -> Schedules:
    nth = len(test.threads)
    wave_of: dict[tuple, list[int]] = {}
    for t in range(nth):
        wave_of.setdefault(test.instance(t, "wave"), []).append(t)
    waves = list(wave_of.values())
    ub: set[str] = set()
    ops = []
    for lanes in waves:
        seqs = [[o[:3] for o in thread_ops(test, t)] for t in lanes]
        if any(s != seqs[0] for s in seqs[1:]):
            ub.add(f"barrier operations differ between lanes P{lanes[0]} and another lane of "
                   f"the same wave")
        ops.append(thread_ops(test, lanes[0]))
    nw = len(waves)
    t0 = [w[0] for w in waves]
    wg_of = [test.instance(t, "wg") for t in t0]
    cl_of = [test.instance(t, "cluster") for t in t0]

    def key(w: int, bid: int):
        if bid == -3:
            return (-3, cl_of[w])
        return (bid, wg_of[w])

    # initial object states: (initialized, expected, arrive, phase, participants, arrived_wgs)
    objs: dict = {}
    for w in range(nw):
        objs[key(w, -1)] = (True, test.waves_in_workgroup(t0[w]), 0, 0, (), ())
        objs[key(w, -3)] = (True, test.workgroups_in_cluster(t0[w]), 0, 0, (), ())
    for w in range(nw):
        for (kind, bid, arg, _) in ops[w]:
            if bid > 0:
                objs.setdefault(key(w, bid), (False, 0, 0, 0, (), ()))

    results: set[frozenset] = set()
    seen: set = set()
    rule_done: set = set()
    # wave state: (pc, ended, last joined named bid or 0, pending {obj: phase} as tuple)
    start_waves = tuple((0, False, 0, ()) for _ in range(nw))
    start_objs = tuple(sorted(objs.items(), key=lambda kv: repr(kv[0])))

    def finish_phase(o, part_acc, phases_done, okey):
        init, exp, arr, ph, parts, wgs = o
        phases_done = phases_done + ((okey, ph, parts),)
        return (init, exp, 0, ph + 1, (), ()), phases_done

    def run(wstate, ostate, phases, waits, late_drops):
        stack = [(wstate, ostate, phases, waits, late_drops)]
        while stack:
            wstate, ostate, phases, waits, late_drops = stack.pop()
            st_key = (wstate, ostate, phases, waits, late_drops)
            if st_key in seen:
                continue
            seen.add(st_key)
            if len(seen) > MAX_STATES:
                ub.add("barrier schedules too many to enumerate")
                return
            od = dict(ostate)
            moved = False
            for w in range(nw):
                pc, ended, named, pend = wstate[w]
                if ended:
                    continue
                if pc == len(ops[w]):
                    # thread end: drop the workgroup barrier
                    k = key(w, -1)
                    o = od[k]
                    init, exp, arr, ph, parts, wgs = o
                    exp -= 1
                    nd = dict(od)
                    newph = phases
                    ld = late_drops + ((k, w, pc),)
                    o2 = (init, exp, arr, ph, parts + ((w, pc),), wgs)
                    if exp < 0:
                        ub.add("workgroup barrier dropped below zero")
                    if arr == exp and (arr > 0 or parts):
                        o2, newph = finish_phase(o2, None, phases, k)
                    nd[k] = o2
                    ws = list(wstate)
                    ws[w] = (pc, True, named, pend)
                    stack.append((tuple(ws), tuple(nd.items()),
                                  newph, waits, ld))
                    moved = True
                    continue
                kind, bid, arg, _ = ops[w][pc]
                nd = od                     # copied on the first change only
                newph, nwaits, ld = phases, waits, late_drops
                nnamed, npd = named, None   # npd: the changed pending phases, if any
                if kind in ("wait", "drop") and bid >= 0 or (kind == "wait" and bid > 0):
                    target = named
                    if target == 0:
                        ub.add(f"P{waves[w][0]}: bar.{'wait' if kind == 'wait' else 'leave'} "
                               f"without a joined named barrier")
                        ws = list(wstate)
                        ws[w] = (len(ops[w]), True, named, pend)
                        stack.append((tuple(ws), ostate, phases, waits, late_drops))
                        moved = True
                        continue
                    k = key(w, target)
                else:
                    k = key(w, bid)
                o = nd.get(k)
                if kind == "join":
                    if bid > 0:
                        nnamed = bid
                elif kind == "init":
                    if arg <= 0:
                        ub.add(f"P{waves[w][0]}: bar.init {bid}, {arg}: the expected count must "
                               f"be positive")
                    init, exp, arr, ph, parts, wgs = o
                    nd = dict(od)
                    nd[k] = (True, arg, 0, ph + (1 if arr else 0), (), ())
                elif kind == "arrive":
                    init, exp, arr, ph, parts, wgs = o
                    if not init:
                        ub.add(f"barrier {bid}: first modification is not an init")
                    if bid == -3 and wg_of[w] in wgs:
                        ub.add("cluster barrier: two waves of one workgroup arrived in one phase")
                    o2 = (init, exp, arr + 1, ph, parts + ((w, pc),), wgs + (wg_of[w],))
                    npd = dict(pend)
                    npd[k] = ph
                    if init and arr + 1 == exp:
                        o2, newph = finish_phase(o2, None, phases, k)
                    nd = dict(od)
                    nd[k] = o2
                elif kind == "drop":
                    init, exp, arr, ph, parts, wgs = o
                    if not init:
                        ub.add(f"barrier {named}: first modification is not an init")
                    exp -= 1
                    if exp < 0:
                        ub.add(f"bar.leave makes the expected count of barrier {named} negative")
                    ld = ld + ((k, w, pc),)
                    o2 = (init, exp, arr, ph, parts + ((w, pc),), wgs)
                    if init and arr == exp:
                        o2, newph = finish_phase(o2, None, phases, k)
                    nd = dict(od)
                    nd[k] = o2
                    nnamed = 0
                elif kind == "wait":
                    init, exp, arr, ph, parts, wgs = o
                    npd = dict(pend)
                    want = npd.get(k, ph)
                    if want >= ph:          # that phase has not completed yet: blocked
                        continue
                    nwaits = waits + (((w, pc), k, want),)
                    npd.pop(k, None)
                ws = list(wstate)
                ws[w] = (pc + 1, False, nnamed,
                         pend if npd is None else tuple(sorted(npd.items(), key=repr)))
                stack.append((tuple(ws), ostate if nd is od else tuple(nd.items()),
                              newph, nwaits, ld))
                moved = True
            if not moved:
                if all(ws[1] for ws in wstate):
                    part = set()
                    done = {(k, ph): parts for (k, ph, parts) in phases}
                    for (wt, k, ph) in waits:
                        for x in done.get((k, ph), ()):
                            part.add((x[0], x[1], wt[0], wt[1]))
                    rk = (frozenset(part), late_drops)
                    if rk not in rule_done:    # the rule's UB depends on nothing else
                        rule_done.add(rk)
                        _arrive_drop_rule(part, late_drops, ops, key, waves, ub)
                    results.add(frozenset(p for p in part if p[1] < len(ops[p[0]])))
                else:
                    stuck = [f"P{waves[w][0]}" for w in range(nw) if not wstate[w][1]]
                    ub.add(f"deadlock: a barrier wait can never complete ({', '.join(stuck)} "
                           f"blocked)")

    run(start_waves, start_objs, (), (), ())
    return Schedules(sorted(results, key=sorted), sorted(ub), waves, ops)


def _arrive_drop_rule(part, drops, ops, key, waves, ub) -> None:
    """The seed's rule for an arrive A and a later drop D of the same object in one thread:
    A participates in no wait, or in some wait W with W barrier-executes-before D.
    Nodes are (wave, op index); a wave's implicit drop at its end has index len(ops[wave])."""
    succ: dict = {}
    for (w, i, w2, j) in part:
        succ.setdefault((w, i), set()).add((w2, j))
    reach_memo: dict = {}

    def reach(nd) -> set:
        # nodes reachable from nd by po (later ops of its wave, end included) and participation;
        # computed only for the waits the rule asks about
        got = reach_memo.get(nd)
        if got is not None:
            return got
        seen, stack = set(), [nd]
        while stack:
            w, i = stack.pop()
            for m in [(w, j) for j in range(i + 1, len(ops[w]) + 1)] + list(succ.get((w, i), ())):
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        reach_memo[nd] = seen
        return seen

    for (k, w, j) in drops:
        for i, (kind, bid, _, _) in enumerate(ops[w]):
            if kind != "arrive" or i >= j or key(w, bid) != k:
                continue
            waits = [(w2, j2) for (a, b, w2, j2) in part if (a, b) == (w, i)]
            if waits and not any((w, j) in reach(wt) for wt in waits):
                ub.add(f"P{waves[w][0]} arrives at barrier {bid} and then drops it, but no wait "
                       f"its arrive completes barrier-executes-before the drop")

"""Barrier executions (seeds/amdgpu-execution-synchronization.txt, DESIGN.md "Barriers").

Programs are straight-line, so what barriers do does not depend on memory values: this module
enumerates every schedule of the barrier operations of all waves and returns, per distinct
outcome, *barrier-participates-in* (arrive/drop -> the wait that depends on it) and the undefined
behaviour reached.

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

How (and why it is fast enough to run on every test): ``_Program`` compiles each wave's
operations once into actions on numbered objects (the named barrier a wait or leave acts on is
fixed by the wave's own joins, so it is resolved statically). The search state is one flat tuple
of small ints: per wave its pc; per object (initialized, expected, arrived, open-phase
participants as a bitmask of nodes, workgroups arrived as a bitmask); per (wave, object it
arrives at) the phase it waits for — ``ABSENT``, ``OPEN`` (the object's open phase) or the
bitmask of the completed phase's participants; and one big int holding, per wait already
passed, the participants of the phase it waited for. Phase numbers and the order of past events
are not in the state: nothing that follows depends on them, so schedules that differ only there
meet in one state. Two reductions keep the state graph small; each moves a step that commutes
with everything any other wave can still do, so every reachable outcome, deadlock and UB reason
is still found: steps that touch no object (a join, a wait whose phase has completed, a wait or
leave without a join) run at once, and so does an object step (init, arrive, leave, the drop at
a wave's end) when no other wave can still modify that object.
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus.ir import Test

#: Bound on distinct search states; past it the UB "barrier schedules too many to enumerate".
MAX_STATES = 200_000

# action codes (first field of each compiled action)
_JOIN, _JUMP, _WAIT, _INIT, _ARRIVE, _DROP, _END, _DONE = range(8)
_OBJECT_OPS = (_INIT, _ARRIVE, _DROP, _END)

# the phase a wave waits for on an object (a pend slot); >= 0: a completed phase's participants
ABSENT, OPEN = -2, -1

# per-object fields in the state, at offset obase[o] + field
_INITED, _EXPECTED, _ARRIVED, _PARTS, _WGS = range(5)

TOO_MANY = "barrier schedules too many to enumerate"
CLUSTER_TWICE = "cluster barrier: two waves of one workgroup arrived in one phase"
WG_BELOW_ZERO = "workgroup barrier dropped below zero"


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
    """Every schedule of ``test``'s barrier operations: distinct participates relations (sorted),
    UB reasons (sorted), waves and their operations."""
    prog = _Program(test)
    ub = set(prog.static_ub)
    finals, deadlocks = _search(prog, ub)
    ub.update(deadlocks)
    results = set()
    for acc in finals:
        part = prog.participates(acc)
        prog.arrive_drop_rule(part, acc, ub)
        results.add(frozenset(p for p in part if p[1] < prog.nops[p[0]]))
    return Schedules(sorted(results, key=sorted), sorted(ub), prog.waves, prog.ops)


class _Program:
    """A test's barrier operations compiled to actions on numbered objects.

    Nodes (the events that can participate or wait) are (wave, op index); index ``len(ops)`` is
    the wave's implicit drop of the workgroup barrier at its end. Node (w, i) is bit
    ``base[w] + i`` of the participant masks."""

    def __init__(self, test: Test):
        wave_of: dict[tuple, list[int]] = {}
        tops = []
        for t in range(len(test.threads)):
            wave_of.setdefault(test.instance(t, "wave"), []).append(t)
            tops.append(thread_ops(test, t))
        self.waves = waves = list(wave_of.values())
        self.static_ub = set()
        self.ops = []
        for lanes in waves:
            seqs = [[o[:3] for o in tops[t]] for t in lanes]
            if any(s != seqs[0] for s in seqs[1:]):
                self.static_ub.add(f"barrier operations differ between lanes P{lanes[0]} and "
                                   f"another lane of the same wave")
            self.ops.append(tops[lanes[0]])
        self.nw = nw = len(waves)
        self.nops = [len(o) for o in self.ops]
        t0 = [w[0] for w in waves]
        wg_of = [test.instance(t, "wg") for t in t0]
        cl_of = [test.instance(t, "cluster") for t in t0]
        self.base = base = []
        nb = 0
        for w in range(nw):
            base.append(nb)
            nb += self.nops[w] + 1
        self.nbits = nb
        # objects, numbered in order of first use; initial (initialized, expected) per object
        self.obj_index: dict[tuple, int] = {}
        self.obj_init: list[tuple[int, int]] = []

        def obj(w: int, bid: int) -> int:
            k = (-3, cl_of[w]) if bid == -3 else (bid, wg_of[w])
            o = self.obj_index.get(k)
            if o is None:
                o = self.obj_index[k] = len(self.obj_init)
                if bid == -1:
                    self.obj_init.append((1, sum(1 for g in wg_of if g == wg_of[w])))
                elif bid == -3:
                    self.obj_init.append((1, len({g for g, c in zip(wg_of, cl_of)
                                                  if c == cl_of[w]})))
                else:
                    self.obj_init.append((0, 0))
            return o

        wg_ids = {g: i for i, g in enumerate(dict.fromkeys(wg_of))}
        # first pass: resolve each op to (code, object, ...) without state offsets
        raw: list[list[tuple]] = []
        self.drops: list[list[tuple[int, int]]] = []   # per wave: (object, op index) of drops
        self.jump_at: list[int] = []
        for w in range(nw):
            acts = []
            drops = []
            named = 0
            jump = -1
            for i, (kind, bid, arg, _) in enumerate(self.ops[w]):
                node = 1 << (base[w] + i)
                if kind in ("wait", "drop") and bid >= 0 or (kind == "wait" and bid > 0):
                    if named == 0:
                        acts.append((_JUMP, f"P{waves[w][0]}: bar."
                                     f"{'wait' if kind == 'wait' else 'leave'} "
                                     f"without a joined named barrier"))
                        if jump < 0:
                            jump = i
                        continue
                    o = obj(w, named)
                    if kind == "wait":
                        acts.append((_WAIT, o))
                    else:
                        acts.append((_DROP, o, node,
                                     f"barrier {named}: first modification is not an init",
                                     f"bar.leave makes the expected count of barrier {named} "
                                     f"negative"))
                        if jump < 0:
                            drops.append((o, i))
                        named = 0
                elif kind == "join":
                    acts.append((_JOIN,))
                    if bid > 0:
                        named = bid
                elif kind == "init":
                    acts.append((_INIT, obj(w, bid), arg,
                                 f"P{waves[w][0]}: bar.init {bid}, {arg}: the expected count "
                                 f"must be positive" if arg <= 0 else None))
                elif kind == "arrive":
                    acts.append((_ARRIVE, obj(w, bid), node,
                                 f"barrier {bid}: first modification is not an init",
                                 1 << wg_ids[wg_of[w]] if bid == -3 else 0))
                else:                                   # wait on -1 or -3
                    acts.append((_WAIT, obj(w, bid)))
            o_end = obj(w, -1)
            acts.append((_END, o_end, 1 << (base[w] + self.nops[w])))
            if jump < 0:
                drops.append((o_end, self.nops[w]))
            acts.append((_DONE,))
            raw.append(acts)
            self.drops.append(drops)
            self.jump_at.append(jump)
        nobj = len(self.obj_init)
        # state layout: pcs | 5 fields per object | pend slots | participants of passed waits
        self.obase = [nw + 5 * o for o in range(nobj)]
        slot_of: dict[tuple[int, int], int] = {}
        self.obj_slots: list[list[int]] = [[] for _ in range(nobj)]
        for w in range(nw):
            for a in raw[w]:
                if a[0] == _ARRIVE and (w, a[1]) not in slot_of:
                    s = slot_of[(w, a[1])] = nw + 5 * nobj + len(slot_of)
                    self.obj_slots[a[1]].append(s)
        self.acc = nw + 5 * nobj + len(slot_of)
        start = [0] * nw
        for (inited, expected) in self.obj_init:
            start += [inited, expected, 0, 0, 0]
        start += [ABSENT] * len(slot_of) + [0]
        self.start = start
        # final pass: waits get their pend slot (-1: the wave never arrives there, so the wait
        # blocks forever) and the shift of their participants in the accumulator
        self.wait_nodes: list[tuple[int, int]] = []
        self.acts: list[list[tuple]] = []
        for w in range(nw):
            acts = []
            for i, a in enumerate(raw[w]):
                if a[0] == _WAIT:
                    a = (_WAIT, a[1], slot_of.get((w, a[1]), -1), len(self.wait_nodes) * nb)
                    self.wait_nodes.append((w, i))
                elif a[0] == _ARRIVE:
                    a = a + (slot_of[(w, a[1])],)
                acts.append(a)
            self.acts.append(acts)
        self.done_pc = [n + 1 for n in self.nops]
        # touch[w][pc]: objects that wave w can still modify from pc on (a jump ends the wave)
        self.touch = []
        for w in range(nw):
            acts = self.acts[w]
            t = [0] * len(acts)
            for pc in range(len(acts) - 2, -1, -1):
                a = acts[pc]
                if a[0] == _JUMP:
                    t[pc] = 0
                elif a[0] in _OBJECT_OPS:
                    t[pc] = t[pc + 1] | (1 << a[1])
                else:
                    t[pc] = t[pc + 1]
            self.touch.append(t)

    # -- outcomes ------------------------------------------------------------------------------
    def wait_masks(self, acc: int) -> list[int]:
        """Participants (node bitmask) of each wait's phase, in ``wait_nodes`` order."""
        nb = self.nbits
        full = (1 << nb) - 1
        return [(acc >> (q * nb)) & full for q in range(len(self.wait_nodes))]

    def node(self, bit: int) -> tuple[int, int]:
        w = 0
        while w + 1 < self.nw and self.base[w + 1] <= bit:
            w += 1
        return (w, bit - self.base[w])

    def participates(self, acc: int) -> set:
        """barrier-participates-in of a complete schedule: (w, i, w2, j) per participant (w, i)
        of the phase that wait (w2, j) waited for (end-of-wave drops included)."""
        part = set()
        for (w2, j), m in zip(self.wait_nodes, self.wait_masks(acc)):
            while m:
                low = m & -m
                part.add(self.node(low.bit_length() - 1) + (w2, j))
                m ^= low
        return part

    def arrive_drop_rule(self, part, acc: int, ub: set) -> None:
        """The seed's rule for an arrive A and a later drop D of the same object in one thread:
        A participates in no wait, or in some wait W with W barrier-executes-before D
        (barrier-executes-before = (po | participates)+, po including the wave's end)."""
        masks = None
        for w in range(self.nw):
            for (o, j) in self.drops[w]:
                for i in range(j):
                    a = self.acts[w][i]
                    if a[0] != _ARRIVE or a[1] != o:
                        continue
                    if masks is None:
                        masks = self.wait_masks(acc)
                    xbit = a[2]
                    waits = [q for q, m in enumerate(masks) if m & xbit]
                    target = 1 << (self.base[w] + j)
                    if waits and not any(self._reach(q, masks) & target for q in waits):
                        bid = self.ops[w][i][1]
                        ub.add(f"P{self.waves[w][0]} arrives at barrier {bid} and then drops "
                               f"it, but no wait its arrive completes barrier-executes-before "
                               f"the drop")

    def _after(self, w: int, i: int) -> int:
        """Nodes po-after (w, i): the wave's later ops and its end."""
        b = self.base[w]
        return ((1 << (b + self.nops[w] + 1)) - 1) & ~((1 << (b + i + 1)) - 1)

    def _reach(self, q: int, masks: list[int]) -> int:
        """Nodes reachable from wait ``q`` by po and participates edges (bitmask)."""
        r = self._after(*self.wait_nodes[q])
        changed = True
        while changed:
            changed = False
            for q2, m in enumerate(masks):
                w2, j2 = self.wait_nodes[q2]
                bit = 1 << (self.base[w2] + j2)
                if m & r and not r & bit:
                    r |= bit | self._after(w2, j2)
                    changed = True
        return r


def _search(prog: _Program, ub: set) -> tuple[set[int], set[str]]:
    """Depth-first search over reduced schedules. Returns the participant accumulators of the
    schedules in which every wave ended, and the deadlock reasons; adds UB reasons to ``ub``."""
    nw = prog.nw
    acts, touch, done_pc = prog.acts, prog.touch, prog.done_pc
    obase, obj_slots, acc_i = prog.obase, prog.obj_slots, prog.acc
    waves = prog.waves

    def finish(L, o):
        # the open phase of object o completes: waves waiting for it now wait for its parts
        b = obase[o]
        parts = L[b + _PARTS]
        for s in obj_slots[o]:
            if L[s] == OPEN:
                L[s] = parts
        L[b + _ARRIVED] = 0
        L[b + _PARTS] = 0
        L[b + _WGS] = 0

    def step(L, w, a):
        # one object step (init, arrive, leave, end-of-wave drop) of wave w, in place
        code, o = a[0], a[1]
        b = obase[o]
        if code == _ARRIVE:
            inited = L[b]
            if not inited:
                ub.add(a[3])
            wgbit = a[4]
            if wgbit:
                if L[b + _WGS] & wgbit:
                    ub.add(CLUSTER_TWICE)
                L[b + _WGS] |= wgbit
            arr = L[b + _ARRIVED] + 1
            L[b + _ARRIVED] = arr
            L[b + _PARTS] |= a[2]
            L[a[5]] = OPEN
            L[w] += 1
            if inited and arr == L[b + _EXPECTED]:
                finish(L, o)
        elif code == _END:
            exp = L[b + _EXPECTED] - 1
            L[b + _EXPECTED] = exp
            if exp < 0:
                ub.add(WG_BELOW_ZERO)
            old = L[b + _PARTS]
            L[b + _PARTS] = old | a[2]
            L[w] += 1
            arr = L[b + _ARRIVED]
            if arr == exp and (arr > 0 or old):
                finish(L, o)
        elif code == _DROP:
            inited = L[b]
            if not inited:
                ub.add(a[3])
            exp = L[b + _EXPECTED] - 1
            L[b + _EXPECTED] = exp
            if exp < 0:
                ub.add(a[4])
            L[b + _PARTS] |= a[2]
            L[w] += 1
            if inited and L[b + _ARRIVED] == exp:
                finish(L, o)
        else:                                   # _INIT
            if a[3] is not None:
                ub.add(a[3])
            if L[b + _ARRIVED]:                 # the open phase is abandoned: its waits pass
                for s in obj_slots[o]:
                    if L[s] == OPEN:
                        L[s] = 0
            L[b:b + 5] = [1, a[2], 0, 0, 0]
            L[w] += 1

    def settle(L):
        # run every step that commutes with all the others, until none is left
        progress = True
        while progress:
            progress = False
            for w in range(nw):
                aw = acts[w]
                while True:
                    pc = L[w]
                    a = aw[pc]
                    code = a[0]
                    if code == _JOIN:
                        L[w] = pc + 1
                    elif code == _WAIT:
                        s = a[2]
                        if s < 0 or L[s] < 0:
                            break
                        L[acc_i] |= L[s] << a[3]
                        L[s] = ABSENT
                        L[w] = pc + 1
                    elif code == _DONE:
                        break
                    elif code == _JUMP:
                        ub.add(a[1])
                        L[w] = done_pc[w]
                    else:
                        bit = 1 << a[1]
                        for w2 in range(nw):
                            if w2 != w and touch[w2][L[w2]] & bit:
                                break
                        else:
                            step(L, w, a)
                            progress = True
                            continue
                        break

    start = list(prog.start)
    settle(start)
    key = tuple(start)
    seen = {key}
    stack = [key]
    finals: set[int] = set()
    deadlocks: set[str] = set()
    while stack:
        S = stack.pop()
        moved = False
        for w in range(nw):
            a = acts[w][S[w]]
            if a[0] not in _OBJECT_OPS:
                continue
            moved = True
            L = list(S)
            step(L, w, a)
            settle(L)
            k = tuple(L)
            if k not in seen:
                seen.add(k)
                if len(seen) > MAX_STATES:
                    ub.add(TOO_MANY)
                    return finals, deadlocks
                stack.append(k)
        if not moved:
            stuck = [f"P{waves[w][0]}" for w in range(nw) if S[w] != done_pc[w]]
            if stuck:
                deadlocks.add(f"deadlock: a barrier wait can never complete "
                              f"({', '.join(stuck)} blocked)")
            else:
                finals.add(S[acc_i])
    return finals, deadlocks

"""Barrier executions (seeds/amdgpu-execution-synchronization.txt, DESIGN.md "Barriers").

Programs are straight-line, so what barriers do does not depend on memory values: this module
enumerates every schedule of the barrier operations of all waves and returns, per distinct
outcome, *barrier-participates-in* (arrive/drop -> the wait that depends on it) and the undefined
behaviour reached.

Objects: the workgroup barrier ``-1`` (one per workgroup, initialized and joined by every wave
at launch, expected count = waves in the workgroup, dropped when a wave ends), the cluster
barrier ``-3`` (one per cluster, initialized and joined at launch, expected count = workgroups
in the cluster, at most one wave per workgroup may arrive in a phase; the seed's table: "When a
thread ends, it automatically *drops* this barrier object if it had previously *joined* it",
and since the count counts workgroups the drop is counted once per workgroup, when its last
wave ends) and named barriers ``1..16`` (one per
workgroup; ``bar.init B, K`` / ``bar.join B`` / ``bar.leave``; a wait or leave acts on the
last joined named barrier; not dropped at thread end).

Phases: arrives and drops accumulate in the object's open phase; when the arrive count reaches
the expected count the phase completes. A wait waits on the phase its wave last arrived in (if
not yet waited for), else on the open phase; it blocks until that phase completes. The phase's
arrives and drops barrier-participate-in the wait. A wave's operations are those of its threads
(the lanes): lanes must execute the same barrier operations.

Which open phase (a wait with no arrive of its own wave pending on the object): the phase that is
open when the wait executes, and the wait executes when its wave reaches it, i.e. at once when
the wave's preceding barrier operation is done (an object step taken, or a wait completed; at
launch for a wave whose first barrier operation is the wait). All arrives and drops of that
phase participate in the wait, those before the wait executed included; a phase that completed
before the wait executed is never its phase. An init while such a wait waits on a phase with no
arrive yet abandons nothing: the wait waits for the phase the init opens (an init abandoning a
phase that has arrives lets all of that phase's waits pass, as before).

Why this reading: the seed only constrains barrier-participates-in (same object, arrive/drop,
not participating in another wait of W's thread, W not thread-barrier-order-before X, one
contiguous interval of barrier-modification-order from arrive count zero to completion), and
says itself (footnote [0]) that its definition "is non-deterministic and will be improved in the
future": a wait with no arrive of its own may take any phase the constraints leave, including
one that completed long before the wave got there. We need one deterministic phase per schedule.
The time a wave spends between two barrier operations is not modelled (only barrier operations
are scheduled), so the wait takes the phase open when its wave's previous barrier operation is
done. Letting the wave arrive at its wait arbitrarily late instead would make every wait without
an arrive of its own undefined: there is always a schedule in which the other waves complete
that phase first and nobody is left to complete the next. That contradicts the seed's cluster
barrier ("only one wave per workgroup may arrive at the barrier on behalf of its entire
workgroup. However, any wave within the workgroup cluster can then *wait* on this barrier
object") and the idiom HIP uses for it (``s_barrier_signal_isfirst -1; s_barrier_wait -1;`` the
first wave ``s_barrier_signal -3``; every wave ``s_barrier_wait -3``), which this reading makes
defined: the other waves' cluster wait executes when their workgroup-barrier wait completes,
before the first wave's cluster arrive.

The seed's join rule for waits ("There is a barrier join J such that J -> W in
barrier-joined-before, and J must barrier-executes-before at least one operation X that
barrier-participates-in W; otherwise, the behavior is undefined") is checked per complete
schedule (:meth:`_Program.join_rule`): J is the join of the named barrier the wait acts on (the
last named join before it), or the thread's join at launch for -1 and -3; barrier-executes-before
is (po | participates)+ over barrier operations. A wave that waits on -3 while another wave of
its workgroup does the arriving is undefined unless something (a workgroup barrier) orders its
join before that arrive.

UB (each a reason string): a deadlock (some schedule leaves a wait that can never complete);
a first modification that is not an init; a wait or leave without a join; a wait whose join
barrier-executes-before no operation participating in it; a drop making the
expected count negative (workgroup, cluster or named barrier); a non-positive init count; an arrive followed in its thread by a drop
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
a wave's end) when no other wave can still modify that object. A wait with no arrive of its wave
pending is compiled as a bind (the pend slot becomes ``OPEN``) followed by the wait. The bind runs
at once (that is the reading above) but reads which phase is open, so it does not commute with
other waves' steps on its object: until a wave has bound, the object counts as one the wave can
still touch, and other waves' steps on it are then scheduled steps, not taken at once; likewise
a step is taken at once only if no other wave can touch the objects of the binds that follow it
at once (its own wave's next binds, and those right after a wait its step may release).
Programs in which every wait has an arrive of its own wave pending compile without binds and are
searched exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from litmus.ir import Test
from litmus.scopes import instance as scope_instance

#: Bound on distinct search states; past it the UB "barrier schedules too many to enumerate".
MAX_STATES = 200_000

# action codes (first field of each compiled action); _INIT.._END are the object steps that
# are scheduled; _BIND (a wait with no arrive of its wave pending takes the open phase) is
# always taken at once, but counts as touching its object
_JOIN, _JUMP, _WAIT, _INIT, _ARRIVE, _DROP, _END, _DONE, _BIND = range(9)

# the phase a wave waits for on an object (a pend slot); >= 0: a completed phase's participants
ABSENT, OPEN = -2, -1

# per-object fields in the state, at offset obase[o] + field
_INITED, _EXPECTED, _ARRIVED, _PARTS, _WGS = range(5)

TOO_MANY = "barrier schedules too many to enumerate"
CLUSTER_TWICE = "cluster barrier: two waves of one workgroup arrived in one phase"
WG_BELOW_ZERO = "workgroup barrier dropped below zero"
CLUSTER_BELOW_ZERO = "cluster barrier dropped below zero"


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
        masks = prog.wait_masks(acc)
        prog.arrive_drop_rule(masks, ub, acc)
        prog.join_rule(masks, ub)
        results.add(prog.participates(masks))
    return Schedules(sorted(results, key=sorted), sorted(ub), prog.waves, prog.ops)


class _Program:
    """A test's barrier operations compiled to actions on numbered objects.

    Nodes (the events that can participate or wait) are (wave, op index); index ``len(ops)`` is
    the wave's implicit drop of the workgroup barrier at its end. Node (w, i) is bit
    ``base[w] + i`` of the participant masks.

    Actions (tuples, by code): ``(_JOIN,)``; ``(_JUMP, reason)`` a wait or leave without a join
    (UB, the wave stops); ``(_WAIT, object, pend slot, accumulator shift)``; ``(_INIT, object,
    count, thread, barrier id)``; ``(_ARRIVE, object, node bit, pend slot or -1, barrier id,
    workgroup bit or 0)``; ``(_DROP, object, node bit, named barrier id)``; ``(_END, object,
    node bit, cluster object or -1, its node bit, the other waves of the workgroup)`` (the
    cluster barrier is dropped when no other wave of the workgroup is still running); ``(_DONE,)``; ``(_BIND, object, pend slot, 0)`` right before the ``_WAIT`` of
    a wait with no arrive of its wave pending on its object. Object steps (_INIT.._END) end
    with one more field: the objects bitmask of the take-it-at-once test (a bind's 0: always
    taken at once). State layout: pcs | accumulator | pend slots | 5 fields per object."""

    def __init__(self, test: Test):
        wave_of: dict[tuple, list[int]] = {}
        tops = []
        for t, th in enumerate(test.threads):
            wave_of.setdefault(scope_instance(th.placement, t, "wave"), []).append(t)
            tops.append(thread_ops(test, t))
        self.waves = waves = list(wave_of.values())
        self.static_ub = set()
        self.ops = ops = []
        for lanes in waves:
            first = tops[lanes[0]]
            if len(lanes) > 1:
                seq = [o[:3] for o in first]
                if any([o[:3] for o in tops[t]] != seq for t in lanes[1:]):
                    self.static_ub.add(f"barrier operations differ between lanes P{lanes[0]} "
                                       f"and another lane of the same wave")
            ops.append(first)
        self.nw = nw = len(waves)
        self.nops = nops = [len(o) for o in ops]
        pls = [test.threads[w[0]].placement for w in waves]
        wg_of = [scope_instance(pl, w[0], "wg") for pl, w in zip(pls, waves)]
        cl_of = [scope_instance(pl, w[0], "cluster") for pl, w in zip(pls, waves)]
        wg_ids = {g: i for i, g in enumerate(dict.fromkeys(wg_of))}
        self.base = base = []
        nb = 0
        for n in nops:
            base.append(nb)
            nb += n + 1
        self.nbits = nb
        obj_index: dict[tuple, int] = {}
        obj_init: list[tuple[int, int]] = []      # initial (initialized, expected) per object
        slot_of: dict[tuple[int, int], int] = {}  # (wave, object) -> pend slot index
        first_slot = nw + 1
        self.acc = nw

        def obj(w: int, bid: int) -> int:
            k = (-3, cl_of[w]) if bid == -3 else (bid, wg_of[w])
            o = obj_index.get(k)
            if o is None:
                o = obj_index[k] = len(obj_init)
                if bid == -1:
                    obj_init.append((1, wg_of.count(wg_of[w])))
                elif bid == -3:
                    obj_init.append((1, len({g for g, c in zip(wg_of, cl_of) if c == cl_of[w]})))
                else:
                    obj_init.append((0, 0))
            return o

        def slot(w: int, o: int) -> int:
            s = slot_of.get((w, o))
            if s is None:
                s = slot_of[(w, o)] = first_slot + len(slot_of)
            return s

        cl_used = {cl_of[w] for w in range(nw) if any(op[1] == -3 for op in ops[w])}
        mates = [tuple(v for v in range(nw) if v != w and wg_of[v] == wg_of[w])
                 for w in range(nw)]
        self.acts = all_acts = []
        self.wait_nodes: list[tuple[int, int]] = []     # (wave, op index) per wait, in order
        # per wait: (op index of its join J, -1 for the join at launch; the barrier it waits on;
        # whether the wave reaches it, i.e. no jump before it)
        self.wait_join: list[tuple[int, int, bool]] = []
        self.rule_pairs: list[tuple[int, int, int, int, bool]] = []
        has_binds = False
        for w in range(nw):
            acts = []
            drops = []                     # (object, op index) of the drops the wave executes
            named = 0
            named_at = -1                  # op index of the join of the named barrier joined
            jumped = False
            pending: set[int] = set()      # objects with an arrive of the wave not waited for
            bw = base[w]
            for i, (kind, bid, arg, _) in enumerate(ops[w]):
                if kind in ("wait", "drop") and bid >= 0 or (kind == "wait" and bid > 0):
                    if named == 0:
                        acts.append((_JUMP, f"P{waves[w][0]}: bar."
                                            f"{'wait' if kind == 'wait' else 'leave'} "
                                            f"without a joined named barrier"))
                        jumped = True
                        continue
                    o = obj(w, named)
                    if kind == "wait":
                        acts.append((_WAIT, o, slot(w, o), len(self.wait_nodes) * nb))
                        self.wait_nodes.append((w, i))
                        self.wait_join.append((named_at, named, not jumped))
                        if o not in pending:
                            has_binds = True
                        pending.discard(o)
                    else:
                        acts.append((_DROP, o, 1 << (bw + i), named))
                        if not jumped:
                            drops.append((o, i, False))
                        named = 0
                elif kind == "join":
                    acts.append((_JOIN,))
                    if bid > 0:
                        named = bid
                        named_at = i
                elif kind == "init":
                    acts.append((_INIT, obj(w, bid), arg, waves[w][0], bid))
                elif kind == "arrive":
                    o = obj(w, bid)
                    acts.append((_ARRIVE, o, 1 << (bw + i), -1, bid,
                                 1 << wg_ids[wg_of[w]] if bid == -3 else 0))
                    pending.add(o)
                else:                                   # wait on -1 or -3
                    o = obj(w, bid)
                    acts.append((_WAIT, o, slot(w, o), len(self.wait_nodes) * nb))
                    self.wait_nodes.append((w, i))
                    self.wait_join.append((-1, bid, not jumped))    # joined at launch
                    if o not in pending:
                        has_binds = True
                    pending.discard(o)
            o_end = obj(w, -1)
            end_bit = 1 << (bw + nops[w])
            # the cluster barrier: dropped by the workgroup's last wave to end (its expected
            # count counts workgroups), if some wave of the cluster uses it
            o_cl = obj(w, -3) if cl_of[w] in cl_used else -1
            acts.append((_END, o_end, end_bit, o_cl, end_bit if o_cl >= 0 else 0, mates[w]))
            acts.append((_DONE,))
            if not jumped:
                drops.append((o_end, nops[w], False))
                if o_cl >= 0:
                    drops.append((o_cl, nops[w], True))
            all_acts.append(acts)
            # the seed's arrive/drop rule applies to each arrive po-before a drop of its object
            # (the cluster barrier's end-of-wave drop only where this wave was the last to end)
            for (o, j, last) in drops:
                for i in range(j):
                    a = acts[i]
                    if a[0] == _ARRIVE and a[1] == o:
                        self.rule_pairs.append((a[2], 1 << (bw + j), w, a[4], last))
        # the accumulator holds, past the participants of every wait, one bit per wave: its end
        # dropped the cluster barrier (it was the last wave of its workgroup to end)
        self.drop_shift = len(self.wait_nodes) * nb
        # a wait with no arrive of its wave pending on its object (none since the wave's previous
        # wait on it) takes the open phase: a _BIND before it. Inserted after rule_pairs, which
        # index the actions by op index.
        self.has_binds = has_binds
        if has_binds:
            for w, acts in enumerate(all_acts):
                pending: set[int] = set()
                out = []
                for a in acts:
                    if a[0] == _ARRIVE:
                        pending.add(a[1])
                    elif a[0] == _WAIT:
                        if a[1] not in pending:
                            out.append((_BIND, a[1], a[2], 0))
                        pending.discard(a[1])
                    out.append(a)
                all_acts[w] = out
        nobj = len(obj_init)
        obase0 = first_slot + len(slot_of)
        self.obase = [obase0 + 5 * o for o in range(nobj)]
        self.obj_slots: list[list[int]] = [[] for _ in range(nobj)]
        for (w, o), s in slot_of.items():
            self.obj_slots[o].append(s)
        start = [0] * nw + [0] + [ABSENT] * len(slot_of)
        for (inited, expected) in obj_init:
            start += [inited, expected, 0, 0, 0]
        self.start = start
        self.done_pc = [len(acts) - 1 for acts in all_acts]
        # touch[w][pc]: objects that wave w can still modify from pc on (a jump ends the wave).
        # The same backward pass drops what no wait can observe, so that more states meet: an
        # arrive followed by no wait of its wave on its object leaves the pend slot alone, and
        # the participants of an object nobody waits on are kept only as "some" (bit 1; the
        # end-of-wave drop asks whether the phase has any participant).
        waited = {a[1] for acts in all_acts for a in acts if a[0] == _WAIT}
        # Each object step gets a last field, the mask for the take-it-at-once test: its object,
        # plus the objects of the binds that follow it at once (a bind reads the open phase):
        # its own wave's binds up to its next object step, and the binds right after any wave's
        # wait on its object (the step may complete the phase that wait waits for). Without
        # binds it is just the object's bit.
        self.touch = touch = []
        trig = [0] * nobj                  # per object: binds right after a wait on it
        for w, acts in enumerate(all_acts):
            t = [0] * len(acts)
            later: set[int] = set()        # objects the wave still waits on after pc
            chain = 0                      # objects of the binds reached at once from pc + 1
            for pc in range(len(acts) - 2, -1, -1):
                a = acts[pc]
                code = a[0]
                if code == _JUMP:
                    later = set()
                    chain = 0
                elif code == _WAIT:
                    later.add(a[1])
                    t[pc] = t[pc + 1]
                    trig[a[1]] |= chain
                elif code == _BIND:
                    t[pc] = t[pc + 1] | (1 << a[1])
                    chain |= 1 << a[1]
                elif code >= _INIT:
                    o = a[1]
                    objs = 1 << o
                    if code == _END and a[3] >= 0:
                        objs |= 1 << a[3]
                    t[pc] = t[pc + 1] | objs
                    mask = objs | chain
                    chain = 0
                    if code == _ARRIVE:
                        acts[pc] = (_ARRIVE, o, a[2] if o in waited else 1,
                                    slot_of[(w, o)] if o in later else -1, a[4], a[5], mask)
                    elif code == _END:
                        acts[pc] = (_END, o, a[2] if o in waited else 1, a[3],
                                    a[4] if a[3] in waited else 1, a[5], mask)
                    elif code != _INIT and o not in waited:
                        acts[pc] = (code, o, 1) + a[3:] + (mask,)
                    else:
                        acts[pc] = a + (mask,)
                else:
                    t[pc] = t[pc + 1]
            touch.append(t)
        if any(trig):
            for acts in all_acts:
                for pc, a in enumerate(acts):
                    if _INIT <= a[0] <= _END:
                        extra = trig[a[1]] | (trig[a[3]] if a[0] == _END and a[3] >= 0 else 0)
                        if extra:
                            acts[pc] = a[:-1] + (a[-1] | extra,)
        # per wait: its node bit and the nodes po-after it (later ops of its wave, its end)
        self.wait_bits = []
        self.wait_after = []
        for (w, j) in self.wait_nodes:
            b = base[w]
            self.wait_bits.append(1 << (b + j))
            self.wait_after.append(((1 << (b + nops[w] + 1)) - 1) & ~((1 << (b + j + 1)) - 1))
        self.node_of_bit = [(w, i) for w in range(nw) for i in range(nops[w] + 1)]
        self.end_bits = sum(1 << (base[w] + nops[w]) for w in range(nw))

    # -- outcomes ------------------------------------------------------------------------------
    def wait_masks(self, acc: int) -> list[int]:
        """Participants (node bitmask) of each wait's phase, in ``wait_nodes`` order."""
        nb = self.nbits
        full = (1 << nb) - 1
        return [(acc >> (q * nb)) & full for q in range(len(self.wait_nodes))]

    def participates(self, masks: list[int]) -> frozenset:
        """barrier-participates-in of a complete schedule: (w, i, w2, j) per participant (w, i)
        of the phase that wait (w2, j) waited for; end-of-wave drops are left out."""
        part = []
        node_of_bit = self.node_of_bit
        keep = ~self.end_bits
        for wn, m in zip(self.wait_nodes, masks):
            m &= keep
            while m:
                low = m & -m
                part.append(node_of_bit[low.bit_length() - 1] + wn)
                m ^= low
        return frozenset(part)

    def arrive_drop_rule(self, masks: list[int], ub: set, acc: int = 0) -> None:
        """The seed's rule for an arrive A and a later drop D of the same object in one thread:
        A participates in no wait, or in some wait W with W barrier-executes-before D
        (barrier-executes-before = (po | participates)+, po including the wave's end). The end
        of a wave drops the cluster barrier only in the schedules where it is the last of its
        workgroup to end (``acc``'s dropper bits)."""
        for (xbit, target, w, bid, last) in self.rule_pairs:
            if last and not acc >> (self.drop_shift + w) & 1:
                continue
            waits = [q for q, m in enumerate(masks) if m & xbit]
            if waits and not any(self._reach(q, masks) & target for q in waits):
                ub.add(f"P{self.waves[w][0]} arrives at barrier {bid} and then drops it, but "
                       f"no wait its arrive completes barrier-executes-before the drop")

    def join_rule(self, masks: list[int], ub: set) -> None:
        """The seed's rule for every barrier wait W: "There is a barrier join J such that
        J -> W in barrier-joined-before, and J must barrier-executes-before at least one
        operation X that barrier-participates-in W; otherwise, the behavior is undefined."
        J is the join of the named barrier W waits on (the last one joined before it), or for
        the workgroup and cluster barriers the thread's join at launch (before all of its
        operations). barrier-executes-before = (po | participates)+ over barrier operations."""
        base, nops = self.base, self.nops
        for q, ((w, _), (ji, bid, live)) in enumerate(zip(self.wait_nodes, self.wait_join)):
            if not live:
                continue
            b = base[w]
            start = ((1 << (b + nops[w] + 1)) - 1) & ~((1 << (b + ji + 1)) - 1)
            if not self._reach_from(start, masks) & masks[q]:
                ub.add(f"P{self.waves[w][0]}: the wait on barrier {bid} has no join that "
                       f"barrier-executes-before an operation participating in it")

    def _reach(self, q: int, masks: list[int]) -> int:
        """Nodes reachable from wait ``q`` by po and participates edges (bitmask)."""
        return self._reach_from(self.wait_after[q], masks)

    def _reach_from(self, r: int, masks: list[int]) -> int:
        """Nodes reachable from the nodes ``r`` (included) by po and participates edges."""
        bits, after = self.wait_bits, self.wait_after
        changed = True
        while changed:
            changed = False
            for q2, m in enumerate(masks):
                if m & r and not r & bits[q2]:
                    r |= bits[q2] | after[q2]
                    changed = True
        return r


def _search(prog: _Program, ub: set) -> tuple[set[int], set[str]]:
    """Depth-first search over reduced schedules. Returns the participant accumulators of the
    schedules in which every wave ended, and the deadlock reasons; adds UB reasons to ``ub``."""
    nw = prog.nw
    acts, touch, done_pc = prog.acts, prog.touch, prog.done_pc
    obase, obj_slots, acc_i = prog.obase, prog.obj_slots, prog.acc
    waves = prog.waves
    drop_shift = prog.drop_shift

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

    def end_drop(L, o, bit, below_zero):
        # the automatic drop of object o at a wave's end (node bit ``bit``); a phase with only
        # drops completes when the expected count reaches the arrive count
        b = obase[o]
        exp = L[b + _EXPECTED] - 1
        L[b + _EXPECTED] = exp
        if exp < 0:
            ub.add(below_zero)
        old = L[b + _PARTS]
        L[b + _PARTS] = old | bit
        arr = L[b + _ARRIVED]
        if arr == exp and (arr > 0 or old):
            finish(L, o)

    def step(L, w, a):
        # one object step (init, arrive, leave, end-of-wave drop) of wave w, in place
        code, o = a[0], a[1]
        b = obase[o]
        if code == _ARRIVE:
            inited = L[b]
            if not inited:
                ub.add(f"barrier {a[4]}: first modification is not an init")
            wgbit = a[5]
            if wgbit:
                if L[b + _WGS] & wgbit:
                    ub.add(CLUSTER_TWICE)
                L[b + _WGS] |= wgbit
            arr = L[b + _ARRIVED] + 1
            L[b + _ARRIVED] = arr
            L[b + _PARTS] |= a[2]
            if a[3] >= 0:
                L[a[3]] = OPEN
            L[w] += 1
            if inited and arr == L[b + _EXPECTED]:
                finish(L, o)
        elif code == _END:
            end_drop(L, o, a[2], WG_BELOW_ZERO)
            if a[3] >= 0 and all(L[v] == done_pc[v] for v in a[5]):
                # the last wave of its workgroup ends: the workgroup drops the cluster barrier
                end_drop(L, a[3], a[4], CLUSTER_BELOW_ZERO)
                L[acc_i] |= 1 << (drop_shift + w)
            L[w] += 1
        elif code == _DROP:
            inited = L[b]
            if not inited:
                ub.add(f"barrier {a[3]}: first modification is not an init")
            exp = L[b + _EXPECTED] - 1
            L[b + _EXPECTED] = exp
            if exp < 0:
                ub.add(f"bar.leave makes the expected count of barrier {a[3]} negative")
            L[b + _PARTS] |= a[2]
            L[w] += 1
            if inited and L[b + _ARRIVED] == exp:
                finish(L, o)
        elif code == _BIND:                     # taken at once, never scheduled
            L[a[2]] = OPEN
            L[w] += 1
        else:                                   # _INIT
            if a[2] <= 0:
                ub.add(f"P{a[3]}: bar.init {a[4]}, {a[2]}: the expected count must be positive")
            if L[b + _ARRIVED]:                 # the open phase is abandoned: its waits pass
                for s in obj_slots[o]:
                    if L[s] == OPEN:
                        L[s] = 0
            L[b:b + 5] = [1, a[2], 0, 0, 0]
            L[w] += 1

    def settle(L):
        # run every step that commutes with all the others, until none is left. ``shared``:
        # the objects that two or more waves can still modify, taken at the start of a pass;
        # waves only advance, so during the pass it can only be too large (a step is deferred
        # to the next pass, never taken wrongly)
        progress = True
        while progress:
            progress = False
            seen = shared = 0
            for w in range(nw):
                t = touch[w][L[w]]
                shared |= seen & t
                seen |= t
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
                        if L[s] < 0:
                            break
                        L[acc_i] |= L[s] << a[3]
                        L[s] = ABSENT
                        L[w] = pc + 1
                    elif code == _DONE:
                        break
                    elif code == _JUMP:
                        ub.add(a[1])
                        L[w] = done_pc[w]
                        progress = True
                    elif shared & a[-1]:        # an object step (a bind's mask is 0)
                        break
                    else:
                        step(L, w, a)
                        progress = True

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
            if not _INIT <= a[0] <= _END:
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

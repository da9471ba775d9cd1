"""Event graph builder for the ``ptx`` and ``ptx60`` model files: PTX-dialect tests ->
pre-executions.

One :class:`~oracle.events.PreExecution` per combination of thread paths (litmus/cfg.py: a path
fixes every branch and the value each read returned, which the read carries as a required value),
per barrier outcome and per Fence-SC order:

- **Barriers** (``bar.cta.sync``/``arrive INST[, ID[, COUNT]]``, Dat3M's form). Barriers are
  grouped per CTA by instance ``INST`` and by the value of ``ID`` on the path. Without ``COUNT``
  a group completes only when every thread of the CTA that has a barrier of that instance and
  id in its code reaches it (an id held in a register counts where the path reaches it);
  otherwise the combination has no outcome (the program hangs, as in Dat3M). With ``COUNT`` at
  least ``COUNT`` of the reached barriers synchronize (every such subset is a variant), or the
  combination hangs. A synchronizing barrier synchronizes with every reached ``sync`` of its
  group (PTX ISA 8.9.4: "A bar{.cta}.sync or bar{.cta}.red or bar{.cta}.arrive operation
  synchronizes with a bar{.cta}.sync or bar{.cta}.red operation executed on the same barrier"):
  relation ``bsync``; an ``arrive`` synchronizes but is never synchronized with.
- **Fence-SC order** (PTX ISA 8.9.3: "an acyclic partial order, determined at runtime, that
  relates every pair of morally strong fence.sc operations"): one variant per orientation of the
  morally strong pairs of ``fence.sc`` events that is acyclic together with program order;
  relation ``fsc``.

Vocabulary (declared by the units, oracle/models/ptx/__init__.py; see ptx-relations.model):
sets ``R W F IW FR CO`` (every write: the search's coherence orders), ``STRONG`` (memory fences
and ``.relaxed``/``.acquire``/``.release``/``.acq_rel``/``.volatile`` accesses), ``ACQ`` ``REL``
(acquire / release operations and fences; a fence.sc is both), ``SC`` (fence.sc), ``RED`` (the
read of a ``red``: no read operation, PTX ISA "Operation types"), proxies ``GEN SUR TEX CON``
(memory operations and memory fences), ``PF`` (proxy fences of surface/texture/constant),
``ALIAS`` (``fence.proxy.alias``), ``BAR`` (barrier operations); relations ``po``, ``loc`` (same
physical location), ``vloc`` (same virtual address: the generic address an access names),
``rmw``, ``dep`` (data and control dependencies: a read -> what depends on its value),
``inscope`` (two scoped operations each of whose scope includes the other's thread), ``cta``
(same CTA),
``pfo`` (a proxy fence -> the operations of its proxy in its CTA), ``ini`` (each initial write ->
every operation of every thread: kernel start synchronizes with the start of every thread,
PTX ISA 8.9.4), ``fsc``, ``bsync``. Final reads (``FR``, thread -1) give each location's final
value; they read the co-last write and take part in nothing else.

Search hints (oracle/hints.py) for *uniform* locations, whose accesses (all but the initial
write) are pairwise morally strong: every two writes there must be related by PTX's coherence
order, so the search's total order is that coherence order, and SC per location (8.10.5) is
plain coherence: ``CohR`` (their reads), ``incl`` (their pairs) and ``cohord`` (program order
between them). A cycle of program order and rf/co/fr among them, which the search then prunes,
is a cycle of morally strong communication and program order. Other locations get no hint.
"""

from __future__ import annotations

import itertools

from litmus.cfg import attr, paths_per_thread
from litmus.ir import Test

from oracle.errors import OracleError
import numpy as np

from oracle.events import REQ_EQ, WORD, Event, PreExecution, table_of
from oracle.models.path_executions import (add_observables, build_combination,
                                           justifiable_combinations)

SETS = ("R", "W", "F", "IW", "FR", "CO", "STRONG", "ACQ", "REL", "SC", "RED",
        "GEN", "SUR", "TEX", "CON", "PF", "ALIAS", "BAR", "CohR")
RELS = ("po", "loc", "vloc", "rmw", "dep", "inscope", "cta", "pfo", "ini", "fsc", "bsync",
        "incl", "cohord")
PROXY_SET = {"generic": "GEN", "surface": "SUR", "texture": "TEX", "constant": "CON"}
#: most variants (barrier outcomes x Fence-SC orders) of one combination of paths
MAX_VARIANTS = 4096
#: most writes to one location in a pre-execution besides the initial one: the search enumerates
#: every total order of them (8! = 40,320); a program with more is refused with an error rather
#: than left running
MAX_WRITES = 8


def _proxy(ins) -> str:
    return attr(ins, "proxy") or "generic"


def _label(e) -> str:
    ins = e.instr
    if e.kind in ("R", "W"):
        via = attr(ins, "via") if ins is not None else None
        name = via.split("@")[0] if via else e.loc
        val = "" if e.val is None else f"={e.val}"
        return f"{e.kind} {name}{val}"
    if e.kind == "B":
        return "B " + ("arrive" if "arrive" in ins.attrs else "sync") + f" {attr(ins, 'inst')}"
    if ins.order is not None:
        return f"F {ins.order}.{ins.scope}"
    return f"F proxy.{attr(ins, 'proxy')}"


def _event_sets(e) -> list[str]:
    """The sets of one event of path_executions.build_combination (see the module doc)."""
    ins = e.instr
    if e.tid < 0:
        return ["W", "IW", "CO", "GEN"]
    if e.kind in ("R", "W"):
        out = [e.kind, PROXY_SET[_proxy(ins)]]
        if e.kind == "W":
            out.append("CO")
        strong = e.order is not None
        red = "red" in ins.attrs
        if strong:
            out.append("STRONG")
        if e.kind == "R" and red:
            out.append("RED")
        if e.kind == "R" and e.order == "acq" and not red:
            out.append("ACQ")
        if e.kind == "W" and e.order == "rel":
            out.append("REL")
        return out
    if e.kind == "B":
        return ["BAR"]
    kind = attr(ins, "proxy")
    if kind == "alias":
        return ["F", "ALIAS"]
    if kind is not None:
        return ["F", "PF"]
    out = ["F", "STRONG", "GEN"]
    if ins.order in ("acq", "acq_rel", "sc"):
        out.append("ACQ")
    if ins.order in ("rel", "acq_rel", "sc"):
        out.append("REL")
    if ins.order == "sc":
        out.append("SC")
    return out


def _rows(n: int, pairs) -> list[int]:
    rows = [0] * n
    for a, b in pairs:
        rows[a] |= 1 << b
    return rows


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


class _Memo:
    """What one test's combinations of paths share, computed once per :func:`build`: scope
    inclusion and same-CTA per (thread, scope, thread, scope), the static sets and relations
    per event structure (:class:`_Static`: most combinations differ only in the values their
    reads assume), and the Fence-SC orders per arrangement of fence.sc events. (A campaign's
    compiled programs have hundreds of combinations of paths and a Fence-SC variant per
    interleaving of their fence.sc events: recomputing these dominated the PTX check.)"""

    def __init__(self, test: Test):
        self.test = test
        self.incl: dict = {}
        self.cta: dict = {}
        self.orders: dict = {}
        self.statics: dict = {}

    def inclusive(self, ta: int, sa: str, tb: int, sb: str) -> bool:
        k = (ta, sa, tb, sb)
        v = self.incl.get(k)
        if v is None:
            v = self.incl[k] = self.test.inclusive(ta, sa, tb, sb)
        return v

    def same_cta(self, ta: int, tb: int) -> bool:
        k = (ta, tb)
        v = self.cta.get(k)
        if v is None:
            v = self.cta[k] = self.test.same(ta, tb, "wg")
        return v


class _Static:
    """Per combination of paths: event sets and the static relations (module doc)."""

    def __init__(self, test: Test, x0, deps_of, memo: _Memo | None = None):
        memo = memo or _Memo(test)
        self.test, self.x0, self.memo = test, x0, memo
        ev = x0.events
        n = self.n = x0.n
        self.dep = _rows(n, deps_of(x0))
        self.sc = [e for e in ev if e.kind == "F" and e.instr.order == "sc"]
        # everything but dep depends on the events' threads, kinds, locations, orders and
        # instructions and on program order, not on the values a path reads or writes: the
        # combinations that differ only in values share it
        key = (tuple((e.tid, e.kind, e.loc, e.order, id(e.instr)) for e in ev), tuple(x0.po))
        shared = memo.statics.get(key)
        if shared is None:
            self._static_relations()
            memo.statics[key] = (self.sets, self.cta, self.inscope, self.vloc, self.pfo,
                                 self.ini, self.incl, self.cohord)
        else:
            (self.sets, self.cta, self.inscope, self.vloc, self.pfo, self.ini, self.incl,
             self.cohord) = shared

    def _static_relations(self) -> None:
        test, x0, memo, n = self.test, self.x0, self.memo, self.n
        ev = x0.events
        self.sets = {name: 0 for name in SETS}
        for e in ev:
            for s in _event_sets(e):
                self.sets[s] |= 1 << e.eid

        def thread_pairs(pred):
            out = [0] * n
            for a in ev:
                if a.tid < 0:
                    continue
                for b in ev:
                    if b.tid >= 0 and pred(a, b):
                        out[a.eid] |= 1 << b.eid
            return out

        def same_cta(a, b):
            return memo.same_cta(a.tid, b.tid)

        def scoped(e):
            return e.instr is not None and e.instr.scope is not None and \
                (e.kind in ("R", "W") and e.order is not None or e.kind == "F")

        def inclusive(a, b):
            return scoped(a) and scoped(b) and \
                memo.inclusive(a.tid, a.instr.scope, b.tid, b.instr.scope)

        self.cta = thread_pairs(same_cta)
        self.inscope = thread_pairs(inclusive)
        mem = [e for e in ev if e.kind in ("R", "W")]
        vname = {e.eid: (attr(e.instr, "vloc") if e.instr is not None else None) or e.loc
                 for e in mem}
        self.vloc = _rows(n, ((a.eid, b.eid) for a in mem for b in mem
                              if a.loc == b.loc and vname[a.eid] == vname[b.eid]))
        self.pfo = thread_pairs(lambda f, y: f.kind == "F" and y.kind in ("R", "W")
                                and attr(f.instr, "proxy") not in (None, "alias")
                                and attr(f.instr, "proxy") == _proxy(y.instr) and same_cta(f, y))
        iw = [e.eid for e in ev if e.tid < 0]
        self.ini = _rows(n, ((w, e.eid) for w in iw for e in ev if e.tid >= 0))
        self.uniform_hints(mem, vname)

    def uniform_hints(self, mem, vname) -> None:
        """``CohR``, ``incl`` and ``cohord`` of the uniform locations (module doc)."""
        n, po = self.n, self.x0.po
        self.incl, self.cohord = [0] * n, [0] * n
        by_loc: dict[str, list] = {}
        for e in mem:
            if e.tid >= 0:
                by_loc.setdefault(e.loc, []).append(e)
        for evs in by_loc.values():
            def ms(a, b):
                return vname[a.eid] == vname[b.eid] and \
                    _proxy(a.instr) == _proxy(b.instr) and \
                    (a.tid == b.tid or self.inscope[a.eid] >> b.eid & 1)
            if not all(ms(a, b) for a, b in itertools.combinations(evs, 2)):
                continue
            mask = sum(1 << e.eid for e in evs)
            for e in evs:
                self.incl[e.eid] = mask & ~(1 << e.eid)
                self.cohord[e.eid] = po[e.eid] & mask
                if e.kind == "R":
                    self.sets["CohR"] |= 1 << e.eid

    def morally_strong(self, a, b) -> bool:
        """Two fences: same thread (program order) or each scope includes the other's thread."""
        return a.tid == b.tid or bool(self.inscope[a.eid] >> b.eid & 1)

    def fence_sc_orders(self) -> list[list[int]]:
        """Every Fence-SC order: an orientation of the morally strong fence.sc pairs, acyclic
        with program order (same-thread pairs follow it, as the Fence-SC axiom requires)."""
        n, po = self.n, self.x0.po
        # the orders depend only on the fence.sc events (ids, threads, program order and
        # moral strength among them) and the event count: shared by combinations alike there
        key = (n, tuple((e.eid, e.tid, po[e.eid] & self.sets["SC"]) for e in self.sc),
               tuple(self.inscope[e.eid] & self.sets["SC"] for e in self.sc))
        hit = self.memo.orders.get(key)
        if hit is None:
            hit = self.memo.orders[key] = self._fence_sc_orders()
        return hit

    def _pairs(self):
        """(fixed, free): the morally strong fence.sc pairs of one thread, in program order,
        and those of different threads, each ``(a, b)`` with ``a`` first in event order."""
        po = self.x0.po
        fixed, free = [], []
        for a, b in itertools.combinations(self.sc, 2):
            if not self.morally_strong(a, b):
                continue
            if a.tid == b.tid:
                fixed.append((a.eid, b.eid) if po[a.eid] >> b.eid & 1 else (b.eid, a.eid))
            else:
                free.append((a.eid, b.eid))
        return fixed, free

    def all_fence_sc_orders(self) -> list[list[int]]:
        """Every Fence-SC order as the model defines it (every acyclic orientation of the
        morally strong pairs), in the order of :func:`_orientations`; the reference the
        reduced set of :meth:`fence_sc_orders` is tested against."""
        fixed, free = self._pairs()
        return list(_orientations(self.n, self.x0.po, fixed, free, [None] * len(free),
                                  f"{self.test.name}: more than {MAX_VARIANTS} Fence-SC orders"))

    def edge_fences(self) -> tuple[int, int]:
        """(leading, trailing) fence.sc events, as masks: a *leading* fence.sc has only
        fence.sc events before it in its thread, a *trailing* one (not leading) only fence.sc
        events after it (module doc, "Fence-SC orders that cannot matter")."""
        po, sc = self.x0.po, self.sets["SC"]
        mine: dict[int, int] = {}
        for e in self.x0.events:
            if e.tid >= 0:
                mine[e.tid] = mine.get(e.tid, 0) | 1 << e.eid
        lead = trail = 0
        for e in self.sc:
            before = sum(1 << i for i in _bits(mine[e.tid]) if po[i] >> e.eid & 1)
            after = po[e.eid] & mine[e.tid]
            if not before & ~sc:
                lead |= 1 << e.eid
            elif not after & ~sc:
                trail |= 1 << e.eid
        return lead, trail

    def _fence_sc_orders(self) -> list[list[int]]:
        """The Fence-SC orders the builder gives the search: the acyclic orientations in which
        every leading fence.sc precedes its morally strong partners and every trailing one
        follows them (two leading, or two trailing, fences in event order). Each order the model
        allows has one of these that relates no more pairs of non-leading, non-trailing events
        in base causality order, so no execution, outcome or race is lost (module doc)."""
        fixed, free = self._pairs()
        lead, trail = self.edge_fences()
        force = []
        for a, b in free:
            la, lb = lead >> a & 1, lead >> b & 1
            ta, tb = trail >> a & 1, trail >> b & 1
            if la and lb or ta and tb:
                force.append(0)
            elif la or tb:
                force.append(0)
            elif lb or ta:
                force.append(1)
            else:
                force.append(None)
        return list(_orientations(self.n, self.x0.po, fixed, free, force,
                                  f"{self.test.name}: more than {MAX_VARIANTS} Fence-SC orders "
                                  f"of {sum(f is None for f in force)} pairs of fence.sc in "
                                  f"different threads"))


def _orientations(n: int, po: list[int], fixed, free, force, too_many: str):
    """The orientations of the ``free`` pairs (``force[k]``: 0 keeps pair k's order, 1 reverses
    it, None tries both) that are acyclic together with program order and the ``fixed`` pairs,
    as ``fsc`` rows, in the order of ``itertools.product((0, 1), repeat=len(free))`` (the
    first pair most significant). A backtracking search: each pair is oriented only the ways
    that keep the relation acyclic (the reachability of the pairs so far, updated as each is
    added), so the orientations are found without visiting the 2^pairs candidates; more than
    :data:`MAX_VARIANTS` of them is an error (``too_many``)."""
    reach0 = list(po)
    for a, b in fixed:
        reach0 = _add_edge(reach0, a, b)
    count = 0
    stack = [(0, reach0, ())]
    while stack:
        k, reach, dirs = stack.pop()
        if k == len(free):
            count += 1
            if count > MAX_VARIANTS:
                raise OracleError(too_many)
            pairs = fixed + [(a, b) if d == 0 else (b, a) for (a, b), d in zip(free, dirs)]
            yield _rows(n, pairs)
            continue
        a, b = free[k]
        options = (0, 1) if force[k] is None else (force[k],)
        for d in reversed(options):                  # the stack pops 0 first
            u, v = (a, b) if d == 0 else (b, a)
            if reach[v] >> u & 1:
                continue                             # v already reaches u: a cycle
            stack.append((k + 1, _add_edge(reach, u, v), dirs + (d,)))


def _add_edge(reach: list[int], u: int, v: int) -> list[int]:
    """The transitive reachability rows ``reach`` with the edge ``u -> v`` added."""
    if reach[u] >> v & 1:
        return reach
    out = list(reach)
    gain = (1 << v) | reach[v]
    for i, r in enumerate(reach):
        if i == u or r >> u & 1:
            out[i] = r | gain
    return out


def barrier_outcomes(test: Test, x0, bar_ids: dict) -> list[list[int]]:
    """The ``bsync`` relation of every way the barriers of one combination of paths complete
    (module doc); an empty list when some barrier can never complete. ``bar_ids``: barrier
    event -> the value of its id operand on its path (None without one)."""
    groups: dict[tuple, list] = {}
    for e in x0.events:
        if e.kind == "B":
            key = (test.instance(e.tid, "wg"), attr(e.instr, "inst"), bar_ids[e.eid])
            groups.setdefault(key, []).append(e)
    choices = []
    for (cta, inst, bid), evs in groups.items():
        quorum = attr(evs[0].instr, "quorum")
        syncs = sum(1 << e.eid for e in evs if "arrive" not in e.instr.attrs)
        if quorum is None:
            need = set()
            for tid, th in enumerate(test.threads):
                if test.instance(tid, "wg") != cta:
                    continue
                for ins in th.code:
                    if ins.base == "cbar" and attr(ins, "inst") == inst:
                        i = attr(ins, "id")
                        if i is None and bid is None or i is not None and i.lstrip("-").isdigit() \
                                and bid is not None and int(i) == bid:
                            need.add(tid)
            if not need <= {e.tid for e in evs}:
                return []
            choices.append([[(e.eid, syncs) for e in evs]])
        else:
            q = int(quorum)
            if len(evs) < q:
                return []
            choices.append([[(e.eid, syncs) for e in sub] for k in range(q, len(evs) + 1)
                            for sub in itertools.combinations(evs, k)])
    out = []
    for pick in itertools.product(*choices):
        rows = [0] * x0.n
        for part in pick:
            for eid, mask in part:
                rows[eid] |= mask & ~(1 << eid)
        out.append(rows)
        if len(out) > MAX_VARIANTS:
            raise OracleError(f"{test.name}: too many barrier outcomes")
    return out


def _path_deps(combo):
    """(read event, dependent event) pairs of one combination of paths, from each op's deps."""
    def pairs(x0):
        out = []
        for tid, path in enumerate(combo):
            ids = x0.op_event[tid]
            for k, op in enumerate(path.ops):
                first = ids[k]
                mine = [first, first + 1] if op.kind == "U" else [first]
                for d in op.deps:
                    out.extend((ids[d], m) for m in mine)
        return out
    return pairs


def to_pre_execution(test: Test, x0, combo, st: _Static, bsync, fsc) -> PreExecution:
    pe = PreExecution()
    loc_ids = {loc.name: i for i, loc in enumerate(test.locations)}
    pe.loc_names = [loc.name for loc in test.locations]
    for e in x0.events:
        ev = Event(_label(e), e.tid, loc_ids[e.loc] if e.loc else -1,
                   value=e.val if e.kind == "W" else 0, instr=e.index)
        if e.kind == "R" and e.val is not None:        # None: a free read (rf decides)
            ev.req_mode, ev.req_val = REQ_EQ, e.val
        pe.add(ev)
    # the sets, in the order marking event by event would first name them (each set's least
    # event, then the order of st.sets)
    named = sorted((((m & -m).bit_length(), k, name, m)
                    for k, (name, m) in enumerate(st.sets.items()) if m))
    for _, _, name, m in named:
        pe.sets[name] = set(_bits(m))
    n0 = x0.n
    final = {}
    for loc in test.globals:
        final[loc.name] = pe.add(Event(f"R {loc.name} (final)", -1, loc_ids[loc.name]),
                                 "R", "FR", "GEN")
    n = pe.n
    pad = [0] * (n - n0)
    rels = {"po": x0.po, "rmw": x0.rmw, "dep": st.dep, "inscope": st.inscope, "cta": st.cta,
            "pfo": st.pfo, "ini": st.ini, "fsc": fsc, "bsync": bsync, "incl": st.incl,
            "cohord": st.cohord}
    for name, rows in rels.items():
        pe.rels[name] = list(rows[:n0]) + pad
    by_loc: dict[int, int] = {}
    for i, ev in enumerate(pe.events):
        if ev.loc_id >= 0:
            by_loc[ev.loc_id] = by_loc.get(ev.loc_id, 0) | (1 << i)
    pe.rels["loc"] = [by_loc[ev.loc_id] if ev.loc_id >= 0 else 0 for ev in pe.events]
    pe.rels["vloc"] = list(st.vloc[:n0]) + pad
    for name in SETS:
        pe.sets.setdefault(name, set())
    add_observables(pe, test, combo, x0, final)
    return pe


def build(test: Test, proxies: bool = True, model: str = "ptx") -> list[PreExecution]:
    """Every pre-execution of a PTX-dialect test (module doc). ``proxies=False`` (the ``ptx60``
    model, PTX ISA 6.0) refuses aliases, proxies and proxy fences, which came with PTX 7.5."""
    if not proxies:
        for tid, i, ins in test.instructions():
            if attr(ins, "via") or attr(ins, "proxy"):
                what = attr(ins, "proxy") or attr(ins, "via").split("@")[0]
                raise OracleError(f"{test.name}: model {model} (PTX ISA 6.0) has no proxies or "
                                  f"aliases (P{tid} instruction {i + 1} uses {what}); use the "
                                  f"ptx model (7.5)")
    try:
        paths = paths_per_thread(test, seed=False, deps=True)
    except ValueError as e:
        raise OracleError(str(e)) from None
    out = []
    memo = _Memo(test)
    # a combination in which some read assumes a value that no write to its location gives
    # (nor the initial value) has no candidate execution: the read has no rf source (the PTX
    # units declare no undef source), so it adds no outcome, flag or candidate; campaign
    # programs with CAS loops have thousands of such combinations
    for combo in justifiable_combinations(test, paths):
        x0 = build_combination(test, combo)
        per_loc: dict[str, int] = {}
        for e in x0.events:
            if e.kind == "W" and e.tid >= 0:
                per_loc[e.loc] = per_loc.get(e.loc, 0) + 1
                if per_loc[e.loc] > MAX_WRITES:
                    raise OracleError(f"{test.name}: more than {MAX_WRITES} writes to {e.loc} in "
                                      f"one execution (the search orders them every way; "
                                      f"bound the loops)")
        bar_ids = {x0.op_event[tid][k]: op.bar_id for tid, path in enumerate(combo)
                   for k, op in enumerate(path.ops) if op.kind == "B"}
        outcomes = barrier_outcomes(test, x0, bar_ids)
        if not outcomes:
            continue
        st = _Static(test, x0, _path_deps(combo), memo)
        orders = st.fence_sc_orders()
        if len(outcomes) * len(orders) > MAX_VARIANTS:
            raise OracleError(f"{test.name}: {len(outcomes) * len(orders)} barrier outcomes and "
                              f"Fence-SC orders in one combination of paths (more than "
                              f"{MAX_VARIANTS})")
        for bsync in outcomes:
            first = to_pre_execution(test, x0, combo, st, bsync, orders[0])
            out.append(first)
            if len(orders) > 1:
                # the other Fence-SC orders: copies sharing all but fsc (events, sets, the
                # other relations, observables and the packed table)
                table_of(first)
                pad = [0] * (first.n - x0.n)
                for fsc in orders[1:]:
                    out.append(first.with_relation("fsc", np.array(list(fsc[:x0.n]) + pad,
                                                                   np.uint64)
                                                   if first.n <= WORD else
                                                   list(fsc[:x0.n]) + pad))
    return out

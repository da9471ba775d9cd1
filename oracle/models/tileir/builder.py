"""Event graph builder for the ``tileir`` models: TILEIR-dialect tests -> engine pre-executions.

Events come per tile element (Tile IR 7.1; 13.4: "an ordinary tile load or store generates a Read
or Write for each accessed element, while an atomic update generates a Read-and-Write pair for
each accessed element"): one initial write per location (thread -1, sets ``W IW CO``), then per
tile block, per op, per *active* lane (a masked-out lane gives no event): a read (``load``), a
write (``store``) or a read and a write related by ``rmw`` (``atomic_rmw``, ``atomic_cas``), then
one final-memory read per location (thread -1, ``R FR``).

``atomic_cas`` lanes branch: one pre-execution per combination of lane outcomes. A successful
lane's read requires the compare value and writes the new value; a failed lane's read requires a
different value and, when ``failed_cas_writes`` (the model's switch, docs/tileir.md), writes back
the value it read (PTX's ``atom.cas``: ``*a = (*a == b) ? c : *a``); otherwise it is a read only.

Vocabulary (declared by the unit):

- sets ``R W IW FR CO`` (engine), ``Indep`` (= FR: a final read reads the co-last write, so in a
  consistent execution it is the source of no edge and the search picks its source alone), ``M`` (the program's accesses: not IW/FR), ``STRONG`` (ordering
  other than weak), ``ACQ`` (reads of acquire / acq_rel ops), ``REL`` (writes of release /
  acq_rel ops), ``ATOM`` (events of atomic ops);
- relations ``tko`` (token order: Tile IR 7.6 "waits-for", producer -> consumer, transitive,
  looking through ``join_tokens``), ``loc`` (same element), ``rmw`` (read -> write of one atomic
  lane), ``sameop`` (two events of one op), ``inscope`` (both strong and each one's scope includes
  the other's tile block: tile_block = the same block, device = the same device, sys = all).
"""

from __future__ import annotations

import itertools

from litmus.ir import Test
from litmus.tileir import is_acquire, is_release

from oracle.events import REQ_EQ, REQ_NE, RMW_CODES, Event, PreExecution

SETS = ("R", "W", "IW", "FR", "CO", "Indep", "M", "STRONG", "ACQ", "REL", "ATOM")
RELS = ("tko", "loc", "rmw", "sameop", "inscope")


def includes(test: Test, tid: int, scope: str, other: int) -> bool:
    """Does the ``scope`` instance of tile block ``tid`` include tile block ``other``?"""
    a, b = test.threads[tid].placement, test.threads[other].placement
    if scope == "sys":
        return True
    if scope == "device":
        return a.agent == b.agent
    return tid == other          # tile_block: the block itself


def token_order(test: Test, tid: int) -> dict[int, frozenset]:
    """For each op index of block ``tid``: the memory ops (indices) it waits for, transitively."""
    after: dict[str, frozenset] = {}      # token -> the memory ops it stands for
    out: dict[int, frozenset] = {}
    for i, op in enumerate(test.threads[tid].code):
        waits = frozenset().union(*(after[t] for t in op.token_in)) if op.token_in else frozenset()
        out[i] = waits
        if op.opname == "make_token":
            after[op.token] = frozenset()
        elif op.opname == "join_tokens":
            after[op.token] = waits
        else:
            after[op.token] = waits | {i}
    return out


def _cas_lanes(test: Test) -> list[tuple[int, int, int]]:
    return [(tid, i, lane) for tid, th in enumerate(test.threads) for i, op in enumerate(th.code)
            if op.opname == "atomic_cas" for lane in op.lanes() if op.active(lane)]


def build(test: Test, failed_cas_writes: bool = True) -> list[PreExecution]:
    """Every pre-execution of a TILEIR test: one per combination of cas lane outcomes."""
    lanes = _cas_lanes(test)
    return [_build(test, dict(zip(lanes, outcome)), failed_cas_writes)
            for outcome in itertools.product((True, False), repeat=len(lanes))]


def _build(test: Test, cas_ok: dict, failed_cas_writes: bool) -> PreExecution:
    pe = PreExecution()
    loc_ids = {loc.name: k for k, loc in enumerate(test.locations)}
    pe.loc_names = [loc.name for loc in test.locations]
    for loc in test.locations:
        pe.add(Event(f"W {loc.name}={loc.init} (init)", -1, loc_ids[loc.name], value=loc.init),
               "W", "IW", "CO")
    op_events: dict[tuple[int, int], list[int]] = {}
    reg_event: dict[tuple[int, str], int] = {}
    info: dict[int, tuple[int, object]] = {}          # event -> (thread, op)
    for tid, th in enumerate(test.threads):
        for i, op in enumerate(th.code):
            evs = op_events.setdefault((tid, i), [])
            if not op.is_memory_access:
                continue
            for lane in op.lanes():
                if not op.active(lane):
                    continue
                a = op.addrs[lane]
                lid = loc_ids[a]
                where = f"P{tid}:{i}.{lane}"
                if op.opname == "store":
                    e = pe.add(Event(f"W {a}={op.vals[lane]} [{where}]", tid, lid,
                                     value=op.vals[lane], instr=i), "W", "CO")
                    if is_release(op.sem):
                        pe.mark(e, "REL")
                    evs.append(e)
                    continue
                r = pe.add(Event(f"R {a} [{where}]", tid, lid, instr=i), "R")
                evs.append(r)
                reg_event[(tid, op.regs[lane])] = r
                if is_acquire(op.sem):
                    pe.mark(r, "ACQ")
                if op.opname == "load":
                    continue
                w = None
                if op.opname == "atomic_rmw":
                    w = Event(f"W {a} ({op.op} {op.vals[lane]}) [{where}]", tid, lid, wsrc=r,
                              wop=_code(op.op), wopnd=op.vals[lane], instr=i)
                else:
                    ok = cas_ok[(tid, i, lane)]
                    pe.events[r].req_mode = REQ_EQ if ok else REQ_NE
                    pe.events[r].req_val = op.cmps[lane]
                    pe.events[r].label = (f"R {a} {'==' if ok else '!='} {op.cmps[lane]} [{where}]")
                    if ok:
                        w = Event(f"W {a}={op.vals[lane]} (cas) [{where}]", tid, lid,
                                  value=op.vals[lane], instr=i)
                    elif failed_cas_writes:
                        w = Event(f"W {a} (failed cas: old value) [{where}]", tid, lid, wsrc=r,
                                  wop=_code("or"), wopnd=0, instr=i)
                pe.mark(r, "ATOM")
                if w is not None:
                    we = pe.add(w, "W", "CO", "ATOM")
                    if is_release(op.sem):
                        pe.mark(we, "REL")
                    pe.relate("rmw", r, we)
                    evs.append(we)
            for e in evs:
                info[e] = (tid, op)
                pe.mark(e, "M")
                if op.sem != "weak":
                    pe.mark(e, "STRONG")
    final = {}
    for loc in test.globals:
        final[loc.name] = pe.add(Event(f"R {loc.name} (final)", -1, loc_ids[loc.name]), "R", "FR",
                                 "Indep")
    n = pe.n
    rows = {name: [0] * n for name in RELS}
    for a in range(n):
        for b in range(n):
            if pe.events[a].loc_id >= 0 and pe.events[a].loc_id == pe.events[b].loc_id:
                rows["loc"][a] |= 1 << b
    for r, w in pe.pairs("rmw"):
        rows["rmw"][r] |= 1 << w
    for tid, th in enumerate(test.threads):
        waits = token_order(test, tid)
        for i in range(len(th.code)):
            for b in op_events[(tid, i)]:
                for a in op_events[(tid, i)]:
                    rows["sameop"][a] |= 1 << b
                for j in waits[i]:
                    for a in op_events[(tid, j)]:
                        rows["tko"][a] |= 1 << b
    for a, (ta, oa) in info.items():
        for b, (tb, ob) in info.items():
            if (oa.sem != "weak" and ob.sem != "weak" and includes(test, ta, oa.scope, tb)
                    and includes(test, tb, ob.scope, ta)):
                rows["inscope"][a] |= 1 << b
    pe.rels.update(rows)
    for name in SETS:
        pe.sets.setdefault(name, set())
    for tid in range(len(test.threads)):
        for reg in test.registers(tid):
            e = reg_event.get((tid, reg))
            pe.observables.append((f"P{tid}:{reg}", ("event", e) if e is not None
                                   else ("const", test.register_init(tid, reg))))
    for name, e in final.items():
        pe.observables.append((name, ("event", e)))
    return pe


def _code(mode: str) -> int:
    return RMW_CODES[mode]

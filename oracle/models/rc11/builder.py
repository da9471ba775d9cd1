"""Event graph builder for the ``rc11`` model file: C-dialect tests -> engine pre-executions.

One :class:`~oracle.events.PreExecution` per combination of thread paths (litmus/cfg.py: a path
fixes every branch and the value each read returned). Each read carries that value as a required
value (``REQ_EQ``), so the engine only pairs it with writes of that value; every written value is
then a constant of the path. Per global location a final read (set ``FR``, thread -1) gives the
final memory value: the model file makes it read the co-last write.

Vocabulary provided to ``rc11.model``: sets ``R W IW FR F A NA ACQ REL SC CO CohR CoLast``;
relations ``sb`` (po plus initial writes before everything), ``po``, ``loc``, ``ext``, ``rmw``,
``cohord`` (po, for the engine's per-location pruning) and ``nrf`` (a read never reads a po-later
write of its own thread).
"""

from __future__ import annotations

import itertools

from litmus.cfg import paths_per_thread
from litmus.ir import Test

from oracle.errors import OracleError
from oracle.events import REQ_EQ, Event, PreExecution
from oracle.models.path_executions import _build

#: the vocabulary this builder provides (declared by the unit, oracle/models/rc11/__init__.py)
SETS = ("R", "W", "F", "IW", "FR", "A", "NA", "ACQ", "REL", "SC", "CO", "CohR", "CoLast")
RELS = ("sb", "po", "loc", "ext", "rmw", "cohord", "nrf")

REL = ("rel", "acq_rel", "sc")
ACQ = ("acq", "acq_rel", "sc")


def to_pre_execution(test: Test, x0, combo) -> PreExecution:
    """The engine's pre-execution for one combination of paths (``x0`` from path_executions._build)."""
    pe = PreExecution()
    loc_ids = {loc.name: i for i, loc in enumerate(test.locations)}
    pe.loc_names = [loc.name for loc in test.locations]
    for e in x0.events:
        kind = e.kind
        label = (f"{kind} {e.loc}" + ("" if e.val is None else f"={e.val}")
                 if kind in ("R", "W") else
                 f"F {e.order}" if kind == "F" else kind)
        ev = Event(label, e.tid, loc_ids.get(e.loc, -1) if e.loc else -1,
                   value=e.val if kind == "W" else 0, instr=e.index)
        if kind == "R" and e.val is not None:        # None: a free read (rf decides)
            ev.req_mode, ev.req_val = REQ_EQ, e.val
        sets = []
        if kind in ("R", "W", "F"):
            sets.append(kind)
        if e.tid < 0:
            sets += ["IW", "A", "CO"]
        elif kind in ("R", "W"):
            sets.append("A" if e.atomic else "NA")
            if kind == "W":
                sets.append("CO")
            else:
                sets.append("CohR")
        if e.order in REL and kind in ("W", "F"):
            sets.append("REL")
        if e.order in ACQ and kind in ("R", "F"):
            sets.append("ACQ")
        if e.order == "sc":
            sets.append("SC")
        pe.add(ev, *sets)
    n0 = len(x0.events)
    # final memory reads
    final = {}
    for loc in test.globals:
        final[loc.name] = pe.add(Event(f"R {loc.name} (final)", -1, loc_ids[loc.name]), "R", "FR",
                                 "CoLast")
    n = pe.n
    pad = [0] * (n - n0)
    iw = 0
    for e in x0.events:
        if e.tid < 0:
            iw |= 1 << e.eid
    thread_mask = ((1 << n0) - 1) & ~iw
    po = list(x0.po)
    pe.rels["po"] = po + pad
    pe.rels["cohord"] = po + pad
    pe.rels["sb"] = [row | (thread_mask if (iw >> i) & 1 else 0) for i, row in enumerate(po)] + pad
    pe.rels["rmw"] = list(x0.rmw) + pad
    pe.rels["ext"] = [0 if (iw >> i) & 1 else row & ~iw for i, row in enumerate(x0.ext)] + pad
    reads = pe.set_mask("R")
    writes = pe.set_mask("W")
    nrf = [0] * n
    for a in range(n0):                      # (w, r): r po-before w, never rf
        if (reads >> a) & 1:
            row = po[a] & writes
            while row:
                low = row & -row
                nrf[low.bit_length() - 1] |= 1 << a
                row ^= low
    pe.rels["nrf"] = nrf
    by_loc: dict[int, int] = {}
    for i, ev in enumerate(pe.events):
        if ev.loc_id >= 0:
            by_loc[ev.loc_id] = by_loc.get(ev.loc_id, 0) | (1 << i)
    pe.rels["loc"] = [by_loc.get(ev.loc_id, 0) if ev.loc_id >= 0 else 0 for ev in pe.events]
    for name in SETS:
        pe.sets.setdefault(name, set())
    add_observables(pe, test, combo, x0, final)
    return pe


def add_observables(pe: PreExecution, test: Test, combo, x0, final: dict) -> None:
    """Outcome keys of one path combination: each register is the value an event read (or a
    constant the path assigned), each global the value its final-memory read sees."""
    for tid, path in enumerate(combo):
        regs = path.reg_dict()
        for r in test.registers(tid):
            v = regs.get(r, test.register_init(tid, r))
            pe.observables.append((f"P{tid}:{r}", ("event", x0.op_event[tid][v[1]])
                                   if isinstance(v, tuple) else ("const", v)))
    for loc in test.globals:
        pe.observables.append((loc.name, ("event", final[loc.name])))


def build(test: Test) -> list[PreExecution]:
    """Every pre-execution of a C-dialect test (one per combination of thread paths)."""
    try:
        paths = paths_per_thread(test, seed=False)     # rc11 has no (po | rf) cycles
    except ValueError as e:
        raise OracleError(str(e)) from None
    out = []
    for combo in itertools.product(*paths):
        out.append(to_pre_execution(test, _build(test, combo), combo))
    return out

"""Event graph builder for the ``vulkan`` model file: Vulkan-dialect tests -> engine pre-executions.

One :class:`~oracle.events.PreExecution` per combination of thread paths (litmus/cfg.py) and per
control-barrier choice (oracle/models/vulkan/static.py ``prepare``: a combination where a barrier can
never complete gives none; a quorum barrier gives one per set of synchronizing barriers). Reads
carry the value their path assumed (``REQ_EQ``). Per global location a final read (``FR``) gives
the final memory value. The event sets and static relations are those of
:func:`oracle.models.vulkan.static.static` (see the header of ``vulkan.model``).

A ``filter`` (Dat3M: only executions satisfying it count, for the verdict and for races) must be
a conjunction of atoms: register atoms select paths, location atoms become required values of
the final reads.
"""

from __future__ import annotations

import itertools

from litmus.cfg import paths_per_thread
from litmus.ir import And, Atom, Const, Test
from litmus.outcome import evaluate

from oracle.errors import OracleError
from oracle.events import REQ_EQ, REQ_NE, Event, PreExecution
from oracle.models.rc11.builder import add_observables
from oracle.models.path_executions import _build
from oracle.models.vulkan.static import CLASSES, prepare

#: the vocabulary this builder provides (declared by the unit, oracle/models/vulkan/__init__.py)
SETS = ("R", "W", "F", "IW", "FR", "CoLast", "CO", "CBAR", "ATOM", "RMW", "NONPRIV", "ACQ", "REL",
        "AVDEVICE", "VISDEVICE", "SEMAV", "SEMVIS", "SG", "WG", "QF", "DV",
        *(f"SC{i}" for i in range(CLASSES)), *(f"SEMSC{i}" for i in range(CLASSES)))
RELS = ("po", "loc", "ext", "int", "rmw", "ssg", "swg", "sqf", "inscope", "vloc", "mutord",
        "posem2sc", "posc2sem", "ssw", "avvisinc", "syncbar")


def _filter_atoms(test: Test) -> list[Atom] | None:
    prop = dict(test.meta).get("filter")
    if prop is None:
        return None
    atoms = []

    def walk(p):
        if isinstance(p, Atom):
            atoms.append(p)
        elif isinstance(p, And):
            for a in p.args:
                walk(a)
        elif not (isinstance(p, Const) and p.value):
            raise OracleError(f"{test.name}: only a conjunction of atoms is supported as filter")

    walk(prop)
    return atoms


def to_pre_execution(test: Test, x0, combo, variant: dict, loc_atoms) -> PreExecution:
    st = variant["static"]
    s = st["s"]
    pe = PreExecution()
    loc_ids = {loc.name: i for i, loc in enumerate(test.locations)}
    pe.loc_names = [loc.name for loc in test.locations]
    named = dict(s)
    for name, mask in zip(("SG", "WG", "QF", "DV"), st["scoped"]):
        named[name] = mask
    for i in range(CLASSES):
        named[f"SC{i}"] = st["sc"][i]
        named[f"SEMSC{i}"] = st["semsc"][i]
    for e in x0.events:
        kind = e.kind
        label = (f"{kind} {e.loc}" + ("" if e.val is None else f"={e.val}")
                 if kind in ("R", "W") else
                 f"{e.instr.base} {e.instr.scope}" if e.instr is not None else kind)
        ev = Event(label, e.tid, loc_ids[e.loc] if e.loc else -1,
                   value=e.val if kind == "W" else 0, instr=e.index)
        if kind == "R" and e.val is not None:        # None: a free read (rf decides)
            ev.req_mode, ev.req_val = REQ_EQ, e.val
        i = pe.add(ev)
        b = 1 << i
        for name, mask in named.items():
            if mask & b:
                pe.mark(i, name)
        if kind == "W":
            pe.mark(i, "CO")
    n0 = len(x0.events)
    final = {}
    for loc in test.globals:
        ev = Event(f"R {loc.name} (final)", -1, loc_ids[loc.name])
        for a in loc_atoms.get(loc.name, ()):
            if ev.req_mode:
                raise OracleError(f"{test.name}: two filter atoms on location {loc.name}")
            ev.req_mode, ev.req_val = (REQ_EQ if a.op == "==" else REQ_NE), a.value
        final[loc.name] = pe.add(ev, "R", "FR", "CoLast")
    n = pe.n
    rels = {"po": x0.po, "ext": x0.ext, "int": st["intra"], "rmw": x0.rmw, "ssg": st["ssg"],
            "swg": st["swg"], "sqf": st["sqf"], "inscope": st["inscope"], "vloc": st["vloc"],
            "mutord": st["mutord"], "posem2sc": st["po_sem2sc"], "posc2sem": st["po_sc2sem"],
            "ssw": st["ssw"], "avvisinc": st["avvisinc"], "syncbar": variant["syncbar"]}
    for name, rows in rels.items():
        pe.rels[name] = list(rows[:n0]) + [0] * (n - n0)
    loc_rows = [0] * n
    for a, ea in enumerate(pe.events):
        if ea.loc_id < 0:
            continue
        for b, eb in enumerate(pe.events):
            if eb.loc_id == ea.loc_id:
                loc_rows[a] |= 1 << b
    pe.rels["loc"] = loc_rows
    for name in SETS:
        pe.sets.setdefault(name, set())
    add_observables(pe, test, combo, x0, final)
    return pe


def build(test: Test, allow: frozenset = frozenset()) -> list[PreExecution]:
    """Every pre-execution of a Vulkan-dialect test (see the module doc). ``allow``: the
    model's declared properties; with ``thin-air`` reads may also take values out of thin air
    (litmus/cfg.py: value_domains)."""
    atoms = _filter_atoms(test)
    reg_atoms = [a for a in atoms or () if a.thread is not None]
    loc_atoms: dict[str, list[Atom]] = {}
    for a in atoms or ():
        if a.thread is None:
            loc_atoms.setdefault(a.name, []).append(a)
    try:
        paths = paths_per_thread(test, thin_air="thin-air" in allow)
    except ValueError as e:
        raise OracleError(str(e)) from None
    out = []
    for combo in itertools.product(*paths):
        x0 = _build(test, combo)
        read_reqs: dict[int, Atom] = {}        # free read event -> the filter atom on it
        if reg_atoms:
            regs = {f"P{tid}:{r}": v for tid, p in enumerate(combo) for r, v in p.regs}
            for tid in range(len(combo)):
                for r in test.registers(tid):
                    regs.setdefault(f"P{tid}:{r}", test.register_init(tid, r))
            keep = True
            for a in reg_atoms:
                v = regs[a.key]
                if isinstance(v, tuple):       # a free read: the filter becomes its requirement
                    eid = x0.op_event[a.thread][v[1]]
                    if eid in read_reqs:
                        raise OracleError(f"{test.name}: two filter atoms on {a.key}")
                    read_reqs[eid] = a
                elif not evaluate(a, {a.key: v}):
                    keep = False
            if not keep:
                continue
        for variant in prepare(x0):
            pe = to_pre_execution(test, x0, combo, variant, loc_atoms)
            for eid, a in read_reqs.items():
                pe.events[eid].req_mode = REQ_EQ if a.op == "==" else REQ_NE
                pe.events[eid].req_val = a.value
            out.append(pe)
    return out

"""Event graph builder for the ``vulkan`` model file: Vulkan-dialect tests -> engine pre-executions.

One :class:`~oracle.events.PreExecution` per combination of thread paths (litmus/cfg.py) whose
read values some write of the combination provides, and per control-barrier choice: a
combination where a barrier can never complete gives none; a quorum barrier gives one per set of
synchronizing barriers (the rules of :mod:`oracle.models.vulkan.reference_static`, module doc). Reads
carry the value their path assumed (``REQ_EQ``). Per global location a final read (``FR``) gives
the final memory value. The tables are built straight from the paths
(:mod:`oracle.models.path_tables`); the event sets and static relations are those the Python
reference derives in :func:`oracle.models.vulkan.reference_static.static` (see the header of
``vulkan.model``), computed here on bit rows per combination, independently of it.

A ``filter`` (Dat3M: only executions satisfying it count, for the verdict and for races) must be
a conjunction of atoms: register atoms select paths, location atoms become required values of
the final reads.
"""

from __future__ import annotations

import itertools

from litmus.cfg import attr, paths_per_thread
from litmus.ir import And, Atom, Const, Test
from litmus.outcome import evaluate

from oracle.errors import OracleError
from oracle.events import C_REQ_MODE, C_REQ_VAL, REQ_EQ, REQ_NE, PreExecution
from oracle.models.path_tables import Block, Layout, Program, final_requirements

CLASSES = 4          # storage classes sc0 .. sc3
SCOPE_RANK = {"sg": 0, "wg": 1, "qf": 2, "dv": 3}

#: the vocabulary this builder provides (declared by the unit, oracle/models/vulkan/__init__.py),
#: in the order of the table's masks and relation rows
SETS = ("R", "W", "F", "IW", "FR", "CoLast", "CO", "CBAR", "ATOM", "RMW", "NONPRIV", "ACQ", "REL",
        "AVDEVICE", "VISDEVICE", "SEMAV", "SEMVIS", "SG", "WG", "QF", "DV",
        *(f"SC{i}" for i in range(CLASSES)), *(f"SEMSC{i}" for i in range(CLASSES)))
RELS = ("po", "loc", "ext", "int", "rmw", "ssg", "swg", "sqf", "inscope", "vloc", "mutord",
        "posem2sc", "posc2sem", "ssw", "avvisinc", "syncbar")
SET_INDEX = {name: k for k, name in enumerate(SETS)}
REL_INDEX = {name: k for k, name in enumerate(RELS)}
_S = SET_INDEX
_SCOPED = [_S["SG"], _S["WG"], _S["QF"], _S["DV"]]
_SC = [_S[f"SC{i}"] for i in range(CLASSES)]
_SEMSC = [_S[f"SEMSC{i}"] for i in range(CLASSES)]
_ATOM, _RMW, _CO, _CBAR, _F, _ACQ, _REL = (_S[k] for k in ("ATOM", "RMW", "CO", "CBAR", "F", "ACQ",
                                                          "REL"))
#: the set of a fence-like event's kind
_OTHER_SET = {"F": "F", "AV": "AVDEVICE", "VIS": "VISDEVICE"}
#: instruction flags -> the set they put an event in: an access's own flags (non-private, its
#: storage class), and the semantics flags of any operation
_ACCESS_FLAGS = {"nonpriv": _S["NONPRIV"], **{f"sc{i}": _SC[i] for i in range(CLASSES)}}
_SEM_FLAGS = {"semav": _S["SEMAV"], "semvis": _S["SEMVIS"],
              **{f"semsc{i}": _SEMSC[i] for i in range(CLASSES)}}


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


class _Block:
    """What this unit derives from one :class:`~oracle.models.path_tables.Block`: relative set
    masks (:data:`SETS` order), each event's reference (``vloc``) and scope rank."""

    __slots__ = ("masks", "refs", "ranks")

    def __init__(self, b: Block):
        m = [0] * len(SETS)
        refs = []
        ranks = []
        for j, (kind, loc, _, order, _, is_rmw, _, ins) in enumerate(b.events):
            bit = 1 << j
            fl = ins.attrs
            if kind == "R" or kind == "W":
                m[_S[kind]] |= bit
                refs.append(attr(ins, "vloc") or loc)
                if ins.access == "atom" or ins.base == "rmw":
                    m[_ATOM] |= bit
                if is_rmw:
                    m[_RMW] |= bit
                if kind == "W":
                    m[_CO] |= bit
            else:
                refs.append(None)
                if kind == "B":
                    m[_CBAR] |= bit
                    order = ins.order
                    if order:
                        m[_F] |= bit
                else:
                    m[_S[_OTHER_SET[kind]]] |= bit
            if order in ("acq", "acq_rel"):
                m[_ACQ] |= bit
            if order in ("rel", "acq_rel"):
                m[_REL] |= bit
            rank = SCOPE_RANK.get(ins.scope, -1)
            ranks.append(rank)
            for r in range(rank + 1):
                m[_SCOPED[r]] |= bit
            access = kind == "R" or kind == "W"
            for f in fl:
                k = _SEM_FLAGS.get(f)
                if k is None and access:
                    k = _ACCESS_FLAGS.get(f)
                if k is not None:
                    m[k] |= bit
        self.masks, self.refs, self.ranks = m, refs, ranks


def _unit_block(b: Block) -> _Block:
    got = b.memo.get("vulkan")
    if got is None:
        got = b.memo["vulkan"] = _Block(b)
    return got


def _label(kind: str, order, ins) -> str:
    return f"{ins.base} {ins.scope}" if ins is not None else kind


def _instance(test: Test, tid: int, rank: int) -> tuple:
    """Thread ``tid``'s instance of the scope of rank 0 (subgroup), 1 (workgroup), 2 (queue
    family)."""
    p = test.threads[tid].placement
    return (p.agent, p.wg, p.wave)[:3 - rank]


class _Static:
    """Per test: scope instances of each thread, the ``ssw`` pairs, and per control-barrier
    group (workgroup, instance, id) the threads whose code has one of its barriers."""

    def __init__(self, test: Test):
        nt = len(test.threads)
        self.instances = [[_instance(test, tid, r) for r in range(3)] for tid in range(nt)]
        self.ssw = dict(test.meta).get("ssw", ())
        need: dict[tuple, set] = {}
        for tid, th in enumerate(test.threads):
            for ins in th.code:
                if ins.base == "cbar":
                    key = (self.instances[tid][1], attr(ins, "inst"), attr(ins, "id"))
                    need.setdefault(key, set()).add(tid)
        self.need = need


def _syncbars(layout: Layout, static: _Static) -> list[list[int]]:
    """The ``syncbar`` rows of every way the combination's control barriers can complete: none
    when one never does (the execution does not terminate), one per set of synchronizing
    barriers of each quorum group (the rules of :func:`oracle.models.vulkan.reference_static.prepare`)."""
    groups: dict[tuple, list] = {}
    for b, off in zip(layout.blocks, layout.offsets):
        for j, ev in enumerate(b.events):
            if ev[0] == "B":
                ins = ev[7]
                key = (static.instances[b.tid][1], attr(ins, "inst"), attr(ins, "id"))
                groups.setdefault(key, []).append((off + j, b.tid, ins))
    choices = []
    for key, evs in groups.items():
        quorum = attr(evs[0][2], "quorum")
        if quorum is None:
            # every thread of the workgroup with such a barrier in its code must reach it
            if {tid for _, tid, _ in evs} != static.need.get(key, set()):
                return []
            mask = sum(1 << e for e, _, _ in evs)
            choices.append([[(e, mask) for e, _, _ in evs]])
        else:
            q = int(quorum)
            if len(evs) < q:
                return []
            reached = sum(1 << e for e, _, _ in evs)
            choices.append([[(e, reached) for e, _, _ in sub]
                            for k in range(q, len(evs) + 1)
                            for sub in itertools.combinations(evs, k)])
    out = []
    for pick in itertools.product(*choices):
        syncbar = [0] * layout.n
        for part in pick:
            for e, mask in part:
                syncbar[e] |= mask
        out.append(syncbar)
    return out


def _relations(layout: Layout, static: _Static, masks: list[int]) -> list[list[int]]:
    """Every relation of :data:`RELS` but ``syncbar`` (the last), over the combination."""
    n, n0, nl = layout.n, layout.n0, layout.nlocs
    blocks = layout.blocks
    allm = (1 << n0) - 1
    units = [_unit_block(b) for b in blocks]
    zero = [0] * n
    pad = zero[n0:]
    scoped = [masks[k] for k in _SCOPED]
    # threads and scope instances: each thread's events, its instance of sg, wg, qf
    ext = [allm & ~(1 << i) for i in range(nl)]
    intra = [0] * nl
    group: dict[tuple, int] = {}
    for b, m in zip(blocks, layout.thread_masks):
        ext.extend([allm & ~m] * b.k)
        intra.extend([m] * b.k)
        for key in static.instances[b.tid]:
            group[key] = group.get(key, 0) | m
    same = [[0] * nl for _ in range(3)]
    inscope = [0] * nl
    for b, u in zip(blocks, units):
        inst = static.instances[b.tid]
        rows = [group[inst[0]], group[inst[1]], group[inst[2]]]
        for r in range(3):
            same[r].extend([rows[r]] * b.k)
        by_rank = [0, 0, 0, 0]
        row = 0
        for r in range(3):
            row |= rows[r] & scoped[r]
            by_rank[r] = row
        by_rank[3] = row | scoped[3]
        inscope.extend([by_rank[rank] if rank >= 0 else 0 for rank in u.ranks])
    same = [rows + pad for rows in same]
    inscope += pad
    # references: the initial writes' locations, the accesses' names (an alias names another)
    refs = list(layout.prog.loc_names)
    for u in units:
        refs.extend(u.refs)
    by_ref: dict[str, int] = {}
    for i, ref in enumerate(refs):
        if ref is not None:
            by_ref[ref] = by_ref.get(ref, 0) | (1 << i)
    loc = layout.loc_rows(layout.loc_masks())
    vloc = [by_ref[ref] & loc[i] if ref is not None else 0 for i, ref in enumerate(refs)] + pad
    mutord = list(zero)
    atom = masks[_ATOM]
    for i in _bits(atom):
        mutord[i] = vloc[i] & inscope[i] & atom & ~(1 << i)
    # storage classes <-> semantics
    sc2sem, sem2sc = list(zero), list(zero)
    for k_sc, k_sem in zip(_SC, _SEMSC):
        sc, sem = masks[k_sc], masks[k_sem]
        if sc and sem:
            for a in _bits(sc):
                sc2sem[a] |= sem
            for a in _bits(sem):
                sem2sc[a] |= sc
    po = layout.shifted("po")
    po_sem2sc = [p & s for p, s in zip(po, sem2sc)] if any(sem2sc) else zero
    po_sc2sem = [p & s for p, s in zip(po, sc2sem)] if any(sc2sem) else zero
    ssw = zero
    if static.ssw:
        ssw = list(zero)
        of = {}
        for b, m in zip(blocks, layout.thread_masks):
            of[b.tid] = of.get(b.tid, 0) | m
        for ta, tb in static.ssw:
            for i in _bits(of.get(ta, 0)):
                ssw[i] |= of.get(tb, 0)
    sg, semav, semvis = scoped[0], masks[_S["SEMAV"]], masks[_S["SEMVIS"]]
    avvisinc = [vloc[a] if sg >> a & 1 else vloc[a] & sg for a in range(n0)] + pad
    if semav or semvis:
        for a in range(n0):
            avvisinc[a] |= (sc2sem[a] & semav) | (sem2sc[a] if semvis >> a & 1 else 0)
    return [po, loc, ext + pad, intra + pad, layout.shifted("rmw"), *same, inscope, vloc, mutord,
            po_sem2sc, po_sc2sem, ssw, avvisinc]


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def _masks(layout: Layout) -> list[int]:
    masks = [0] * len(SETS)
    iw = layout.iw
    masks[_S["W"]] = masks[_S["IW"]] = masks[_S["CO"]] = iw
    for b, off in zip(layout.blocks, layout.offsets):
        for k, rel in enumerate(_unit_block(b).masks):
            if rel:
                masks[k] |= rel << off
    finals = ((1 << layout.n) - 1) & ~((1 << layout.n0) - 1)
    masks[_S["R"]] |= finals
    masks[_S["FR"]] = finals
    masks[_S["CoLast"]] = finals    # the final reads read the co-last write (engine hint CoLast)
    return masks


def to_pre_executions(layout: Layout, static: _Static, read_reqs: dict) -> list[PreExecution]:
    """The pre-executions of one combination of paths, one per way its barriers complete;
    ``read_reqs``: (thread, op index) -> filter atom required of that free read."""
    syncbars = _syncbars(layout, static)
    if not syncbars:
        return []
    masks = _masks(layout)
    rels = _relations(layout, static, masks)
    attrs = layout.attrs()
    for (tid, k), a in read_reqs.items():
        e = layout.offsets[tid] + layout.blocks[tid].op_event[k]
        attrs[e, C_REQ_MODE] = REQ_EQ if a.op == "==" else REQ_NE
        attrs[e, C_REQ_VAL] = a.value
    return [layout.pre_execution(attrs, SET_INDEX, masks, REL_INDEX, rels + [syncbar], _label)
            for syncbar in syncbars]


def _provided(blocks, inits: dict) -> bool:
    """Does every read's required value have a write of it at its location in this
    combination (an initial value or some thread's write)? Else no rf candidate exists."""
    written = set(inits)
    for b in blocks:
        for kind, loc, val, *_ in b.events:
            if kind == "W":
                written.add((loc, val))
    for b in blocks:
        for kind, loc, val, *_ in b.events:
            if kind == "R" and val is not None and (loc, val) not in written:
                return False
    return True


def build(test: Test, allow: frozenset = frozenset()) -> list[PreExecution]:
    """Every pre-execution of a Vulkan-dialect test (see the module doc). ``allow``: the
    model's declared properties; with ``thin-air`` reads may also take values out of thin air
    (litmus/cfg.py: value_domains)."""
    atoms = _filter_atoms(test)
    reg_atoms = [a for a in atoms or () if a.thread is not None]
    loc_atoms: dict[str, Atom] = {}
    for a in atoms or ():
        if a.thread is None:
            if a.name in loc_atoms:
                raise OracleError(f"{test.name}: two filter atoms on location {a.name}")
            loc_atoms[a.name] = a
    try:
        paths = paths_per_thread(test, thin_air="thin-air" in allow)
    except ValueError as e:
        raise OracleError(str(e)) from None
    prog = Program(test, final_requirements(loc_atoms.values()))
    static = _Static(test)
    inits = {(loc.name, loc.init) for loc in test.locations}
    out = []
    combos = list(itertools.product(*paths))
    for combo, blocks in zip(combos, prog.blocks(combos)):
        read_reqs: dict[tuple, Atom] = {}     # free read (thread, op) -> the filter atom on it
        if reg_atoms:
            regs = {f"P{tid}:{r}": v for tid, p in enumerate(combo) for r, v in p.regs}
            for tid in range(len(combo)):
                for r in test.registers(tid):
                    regs.setdefault(f"P{tid}:{r}", test.register_init(tid, r))
            keep = True
            for a in reg_atoms:
                v = regs[a.key]
                if isinstance(v, tuple):       # a free read: the filter becomes its requirement
                    if (a.thread, v[1]) in read_reqs:
                        raise OracleError(f"{test.name}: two filter atoms on {a.key}")
                    read_reqs[(a.thread, v[1])] = a
                elif not evaluate(a, {a.key: v}):
                    keep = False
            if not keep:
                continue
        if not _provided(blocks, inits):
            continue
        out.extend(to_pre_executions(Layout(prog, blocks), static, read_reqs))
    return out

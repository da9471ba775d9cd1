"""Event graph builder for the ``opencl`` model file: OPENCL-dialect tests -> engine pre-executions.

The C builder (:mod:`oracle.models.rc11.builder`) gives the events of each combination of
thread paths with the C vocabulary (sets ``R W F IW FR A NA ACQ REL SC CO CohR``, relations
``sb po loc ext rmw``); this module adds what OpenCL adds (litmus/parse_opencl.py records it):

- **regions** ``GLOBAL``, ``LOCAL``: an access (and the initial write) is in the regions of its
  location (``Test.meta["regions"]``; a generic-space location is in neither), a fence in the
  regions of its flags, a barrier's entry and exit fences in those of the barrier's flags;
- ``NAL``: accesses to (and the initial write of) a non-atomic location
  (``Test.meta["nonatomic"]``);
- **scopes**: ``WG``, ``DV``, ``ALL`` the atomics and fences (barrier fences included) of
  scope work-group, device, all_svm_devices; work-item-scoped operations and non-atomic
  accesses are in none. The sets are exact, not cumulative: the model's inclusive scopes pair
  two events "if they have the same scope" (OpenCL 2.0, 3.3.4, as the paper's herd
  transcription writes it: ``swg & (WG * WG) | sdv & (DV * DV) | ALL * ALL``);
- **barriers**: ``EF`` (entry fences: release) and ``XF`` (exit fences: acquire), both in ``F``;
  relation ``syncbar`` pairs the fences of one barrier instance: the same id (the ``Bn`` label)
  and the same occurrence (the k-th time each thread executes that barrier);
- relations ``int`` (same work-item; an initial write is its own), ``swg`` and ``sdv`` (same
  work-group, same device: thread events only); ``nrf`` is the C builder's (a read never reads a
  po-later write of its thread) kept only for locations in a region, where it holds.

The dialect has no no-thin-air axiom (``allow thin-air`` in ``opencl.model``): read values come
from seeded, thin-air value domains (litmus/cfg.py), as for c11 and vulkan.
"""

from __future__ import annotations

from litmus.cfg import attr
from litmus.ir import Test

from oracle.events import PreExecution
from oracle.models.rc11.builder import RELS as C_RELS, SETS as C_SETS, path_combinations, \
    to_pre_execution

#: the vocabulary this builder provides (declared by the unit, oracle/models/opencl/__init__.py)
SETS = C_SETS + ("GLOBAL", "LOCAL", "NAL", "WG", "DV", "ALL", "EF", "XF")
RELS = C_RELS + ("int", "swg", "sdv", "syncbar")

#: scope keyword -> the scope set of the events that name it
SCOPE_SETS = {"thread": (), "wg": ("WG",), "agent": ("DV",), "sys": ("ALL",)}
REGION_SETS = {"global": "GLOBAL", "local": "LOCAL"}


def flags(ins) -> tuple[str, ...]:
    """The regions a fence or barrier names (its ``flags=`` attribute)."""
    text = attr(ins, "flags") or ""
    return tuple(f for f in text.split(",") if f)


def add_opencl(pe: PreExecution, test: Test, x0) -> PreExecution:
    """Add the OpenCL sets and relations to the C pre-execution ``pe`` of events ``x0``."""
    meta = dict(test.meta)
    regions = dict(meta.get("regions", ()))
    nonatomic = set(meta.get("nonatomic", ()))
    n, n0 = pe.n, len(x0.events)
    occurrence: dict[tuple, int] = {}
    barrier_key: dict[int, tuple] = {}
    for e in x0.events:
        i, ins = e.eid, e.instr
        marks: list[str] = []
        if e.kind in ("R", "W"):
            marks += [REGION_SETS[r] for r in regions.get(e.loc, ())]
            if e.loc in nonatomic:
                marks.append("NAL")
            if e.atomic and ins is not None:
                marks += SCOPE_SETS[ins.scope]
        elif e.kind in ("F", "B"):
            marks += [REGION_SETS[r] for r in flags(ins)] + list(SCOPE_SETS[ins.scope])
            if e.kind == "B":
                entry = attr(ins, "fence") == "entry"
                marks += ["F", "EF", "REL"] if entry else ["F", "XF", "ACQ"]
                # the k-th execution of barrier id by a thread: its entry opens it, the exit
                # that follows belongs to the same instance
                key = (e.tid, attr(ins, "id"))
                k = occurrence.get(key, 0) + (1 if entry else 0)
                occurrence[key] = k
                barrier_key[i] = (key[1], k)
        pe.mark(i, *marks)
    placement_tid = [e.thread for e in pe.events]
    same_wg = [0] * n
    same_dev = [0] * n
    same_thread = [0] * n
    for a in range(n):
        ta = placement_tid[a]
        same_thread[a] |= 1 << a
        if ta < 0 or a >= n0:
            continue
        for b in range(n0):
            tb = placement_tid[b]
            if tb < 0:
                continue
            if tb == ta:
                same_thread[a] |= 1 << b
            if test.same(ta, tb, "wg"):
                same_wg[a] |= 1 << b
            if test.same(ta, tb, "agent"):
                same_dev[a] |= 1 << b
    syncbar = [0] * n
    for a, ka in barrier_key.items():
        for b, kb in barrier_key.items():
            if ka == kb:
                syncbar[a] |= 1 << b
    pe.rels.update(int=same_thread, swg=same_wg, sdv=same_dev, syncbar=syncbar)
    # a read never reads a po-later write of its own work-item when the location is in a region
    # (sb is then in that region's hb, and rf ; hb is irreflexive); a generic-space location is
    # in no hb, so there the C builder's pairs do not hold
    in_region = pe.set_mask("GLOBAL") | pe.set_mask("LOCAL")
    pe.rels["nrf"] = [row & in_region if (in_region >> w) & 1 else 0
                      for w, row in enumerate(pe.rels["nrf"])]
    for name in SETS:
        pe.sets.setdefault(name, set())
    return pe


def build(test: Test, allow: frozenset = frozenset()) -> list[PreExecution]:
    """Every pre-execution of an OPENCL-dialect test (one per combination of thread paths
    whose assumed read values some write can give). ``allow``: the model file's declared
    properties (``thin-air``: litmus/cfg.py value_domains)."""
    return [add_opencl(to_pre_execution(test, x0, combo), test, x0)
            for combo, x0 in path_combinations(test, allow)]

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

The tables are built straight from the paths (:mod:`oracle.models.path_tables`), on the C
builder's masks and rows (:func:`oracle.models.rc11.builder.c_tables`).

The dialect has no no-thin-air axiom (``allow thin-air`` in ``opencl.model``): read values come
from seeded, thin-air value domains (litmus/cfg.py), as for c11 and vulkan.
"""

from __future__ import annotations

from litmus.cfg import attr
from litmus.ir import Test

from oracle.events import PreExecution
from oracle.models.path_tables import Block, Layout, Program
from oracle.models.rc11.builder import RELS as C_RELS, SETS as C_SETS, c_tables, other_label, \
    path_combinations

#: the vocabulary this builder provides (declared by the unit, oracle/models/opencl/__init__.py),
#: in the order of the table's masks and relation rows (the C builder's first)
SETS = C_SETS + ("GLOBAL", "LOCAL", "NAL", "WG", "DV", "ALL", "EF", "XF")
RELS = C_RELS + ("int", "swg", "sdv", "syncbar")
SET_INDEX = {name: k for k, name in enumerate(SETS)}
REL_INDEX = {name: k for k, name in enumerate(RELS)}
_S = SET_INDEX
_NRF = C_RELS.index("nrf")

#: scope keyword -> the scope sets of the events that name it
SCOPE_SETS = {"thread": (), "wg": (_S["WG"],), "agent": (_S["DV"],), "sys": (_S["ALL"],)}
REGION_SETS = {"global": _S["GLOBAL"], "local": _S["LOCAL"]}
_ENTRY = (_S["F"], _S["EF"], _S["REL"])
_EXIT = (_S["F"], _S["XF"], _S["ACQ"])


def flags(ins) -> tuple[str, ...]:
    """The regions a fence or barrier names (its ``flags=`` attribute)."""
    text = attr(ins, "flags") or ""
    return tuple(f for f in text.split(",") if f)


class _Static:
    """Per test: each location's region sets and whether it is non-atomic, and per thread the
    threads in its work-group and in its device."""

    def __init__(self, test: Test):
        meta = dict(test.meta)
        regions = dict(meta.get("regions", ()))
        nonatomic = set(meta.get("nonatomic", ()))
        self.loc_sets = {loc.name: tuple(REGION_SETS[r] for r in regions.get(loc.name, ()))
                         + ((_S["NAL"],) if loc.name in nonatomic else ())
                         for loc in test.locations}
        nt = len(test.threads)
        self.same_wg = [[tb for tb in range(nt) if test.same(ta, tb, "wg")] for ta in range(nt)]
        self.same_dev = [[tb for tb in range(nt) if test.same(ta, tb, "agent")]
                         for ta in range(nt)]


def _block_marks(b: Block, static: _Static):
    """The block's events per set of :data:`SETS` that OpenCL adds (relative masks) and each
    barrier fence's instance ``(id, k)`` (relative event -> key), once per block."""
    got = b.memo.get("opencl")
    if got is not None:
        return got
    m = [0] * len(SETS)
    keys: dict[int, tuple] = {}
    occurrence: dict = {}
    for j, (kind, loc, _, _, atomic, _, _, ins) in enumerate(b.events):
        bit = 1 << j
        marks: tuple = ()
        if kind in ("R", "W"):
            marks = static.loc_sets[loc]
            if atomic:
                marks += SCOPE_SETS[ins.scope]
        elif kind in ("F", "B"):
            marks = tuple(REGION_SETS[r] for r in flags(ins)) + SCOPE_SETS[ins.scope]
            if kind == "B":
                entry = attr(ins, "fence") == "entry"
                marks += _ENTRY if entry else _EXIT
                # the k-th execution of barrier id by a thread: its entry opens it, the exit
                # that follows belongs to the same instance
                bid = attr(ins, "id")
                k = occurrence.get(bid, 0) + (1 if entry else 0)
                occurrence[bid] = k
                keys[j] = (bid, k)
        for s in marks:
            m[s] |= bit
    got = b.memo["opencl"] = (m, keys)
    return got


def to_pre_execution(layout: Layout, test: Test, static: _Static) -> PreExecution:
    """The engine's pre-execution of one combination of paths: the C builder's sets and
    relations (:func:`oracle.models.rc11.builder.c_tables`) and OpenCL's."""
    c_masks, rels = c_tables(layout)
    n, n0, nl = layout.n, layout.n0, layout.nlocs
    masks = c_masks + [0] * (len(SETS) - len(C_SETS))
    for i, name in enumerate(layout.prog.loc_names):      # the initial writes
        for s in static.loc_sets[name]:
            masks[s] |= 1 << i
    same_thread = [1 << i for i in range(nl)]
    same_wg = [0] * nl
    same_dev = [0] * nl
    barriers: dict[tuple, int] = {}
    for t, (b, off) in enumerate(zip(layout.blocks, layout.offsets)):
        m, keys = _block_marks(b, static)
        for k, rel in enumerate(m):
            if rel:
                masks[k] |= rel << off
        for j, key in keys.items():
            barriers[key] = barriers.get(key, 0) | 1 << (off + j)
        wg = 0
        for tb in static.same_wg[t]:
            wg |= layout.thread_masks[tb]
        dev = 0
        for tb in static.same_dev[t]:
            dev |= layout.thread_masks[tb]
        same_thread += [layout.thread_masks[t]] * b.k
        same_wg += [wg] * b.k
        same_dev += [dev] * b.k
    same_thread += [1 << i for i in range(n0, n)]
    same_wg += [0] * (n - n0)
    same_dev += [0] * (n - n0)
    syncbar = [0] * n
    for t, (b, off) in enumerate(zip(layout.blocks, layout.offsets)):
        for j, key in _block_marks(b, static)[1].items():
            syncbar[off + j] = barriers[key]
    # a read never reads a po-later write of its own work-item when the location is in a region
    # (sb is then in that region's hb, and rf ; hb is irreflexive); a generic-space location is
    # in no hb, so there the C builder's pairs do not hold
    in_region = masks[_S["GLOBAL"]] | masks[_S["LOCAL"]]
    rels[_NRF] = [row & in_region if (in_region >> w) & 1 else 0
                  for w, row in enumerate(rels[_NRF])]
    rels += [same_thread, same_wg, same_dev, syncbar]
    return layout.pre_execution(layout.attrs(), SET_INDEX, masks, REL_INDEX, rels, other_label)


def build(test: Test, allow: frozenset = frozenset()) -> list[PreExecution]:
    """Every pre-execution of an OPENCL-dialect test (one per combination of thread paths
    whose assumed read values some write can give). ``allow``: the model file's declared
    properties (``thin-air``: litmus/cfg.py value_domains)."""
    combos = path_combinations(test, allow)
    prog = Program(test)
    static = _Static(test)
    return [to_pre_execution(Layout(prog, blocks), test, static)
            for blocks in prog.blocks(combos)]

"""Event graph builder for the ``rc11`` model file: C-dialect tests -> engine pre-executions.

One :class:`~oracle.events.PreExecution` per combination of thread paths that an execution
without (po | rf) cycles can produce (:func:`litmus.cfg.justified_paths`: rc11 forbids such
cycles, so a read only ever returns a value written before it in some order compatible with
po | rf; c11 and opencl, without that axiom, and programs with unsequenced operands take the
value domains' combinations instead, :func:`path_combinations`). Each read carries its path's value as a required value (``REQ_EQ``), so the engine only
pairs it with writes of that value; every written value is then a constant of the path. Per
global location a final read (set ``FR``, thread -1) gives the final memory value: the model file
makes it read the co-last write. The tables are built straight from the paths
(:mod:`oracle.models.path_tables`).

Vocabulary provided to ``rc11.model``: sets ``R W F IW FR A NA ACQ REL SC CO CohR CoLast``;
relations ``sb`` (po plus initial writes before everything), ``po``, ``loc``, ``ext``, ``rmw``,
``cohord`` (po, for the engine's per-location pruning) and ``nrf`` (a read never reads a po-later
write of its own thread).
"""

from __future__ import annotations

from litmus.cfg import ThreadCode, free_rmw_code, justified_paths, paths_per_thread
from litmus.ir import Test

from oracle.errors import OracleError
from oracle.events import PreExecution
from oracle.models.path_tables import Block, Layout, Program

#: the vocabulary this builder provides (declared by the unit, oracle/models/rc11/__init__.py),
#: in the order of the table's masks and relation rows
SETS = ("R", "W", "F", "IW", "FR", "A", "NA", "ACQ", "REL", "SC", "CO", "CohR", "CoLast")
RELS = ("sb", "po", "loc", "ext", "rmw", "cohord", "nrf")
SET_INDEX = {name: k for k, name in enumerate(SETS)}
REL_INDEX = {name: k for k, name in enumerate(RELS)}
(_R, _W, _F, _IW, _FR, _A, _NA, _ACQ, _REL, _SC, _CO, _COHR, _COLAST) = range(len(SETS))

REL = ("rel", "acq_rel", "sc")
ACQ = ("acq", "acq_rel", "sc")


def _block_sets(b: Block) -> list[tuple[int, int]]:
    """The block's non-empty sets of :data:`SETS` as (set, relative mask) pairs, once per
    block."""
    got = b.memo.get("rc11-sets")
    if got is not None:
        return got
    m: dict = {}
    table = _EVENT_SETS
    bit = 1
    for kind, _, _, order, atomic, _, _, _ in b.events:
        sets = table.get((kind, order, atomic))
        if sets is None:
            sets = _event_sets(kind, order, atomic)
        for k in sets:
            m[k] = m.get(k, 0) | bit
        bit <<= 1
    got = b.memo["rc11-sets"] = list(m.items())
    return got


def _event_sets(kind: str, order, atomic: bool) -> tuple[int, ...]:
    """The sets of :data:`SETS` an event of a C-dialect path is in (besides those of the initial
    writes and final reads)."""
    out = []
    if kind == "R":
        out += [_R, _A if atomic else _NA, _COHR]
        if order in ACQ:
            out.append(_ACQ)
    elif kind == "W":
        out += [_W, _A if atomic else _NA, _CO]
        if order in REL:
            out.append(_REL)
    elif kind == "F":
        out.append(_F)
        if order in REL:
            out.append(_REL)
        if order in ACQ:
            out.append(_ACQ)
    elif kind != "B":       # an OpenCL barrier's fences: in no C set (opencl adds theirs)
        raise OracleError(f"internal: a C-dialect path has a {kind} event")
    if order == "sc":
        out.append(_SC)
    return tuple(out)


#: (kind, order, atomic) -> :func:`_event_sets`, for every kind and C order (a constant table:
#: another order is computed each time)
_EVENT_SETS = {(kind, order, atomic): _event_sets(kind, order, atomic)
               for kind in ("R", "W", "F", "B")
               for order in (None, "na", "rlx", "con", "acq", "rel", "acq_rel", "sc")
               for atomic in (False, True)}


def other_label(kind: str, order, ins) -> str:
    return f"F {order}" if kind == "F" else kind


def to_pre_execution(layout: Layout) -> PreExecution:
    """The engine's pre-execution of one combination of paths."""
    masks, rels = c_tables(layout)
    return layout.pre_execution(layout.attrs(), SET_INDEX, masks, REL_INDEX, rels, other_label)


def c_tables(layout: Layout) -> tuple[list[int], list[list[int]]]:
    """One combination's set masks (:data:`SETS` order) and relation rows (:data:`RELS`
    order), for this builder and the OpenCL one, which adds its own. (The masks are made in
    :meth:`Layout.rows`' pass over the blocks.)"""
    n0, n, iw = layout.n0, layout.n, layout.iw
    masks = [0] * len(SETS)
    masks[_W] = masks[_IW] = masks[_A] = masks[_CO] = iw
    po, rmw, nrf, ext, loc = layout.rows(_block_sets, masks)
    finals = ((1 << n) - 1) & ~((1 << n0) - 1)
    masks[_R] |= finals
    masks[_FR] = finals
    masks[_COLAST] = finals     # the final reads read the co-last write (engine hint CoLast)
    nl = layout.nlocs
    sb = [((1 << n0) - 1) & ~iw] * nl + po[nl:]     # po plus the initial writes before everything
    return masks, [sb, po, loc, ext, rmw, po, nrf]


def path_combinations(test: Test, allow: frozenset = frozenset()) -> list:
    """The combinations of thread paths both C builders (rc11 and c11 here, opencl) use.

    ``allow``: the model file's declared properties. rc11 declares none: its (po | rf)
    acyclicity means a read only returns a value written before it in some order compatible
    with po | rf, which :func:`litmus.cfg.justified_paths` explores directly. A model with
    ``allow thin-air`` (c11, opencl) also gets values that only a (po | rf) cycle justifies,
    and values out of thin air (litmus/cfg.py: value_domains): the combinations of its value
    domains' paths in which some write gives every value a read assumed
    (path_executions.justifiable_combinations). A program with unsequenced accesses (C
    operands, :func:`litmus.cfg.unsequenced`) takes that route too under rc11 (without thin-air
    values): po does not order such a pair, so a read may return a value that only a write
    after it in the thread's code (but not sequenced after it) justifies, which
    justified_paths' thread-order exploration would miss."""
    thin = "thin-air" in allow
    try:
        if not thin:
            decoded = [ThreadCode(th.code) for th in test.threads]
            if not any(tc.unseq for tc in decoded):
                return justified_paths(test, decoded=decoded)
        paths = paths_per_thread(test, seed=thin, thin_air=thin)
    except ValueError as e:
        raise OracleError(str(e)) from None
    from oracle.models.path_executions import justifiable_combinations
    return list(justifiable_combinations(test, paths))


def build(test: Test, allow: frozenset = frozenset()) -> list[PreExecution]:
    """Every pre-execution of a C-dialect test (one per combination of thread paths,
    :func:`path_combinations`)."""
    combos = path_combinations(test, allow)
    prog = Program(test)
    return [to_pre_execution(Layout(prog, blocks)) for blocks in prog.blocks(combos)]


def build_compact(test: Test, allow: frozenset = frozenset(),
                  most: int = 0) -> list[PreExecution] | None:
    """Pre-executions for a verdict that needs no statistics of the full build, or None where
    :func:`build`'s serve as well.

    A program whose rmws' results feed nothing but their own writes (a counter of
    ``atomic_fetch_add``s whose results are only observed) makes :func:`build` enumerate every
    combination of the values those rmws read: the paths fix each value, so six threads with six
    such rmws on one location give tens of thousands of pre-executions, each searched alone.
    Those rmws' values decide no path (:func:`litmus.cfg.free_rmw_code`); left to the execution
    (the engine computes an rmw write's value from its read, as it does for AMDGPU), the same
    consistent executions and outcomes come from far fewer pre-executions (one, for straight-line
    code), but other numbers of candidates: only a verdict may come from them.

    None when the test has no free rmw or its full build has at most ``most`` pre-executions
    (found by a path enumeration stopped past ``COMPACT_STEPS * most`` partial executions)."""
    if "thin-air" in allow or not any([ins.base == "rmw" for th in test.threads
                                       for ins in th.code]):
        return None             # (most tests: no rmw, nothing to decode)
    decoded = [ThreadCode(th.code) for th in test.threads]
    free = free_rmw_code(test, decoded)
    if free is None:
        return None
    try:
        if len(justified_paths(test, limit=COMPACT_STEPS * max(most, 1),
                               decoded=decoded)) <= most:
            return None
    except ValueError:
        pass                    # past the enumeration's bound: more than most, by far
    try:
        combos = justified_paths(test, decoded=free)
    except ValueError as e:
        raise OracleError(str(e)) from None
    prog = Program(test)
    return [to_pre_execution(Layout(prog, blocks)) for blocks in prog.blocks(combos)]


#: partial executions of the full path enumeration per pre-execution that
#: :func:`build_compact` lets it explore before it takes the compact form
COMPACT_STEPS = 100

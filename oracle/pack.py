"""Pack a pre-execution into the arrays of the search (:mod:`oracle.explore`).

:func:`search_pe` packs and explores in one compiled call per block (what ``oracle.check`` and
``oracle.allows`` use); :func:`pack` returns the packed arrays themselves (explanations, tests).

From the packed form of a pre-execution (:class:`oracle.events.Table`: event attribute rows, set
masks, relation matrix) one compiled pass (:func:`oracle.prepare.prepare_arrays`) produces

- the model's base slots (every set and relation the compiled model names, by slot), in rows of
  ``W = ceil(n / 64)`` words;
- per read: its candidate writes (same location, not excluded by ``nrf``, not breaking the read's
  required value when the write's value is a constant), plus undef where the read is in
  ``UndefOK``; its kind: a choice of the search, a final-memory read of the co-last write
  (``CoLast``, where every write of its location is co-ordered) or a read chosen alone at the
  leaves (``Indep``);
- per location copy: its events, its initial write (``IW``), its other co-ordered writes (set
  ``CO``), its coherence mask;
- per event: rmw write, the write taking its value from it, read flag, value attributes, location,
  instruction and thread; the rows of ``cohord`` and ``incl``.

The readable derivation of the same candidates (``tests/reference.py``: ``rf_candidates``,
``co_groups``) is what the pure-Python reference evaluator of the tests enumerates; the property
tests compare the two on generated programs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import OracleError
from .events import UNDEF_VAL, PreExecution, table_of
from .engine import PENDING, event_mask, inc_tables, rmw_value
from .explore import WILD, search_one_word, search_words
from .prepare import Events, Locations, Model, Observables, Options, Reads, prepare
from .lang import DYNAMIC, Program

#: sets and relations the search itself reads (index into ``special``): R, W and rmw always,
#: the others (search hints, :mod:`oracle.hints`) where the model unit declares them
_SPECIAL_SETS = ("R", "W", "CO", "IW", "UndefOK", "Indep", "CohR", "CohA", "CohRmw", "CoLast")
_SPECIAL_RELS = ("nrf", "rmw", "cohord", "incl")
_ALWAYS = frozenset({"R", "W", "rmw"})


@dataclass
class Packed:
    """A pre-execution packed into the search's arrays: its base slots (rows of ``words``
    uint64) and the named tuples :class:`oracle.prepare.Reads`, :class:`~oracle.prepare.
    Locations`, :class:`~oracle.prepare.Events` and :class:`~oracle.prepare.Observables`."""

    pe: PreExecution
    slots: np.ndarray
    reads: Reads
    locs: Locations
    events: Events
    obs: Observables
    words: int

    def co_writes(self) -> list[tuple[int, list[int]]]:
        """Per location: (initial write or -1, the other co-ordered writes)."""
        lc = self.locs
        return [(int(lc.co_init[x]), [int(w) for w in lc.co_writes[x, :lc.co_n[x]]])
                for x in range(lc.co_init.shape[0])]

    def values(self, src: dict[int, int]) -> list[int] | None:
        """Every event's value for one candidate (``src``: read -> write or -1 for undef); None
        where an rmw value does not resolve or a required value breaks. Events at no location
        get 0."""
        n = self.pe.n
        ev = self.events
        val = [0 if not (ev.is_read[i] or ev.wsrc[i] >= 0) else PENDING for i in range(n)]
        for i in range(n):
            if val[i] == 0 and not ev.is_read[i]:
                val[i] = int(ev.val_const[i])
        for _ in range(n + 1):
            for i in range(n):
                if val[i] != PENDING:
                    continue
                if ev.is_read[i]:
                    w = src.get(i, -1)
                    val[i] = UNDEF_VAL if w < 0 else val[w]
                else:
                    v = val[int(ev.wsrc[i])]
                    if v != PENDING:
                        val[i] = int(rmw_value(int(ev.wop[i]), v, int(ev.wopnd[i])))
        for i in range(n):
            v = val[i]
            if v == PENDING:
                return None
            mode = int(ev.req_mode[i])
            if mode and v != UNDEF_VAL and (mode == 1) != (v == int(ev.req_val[i])):
                return None
        return val


#: (model, set vocabulary, relation vocabulary) -> slot maps; the vocabularies are kept in the
#: value and compared by identity, so a recycled id() never maps to stale indices
_MAPS: dict = {}


def _slot_maps(prog: Program, set_index: dict, rel_index: dict, hints: frozenset):
    key = (id(prog), id(set_index), id(rel_index), hints)
    hit = _MAPS.get(key)
    if hit is not None and hit[0] is prog and hit[1] is set_index and hit[2] is rel_index:
        return hit[3]
    set_slot, set_src, rel_slot, rel_src = [], [], [], []
    for name in prog.base[len(DYNAMIC):]:
        if name in set_index:
            set_slot.append(prog.slots[name])
            set_src.append(set_index[name])
        elif name in rel_index:
            rel_slot.append(prog.slots[name])
            rel_src.append(rel_index[name])
        else:
            raise OracleError(f"model {prog.name} uses {name!r}, which the event builder does "
                              f"not provide")
    use = hints | _ALWAYS
    special = np.array([set_index.get(s, -1) if s in use else -1 for s in _SPECIAL_SETS]
                       + [rel_index.get(r, -1) if r in use else -1 for r in _SPECIAL_RELS],
                       np.int64)
    maps = tuple(np.array(x, np.int64) for x in (set_slot, set_src, rel_slot, rel_src)) + (special,)
    if len(_MAPS) > 64:
        _MAPS.clear()
    _MAPS[key] = (prog, set_index, rel_index, maps)
    return maps


def words_of(n: int) -> int:
    """uint64 words per relation row for ``n`` events."""
    return max(1, (n + 63) // 64)


def table_arrays(t) -> tuple[np.ndarray, np.ndarray, int]:
    """A table's set masks as ``uint64[sets, W]`` and relations as flat rows
    ``uint64[relations, n * W]`` (one-word tables keep their arrays: a 1-D mask vector and a
    2-D matrix are the same data)."""
    n = t.n
    W = words_of(n)
    masks = t.masks.reshape(t.masks.shape[0], -1) if t.masks.ndim == 1 else t.masks
    rels = t.rels.reshape(t.rels.shape[0], -1)
    if masks.shape[1] != W or rels.shape[1] != n * W:
        raise OracleError(f"internal: a table of {n} events has {masks.shape[1]}-word masks")
    return np.ascontiguousarray(masks), np.ascontiguousarray(rels), W


def _inputs(pe: PreExecution, prog: Program, hints: frozenset):
    """What the compiled pass takes besides the model: the table's arrays, the slot maps of
    ``prog`` for its vocabulary (and the search hints used), and the observables as (kind,
    argument) arrays (kind 1 = an event's value)."""
    t = table_of(pe)
    masks, rels, W = table_arrays(t)
    maps = _slot_maps(prog, t.set_index, t.rel_index, hints)
    kinds = []
    args = []
    for _, (k, a) in pe.observables:
        kinds.append(k == "event")
        args.append(a)
    obs = np.array(kinds + args, np.int64)          # (one conversion, two views)
    nobs = len(args)
    return t.attrs, masks, rels, W, maps, obs[:nobs], obs[nobs:]


def pack(pe: PreExecution, prog: Program, hints: frozenset) -> Packed:
    """The search's arrays of a pre-execution as a :class:`Packed` (for inspection, tests and
    explanations; :func:`search_pe` does the same work inside its compiled call). ``hints``:
    the search hints the model unit declares (:mod:`oracle.hints`)."""
    attrs, masks, rels, W, (set_slot, set_src, rel_slot, rel_src, special), obs_kind, obs_arg = \
        _inputs(pe, prog, hints)
    slots, rd, lc, ev = prepare(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src,
                                special, prog.nslots)
    return Packed(pe, slots, rd, lc, ev, Observables(obs_kind, obs_arg), W)


#: id(program) -> (program, its Model, the Model as a plain tuple): made once per loaded model,
#: not once per search
_MODELS: dict = {}


def model_arrays(prog: Program) -> Model:
    """The compiled model's arrays (:class:`oracle.prepare.Model`)."""
    return _model_entry(prog)[1]


def _model_entry(prog: Program):
    hit = _MODELS.get(id(prog))
    if hit is not None and hit[0] is prog:
        return hit
    model = Model(prog.prelude, prog.ops, prog.prefix_ops, len(prog.checks), prog.upper_ops,
                  inc_tables((prog.ops, prog.prefix_ops, prog.upper_ops), prog.nslots))
    if len(_MODELS) > 64:
        _MODELS.clear()
    hit = _MODELS[id(prog)] = (prog, model, tuple(model))
    return hit


_NO_ROWS = np.zeros((0, 0), np.int64)


def options(n: int, nobs: int, *, max_steps: int = -1, emask=None, omask=None,
            bound: bool = True, raisable: int = -1, forward: bool = True, hints: bool = True,
            targets=None, found=None, want_state: bool = True, upper: bool = True,
            canon=None, tne=None, first: bool = False, stop_flags: int = 0,
            tex=None) -> Options:
    """The search's :class:`~oracle.prepare.Options`; by default the whole program (every event,
    every observable), every outcome, bounding on with every flag assumed raisable, no canonical
    co constraint (``canon``: :mod:`oracle.symmetry`); ``tne`` marks the asked values that are
    ``!=`` values (the shape of ``targets``; none by default), ``first`` stops at the first asked
    outcome found, ``stop_flags`` at the first raising of one of those flags; ``tex`` (shape
    (targets, nobs, K), ``WILD`` padding) the further values a ``!=`` asked value excludes."""
    if emask is None or omask is None or targets is None or found is None:
        every, all_obs, none = _defaults(n, nobs)
        emask = every if emask is None else emask
        omask = all_obs if omask is None else omask
        targets = none if targets is None else targets
        found = none if found is None else found
    if tne is None:
        tne = np.zeros(targets.shape, np.bool_)
    if tex is None:
        tex = np.full(targets.shape + (1,), WILD, np.int64)
    return Options(want_state, max_steps, emask, omask, bound, np.int64(raisable), forward,
                   hints, targets, found, upper, _NO_CANON if canon is None else canon, tne,
                   first, np.int64(stop_flags), tex)


_NO_CANON = np.zeros(0, np.int64)


#: (events, observables) -> the default arrays of :func:`options` (the search only reads them)
_DEFAULTS: dict = {}


def _defaults(n: int, nobs: int):
    """Every event's mask, every observable, no outcome rows: made once per size, since the
    compiled search reads its options' arrays and never writes them."""
    hit = _DEFAULTS.get((n, nobs))
    if hit is None:
        if len(_DEFAULTS) > 4096:
            _DEFAULTS.clear()
        hit = _DEFAULTS[(n, nobs)] = (event_mask(n, words_of(n)), np.ones(nobs, np.bool_),
                                      np.zeros((0, nobs), np.int64))
    return hit


def search_pe(pe: PreExecution, prog: Program, hints: frozenset,
              opt: Options | tuple | None = None, attrs: np.ndarray | None = None):
    """Pack and explore one pre-execution (one block of it, per ``opt``) in one compiled call:
    (states, nstates, candidates, consistent, flags, fail_counts, hit), see
    :func:`oracle.explore._search_for`. ``opt``: :func:`options`, or the same fields as a plain
    tuple; ``attrs``: the table's event rows with other required values (an outcome query)."""
    t_attrs, masks, rels, W, (set_slot, set_src, rel_slot, rel_src, special), obs_kind, obs_arg = \
        _inputs(pe, prog, hints)
    if attrs is None:
        attrs = t_attrs
    if opt is None:
        opt = options(pe.n, obs_kind.shape[0])
    # (plain tuples: see oracle.explore._search_for)
    if W == 1:
        return search_one_word(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src,
                               special, prog.nslots, _model_entry(prog)[2], obs_kind, obs_arg,
                               tuple(opt))
    return search_words(attrs, masks, rels, W, set_slot, set_src, rel_slot, rel_src, special,
                        prog.nslots, _model_entry(prog)[2], obs_kind, obs_arg, tuple(opt))

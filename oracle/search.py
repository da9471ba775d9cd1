"""Search one pre-execution: split it into blocks, explore each, combine their outcomes.

:func:`explore_pe` is what ``oracle.check`` (every allowed outcome) and ``oracle.allows`` (only
the asked outcomes) call per pre-execution. A program small enough that its search is cheap is
explored whole; for a larger one, :func:`oracle.couple.blocks` says which groups of locations the
model couples, and each group is explored on its own (:func:`oracle.pack.search_pe` with the
group's event mask); the outcomes are the product of the groups' outcomes, the consistent
executions the product of their counts, the flags those raised in some group (when every group
has a consistent execution).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from .couple import blocks
from .events import (C_LOC, C_REQ_MODE, C_REQ_VAL, REQ_EQ, REQ_NE, UNDEF_VAL, WORD,
                     PreExecution, table_of)
from .explore import DEFINED, WILD
from .hints import COHERENCE_HINTS
from .lang import Program
from .pack import _NO_CANON, _defaults, options, pack, search_pe, words_of
from .registry import ModelUnit
from .symmetry import find as find_symmetry

#: explore whole any pre-execution whose candidates (product of the reads' candidate counts and
#: the locations' co orders, estimated from its events) are at most this many; split larger ones
SPLIT_ABOVE = 1 << 12


@dataclass
class Found:
    """What the search of one pre-execution found: outcomes, model evaluations, consistent
    executions visited, flags raised, per asked outcome whether it was found; ``exhausted`` when
    the step budget ran out.

    The outcomes are ``parts``: (columns, rows) pairs whose product is the outcome set (each
    part's rows distinct int64 values of its columns, in the pre-execution's observables order;
    undef is ``events.UNDEF_VAL``; a column in no part is 0; ``None``: no outcome). A search of the
    whole pre-execution gives one part with every column; a split search one part per block.
    The product stays unexpanded: the 21-event AMDGPU shape's 8 million outcomes are the product
    of two blocks of a few thousand rows each, and :class:`oracle.states.States` packs them
    without ever building the 8 million rows. :attr:`states` expands it (distinct rows, in no
    particular order)."""

    parts: list | None = None
    nobs: int = 0
    candidates: int = 0
    consistent: int = 0
    flags: int = 0
    hits: list[bool] = field(default_factory=list)
    exhausted: bool = False

    @property
    def states(self) -> np.ndarray:
        """The outcome rows (the product of the parts), an int64 array."""
        return product_rows(self.parts, self.nobs)


def product_rows(parts: list | None, nobs: int) -> np.ndarray:
    """The rows of the product of ``parts`` ((columns, rows) pairs; see :class:`Found`): every
    row so far with every row of the next part."""
    if parts is None:
        return np.zeros((0, nobs), np.int64)
    if len(parts) == 1 and len(parts[0][0]) == nobs and parts[0][0] == list(range(nobs)):
        return parts[0][1]
    rows = np.zeros((1, nobs), np.int64)
    for cols, part in parts:
        k = part.shape[0]
        rows = np.repeat(rows, k, axis=0)
        if cols:
            rows[:, cols] = np.tile(part, (rows.shape[0] // max(k, 1), 1))
    return rows


def estimate(pe: PreExecution) -> float:
    """An upper bound of the candidates of a pre-execution: per location, (writes + 1) choices
    for each read and the orders of its writes."""
    t = table_of(pe)
    locs = t.attrs[:, C_LOC]
    r, w = t.mask("R"), t.mask("W")
    per: dict[int, list[int]] = {}
    for i, x in enumerate(locs.tolist()):
        if x >= 0:
            c = per.setdefault(x, [0, 0])
            c[0] += (r >> i) & 1
            c[1] += (w >> i) & 1
    est = 1.0
    for nr, nw in per.values():
        est *= float(nw + 1) ** nr
        for k in range(2, nw + 1):
            est *= k
    return est


def explore_pe(pe: PreExecution, prog: Program, unit: ModelUnit, *, budget: int | None = None,
               flags: int = 0, known=None, targets: list[tuple] | None = None,
               tne=None, tex=None) -> Found:
    """Explore ``pe``: every outcome (``targets`` None; ``known`` outcomes already found — tuples
    or rows of an array, in the pre-execution's observables order — and ``flags`` already
    raised, let bounding skip what cannot add to them) or, for an outcome query, until each tuple
    of ``targets`` (values in the pre-execution's observables order) is found; ``tne`` (a bool
    array of the targets' shape) marks the asked values that mean "any value but this one", and
    ``tex`` (shape (targets, nobs, K), ``WILD`` padding) the further values such a one excludes."""
    nobs = len(pe.observables)
    if known is not None and len(known) == 0:
        known = None
    nflags = (1 << len(prog.flags)) - 1
    hints = not unit.hints.isdisjoint(COHERENCE_HINTS)
    steps = -1 if budget is None else budget
    tgt = None if targets is None else np.array(targets, np.int64).reshape(len(targets), nobs)
    if tgt is not None and tne is None:
        tne = np.zeros(tgt.shape, np.bool_)
    attrs = None
    if tgt is not None and tgt.shape[0] == 1:
        attrs = required(pe, tgt[0], tne[0])
        if attrs is None:
            return Found(hits=[False])
    # every pre-execution is tried whole first, within QUERY_WHOLE_STEPS: an outcome query's
    # asked values prune most of it, and most programs over the estimate still have a small
    # search (the estimate bounds candidates, not the search), while splitting costs
    # milliseconds of Python (oracle/couple.py). Only a search that does not finish there asks
    # the estimate: a small pre-execution (at most SPLIT_ABOVE candidates) is then searched
    # whole within the budget, a larger one split into blocks.
    cap = QUERY_WHOLE_STEPS if steps < 0 else min(steps, QUERY_WHOLE_STEPS)
    found = None if known is None else _rows(known, nobs)
    if tgt is None and pe.n <= WORD:
        # every outcome of a one-word program (what oracle.check asks of nearly every test):
        # the same search as search_pe's below, its inputs made in fewer Python steps
        st, ns, cands, cons, fl, hit = _search_whole(pe, prog, unit.hints, hints, cap,
                                                     nflags & ~flags, found, nobs)
    else:
        st, ns, cands, cons, fl, _, hit = search_pe(
            pe, prog, unit.hints, options(pe.n, nobs, max_steps=cap, raisable=nflags & ~flags,
                                          hints=hints, targets=tgt, found=found, tne=tne,
                                          tex=tex), attrs)
    if ns < 0 and estimate(pe) <= SPLIT_ABOVE:          # small: whole, within the budget
        if 0 <= steps <= cap:
            return Found(candidates=int(cands), exhausted=True)
        st, ns, cands, cons, fl, _, hit = search_pe(
            pe, prog, unit.hints, options(pe.n, nobs, max_steps=steps, raisable=nflags & ~flags,
                                          hints=hints, targets=tgt, found=found, tne=tne,
                                          tex=tex), attrs)
        if ns < 0:
            return Found(candidates=int(cands), exhausted=True)
    if ns >= 0:
        # (a copy: the search's row buffer is larger than its rows)
        return Found([(list(range(nobs)), st[:ns, :nobs].copy())], nobs, cands, cons, fl,
                     hit.tolist())
    split = _split(pe, prog, unit.hints)
    W = words_of(pe.n)
    owner = _observable_blocks(pe, split.groups)
    # the full set of a large search: interchangeable threads, if any, are explored one
    # execution per orbit (oracle/symmetry.py)
    sym = find_symmetry(pe) if tgt is None else None
    parts = []
    out = Found(nobs=nobs, hits=[True] * (0 if tgt is None else tgt.shape[0]))
    for b, (group, raisable) in enumerate(zip(split.groups, split.raisable)):
        emask = np.array([(group >> (64 * k)) & ((1 << 64) - 1) for k in range(W)], np.uint64)
        omask = np.array([owner[o] == b for o in range(nobs)], np.bool_)
        cols = [o for o in range(nobs) if omask[o]]
        act = None if sym is None else sym.on_block(group)
        found = None
        if known is not None and len(split.groups) == 1 and act is None:
            # (outcomes known from elsewhere need not be closed under the symmetry: bounding
            # by them could skip a canonical execution whose images are not known)
            found = _rows(known, nobs)
        st, ns, cands, cons, fl, _, hit = search_pe(
            pe, prog, unit.hints,
            options(pe.n, nobs, max_steps=steps, emask=emask, omask=omask,
                    raisable=raisable & ~flags, hints=hints, targets=tgt, found=found,
                    canon=None if act is None else act.canon, tne=tne, tex=tex), attrs)
        out.candidates += int(cands)
        if ns < 0:
            out.exhausted = True
            return out
        rows = st[:ns, :nobs][:, cols]
        if act is not None:             # the canonical executions' outcomes and their images
            rows = act.close(rows, cols)
            cons *= act.order
        parts.append((cols, rows, int(cons), int(fl)))
        out.hits = [h and bool(x) for h, x in zip(out.hits, hit)]
    if any(cons == 0 for _, _, cons, _ in parts):
        out.hits = [False] * len(out.hits)
        return out
    out.consistent = 1
    for cols, rows, cons, fl in parts:
        out.consistent *= cons
        out.flags |= fl
    if tgt is not None:                      # an outcome query needs the hits only
        return out
    # the outcomes: the product of the blocks' (kept as parts: see Found)
    out.parts = [(cols, rows) for cols, rows, _, _ in parts]
    return out


def _search_whole(pe: PreExecution, prog: Program, unit_hints: frozenset, hints: bool, cap: int,
                  raisable: int, found, nobs: int):
    """``search_pe(pe, prog, unit_hints, options(pe.n, nobs, max_steps=cap, raisable=raisable,
    hints=hints, found=found))`` of a program of at most 64 events (one word per row), the
    options made as the plain tuple the compiled search takes (no :class:`Options` to make and
    convert): (states, nstates, candidates, consistent, flags, hit)."""
    every, all_obs, none = _defaults(pe.n, nobs)
    # (the fields of oracle.prepare.Options, in order)
    opt = (True, cap, every, all_obs, True, np.int64(raisable), True, hints, none,
           none if found is None else found, True, _NO_CANON, _NO_TNE, False, _NO_FLAGS,
           _NO_TEX)
    st, ns, cands, cons, fl, _, hit = search_pe(pe, prog, unit_hints, opt)
    return st, ns, cands, cons, fl, hit


_NO_TNE = np.zeros((0, 0), np.bool_)
_NO_TEX = np.zeros((0, 0, 1), np.int64)
_NO_FLAGS = np.int64(0)


def _rows(known, nobs: int) -> np.ndarray:
    """Known outcomes (tuples, or rows of an array) as an int64 array of ``nobs`` columns."""
    if type(known) is np.ndarray and known.dtype == np.int64 and known.ndim == 2 \
            and known.flags.c_contiguous:
        return known
    return np.asarray(known, np.int64).reshape(len(known), nobs)


#: steps a search (an outcome query or the full set) of a pre-execution above SPLIT_ABOVE may take
#: searching it whole before it is split into blocks (which takes milliseconds of Python per
#: pre-execution)
QUERY_WHOLE_STEPS = 20_000

#: pre-execution -> (program, hints, its blocks): a caller that searches one pre-execution
#: several times (the outcome queries of :class:`oracle.judge.Judge`) splits it once
_SPLITS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _split(pe: PreExecution, prog: Program, hints: frozenset):
    """:func:`oracle.couple.blocks` of ``pe`` under ``prog``, kept while ``pe`` lives."""
    hit = _SPLITS.get(pe)
    if hit is not None and hit[0] is prog and hit[1] == hints:
        return hit[2]
    split = blocks(pack(pe, prog, hints), prog)
    _SPLITS[pe] = (prog, hints, split)
    return split


def required(pe: PreExecution, outcome, ne=None) -> np.ndarray | None:
    """The event rows of ``pe`` with the values of one asked outcome (in the pre-execution's
    observables order; ``WILD`` leaves an observable free, ``DEFINED`` requires no value: the
    search's outcome comparison asks it not to be undef) as required values of their events,
    so that the search only pairs reads with writes that can give them (an undef value meets
    any requirement, as it matches any value); None when the pre-execution cannot produce the
    outcome (a constant observable differs). An event whose path already requires a value the
    outcome contradicts keeps that requirement: only undef can meet both, and the search's
    outcome comparison decides. ``ne[i]`` asks for any value but ``outcome[i]`` (a ``!=`` atom:
    required value ``REQ_NE``)."""
    attrs = table_of(pe).attrs.copy()
    for i, ((_, (kind, a)), v) in enumerate(zip(pe.observables, outcome)):
        v = int(v)
        if ne is not None and ne[i] and v != WILD:
            if kind == "const":
                if a != UNDEF_VAL and a == v:
                    return None
                continue
            mode, have = int(attrs[a, C_REQ_MODE]), int(attrs[a, C_REQ_VAL])
            if mode == REQ_EQ and have != v:
                continue                # the path's value already differs: stronger
            if mode == REQ_EQ or mode == REQ_NE:
                continue                # only undef meets both, or a second != : the leaves
            attrs[a, C_REQ_MODE] = REQ_NE
            attrs[a, C_REQ_VAL] = v
            continue
        if v == WILD:
            continue
        if v == DEFINED:            # any value but undef: no value to require (undef would
            if kind == "const" and a == UNDEF_VAL:   # meet any requirement); the leaves decide
                return None
            continue
        if kind == "const":
            if a != v:
                return None
            continue
        mode, have = int(attrs[a, C_REQ_MODE]), int(attrs[a, C_REQ_VAL])
        if (mode == REQ_EQ and have != v) or (mode == REQ_NE and have == v):
            # the path needs another value: only an undef read (which meets any requirement)
            # can give both; keep the path's requirement, the leaves compare the outcome
            continue
        attrs[a, C_REQ_MODE] = REQ_EQ
        attrs[a, C_REQ_VAL] = v
    return attrs


def _observable_blocks(pe: PreExecution, groups: list[int]) -> list[int]:
    """The block of each observable: its event's, or the first block for a constant."""
    out = []
    for _, (kind, a) in pe.observables:
        b = 0
        if kind == "event":
            b = next(i for i, g in enumerate(groups) if (g >> a) & 1)
        out.append(b)
    return out

"""Pre-executions: the event structure of a program, before rf and co are chosen.

An *event graph builder* (one per model unit: ``oracle/models/<name>/builder.py``) turns a
program into one or more :class:`PreExecution` s. Each one fixes the events, their attributes (as named *sets*, bitmasks over events) and the static base relations (``po``,
``loc``, ``rmw``, scope relations ..., as bit-matrix rows), plus how values flow:

- a write's value is a constant, or ``f(value of its rmw read)`` (``wsrc``/``wop``/``wopnd``);
  the search resolves values location by location in increasing ``loc_id``, so a write whose
  source read is at another location (an async copy) must have the higher ``loc_id``;
- a read may carry a *required value* (``req_mode`` EQ/NE ``req_val``): the search rejects an rf
  edge whose write value breaks it. Front ends with control flow (C ``if``, Vulkan branches, cas
  success/failure) enumerate one pre-execution per path and the oracle unions the outcomes.

The candidate search (:mod:`oracle.engine`) chooses, per read in set ``R``, a write in set ``W`` at
the same ``loc_id`` (or *undef*, where the read is in set ``UndefOK``), and per location a total
order ``co`` over the writes in set ``CO`` with the write in set ``IW`` first. The model file then
decides consistency over the base relations plus the dynamic ``rf``, ``co``, ``Rdef``, ``Rundef``.

Two representations of the same thing:

- the *readable* one: ``events`` (:class:`Event` objects with labels), ``sets`` (name -> set of
  event indices) and ``rels`` (name -> bitmask rows as Python ints). Builders of the conformance
  models fill it with :meth:`PreExecution.add`, ``mark`` and ``relate``; the pure-Python reference
  evaluator and ``explain`` read it.
- the *packed* one, a :class:`Table`: one int64 row of attributes per event (columns ``C_*``), set
  masks in a uint64 vector and relations in a ``uint64[relations, events]`` matrix. The AMDGPU
  builder emits it directly (building Python sets and rows per event cost more than the whole
  search); :mod:`oracle.pack` turns a table into the search's arrays without touching Python
  objects per event. A pre-execution built either way provides both: the missing one is derived
  on first use (:func:`table_of`, or lazily materialized ``events``/``sets``/``rels``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from litmus.rmw import RMW_CODES as _RMW_CODES

from .errors import TooManyEvents

#: events per word of a relation row; a table of more events has several words per row
WORD = 64
#: the largest program the engine decides (rows of MAX_EVENTS / WORD words)
MAX_EVENTS = 512
UNDEF_VAL = -(1 << 62)          # the engine's undef value (printed "undef")
REQ_NONE, REQ_EQ, REQ_NE = 0, 1, 2

#: rmw operations, by code (``wop``; 0 = constant write): the one encoding of litmus/rmw.py
RMW_CODES = _RMW_CODES

#: columns of :attr:`Table.attrs` (one row per event). ``C_KIND`` is builder-specific (a bitmask
#: over the builder's own set vocabulary); ``C_AUX`` is a spare builder-specific column.
(C_THREAD, C_LOC, C_VALUE, C_WSRC, C_WOP, C_WOPND, C_REQ_MODE, C_REQ_VAL, C_INSTR, C_RANK,
 C_KIND, C_AUX) = range(12)
NCOLS = 12


@dataclass
class Event:
    """One event. ``thread`` is -1 for initial writes and final-memory reads."""

    label: str                  # short text for explanations: "W x=1", "F rel.agent", "R y"
    thread: int
    loc_id: int = -1            # location copy (LDS has one per workgroup), -1 for non-accesses
    value: int = 0              # constant written value
    wsrc: int = -1              # rmw write: index of its read event
    wop: int = 0                # RMW_CODES
    wopnd: int = 0              # rmw operand
    req_mode: int = REQ_NONE
    req_val: int = 0
    instr: int = -1             # index of the instruction in its thread (for explanations)


@dataclass
class Table:
    """A pre-execution in packed form.

    ``attrs[i]`` holds event i's columns ``C_*``; ``masks[set_index[name]]`` is the bitmask of a
    set; ``rels[rel_index[name], i]`` is row i of a relation (bit j = the pair (i, j)). A name
    the builder does not know is an empty set/relation only if the model asks for it through
    :mod:`oracle.pack`, which raises an error instead (a typo in a model must not pass silently).
    ``labels`` makes the readable events on demand: a function ``i -> str``.
    """

    attrs: np.ndarray           # int64[n, NCOLS]
    set_index: dict
    masks: np.ndarray           # uint64[len(set_index)] (over 64 events: [.., words])
    rel_index: dict
    rels: np.ndarray            # uint64[len(rel_index), n] (over 64 events: [.., n, words])
    labels: object = None       # callable i -> label, or None

    @property
    def n(self) -> int:
        return self.attrs.shape[0]

    def mask(self, name: str) -> int:
        k = self.set_index.get(name)
        if k is None:
            return 0
        return join_words(self.masks[k])


class PreExecution:
    """Events + named sets (event index sets) + named static relations (bitmask rows: bit j of
    ``rels[name][i]`` is the pair (i, j); rows may be shorter than the event count).

    ``observables`` maps each outcome key to ``("event", i)`` (the value read/returned by event i)
    or ``("const", v)``; ``loc_names`` names each location copy; ``table`` is the packed form
    (see the module docstring), given by builders that emit it directly.
    """

    def __init__(self, events=None, sets=None, rels=None, observables=None, loc_names=None,
                 ub=None, barrier_events=None, table: Table | None = None):
        self._events = events if events is not None or table is not None else []
        self._sets = sets if sets is not None or table is not None else {}
        self._rels = rels if rels is not None or table is not None else {}
        self.observables: list[tuple[str, tuple[str, int]]] = observables or []
        self.loc_names: list[str] = loc_names or []
        self.ub: list[str] = ub or []           # UB known statically (barrier misuse ...)
        self.barrier_events: dict = barrier_events or {}   # (thread, barrier op index) -> event
        self.table = table

    # -- the readable form, derived from the table on first use --------------------------------
    @property
    def events(self) -> list[Event]:
        if self._events is None:
            t = self.table
            lab = t.labels or (lambda i: f"e{i}")
            self._events = [Event(lab(i), int(a[C_THREAD]), int(a[C_LOC]), int(a[C_VALUE]),
                                  int(a[C_WSRC]), int(a[C_WOP]), int(a[C_WOPND]),
                                  int(a[C_REQ_MODE]), int(a[C_REQ_VAL]), int(a[C_INSTR]))
                            for i, a in enumerate(t.attrs.tolist())]
        return self._events

    @property
    def sets(self) -> dict[str, set[int]]:
        if self._sets is None:
            t = self.table
            self._sets = {name: {i for i in range(t.n) if int(t.masks[k]) >> i & 1}
                          for name, k in t.set_index.items()}
        return self._sets

    @property
    def rels(self) -> dict[str, list[int]]:
        if self._rels is None:
            t = self.table
            self._rels = {name: [join_words(row) for row in t.rels[k]]
                          for name, k in t.rel_index.items()}
        return self._rels

    # -- building the readable form ------------------------------------------------------------
    def add(self, ev: Event, *sets: str) -> int:
        i = len(self.events)
        if i >= MAX_EVENTS:
            raise TooManyEvents(f"program has more than {MAX_EVENTS} events (the oracle's limit)")
        self.events.append(ev)
        for s in sets:
            self.sets.setdefault(s, set()).add(i)
        return i

    def mark(self, i: int, *sets: str) -> None:
        for s in sets:
            self.sets.setdefault(s, set()).add(i)

    def relate(self, name: str, a: int, b: int) -> None:
        rows = self.rels.setdefault(name, [])
        if len(rows) <= a:
            rows.extend([0] * (a + 1 - len(rows)))
        rows[a] |= 1 << b

    # -- queries --------------------------------------------------------------------------------
    def has(self, name: str, a: int, b: int) -> bool:
        rows = self.rels.get(name, ())
        return a < len(rows) and bool(rows[a] >> b & 1)

    def pairs(self, name: str) -> set[tuple[int, int]]:
        out = set()
        for a, row in enumerate(self.rels.get(name, ())):
            b = 0
            while row:
                if row & 1:
                    out.add((a, b))
                row >>= 1
                b += 1
        return out

    @property
    def n(self) -> int:
        return self.table.n if self.table is not None else len(self._events)

    def set_mask(self, name: str) -> int:
        if self.table is not None:
            return self.table.mask(name)
        m = 0
        for i in self.sets.get(name, ()):
            m |= 1 << i
        return m

    def rel_rows(self, name: str) -> list[int]:
        rows = list(self.rels.get(name, ()))[:self.n]
        return rows + [0] * (self.n - len(rows))

    def with_relation(self, name: str, rows: np.ndarray) -> "PreExecution":
        """A copy sharing everything but relation ``name`` (used per barrier schedule)."""
        t = self.table
        if t is not None:
            rel = t.rels.copy()
            rel[t.rel_index[name]] = rows if rel.ndim == 2 else \
                np.array([split_words(int(r), rel.shape[2]) for r in rows], np.uint64)
            t = Table(t.attrs, t.set_index, t.masks, t.rel_index, rel, t.labels)
        q = PreExecution(self._events, self._sets, None if self._rels is None else dict(self._rels),
                         self.observables, self.loc_names, list(self.ub), self.barrier_events, t)
        if q._rels is not None:
            q._rels[name] = [int(x) for x in rows]
        return q


def table_of(pe: PreExecution) -> Table:
    """The packed form of a pre-execution built in readable form (cached on ``pe``)."""
    if pe.table is not None:
        return pe.table
    n = pe.n
    attrs = np.zeros((n, NCOLS), np.int64)
    if n:
        attrs[:, :C_INSTR + 1] = np.array(
            [(e.thread, e.loc_id, e.value, e.wsrc, e.wop, e.wopnd, e.req_mode, e.req_val, e.instr)
             for e in pe.events], np.int64)
    set_index = {name: k for k, name in enumerate(pe.sets)}
    rel_index = {name: k for k, name in enumerate(pe.rels)}
    if n <= WORD:
        masks = np.array([pe.set_mask(name) for name in set_index] or [0], np.uint64)
        rels = np.zeros((max(len(rel_index), 1), n), np.uint64)
        for name, k in rel_index.items():
            rows = pe.rels[name][:n]
            if rows:
                rels[k, :len(rows)] = np.array(rows, np.uint64)
    else:
        if n > MAX_EVENTS:
            raise TooManyEvents(f"program has more than {MAX_EVENTS} events (the oracle's limit)")
        w = words(n)
        masks = np.array([split_words(pe.set_mask(name), w) for name in set_index] or
                         [[0] * w], np.uint64)
        rels = np.zeros((max(len(rel_index), 1), n, w), np.uint64)
        for name, k in rel_index.items():
            for i, row in enumerate(pe.rels[name][:n]):
                rels[k, i] = split_words(row, w)
    pe.table = Table(attrs, set_index, masks, rel_index, rels,
                     lambda i, evs=pe.events: evs[i].label)
    return pe.table


PENDING_REF = UNDEF_VAL + 1     # "not computed yet" while resolving rmw value chains


def words(n: int) -> int:
    """Words per relation row for ``n`` events."""
    return max(1, (n + WORD - 1) // WORD)


def split_words(x: int, w: int) -> list[int]:
    """The bit set ``x`` as ``w`` words, lowest first."""
    return [(x >> (WORD * k)) & ((1 << WORD) - 1) for k in range(w)]


def join_words(row) -> int:
    """A mask or relation row of a table (one word, or a vector of words) as a Python int."""
    if np.ndim(row) == 0:
        return int(row)
    return sum(int(v) << (WORD * k) for k, v in enumerate(row))

"""Pre-executions: the event structure of a program, before rf and co are chosen.

An *event graph builder* (one per model family: :mod:`oracle.build_amdgpu`, later rc11/vulkan
front ends) turns a program into one or more :class:`PreExecution` s. Each one fixes the events,
their attributes (as named *sets*, bitmasks over events) and the static base relations (``po``,
``loc``, ``rmw``, scope relations ..., as bit-matrix rows), plus how values flow:

- a write's value is a constant, or ``f(value of its rmw read)`` (``wsrc``/``wop``/``wopnd``);
- a read may carry a *required value* (``req_mode`` EQ/NE ``req_val``): the search rejects an rf
  edge whose write value breaks it. Front ends with control flow (C ``if``, Vulkan branches, cas
  success/failure) enumerate one pre-execution per path and the oracle unions the outcomes.

The candidate search (:mod:`oracle.engine`) chooses, per read in set ``R``, a write in set ``W`` at
the same ``loc_id`` (or *undef*, where the read is in set ``UndefOK``), and per location a total
order ``co`` over the writes in set ``CO`` with the write in set ``IW`` first. The model file then
decides consistency over the base relations plus the dynamic ``rf``, ``co``, ``Rdef``, ``Rundef``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import OracleError, TooManyEvents

MAX_EVENTS = 64
UNDEF_VAL = -(1 << 62)          # the engine's undef value (printed "undef")
REQ_NONE, REQ_EQ, REQ_NE = 0, 1, 2

#: rmw operations, by code (``wop``): 0 = constant write
RMW_CODES = {"const": 0, "add": 1, "sub": 2, "xchg": 3, "and": 4, "or": 5, "xor": 6, "max": 7,
             "min": 8, "copy": 9}


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
class PreExecution:
    """Events + named sets (event index sets) + named static relations (bitmask rows: bit j of
    ``rels[name][i]`` is the pair (i, j); rows may be shorter than the event count).

    ``observables`` maps each outcome key to ``("event", i)`` (the value read/returned by event i)
    or ``("const", v)``; ``loc_names`` names each location copy.
    """

    events: list[Event] = field(default_factory=list)
    sets: dict[str, set[int]] = field(default_factory=dict)
    rels: dict[str, list[int]] = field(default_factory=dict)     # name -> bitmask rows
    observables: list[tuple[str, tuple[str, int]]] = field(default_factory=list)
    loc_names: list[str] = field(default_factory=list)
    ub: list[str] = field(default_factory=list)      # UB known statically (barrier misuse ...)
    barrier_events: dict = field(default_factory=dict)  # (thread, barrier op index) -> event

    def add(self, ev: Event, *sets: str) -> int:
        i = len(self.events)
        if i >= MAX_EVENTS:
            raise TooManyEvents(f"program has more than {MAX_EVENTS} events (the engine's limit)")
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
        return len(self.events)

    def set_mask(self, name: str) -> int:
        m = 0
        for i in self.sets.get(name, ()):
            m |= 1 << i
        return m

    def rel_rows(self, name: str) -> list[int]:
        rows = list(self.rels.get(name, ()))[:self.n]
        return rows + [0] * (self.n - len(rows))

PENDING_REF = UNDEF_VAL + 1     # "not computed yet" while resolving rmw value chains

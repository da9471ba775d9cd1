"""Undefined behaviour raised by a model's flag: which pair of events raised it.

A model unit may declare flags of its model file as undefined behaviour (``ModelUnit.ub_flags``;
Tile IR's ``racy``: "Programs with data races have undefined behaviour", 7.10). The engine says
only that some consistent execution raised the flag; :func:`witness` finds one such execution
with the compiled model itself (:func:`oracle.candidates.candidates`, which evaluates every
candidate and keeps the slots) and names the first pair in the flag's relation, so that the
``ub`` reason of the result says which two accesses race.
"""

from __future__ import annotations

from .events import PreExecution
from .candidates import candidates
from .lang import Program

#: candidates looked at per flag before giving up naming the pair
WITNESS_BUDGET = 5_000


def _who(pe: PreExecution, e: int) -> str:
    ev = pe.events[e]
    return ev.label if ev.thread < 0 else f"P{ev.thread} {ev.label}"


def witness(pes: list[PreExecution], prog: Program, hints: frozenset, flag: str) -> str:
    """``"FLAG: A / B"`` for the first pair (A, B) of a consistent execution raising ``flag``
    (a ``flag nonempty`` statement); ``"FLAG"`` alone when none is found within the budget."""
    st = next(s for s in prog.stmts if s.kind == "flag" and s.name == flag)
    slot = prog.node_slots[id(st.expr)]
    seen = 0
    for pe in pes:
        for cand in candidates(pe, prog, hints):
            seen += 1
            if seen > WITNESS_BUDGET:
                return flag
            if cand is None or cand.failed is not None:
                continue
            rows = cand.slots[slot]
            for a in range(pe.n):
                row = int(rows[a])
                if row and st.negate:
                    b = (row & -row).bit_length() - 1
                    return f"{flag}: {_who(pe, a)} / {_who(pe, b)}"
    return flag

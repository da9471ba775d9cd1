"""Journal replay: what a campaign directory's journal says was done, streamed.

``--resume`` (and a resumed shard of ``--jobs``) reads a journal of any length in one pass: a
week's journal does not fit in memory, so each program line is folded into per-status counts and
the coverage tally as it goes by, and the program number joins the campaign's
:class:`fuzz.journal.DoneSet`. A program journaled twice (a resume redoing one whose line a kill
cut off) counts once; a damaged field counts the program and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import coverage as cov
from .journal import read_journal

#: journal statuses of programs whose backend ran (coverage counts what ran, not what was drawn)
EXECUTED = ("ok", "finding", "unconfirmed", "claimed")


@dataclass
class Replayed:
    """The folded journal: ``statuses`` (status -> programs; None for a damaged status),
    ``executions`` (backend iterations), ``budget`` (oracle errors that were the search budget),
    ``active`` (the latest campaign time ``t``)."""

    statuses: dict = field(default_factory=dict)
    executions: int = 0
    budget: int = 0
    active: float = 0.0


def replay(path: str, done, coverage: cov.Coverage, active: float = 0.0) -> Replayed:
    """Fold the journal at ``path`` (its segments too) into a :class:`Replayed`, adding each new
    program number to ``done`` and each executed program's kinds and scope pairs to
    ``coverage``; ``active`` is the campaign time known before."""
    statuses, executions, budget = {}, 0, 0
    tally = cov.ComboTally(coverage.kinds, coverage.pairs, coverage.add)
    for e in read_journal(path):
        i = e.get("i")
        if e.get("type") == "program" and isinstance(i, int) and done.add(i):
            st = e.get("status")
            if type(st) is not str:
                st = None                   # counted as a program, nothing else
            statuses[st] = statuses.get(st, 0) + 1
            ex = e.get("executions", 0)
            if type(ex) is int:
                executions += ex
            if st == "oracle-error" and e.get("budget"):
                budget += 1
            if st in EXECUTED:
                tally.add(e.get("kinds", []), e.get("pairs", []))
            t = e.get("t", 0.0)
            if (type(t) is float or type(t) is int) and t > active:   # max(), no call
                active = t
    tally.flush()
    return Replayed(statuses, executions, budget, active)

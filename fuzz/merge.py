"""``scopefuzz merge OUT DIR...``: join campaign directories (shards, machines) into one.

A part may itself be a parallel (``--jobs``) or merged campaign. The merged journal holds every
program entry of every part, tagged with the part's ``campaign`` id
(a program done twice by the same part is kept once); findings with the same id (canonical hash of
the minimized test) become one finding whose ``sources`` list every program that led to it.
``scopefuzz report OUT`` then reports the whole campaign.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable, Iterable

from .campaign import JOURNAL, META
from .findings import load_findings, publish
from .journal import Journal, atomic_write
from .layout import part_metas, program_entries


class MergeError(Exception):
    """A part is not a campaign directory, or OUT already holds one (one line)."""


def merge(out: str, parts: list[str]) -> dict:
    """Merge the campaign directories ``parts`` into a new campaign directory ``out``; returns
    counts."""
    gathered = []
    for d in parts:
        mp = os.path.join(d, META)
        if not os.path.exists(mp):
            raise MergeError(f"{d}: not a campaign directory (no {META})")
        with open(mp, encoding="utf-8") as f:
            meta = json.load(f)
        gathered.append(Part(list(part_metas(meta, d).values()), program_entries(d, meta),
                             lambda d=d: load_findings(d)))
    return merge_parts(out, gathered)


@dataclass
class Part:
    """One part of a merge: its parameters (one per campaign it holds), its program entries
    (each tagged with its ``campaign`` id) and its finding records (a callable: read last)."""

    metas: list[dict]
    entries: Iterable[dict]
    findings: Callable[[], Iterable[dict]]


#: the fields of a program entry that reports read: what a worker on another host sends home
#: (``summary_entry``); the full journal stays on that host
SUMMARY_FIELDS = ("type", "campaign", "i", "t", "status", "executions", "seconds", "kinds", "pairs",
                  "error", "finding", "name", "test", "forbidden")


def summary_entry(e: dict) -> dict:
    return {k: e[k] for k in SUMMARY_FIELDS if k in e}


def merge_parts(out: str, parts: list[Part]) -> dict:
    """Write ``parts`` as one merged campaign directory ``out`` (a program done twice by the same
    campaign is kept once; findings with the same id become one with every source)."""
    if os.path.exists(os.path.join(out, META)) or os.path.exists(os.path.join(out, JOURNAL)):
        raise MergeError(f"{out}: already holds a campaign; merge into a new directory")
    metas, seen = [], set()
    entries = []
    for part in parts:
        for m in part.metas:
            if m.get("uid") not in {x.get("uid") for x in metas}:
                metas.append(m)
        for e in part.entries:
            key = (e["campaign"], e["i"])
            if key in seen:
                continue
            seen.add(key)
            entries.append(e)
    os.makedirs(out, exist_ok=True)
    backends = sorted({m.get("backend") for m in metas})
    meta = {"uid": "merged", "merged": metas, "version": 1,
            "backend": backends[0] if len(backends) == 1 else "mixed"}
    atomic_write(os.path.join(out, META), json.dumps(meta, indent=1, sort_keys=True) + "\n")
    j = Journal(os.path.join(out, JOURNAL))
    for e in entries:
        j.append(e)
    j.close()
    new = 0
    for part in parts:
        for rec in part.findings():
            new += publish(out, rec)
    return {"parts": len(parts), "programs": len(entries), "findings": new}

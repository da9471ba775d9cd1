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

from .campaign import JOURNAL, META
from .findings import load_findings, publish
from .journal import Journal, atomic_write
from .layout import part_metas, program_entries


class MergeError(Exception):
    """A part is not a campaign directory, or OUT already holds one (one line)."""


def merge(out: str, parts: list[str]) -> dict:
    """Merge ``parts`` into a new campaign directory ``out``; returns counts."""
    if os.path.exists(os.path.join(out, META)) or os.path.exists(os.path.join(out, JOURNAL)):
        raise MergeError(f"{out}: already holds a campaign; merge into a new directory")
    metas, seen = [], set()
    entries = []
    for d in parts:
        mp = os.path.join(d, META)
        if not os.path.exists(mp):
            raise MergeError(f"{d}: not a campaign directory (no {META})")
        with open(mp, encoding="utf-8") as f:
            meta = json.load(f)
        for m in part_metas(meta, d).values():
            if m.get("uid") not in {x.get("uid") for x in metas}:
                metas.append(m)
        for e in program_entries(d, meta):
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
    for d in parts:
        for rec in load_findings(d):
            new += publish(out, rec)
    return {"parts": len(parts), "programs": len(entries), "findings": new}

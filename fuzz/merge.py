"""``scopefuzz merge OUT DIR...``: join campaign directories (shards, machines) into one.

The merged journal holds every program entry of every part, tagged with the part's ``campaign`` id
(a program done twice by the same part is kept once); findings with the same id (canonical hash of
the minimized test) become one finding whose ``sources`` list every program that led to it.
``scopefuzz report OUT`` then reports the whole campaign.

OUT is built under a temporary name beside it and renamed at the end: a merge that stops (a corrupt
part, a full disk, a kill) leaves no half-built OUT behind.
"""

from __future__ import annotations

import json
import os
import shutil

from .campaign import JOURNAL, META
from .findings import FindingFileError, load_findings, publish
from .journal import Journal, atomic_write, read_journal, read_json


class MergeError(Exception):
    """A part is not a campaign directory, or OUT already holds one (one line)."""


def merge(out: str, parts: list[str]) -> dict:
    """Merge ``parts`` into a new campaign directory ``out``; returns counts."""
    if os.path.exists(os.path.join(out, META)) or os.path.exists(os.path.join(out, JOURNAL)):
        raise MergeError(f"{out}: already holds a campaign; merge into a new directory")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise MergeError(f"{out}: exists and is not an empty directory; merge into a new one")
    metas, seen = [], set()
    entries = []
    for d in parts:
        mp = os.path.join(d, META)
        if not os.path.exists(mp):
            raise MergeError(f"{d}: not a campaign directory (no {META})")
        meta = read_json(mp, MergeError)
        sub = meta.get("merged") or [meta]
        for m in sub:
            if m.get("uid") not in {x.get("uid") for x in metas}:
                metas.append(m)
        uid = meta.get("uid", d)
        for e in read_journal(os.path.join(d, JOURNAL)):
            if e.get("type") != "program":
                continue
            e = dict(e)
            e.setdefault("campaign", uid)
            key = (e["campaign"], e["i"])
            if key in seen:
                continue
            seen.add(key)
            entries.append(e)
    backends = sorted({m.get("backend") for m in metas})
    meta = {"uid": "merged", "merged": metas, "version": 1,
            "backend": backends[0] if len(backends) == 1 else "mixed"}
    final = os.path.abspath(out)
    tmp = os.path.join(os.path.dirname(final), f".tmp-merge-{os.path.basename(final)}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(tmp)
        atomic_write(os.path.join(tmp, META), json.dumps(meta, indent=1, sort_keys=True) + "\n")
        j = Journal(os.path.join(tmp, JOURNAL))
        for e in entries:
            j.append(e)
        j.close()
        new = 0
        for d in parts:
            try:
                recs = load_findings(d, on_bad=None)
            except FindingFileError as e:
                raise MergeError(f"{e} (repair or remove it, then merge again)") from None
            for rec in recs:
                new += publish(tmp, rec)
        os.rename(tmp, final)      # onto a missing or empty OUT
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"parts": len(parts), "programs": len(entries), "findings": new}

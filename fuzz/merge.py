"""``scopefuzz merge OUT DIR...``: join campaign directories (shards, machines) into one.

A part may itself be a parallel (``--jobs``) or merged campaign. The merged journal holds every
program entry of every part, tagged with the part's ``campaign`` id
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
from .findings import FindingFileError, load_finding_records, publish
from .journal import DoneSet, Journal, atomic_write
from .layout import part_metas, program_entries, read_meta


class MergeError(Exception):
    """A part is not a campaign directory, or OUT already holds one (one line)."""


def merge(out: str, parts: list[str]) -> dict:
    """Merge ``parts`` into a new campaign directory ``out``; returns counts."""
    if os.path.exists(os.path.join(out, META)) or os.path.exists(os.path.join(out, JOURNAL)):
        raise MergeError(f"{out}: already holds a campaign; merge into a new directory")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise MergeError(f"{out}: exists and is not an empty directory; merge into a new one")
    metas = []
    sources = []               # (part directory, its campaign.json)
    for d in parts:
        mp = os.path.join(d, META)
        if not os.path.exists(mp):
            raise MergeError(f"{d}: not a campaign directory (no {META})")
        meta = read_meta(d, MergeError)
        for m in part_metas(meta, d, MergeError).values():
            if m.get("uid") not in {x.get("uid") for x in metas}:
                metas.append(m)
        sources.append((d, meta))
    backends = sorted({m.get("backend") for m in metas})
    meta = {"uid": "merged", "merged": metas, "version": 1,
            "backend": backends[0] if len(backends) == 1 else "mixed"}
    final = os.path.abspath(out)
    tmp = os.path.join(os.path.dirname(final), f".tmp-merge-{os.path.basename(final)}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(tmp)
        atomic_write(os.path.join(tmp, META), json.dumps(meta, indent=1, sort_keys=True) + "\n")
        programs, budget = _stream_entries(Journal(os.path.join(tmp, JOURNAL), sync=False),
                                           sources, metas)
        new = 0
        for d in parts:
            try:
                recs = load_finding_records(d, on_bad=None)
            except FindingFileError as e:
                raise MergeError(f"{e} (repair or remove it, then merge again)") from None
            for rec in recs:
                new += publish(tmp, rec)
        os.rename(tmp, final)      # onto a missing or empty OUT
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"parts": len(parts), "programs": programs, "budget": budget, "findings": new}


def _done_set(meta: dict | None) -> DoneSet:
    k, _, n = str((meta or {}).get("shard", "1/1")).partition("/")
    try:
        return DoneSet(int(k) - 1, int(n))
    except ValueError:
        return DoneSet()


def _stream_entries(journal: Journal, sources, metas) -> tuple[int, int]:
    """Copy every part's program entries into ``journal``, tagged with their part's uid, each
    (part, program) once; streamed (memory bounded by the parts, not the programs). Returns
    (programs, those whose oracle search ran past the campaign's budget)."""
    by_uid = {m.get("uid"): m for m in metas}
    seen: dict[str, DoneSet] = {}      # one per part (a parallel part: one per shard)
    n = budget = 0
    try:
        for d, meta in sources:
            for e in program_entries(d, meta, MergeError):   # tagged with their part's uid
                if not isinstance(e.get("i"), int):
                    continue
                done = seen.get(e["campaign"])
                if done is None:
                    done = seen[e["campaign"]] = _done_set(by_uid.get(e["campaign"]))
                if e["i"] in done:
                    continue
                done.add(e["i"])
                journal.append(e)
                n += 1
                budget += bool(e.get("budget"))
    finally:
        journal.close()
    return n, budget

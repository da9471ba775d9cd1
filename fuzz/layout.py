"""Where a campaign directory keeps its journals: one process, a parallel campaign, or a merge.

Three layouts share ``DIR/campaign.json`` and ``DIR/findings/``:

- *one process* (``scopefuzz fuzz --jobs 1``, ``--shard K/N``): ``DIR/journal.jsonl``;
- *parallel* (``scopefuzz fuzz --jobs N``, :mod:`fuzz.workers`): ``campaign.json`` has ``jobs`` and
  ``shards`` (directory names); shard *j* is ``DIR/shard-KofN/`` with its own ``campaign.json`` and
  ``journal.jsonl`` (a one-process campaign directory whose findings go to ``DIR/findings/``);
- *merged* (``scopefuzz merge``, the pytest plugin's xdist gathering): ``campaign.json`` has ``merged``
  (the parts' parameters) and ``DIR/journal.jsonl`` holds every part's program entries tagged with
  the part's ``campaign`` id.

:func:`parts` hides the difference from the report and from ``merge``: each part's id, parameters
and journal.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

META = "campaign.json"
JOURNAL = "journal.jsonl"


def shard_dirname(shard: tuple[int, int]) -> str:
    return f"shard-{shard[0]}of{shard[1]}"


def sub_shard(base: tuple[int, int], jobs: int, j: int) -> tuple[int, int]:
    """Worker ``j`` (0-based) of ``jobs`` splitting shard ``base`` = K/N: programs ``i`` with
    ``i % (N*jobs) == K-1 + N*j``. The ``jobs`` sub-shards partition K/N (``i % N == K-1``)."""
    k, n = base
    return (k + n * j, n * jobs)


def read_meta(directory: str) -> dict | None:
    path = os.path.join(directory, META)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def is_parallel(meta: dict | None) -> bool:
    return bool(meta) and "shards" in meta


def parts(directory: str, meta: dict) -> Iterator[tuple[str, dict, str]]:
    """(campaign id, parameters, journal path) of every part of the campaign in ``directory``.

    Entries of a merged journal carry their part's id in ``campaign``; the other layouts' entries
    belong to the part whose journal holds them (callers tag them with the id given here).
    """
    if is_parallel(meta):
        for name in meta["shards"]:
            d = os.path.join(directory, name)
            sub = read_meta(d) or dict(meta, uid=f"{meta.get('uid', 'campaign')}-{name}")
            yield sub.get("uid", name), sub, os.path.join(d, JOURNAL)
        return
    yield meta.get("uid", "campaign"), meta, os.path.join(directory, JOURNAL)


def program_entries(directory: str, meta: dict) -> Iterator[dict]:
    """Every program entry of every part, in journal order, each with its part's ``campaign`` id."""
    from .journal import read_journal
    for uid, _, jpath in parts(directory, meta):
        for e in read_journal(jpath):
            if e.get("type") == "program":
                if "campaign" not in e:
                    e = dict(e, campaign=uid)
                yield e


def part_metas(meta: dict, directory: str) -> dict[str, dict]:
    """Campaign id -> parameters of each part (a merged campaign lists them in ``merged``)."""
    if meta.get("merged"):
        return {m.get("uid", f"part{k}"): m for k, m in enumerate(meta["merged"])}
    return {uid: m for uid, m, _ in parts(directory, meta)}

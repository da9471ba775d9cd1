"""Where a campaign directory keeps its journals: one process, a parallel campaign, or a merge.

Three layouts share ``DIR/campaign.json`` and ``DIR/findings/``:

- *one process* (``scopefuzz fuzz --jobs 1``, ``--shard K/N``): ``DIR/journal.jsonl`` (rotated into
  sealed segments ``journal.000001.jsonl``...; :mod:`fuzz.journal`);
- *parallel* (``scopefuzz fuzz --jobs N``, :mod:`fuzz.workers`): ``campaign.json`` has ``jobs`` and
  ``shards`` (directory names); shard *j* is ``DIR/shard-KofN/`` with its own ``campaign.json`` and
  journal (a one-process campaign directory whose findings go to ``DIR/findings/``);
- *merged* (``scopefuzz merge``, the pytest plugin's xdist gathering): ``campaign.json`` has ``merged``
  (the parts' parameters) and ``DIR/journal.jsonl`` holds every part's program entries tagged with
  the part's ``campaign`` id.

Any of these directories may hold more than one journal (``journal-<part>.jsonl``, each with its own
segments): :func:`fuzz.journal.journal_paths` finds them. :func:`parts` and :func:`program_entries`
hide the difference from the report and from ``merge``: each part's id, parameters and journals,
streamed (memory does not grow with the journals).
"""

from __future__ import annotations

import os
from typing import Iterator

from .journal import DoneSet, journal_paths, read_journal, read_json

META = "campaign.json"
JOURNAL = "journal.jsonl"


def shard_dirname(shard: tuple[int, int]) -> str:
    return f"shard-{shard[0]}of{shard[1]}"


def sub_shard(base: tuple[int, int], jobs: int, j: int) -> tuple[int, int]:
    """Worker ``j`` (0-based) of ``jobs`` splitting shard ``base`` = K/N: programs ``i`` with
    ``i % (N*jobs) == K-1 + N*j``. The ``jobs`` sub-shards partition K/N (``i % N == K-1``)."""
    k, n = base
    return (k + n * j, n * jobs)


def read_meta(directory: str, error: type[Exception] = ValueError) -> dict | None:
    """``DIR/campaign.json``, None when there is none; a corrupt one is ``error("path:line:col:
    reason")`` (the caller's one-line error type)."""
    path = os.path.join(directory, META)
    if not os.path.exists(path):
        return None
    return read_json(path, error)


def is_parallel(meta: dict | None) -> bool:
    return bool(meta) and "shards" in meta


def parts(directory: str, meta: dict,
          error: type[Exception] = ValueError) -> Iterator[tuple[str, dict, str]]:
    """(campaign id, parameters, directory of its journals) of every part of the campaign in
    ``directory``.

    Entries of a merged journal carry their part's id in ``campaign``; the other layouts' entries
    belong to the part whose journal holds them (callers tag them with the id given here).
    """
    if is_parallel(meta):
        for name in meta["shards"]:
            d = os.path.join(directory, name)
            sub = read_meta(d, error) or dict(meta, uid=f"{meta.get('uid', 'campaign')}-{name}")
            yield sub.get("uid", name), sub, d
        return
    yield meta.get("uid", "campaign"), meta, directory


def journals(directory: str, meta: dict,
             error: type[Exception] = ValueError) -> Iterator[tuple[str, str]]:
    """(campaign id, journal active-file path) of every journal of every part (a part's
    directory may hold several: :func:`fuzz.journal.journal_paths`)."""
    for uid, _, d in parts(directory, meta, error):
        for jpath in journal_paths(d) or [os.path.join(d, JOURNAL)]:
            yield uid, jpath


def program_entries(directory: str, meta: dict,
                    error: type[Exception] = ValueError) -> Iterator[dict]:
    """Every program entry of every part, in journal order, streamed from each journal's sealed
    segments and active file, each with its part's ``campaign`` id.

    The entries are the ones ``--resume`` counts (fuzz/campaign.py): a program entry with an
    integer ``i``, once per ``(campaign, i)`` -- a line duplicated in a damaged or hand-edited
    journal is yielded once, so ``report`` and ``--resume`` agree on the number of programs. The
    numbers seen are kept in a :class:`fuzz.journal.DoneSet` per part (memory bounded by the gaps,
    not the count)."""
    done: dict[str, DoneSet] = {}
    metas: dict | None = None
    for uid, jpath in journals(directory, meta, error):
        for e in read_journal(jpath):
            if e.get("type") != "program":
                continue
            i = e.get("i")
            if not isinstance(i, int):
                continue                    # --resume does not count it either
            c = e.get("campaign")
            if type(c) is not str:
                c = e["campaign"] = uid
            seen = done.get(c)
            if seen is None:
                if metas is None:
                    try:
                        metas = part_metas(meta, directory, error)
                    except Exception:
                        metas = {}
                seen = done[c] = DoneSet(*_shard_start(metas.get(c)))
            if seen.add(i):
                yield e


def _shard_start(meta) -> tuple[int, int]:
    """``(first, step)`` of a part's program numbers from its ``shard`` ``"K/N"`` (0, 1 when
    absent or malformed: still correct, only less compact)."""
    sh = meta.get("shard") if isinstance(meta, dict) else None
    k, _, n = sh.partition("/") if isinstance(sh, str) else ("", "", "")
    if k.isdigit() and n.isdigit() and len(n) < 10 and 1 <= int(k) <= int(n):
        return int(k) - 1, int(n)
    return 0, 1


def part_metas(meta: dict, directory: str,
               error: type[Exception] = ValueError) -> dict[str, dict]:
    """Campaign id -> parameters of each part (a merged campaign lists them in ``merged``)."""
    if meta.get("merged"):
        return {m.get("uid", f"part{k}"): m for k, m in enumerate(meta["merged"])}
    return {uid: m for uid, m, _ in parts(directory, meta, error)}

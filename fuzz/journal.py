"""Crash-safe campaign storage: an append-only JSON-lines journal and atomic file replacement.

A campaign must survive SIGKILL at any instant and lose nothing on ``--resume``. Two primitives do it:

- :class:`Journal` appends one JSON object per line and writes it to the kernel (``write``) before
  the campaign goes on, so a SIGKILL of the process loses no line; a line cut short by a kill is
  ignored (and cut off) when the journal is read back. ``fsync`` (what a power cut or a kernel crash
  needs) is per line by default, or grouped (``sync_every`` seconds: campaigns,
  :data:`CAMPAIGN_SYNC_SECONDS`): a power cut then loses at most the lines written since the last
  fsync, whose programs ``--resume`` runs again (they were never journaled: nothing is journaled
  twice);
- the journal is rotated into *segments*: when the active file (``journal.jsonl``) passes
  :data:`SEGMENT_BYTES` it is renamed to ``journal.000001.jsonl`` (then ``.000002``...) and a new active
  file is started; :func:`read_journal` reads the sealed segments in order, then the active file, one
  line at a time (memory does not grow with the journal). Several journals may share a campaign
  directory (``journal-<part>.jsonl``, each with its own segments): :func:`journal_paths` lists them;
- :func:`atomic_write` writes a whole file through a temporary file, fsync and :func:`os.replace`, so a
  reader sees the old file or the new one, never half of one. Directories are published the same way
  (:func:`atomic_dir`: build under a temporary name, fsync, rename).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from typing import Iterator

#: size at which the active journal file is sealed into a segment (a program line is ~0.5-2.5 KB:
#: about 30,000-130,000 programs per segment)
SEGMENT_BYTES = 64 << 20

#: a campaign's journal fsyncs at most this often (seconds; like Redis's ``appendfsync everysec``).
#: One fsync per program cost 0.2 ms on an idle disk and 3-8 ms while other processes wrote to it:
#: as much as the program itself (2-4 ms of oracle, generation and 1,000 simulator iterations), and
#: two workers' fsyncs queue on one disk. Every 0.1 s still cost 5 % of a worker on a busy disk.
CAMPAIGN_SYNC_SECONDS = 1.0


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temporary file, fsync, rename, fsync the dir)."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, f".{os.path.basename(path)}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # a full disk (ENOSPC), a read-only remount, an interrupt: the old file stays as it
        # was and no temporary file is left behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(d)


def atomic_dir(final: str, files: dict[str, str]) -> bool:
    """Publish a directory holding ``files`` (name -> text) at ``final`` in one rename.

    Returns False (and publishes nothing) when ``final`` already exists.
    """
    parent = os.path.dirname(os.path.abspath(final))
    os.makedirs(parent, exist_ok=True)
    if os.path.exists(final):
        return False
    tmp = os.path.join(parent, f".tmp-{os.path.basename(final)}-{os.getpid()}")
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    for name, text in files.items():
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    _fsync_dir(tmp)
    try:
        os.rename(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    _fsync_dir(parent)
    return True


def clean_temporaries(directory: str) -> None:
    """Remove temporaries a killed campaign left behind (they were never published)."""
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        if name.startswith(".tmp-") or ".tmp" in name and name.startswith("."):
            p = os.path.join(directory, name)
            if os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    os.remove(p)
                except OSError:
                    pass


def segment_path(path: str, n: int) -> str:
    """The ``n``-th sealed segment of the journal whose active file is ``path``."""
    base, ext = os.path.splitext(path)
    return f"{base}.{n:06d}{ext}"


def _segment_pattern(path: str) -> re.Pattern:
    base, ext = os.path.splitext(os.path.basename(path))
    return re.compile(re.escape(base) + r"\.(\d{6,})" + re.escape(ext) + r"\Z")


def journal_segments(path: str) -> list[str]:
    """The files of the journal whose active file is ``path``: sealed segments in order, then
    ``path`` itself when it exists."""
    d = os.path.dirname(path) or "."
    pat = _segment_pattern(path)
    try:
        names = os.listdir(d)
    except OSError:
        names = []
    segs = sorted((int(m.group(1)), n) for n in names if (m := pat.match(n)))
    out = [os.path.join(d, n) for _, n in segs]
    if os.path.exists(path):
        out.append(path)
    return out


JOURNAL_NAME = re.compile(r"journal(-[A-Za-z0-9_.+-]+?)?\.jsonl\Z")
SEGMENT_NAME = re.compile(r".*\.\d{6,}\.jsonl\Z")


def journal_paths(directory: str) -> list[str]:
    """The active-file paths of every journal in a campaign directory (``journal.jsonl`` first,
    then ``journal-<part>.jsonl`` sorted), including journals that have only sealed segments."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = set()
    for n in names:
        if SEGMENT_NAME.match(n):
            n = re.sub(r"\.\d{6,}\.jsonl\Z", ".jsonl", n)
        if JOURNAL_NAME.match(n):
            found.add(n)
    return [os.path.join(directory, n) for n in sorted(found, key=lambda n: (n != "journal.jsonl", n))]


class Journal:
    """Append-only JSON lines, each written to the kernel before :meth:`append` returns (a SIGKILL
    loses none) and fsynced: every line (``sync_every=0``, the default), at the first append
    ``sync_every`` seconds or more after the last fsync, or (``sync=False``) only when a segment
    is sealed and at close (bulk copies); rotated into sealed segments of about ``segment_bytes``."""

    def __init__(self, path: str, segment_bytes: int | None = None, sync: bool = True,
                 sync_every: float = 0.0, clock=time.monotonic):
        self.path = path
        self.segment_bytes = SEGMENT_BYTES if segment_bytes is None else segment_bytes
        self.sync = sync
        self.sync_every = sync_every
        self._clock = clock
        self._repair()
        self._f = open(path, "a", encoding="utf-8")
        self._synced = clock()

    def _repair(self) -> None:
        """Cut off a last line a kill left unfinished (no newline). Reads the file backwards from
        its end, a block at a time, only as far as the last newline (not the whole active file:
        up to a segment's size)."""
        if not os.path.exists(self.path):
            return
        with open(self.path, "r+b") as f:
            end = f.seek(0, os.SEEK_END)
            keep, pos = 0, end
            while pos > 0:
                start = max(0, pos - (64 << 10))
                f.seek(start)
                block = f.read(pos - start)
                nl = block.rfind(b"\n")
                if nl >= 0:
                    keep = start + nl + 1
                    break
                pos = start
            if keep != end:
                f.truncate(keep)
                f.flush()
                os.fsync(f.fileno())

    def append(self, entry: dict) -> None:
        self._f.write(json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n")
        self._f.flush()
        if self.sync and (self.sync_every <= 0 or
                          self._clock() - self._synced >= self.sync_every):
            os.fsync(self._f.fileno())
            self._synced = self._clock()
        if self._f.tell() >= self.segment_bytes:
            self.rotate()

    def rotate(self) -> None:
        """Seal the active file as the next segment (one rename) and start a new active file.
        A kill between the two steps leaves no active file: the next open starts one."""
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()
        segs = journal_segments(self.path)
        pat = _segment_pattern(self.path)
        last = max((int(m.group(1)) for s in segs if (m := pat.match(os.path.basename(s)))),
                   default=0)
        os.rename(self.path, segment_path(self.path, last + 1))
        _fsync_dir(os.path.dirname(os.path.abspath(self.path)))
        self._f = open(self.path, "a", encoding="utf-8")

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()


def read_json(path: str, error: type[Exception]) -> dict:
    """The JSON object in ``path``, or ``error("path: reason")`` when it cannot be read or parsed
    (a corrupt ``campaign.json`` or ``finding.json`` is named, never a traceback)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise error(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise error(f"{path}: {e.strerror or e}") from None
    if not isinstance(data, dict):
        raise error(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


#: the C JSON scanner behind :func:`json.loads`, called directly: a journal line is one compact
#: object followed by a newline, so ``loads``' two Python frames and whitespace matching per line
#: (a third of a week-long journal's decoding time) are skipped
_scan_once = json.JSONDecoder().scan_once


def decode_line(line: str):
    """The JSON value of one journal line (ending in a newline), or None when it is not JSON.

    The same value as ``json.loads(line)``: the fast path accepts only a value that starts at the
    first character and ends just before the newline; anything else (surrounding whitespace, a
    value that does not parse) takes ``json.loads``' own path.
    """
    try:
        value, end = _scan_once(line, 0)
        if end == len(line) - 1:
            return value
    except (StopIteration, json.JSONDecodeError, RecursionError):
        pass
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None


def read_journal(path: str) -> Iterator[dict]:
    """The journal's complete entries, in order, streamed from its sealed segments and its active
    file ``path`` (an unfinished last line is skipped; so is a line that is not a JSON object)."""
    for seg in journal_segments(path):
        with open(seg, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line[-1:] != "\n":
                    break
                e = decode_line(line)
                if type(e) is dict:
                    yield e


class DoneSet:
    """The program numbers a campaign has done, in memory bounded by the gaps, not the count.

    A shard's programs are ``first, first + step, ...`` and a campaign does them in that order, so
    what is done is a prefix (everything below ``watermark``) plus the few numbers done out of order
    (a merged or hand-edited journal). ``in``, ``add`` and ``len`` as for a set.
    """

    def __init__(self, first: int = 0, step: int = 1):
        self.first, self.step = first, step
        self.watermark = first          # every shard number below it is done
        self.extra: set[int] = set()
        self._n = 0

    def __contains__(self, i: int) -> bool:
        return (self.first <= i < self.watermark and (i - self.first) % self.step == 0) \
            or i in self.extra

    def add(self, i: int) -> bool:
        """Mark ``i`` done; True when it was not done before."""
        if i == self.watermark:         # the next in order (never in ``extra``): no lookup
            self._n += 1
            self.watermark += self.step
            while self.watermark in self.extra:
                self.extra.discard(self.watermark)
                self.watermark += self.step
            return True
        if i in self:
            return False
        self._n += 1
        self.extra.add(i)               # done out of order
        return True

    def __len__(self) -> int:
        return self._n

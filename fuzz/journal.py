"""Crash-safe campaign storage: an append-only JSON-lines journal and atomic file replacement.

A campaign must survive SIGKILL at any instant and lose nothing on ``--resume``. Two primitives do it:

- :class:`Journal` appends one JSON object per line and fsyncs it before the campaign goes on; a line
  cut short by a kill is ignored (and cut off) when the journal is read back;
- :func:`atomic_write` writes a whole file through a temporary file, fsync and :func:`os.replace`, so a
  reader sees the old file or the new one, never half of one. Directories are published the same way
  (:func:`atomic_dir`: build under a temporary name, fsync, rename).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Iterator


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
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
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


class Journal:
    """Append-only JSON lines, each fsynced before :meth:`append` returns."""

    def __init__(self, path: str):
        self.path = path
        self._repair()
        self._f = open(path, "a", encoding="utf-8")

    def _repair(self) -> None:
        """Cut off a last line a kill left unfinished (no newline or not valid JSON)."""
        if not os.path.exists(self.path):
            return
        with open(self.path, "rb") as f:
            data = f.read()
        keep = len(data)
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
        if keep != len(data):
            with open(self.path, "r+b") as f:
                f.truncate(keep)
                f.flush()
                os.fsync(f.fileno())

    def append(self, entry: dict) -> None:
        self._f.write(json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
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


def read_journal(path: str) -> Iterator[dict]:
    """The journal's complete entries, in order (an unfinished last line is skipped)."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue

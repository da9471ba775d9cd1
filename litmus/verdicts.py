"""The verdict cache of ``scopefuzz check``: a result computed once for a file's exact text, a
model and this exact code is answered again without the oracle.

**Why.** A whole ``scopefuzz check FILE`` process on a small test spends most of its time
starting up, not checking: importing numba costs about 0.5 s of CPU on its own (numpy 0.15 s
more), against 0.03 s for Python and a few milliseconds to parse and check the test, so no
ordering of imports gets a check that uses the engine under 0.2 s. Re-checking the same files
(an edit-check loop on one file, a CI job over a suite) is the common case, and its answer is
already known: :func:`lookup` finds it without importing numpy or numba.

**Keyed exactly.** An entry is found by the SHA-256 of: the file's text as read (every byte: a
changed comment is another key), the model (the name given, or the dialect's default), and
:func:`code_digest`: the contents of every ``*.py`` and ``*.model`` file of the ``litmus`` and
``oracle`` packages (the front ends, the model files, the engine), so any change to the code
that computes a result (a ``git pull``, an edit) misses every old entry. The entry repeats its
key parts and is checked against them on reading, so a hash collision or a damaged file is a
miss. Nothing else an answer depends on is outside the key: the oracle is deterministic, and
errors, timeouts, memory-ceiling stops and results with more than :data:`MAX_STATES` states are
never stored (they are computed each time).

**Where.** ``SCOPEFUZZ_VERDICT_CACHE`` names the directory (``off`` turns the cache off), else
``$XDG_CACHE_HOME/scopefuzz/verdicts`` (``~/.cache/scopefuzz/verdicts``). An entry is one small
JSON file, written under a temporary name and renamed (concurrent checks never read half a
file); a directory that cannot be written means no cache, silently. Deleting the directory is
always safe.

This module lives in ``litmus`` (which imports nothing else of the project) so that the check
command can consult it before anything that loads the oracle's compiled code.
"""

from __future__ import annotations

import hashlib
import json
import os

ENV = "SCOPEFUZZ_VERDICT_CACHE"

#: results with more states than this are not stored (their text would be large)
MAX_STATES = 4096

#: the entry format (bumped when the fields change)
FORMAT = 1

_DIGEST: list = []


def cache_root() -> str | None:
    """The cache directory (not created here), or None when the cache is off."""
    env = os.environ.get(ENV)
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "no", "false") else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if base.startswith("~"):            # no home directory to expand
        return None
    return os.path.join(base, "scopefuzz", "verdicts")


def code_digest() -> str:
    """SHA-256 over the contents (and relative paths) of every ``*.py`` and ``*.model`` file of
    the ``litmus`` and ``oracle`` packages, in a fixed order (once per process: a few ms)."""
    if _DIGEST:
        return _DIGEST[0]
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    h = hashlib.sha256()
    for package in ("litmus", "oracle"):
        root = os.path.join(top, package)
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if f.endswith((".py", ".model")):
                    path = os.path.join(d, f)
                    h.update(os.path.relpath(path, top).encode() + b"\0")
                    with open(path, "rb") as fh:
                        h.update(fh.read())
                    h.update(b"\0")
    _DIGEST.append(h.hexdigest())
    return _DIGEST[0]


def _key(text: str, model: str) -> str:
    h = hashlib.sha256()
    for part in (str(FORMAT), code_digest(), model, text):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def _path(root: str, key: str) -> str:
    return os.path.join(root, key[:2], key[2:] + ".json")


def lookup(text: str, model: str) -> dict | None:
    """The stored result of checking ``text`` under ``model`` with this code: a dict with
    ``model``, ``verdict``, ``states`` (a list of dicts), ``flags``, ``ub``, ``candidates``,
    ``consistent``, ``seconds`` (what the oracle took when it computed it); None when there is
    none (or the cache is off)."""
    root = cache_root()
    if root is None:
        return None
    key = _key(text, model)
    try:
        with open(_path(root, key), encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or entry.get("format") != FORMAT \
            or entry.get("asked") != model or entry.get("code") != code_digest() \
            or entry.get("text") != hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest():
        return None
    result = entry.get("result")
    return result if isinstance(result, dict) else None


def store(text: str, model: str, result: dict) -> bool:
    """Remember ``result`` (the fields :func:`lookup` returns) for ``text`` under ``model``.
    Returns False when it was not stored (cache off or not writable, too many states)."""
    root = cache_root()
    if root is None or len(result.get("states", ())) > MAX_STATES:
        return False
    key = _key(text, model)
    path = _path(root, key)
    entry = {"format": FORMAT, "key": key, "asked": model, "code": code_digest(),
             "text": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
             "result": result}
    import tempfile                     # (writing only: a hit never needs it)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise
    except (OSError, TypeError, ValueError):
        return False
    return True

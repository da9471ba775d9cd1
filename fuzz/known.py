"""Known bugs: a JSON file that names buckets already reported upstream.

``scopefuzz report --known FILE`` marks the buckets a known bug matches and the report separates
new from known. The repository maintains clang-22's known AMDGPU bugs in
``hw/isa/known-clang22.json`` and its known NVPTX bugs (compiler findings of ``fuzz --compile``,
fuzz/compile_buckets.py) in ``hw/ptxc/known-clang22-nvptx.json``, both shipped in the wheel
(:func:`default_known_paths`; ``--known`` without FILE loads both). Format::

    {"version": 1, "bugs": [
      {"name": "...", "match": "REGEX on the bucket signature", "links": ["https://..."],
       "workaround": "isa:TARGET,noscalar", "note": "..."}]}

``match`` is a Python regular expression searched in the bucket's signature (fuzz/buckets.py);
the first bug that matches names the bucket.

``scopefuzz fuzz --known [FILE]`` (every campaign: ``sim``, ``isa``, ``--compile``) also acts on
them while fuzzing (fuzz/campaign.py ``Campaign._count_into``): a confirmed finding whose bucket,
computed on the program as found (before minimization, like the claims key of fuzz/claims.py), is
a known bug's is not minimized; it is counted in that bucket (a source of the bucket's finding),
and the first of the bucket is published as found (the compiler campaign minimizes that first one).
"""

from __future__ import annotations

import json
import os
import re


class KnownFileError(Exception):
    """A known-bugs file that cannot be used (one line naming the file)."""


def default_known_path() -> str:
    """The maintained list of clang-22's known AMDGPU bugs (in the hw.isa package)."""
    import hw.isa
    return os.path.join(os.path.dirname(hw.isa.__file__), "known-clang22.json")


def default_known_ptxc_path() -> str:
    """The maintained list of clang-22's known NVPTX bugs (compiler findings, ``fuzz --compile``;
    in the hw.ptxc package)."""
    import hw.ptxc
    return os.path.join(os.path.dirname(hw.ptxc.__file__), "known-clang22-nvptx.json")


def default_known_paths() -> list[str]:
    """Every maintained known-bugs file: clang-22's AMDGPU bugs and its NVPTX bugs (their
    signatures cannot match each other's buckets)."""
    return [default_known_path(), default_known_ptxc_path()]


def load_known(path) -> list[dict]:
    """The bugs of a known-bugs file (or of a list of files, in order), each with its compiled
    ``match``."""
    if isinstance(path, (list, tuple)):
        return [b for p in path for b in load_known(p)]
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise KnownFileError(f"{path}: {e.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise KnownFileError(f"{path}:{e.lineno}:{e.colno}: {e.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("bugs"), list):
        raise KnownFileError(f"{path}: expected an object with a \"bugs\" list")
    out = []
    for k, b in enumerate(data["bugs"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str) \
                or not isinstance(b.get("match"), str):
            raise KnownFileError(f"{path}: bug {k}: needs string fields \"name\" and \"match\"")
        try:
            rx = re.compile(b["match"])
        except re.error as e:
            raise KnownFileError(f"{path}: bug {k} ({b['name']}): bad match regex: {e}") from None
        out.append(dict(b, rx=rx))
    return out


def load_known_files(paths) -> list[dict]:
    """The bugs of every known-bugs file in ``paths`` (none: an empty list)."""
    out: list[dict] = []
    for p in paths or ():
        out += load_known(p)
    return out


def default_known_for(backend: str | None, compile_spec: str | None = None) -> tuple:
    """The files ``--known`` without FILE loads: hw/ptxc's NVPTX list for a compiler campaign
    (``--compile``), hw/isa's AMDGPU list for an ``isa:`` campaign, both otherwise (a model-level
    signature of a ``sim`` campaign matches neither; a ``--devices`` list may mix backends)."""
    if compile_spec:
        return (default_known_ptxc_path(),)
    if backend and backend.startswith("isa:"):
        return (default_known_path(),)
    return tuple(default_known_paths())


def known_for(signature: str, known: list[dict] | None) -> dict | None:
    """The first known bug whose ``match`` is found in ``signature`` (without its regex)."""
    for b in known or ():
        if b["rx"].search(signature):
            return {k: v for k, v in b.items() if k != "rx"}
    return None


def mark_known(groups: list[dict], known: list[dict] | None) -> list[dict]:
    """``groups`` (fuzz.buckets.group) with ``known`` set on those a known bug matches, or, with
    no match, on those whose finding a ``fuzz --known`` campaign recorded as a known bug's (the
    record's ``known`` field: a report without ``--known`` still sets them apart)."""
    for g in groups:
        g["known"] = known_for(g["signature"], known)
        if g["known"] is None:
            g["known"] = next((dict(r.known) for r in g.get("findings", []) if "name" in r.known),
                              None)
    return groups

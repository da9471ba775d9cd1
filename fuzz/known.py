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


def known_for(signature: str, known: list[dict] | None) -> dict | None:
    """The first known bug whose ``match`` is found in ``signature`` (without its regex)."""
    for b in known or ():
        if b["rx"].search(signature):
            return {k: v for k, v in b.items() if k != "rx"}
    return None


def mark_known(groups: list[dict], known: list[dict] | None) -> list[dict]:
    """``groups`` (fuzz.buckets.group) with ``known`` set on those a known bug matches."""
    for g in groups:
        g["known"] = known_for(g["signature"], known)
    return groups

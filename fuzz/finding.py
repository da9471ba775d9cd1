"""The finding record: one schema for ``findings/<id>/finding.json``, read and written here only.

A :class:`Finding` has the fields every campaign writes and every reader relies on, typed and
checked when a record is read (``id``: the canonical hash of the minimized test, ``test``: its
text, ``forbidden``: the forbidden outcomes seen, ``sources``: the programs that led to it,
``{"campaign", "index", ...}`` each), and keeps every other key of the record in ``extra`` as it
was read (``kind``, ``backend``, ``model``, ``first``, ``histogram``, ``minimize``, ``bucket``,
...: what each campaign kind adds; keys written by a newer or older scopefuzz survive a round
trip untouched). :meth:`Finding.to_json` is the one serialization (sorted keys, one-space
indent: the bytes DESIGN.md fixes), :func:`read_finding` the one parser: a damaged record is a
:class:`FindingFileError` naming the file in one line.

Readers (report, merge, ``--resume``, claims, the live view, upstream, compile findings) get
records through :func:`fuzz.findings.load_findings` or :func:`read_finding`; the renderers take
the record's dictionary view (:meth:`Finding.to_dict`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .journal import read_json


class FindingFileError(Exception):
    """A ``finding.json`` that cannot be read (one line naming the file)."""


#: the fields every finding has, in the order they are checked
REQUIRED = ("id", "test", "forbidden", "sources")


@dataclass
class Finding:
    """One finding record (see the module docstring)."""

    id: str
    test: str
    forbidden: list
    sources: list[dict]
    #: every other key of the record, as written (kept on round trip)
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, rec: dict, where: str = "finding") -> Finding:
        """The record of dictionary ``rec``; FindingFileError naming ``where`` when a required
        field is missing or of the wrong type."""
        for key in REQUIRED:
            if key not in rec:
                raise FindingFileError(f"{where}: no {key!r} field")
        check_types(rec, where)
        rest = {k: v for k, v in rec.items() if k not in REQUIRED}
        return cls(rec["id"], rec["test"], rec["forbidden"], rec["sources"], rest)

    def to_dict(self) -> dict:
        """The record as one dictionary (the keys of ``finding.json``)."""
        out = dict(self.extra)
        out.update(id=self.id, test=self.test, forbidden=self.forbidden, sources=self.sources)
        return out

    def to_json(self) -> str:
        return finding_json(self.to_dict())

    @property
    def first_seen(self) -> float:
        """When the campaign first met it (``first.t``, campaign seconds; 0 when unknown)."""
        first = self.extra.get("first")
        return first.get("t", 0.0) if isinstance(first, dict) else 0.0


def finding_json(record: dict) -> str:
    """The text of ``finding.json`` for ``record`` (sorted keys, one-space indent, newline)."""
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def check_types(rec: dict, path: str) -> None:
    """A FindingFileError naming ``path`` when a damaged finding.json has an ``id`` that is not a
    string or ``sources`` that are not a list of objects (``--resume`` and ``report`` iterate
    them)."""
    if not isinstance(rec.get("id"), str):
        raise FindingFileError(f"{path}: 'id' is {type(rec.get('id')).__name__}, expected a string")
    src = rec.get("sources")
    if not isinstance(src, list) or not all(isinstance(s, dict) for s in src):
        raise FindingFileError(f"{path}: 'sources' is not a list of objects")


def read_finding(path: str) -> Finding:
    """The record in ``finding.json`` at ``path`` (FindingFileError naming it when damaged)."""
    return Finding.from_dict(read_json(path, FindingFileError), path)

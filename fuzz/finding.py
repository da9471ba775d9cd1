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

The other fields are read through typed properties (``backend``, ``mutant``, ``minimize``,
``histogram``, ``bucket``, ...): each gives the field when it has its type and a neutral value
(``None``, ``{}``, ``[]``, ``""``) when it is absent or damaged, so a renderer never indexes a
dictionary by string key and a finding.json with a wrong-typed field renders (as far as it can)
instead of crashing ``report``, ``merge`` or ``--resume`` (issue 33). The renderers (the finding's
report.md, the campaign report, the compiler finding's page, the buckets) take a :class:`Finding`
(:func:`as_finding` turns a record being published into one); the campaign loop, ``merge`` and the
report read records through :func:`fuzz.findings.load_finding_records` or :func:`read_finding`.
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
        t = self.first.get("t", 0.0)
        return t if type(t) in (int, float) else 0.0

    # -- the other fields, typed (a neutral value when absent or of the wrong type) --------------
    def _typed(self, key: str, kind, default=None):
        value = self.extra.get(key)
        if isinstance(value, bool):           # JSON true/false is no count, text or object
            return default
        return value if isinstance(value, kind) else default

    def _dict(self, key: str) -> dict:
        return self._typed(key, dict, {})

    @property
    def kind(self) -> str | None:
        """``compiler`` for a compiler campaign's finding (fuzz/compile_findings.py),
        ``weakening`` for a strict-weakening counterexample (fuzz/weakening_findings.py), else
        None."""
        return self._typed("kind", str)

    @property
    def backend(self) -> str:
        """The backend name it was found on (``?`` when the record lacks it)."""
        return self._typed("backend", str, "?")

    @property
    def mutant(self) -> str | None:
        """The planted bug the backend name names (hw's reading), or None."""
        return self._typed("mutant", str)

    @property
    def model(self) -> str | None:
        return self._typed("model", str)

    @property
    def original(self) -> str:
        """The drawn program it was minimized from."""
        return self._typed("original", str, "")

    @property
    def iterations(self) -> int | None:
        return self._typed("iterations", int)

    @property
    def campaign_seed(self) -> int | None:
        return self._typed("campaign_seed", int)

    @property
    def first(self) -> dict:
        """``{"campaign", "index", "seed", "t"}`` of the program that first led to it."""
        return self._dict("first")

    @property
    def minimize(self) -> dict:
        """``{"tried", "accepted", "steps", "size_before", "size_after", "seconds"}``."""
        return self._dict("minimize")

    @property
    def size_after(self) -> int | float:
        """Its size after minimizing (0 when unknown): the report lists small findings first."""
        n = self.minimize.get("size_after", 0)
        return n if type(n) in (int, float) else 0

    @property
    def steps(self) -> list[str]:
        """The minimizer's steps, as text."""
        steps = self.minimize.get("steps")
        return [str(x) for x in steps] if isinstance(steps, list) else []

    @property
    def outcome(self) -> dict:
        """The first forbidden outcome (``{}`` when the record has none)."""
        f = self.forbidden[0] if isinstance(self.forbidden, list) and self.forbidden else None
        out = f.get("outcome") if isinstance(f, dict) else None
        return out if isinstance(out, dict) else {}

    @property
    def histogram(self) -> list[dict]:
        """``[{"outcome", "count", "allowed"}]`` of the re-run shown."""
        return [h for h in self._typed("histogram", list, []) if isinstance(h, dict)]

    @property
    def allowed(self) -> list[dict]:
        """The states the model allows."""
        return [a for a in self._typed("allowed", list, []) if isinstance(a, dict)]

    @property
    def reproduced(self) -> dict:
        """``{"runs", "hits", "forbidden_iterations", "iterations"}`` of the re-runs."""
        return self._dict("reproduced")

    @property
    def reproduce(self) -> dict:
        """``{"command", "backend", "seed", "iterations"}``: how to run it again (``{}``: none)."""
        return self._dict("reproduce")

    @property
    def tool(self) -> dict:
        """``{"version", "git"}`` of the scopefuzz that found it."""
        return self._dict("tool")

    @property
    def params(self) -> dict:
        """The backend's parameters of the run shown."""
        return self._dict("params")

    @property
    def baseline(self) -> dict:
        """``{"backend", "iterations", "forbidden"}`` or ``{"backend", "error"}`` (``{}``: none)."""
        return self._dict("baseline")

    @property
    def bucket(self) -> dict:
        """Its bucket (fuzz/buckets.py; ``{}``: none recorded)."""
        return self._dict("bucket")

    @property
    def known(self) -> dict:
        """``{"name", "links"}`` of the known bug it is (``--known``), or ``{}``."""
        return self._dict("known")

    @property
    def kernel(self) -> str | None:
        """The generated kernel (OpenCL), or None."""
        return self._typed("kernel", str)

    @property
    def evidence(self) -> str | None:
        """The backend's evidence (the isa backend's compiled code), or None."""
        return self._typed("evidence", str)

    # -- a compiler finding's fields (``kind: compiler``) ----------------------------------------
    @property
    def compiler(self) -> str:
        return self._typed("compiler", str, "?")

    @property
    def version(self) -> str | None:
        return None if self.extra.get("version") is None else str(self.extra["version"])

    @property
    def command(self) -> list[str]:
        return [str(c) for c in self._typed("command", list, [])]

    @property
    def source_dialect(self) -> str:
        return str(self.extra.get("source_dialect", "?"))

    @property
    def marked(self) -> list[str]:
        return [str(x) for x in self._typed("marked", list, [])]

    @property
    def check(self) -> str:
        return self._typed("check", str, "")

    @property
    def kernel_source(self) -> str:
        return self._typed("kernel_source", str, "")

    @property
    def ptx(self) -> str:
        """The PTX program: a compiler finding's compiled kernel, a weakening counterexample's
        lowered program."""
        return self._typed("ptx", str, "")

    # -- a strict-weakening counterexample's (kind ``weakening``) --------------------------------
    @property
    def against(self) -> str:
        """The model the Tile IR model is checked against (``fuzz --against``)."""
        return self._typed("against", str, "ptx")

    @property
    def explanation(self) -> str:
        """Both sides' explanation, as the campaign wrote it."""
        return self._typed("explanation", str, "")

    @property
    def counterexample(self) -> str | None:
        """Its ``counterexamples/NNN`` directory's number."""
        return self._typed("counterexample", str)


def as_finding(record: Finding | dict) -> Finding:
    """``record`` as a :class:`Finding` (a record being published is a dictionary)."""
    return record if isinstance(record, Finding) else Finding.from_dict(record)


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

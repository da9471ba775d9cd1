"""The strict-weakening campaign (``scopefuzz fuzz --against ptx``) on the campaign loop.

:class:`WeakeningCampaign` is a :class:`fuzz.campaign.Campaign` whose "backend" is a second model:
program *i* of the seed is the TILEIR family's draw (:mod:`fuzz.programs`), judged by
:func:`fuzz.weakening.weakening` (every outcome the PTX model allows for the lowered program is
allowed by the Tile IR model). The loop, ``campaign.json``, ``journal.jsonl`` (one line per program:
status ``holds``, ``racy``, ``counterexample``, or ``oracle-error`` with ``budget``) and
``--resume`` are the campaign's; ``--jobs N`` is :class:`ParallelWeakeningCampaign`, the
campaign's worker machinery (:class:`fuzz.workers.ParallelCampaign`: shards ``DIR/shard-KofN/``,
each with its own journal, the deterministic ``--shard`` split of the same programs).

Every distinct minimized counterexample is written twice, from one record:

- as a typed finding ``findings/<key>/`` (:func:`fuzz.findings.publish`: ``finding.json`` with
  ``kind: weakening``, ``minimized.litmus`` the Tile IR program, ``original.litmus`` the program
  drawn, ``ptx.litmus`` the lowered program, ``explanation.txt``, ``report.md``), so that
  ``scopefuzz report DIR`` renders the campaign (:mod:`fuzz.weakening_findings`); ``<key>`` is the
  hash of the minimized program's text (the journal's ``key``), so programs minimizing to one
  counterexample are one finding with one source each;
- as ``counterexamples/NNN/`` (``tileir.litmus``, ``ptx.litmus``, ``explanation.txt``), numbered
  in the order the campaign published them, with the figures in ``weakening.json``
  (docs/tileir.md).

The finding is published first and names its ``NNN`` directory; a ``counterexamples/NNN/`` that a
kill cut off is written again from it. The program whose source is the finding's first names the
directory in its journal line (``counterexample``), every counterexample line names the finding
(``finding``); a program redone on ``--resume`` after a kill is recognised as that first source,
so nothing is lost or counted twice. Numbers are allocated under ``DIR/.counterexamples.lock``:
the shards of a parallel campaign share ``DIR/counterexamples/`` and ``DIR/findings/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field

from litmus.about import git_revision, version
from litmus.mappings.tileir_ptx import lower
from litmus.print_tileir import format_tileir
from oracle import OracleError, explain

from . import programs
from .buckets import bucket_id
from .campaign import Campaign, CampaignError, Config
from .findings import (FindingFileError, TEST_FILE, add_sources, findings_dir, load_findings,
                       publish, read_finding)
from .journal import atomic_dir, atomic_write, clean_temporaries, read_journal
from .layout import JOURNAL
from .strategies import program_seed
from .weakening import explain_counterexample, minimize, weakening
from .workers import ParallelCampaign

RESULT = "weakening.json"
#: the lowered PTX program in a weakening finding's directory
PTX_FILE = "ptx.litmus"
COUNTEREXAMPLES = "counterexamples"
#: journal statuses of programs the Tile IR model finds race-free
RACE_FREE = ("holds", "counterexample")


@dataclass
class WeakeningStats:
    """The campaign's counts (``weakening.json``); ``seconds``: this session's."""

    programs: int = 0
    race_free: int = 0
    racy: int = 0
    over_budget: int = 0
    counterexamples: int = 0
    seconds: float = 0.0
    found: list = field(default_factory=list)
    active: float = 0.0           # campaign seconds (the loop's clock), as Stats.active
    findings: int = 0             # what the loop's findings bookkeeping touches
    executions: int = 0
    budget: int = 0

    def as_json(self, cfg: dict) -> dict:
        return dict(cfg, programs=self.programs, race_free=self.race_free, racy=self.racy,
                    over_budget=self.over_budget, counterexamples=self.counterexamples,
                    seconds=round(self.seconds, 1),
                    programs_per_s=round(self.programs / self.seconds, 2) if self.seconds else 0,
                    race_free_per_s=round(self.race_free / self.seconds, 2) if self.seconds else 0,
                    found=self.found)


def weakening_config(out: str, model: str = "tileir", against: str = "ptx", seed: int = 0,
                     seconds: float | None = 60.0, programs: int | None = None,
                     minimize_seconds: float = 60.0, resume: bool = False) -> Config:
    """The campaign parameters of ``fuzz --model MODEL --against AGAINST``: the "backend" names
    both models (``against:ptx``); the model is the Tile IR one."""
    return Config(backend=f"against:{against}", out=out, seed=seed, programs=programs,
                  time=seconds, features=frozenset(), minimize_seconds=minimize_seconds,
                  resume=resume, model=model)


class WeakeningCampaign(Campaign):
    """Programs of the seed (this shard's) until the time or the program count is reached."""

    def __init__(self, config: Config, progress=None, stop=None, **_):
        super().__init__(config, progress=progress, stop=stop)
        self.against = config.backend.partition(":")[2]
        self.family = programs.family("TILEIR")
        self.stats = WeakeningStats()
        self._t0 = time.monotonic()
        #: keys of counterexamples a campaign of an earlier scopefuzz recorded in its journal
        #: (``counterexamples/NNN/`` only, no finding): a repeat of one is not recorded again
        self._unpublished: set = set()

    # -- what Campaign asks of a backend ---------------------------------------------------------
    @property
    def backend(self):
        return None

    @property
    def draw_features(self) -> frozenset:
        return self.cfg.features

    def check_backend(self) -> None:
        return None                           # both models are checked by the command

    def _warm_up(self) -> None:
        warm_up(self.family, self.cfg.model, self.against)
        self._t0 = time.monotonic()

    def _batched(self, indices):
        return indices

    def open(self) -> None:
        super().open()
        os.makedirs(self.cx_dir, exist_ok=True)
        if self.root == self.dir:             # a parallel campaign's parent cleans the shared one
            clean_temporaries(self.cx_dir)
        for e in read_journal(os.path.join(self.dir, JOURNAL)):   # resume: what was recorded
            if e.get("type") == "program" and isinstance(e.get("counterexample"), str):
                self.stats.counterexamples += 1
                self.stats.found.append({"dir": os.path.join(self.cx_dir, e["counterexample"]),
                                         "from": e.get("name")})
                if "finding" not in e:        # written before counterexamples were findings
                    self._unpublished.add(e.get("key"))

    @property
    def cx_dir(self) -> str:
        return os.path.join(self.root, COUNTEREXAMPLES)

    def _count_status(self, st, n: int) -> None:
        count_status(self.stats, st, n)

    def _count(self, e: dict) -> None:
        self._count_status(e.get("status"), 1)

    def run(self) -> WeakeningStats:
        try:
            super().run()
        finally:
            if hasattr(self, "journal"):      # opened: the figures of what was done
                self.stats.seconds = time.monotonic() - self._t0
                self._write()
        return self.stats

    # -- one program -----------------------------------------------------------------------------
    def one(self, i: int, clock) -> dict:
        test = self.family.draw(self.cfg.seed, i)
        entry = {"type": "program", "campaign": self.uid, "i": i,
                 "seed": program_seed(self.cfg.seed, i), "name": test.name, "size": test.size}
        t0 = time.monotonic()
        try:
            v = weakening(test, self.cfg.model, self.against)
        except OracleError as e:
            entry.update(status="oracle-error", budget=True, error=str(e).splitlines()[0][:200])
        else:
            entry["status"] = v.status
            if v.status == "counterexample":
                self._record(test, i, entry, clock)
        entry["seconds"] = round(time.monotonic() - t0, 4)
        return entry

    def _record(self, test, i: int, entry: dict, clock) -> None:
        """Minimize the counterexample; publish it as a finding and ``counterexamples/NNN/``
        unless it was (then add this program to its sources). The journal entry names the key
        and the finding, and ``counterexample`` when this program is the finding's first
        source."""
        t0 = time.monotonic()
        small = minimize(test, self.cfg.model, self.against, self.cfg.minimize_seconds)
        secs = time.monotonic() - t0
        key = counterexample_key(small)
        entry["key"] = key
        if key in self._unpublished:
            return
        entry["finding"] = key
        src = {"campaign": self.uid, "index": i, "seed": program_seed(self.cfg.seed, i)}
        record = None
        if load_record(self.root, key) is None:      # new so far: written up outside the lock
            record = self._write_up(test, small, key, src, secs, clock)
        with counterexamples_lock(self.root):
            old = load_record(self.root, key)
            if old is None:
                n = next_number(self.root)
                record = renumbered(record, n)
                publish(self.root, record)
                write_counterexample(self.root, record)
                first = True
            else:
                add_sources(self.root, key, [src])
                write_counterexample(self.root, old)          # repair a directory a kill cut off
                record = old
                first = _same_source((old.get("sources") or [{}])[0], src)
        if not first:
            return
        st = self.stats
        st.counterexamples += 1
        entry["counterexample"] = record["counterexample"]
        st.found.append({"dir": os.path.join(self.cx_dir, record["counterexample"]),
                         "from": test.name})
        self.known[key] = record
        self.stats.findings = len(self.known)
        self.new_findings += 1
        st.seconds = time.monotonic() - self._t0
        self._write()

    def _write_up(self, test, small, key: str, src: dict, secs: float, clock) -> dict:
        """The finding record of a new counterexample (numbered ``000`` until published)."""
        v = weakening(small, self.cfg.model, self.against, budget=None)
        named = dataclasses.replace(small, name=f"cx000-from-{test.name}")
        return weakening_record(
            key=key, model=self.cfg.model, against=self.against, seed=self.cfg.seed,
            test=named, original=test, extra=v.extra,
            explanation=explain_counterexample(named, self.cfg.model, self.against),
            minimized={"size_before": test.size, "size_after": small.size,
                       "seconds": round(secs, 3)},
            first=dict(src, t=round(clock(), 3), name=test.name), backend=self.cfg.backend)

    # -- figures ---------------------------------------------------------------------------------
    def figures_config(self) -> dict:
        return figures_config(self.cfg, self.against)

    def _write(self) -> None:
        write_figures(self.dir, self.stats, self.figures_config())


def count_status(s: WeakeningStats, st, n: int) -> None:
    """Add ``n`` programs of journal status ``st`` to the figures."""
    s.programs += n
    if st in RACE_FREE:
        s.race_free += n
    elif st == "racy":
        s.racy += n
    elif st == "oracle-error":
        s.over_budget += n


def figures_config(cfg: Config, against: str) -> dict:
    return {"model": cfg.model, "against": against, "seed": cfg.seed,
            "seconds_limit": cfg.time, "programs_limit": cfg.programs}


def write_figures(directory: str, stats: WeakeningStats, config: dict) -> None:
    """``DIR/weakening.json`` (atomically replaced)."""
    atomic_write(os.path.join(directory, RESULT),
                 json.dumps(stats.as_json(config), indent=1))


def warm_up(family, model: str, against: str) -> None:
    """Compile both models' checks (numba) before the clock starts; errors are ignored."""
    try:
        weakening(family.draw(0, 0), model, against)
    except Exception:
        pass


def counterexample_key(small) -> str:
    """The key of a minimized counterexample: the hash of its text under a fixed name."""
    text = format_tileir(dataclasses.replace(small, name="cx"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def weakening_record(*, key, model, against, seed, test, original, extra, explanation,
                     minimized, first, backend) -> dict:
    """The ``finding.json`` record of a counterexample (``kind: weakening``, see
    :mod:`fuzz.weakening_findings` for what the report shows of it)."""
    text = format_tileir(test)
    src = {k: first[k] for k in ("campaign", "index", "seed")}
    return {
        "id": key, "kind": "weakening", "backend": backend, "model": model, "against": against,
        "campaign_seed": seed, "test": text, "original": format_tileir(original),
        "ptx": lower(test), "explanation": explanation,
        "condition": "exists (true)",
        "forbidden": [{"outcome": o, "count": 1} for o in extra],
        "minimize": dict(minimized),
        "first": dict(first), "sources": [src],
        "bucket": weakening_bucket(test, extra[0], model, against),
        "tool": {"version": version(), "git": git_revision()},
        "reproduce": {"command": f"scopefuzz check --model {model} {TEST_FILE}; "
                                 f"scopefuzz check --model {against} --states {PTX_FILE}",
                      "backend": backend},
        "counterexample": "000",
    }


def weakening_bucket(test, outcome: dict, model: str, against: str) -> dict:
    """The counterexample's bucket: the Tile IR check that forbids the PTX outcome (the model's
    first failing axiom in :func:`oracle.explain`), or the finding's own one when the
    explanation does not name one."""
    import re
    try:
        checks = sorted(set(re.findall(r"fails '([^']+)'", explain(test, outcome, model).text())))
    except Exception:
        checks = []
    sig = (f"{model} forbids a {against} outcome: fails " + ", ".join(f"'{c}'" for c in checks)
           if checks else f"{model} forbids a {against} outcome")
    return {"kind": "weakening", "signature": sig, "id": bucket_id(sig), "checks": checks}


def renumbered(record: dict, n: int) -> dict:
    """``record`` as counterexample ``n``: its directory name and its program's name."""
    nnn = f"{n:03d}"
    out = dict(record, counterexample=nnn)
    for k in ("test", "ptx", "explanation"):
        out[k] = record[k].replace("cx000-from-", f"cx{nnn}-from-")
    return out


def load_record(root: str, key: str) -> dict | None:
    """Finding ``key``'s record, None when there is none (or it cannot be read)."""
    path = os.path.join(findings_dir(root), key, "finding.json")
    if not os.path.exists(path):
        return None
    try:
        return read_finding(path).to_dict()
    except FindingFileError:
        return None


def next_number(root: str) -> int:
    """One more than the highest counterexample number in use (directories and findings)."""
    d = os.path.join(root, COUNTEREXAMPLES)
    used = [int(n) for n in (os.listdir(d) if os.path.isdir(d) else []) if n.isdigit()]
    for rec in load_findings(root, on_bad=lambda m: None):
        if rec.get("kind") == "weakening" and str(rec.get("counterexample", "")).isdigit():
            used.append(int(rec["counterexample"]))
    return max(used, default=0) + 1


def write_counterexample(root: str, record: dict) -> None:
    """``counterexamples/NNN/`` of a published record, unless it is there."""
    atomic_dir(os.path.join(root, COUNTEREXAMPLES, record["counterexample"]),
               {"tileir.litmus": record["test"], "ptx.litmus": record["ptx"],
                "explanation.txt": record["explanation"]})


@contextlib.contextmanager
def counterexamples_lock(root: str):
    """An exclusive ``flock`` on ``DIR/.counterexamples.lock`` (numbers are allocated under it)."""
    import fcntl
    with open(os.path.join(root, ".counterexamples.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _same_source(a: dict, b: dict) -> bool:
    return (a.get("campaign"), a.get("index")) == (b.get("campaign"), b.get("index"))


class ParallelWeakeningCampaign(ParallelCampaign):
    """``fuzz --against ptx --jobs N``: :class:`fuzz.workers.ParallelCampaign` whose workers run
    :class:`WeakeningCampaign` shards (the deterministic split of the same programs), sharing
    ``DIR/findings/`` and ``DIR/counterexamples/``; ``DIR/weakening.json`` sums the shards'."""

    shard_campaign = WeakeningCampaign

    def __init__(self, config, jobs, progress=None, log=None):
        super().__init__(config, jobs, None, progress=progress, log=log)
        self.against = config.backend.partition(":")[2]
        self.stats = WeakeningStats()
        self._began: float | None = None      # when every worker had reported its start

    def check_backends(self) -> None:
        return None                           # both models are checked by the command

    def open(self) -> None:
        super().open()
        cx = os.path.join(self.dir, COUNTEREXAMPLES)
        os.makedirs(cx, exist_ok=True)
        clean_temporaries(cx)                 # no worker runs yet

    def _compile_ahead(self) -> None:
        warm_up(programs.family("TILEIR"), self.cfg.model, self.against)

    def run(self) -> WeakeningStats:
        try:
            return super().run()
        finally:
            if hasattr(self, "_lock_file"):   # opened: the figures of what was done
                self.stats = self._sum()
                self.stats.found = self._found()
                write_figures(self.dir, self.stats, figures_config(self.cfg, self.against))

    def _sum(self) -> WeakeningStats:
        """Every shard's counts; the counterexamples (and what found them) from the shared
        findings, in number order."""
        total = WeakeningStats()
        for w in self.workers:
            for f in ("programs", "race_free", "racy", "over_budget", "executions", "budget"):
                setattr(total, f, getattr(total, f) + w.stats.get(f, 0))
            total.active = max(total.active, w.stats.get("active", 0.0))
        d = os.path.join(self.dir, COUNTEREXAMPLES)     # every tick: a directory listing
        total.counterexamples = total.findings = sum(
            1 for n in (os.listdir(d) if os.path.isdir(d) else []) if n.isdigit())
        total.seconds = self._session_seconds()
        return total

    def _found(self) -> list[dict]:
        """``weakening.json``'s ``found``: each counterexample directory and the program that
        published it, in number order (from the shared findings)."""
        recs = sorted((r for r in load_findings(self.dir, on_bad=lambda m: None)
                       if r.get("kind") == "weakening"), key=lambda r: r.get("counterexample", ""))
        return [{"dir": os.path.join(self.dir, COUNTEREXAMPLES, r["counterexample"]),
                 "from": (r.get("first") or {}).get("name")} for r in recs]

    def _session_seconds(self) -> float:
        """This session's seconds since every worker reported its start (after its warm-up, as
        one process counts from the end of its warm-up: the workers' start-up is not in it)."""
        if self._began is None and self.workers and all("active" in w.stats
                                                         for w in self.workers):
            self._began = time.monotonic()
        return time.monotonic() - self._began if self._began is not None else 0.0


class WeakeningProgress:
    """The progress line on stderr each time the program count passes a multiple of 50 (the
    loop's ``Progress`` protocol; a parallel campaign's sums move by more than one); the rate is
    this session's (programs journaled before a ``--resume`` are not in it)."""

    EVERY = 50

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()
        self.base = 0
        self.shown = 0

    def begin(self, st) -> None:
        self.t0 = time.monotonic()
        self.base = self.shown = st.programs

    def update(self, st, coverage=None) -> None:
        if st.programs // self.EVERY > self.shown // self.EVERY:
            self.shown = st.programs
            secs = time.monotonic() - self.t0
            print(f"\r{st.programs} programs ({st.race_free} race-free, {st.racy} racy, "
                  f"{st.over_budget} over budget), {st.counterexamples} counterexample(s), "
                  f"{(st.programs - self.base) / max(secs, 1e-9):.1f} programs/s", end="",
                  file=self.stream)

    def finish(self, st, coverage=None) -> None:
        return None


__all__ = ["WeakeningProgress", "WeakeningCampaign", "ParallelWeakeningCampaign", "WeakeningStats",
           "weakening_config", "CampaignError", "RESULT"]

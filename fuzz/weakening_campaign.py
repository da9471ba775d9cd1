"""The strict-weakening campaign (``scopefuzz fuzz --against ptx``) on the campaign loop.

:class:`WeakeningCampaign` is a :class:`fuzz.campaign.Campaign` whose "backend" is a second model:
program *i* of the seed is the TILEIR family's draw (:mod:`fuzz.programs`), judged by
:func:`fuzz.weakening.weakening` (every outcome the PTX model allows for the lowered program is
allowed by the Tile IR model). The loop, ``campaign.json``, ``journal.jsonl`` (one line per program:
status ``holds``, ``racy``, ``counterexample``, or ``oracle-error`` with ``budget``) and
``--resume`` are the campaign's. What the campaign wrote before it ran on the loop stays as
documented (docs/tileir.md): every distinct minimized counterexample in
``OUT/counterexamples/NNN/`` (``tileir.litmus``, ``ptx.litmus``, ``explanation.txt``; its program's
journal line names it) and the figures in ``OUT/weakening.json``. One process (shard 1/1).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field

from litmus.mappings.tileir_ptx import lower
from litmus.print_tileir import format_tileir
from oracle import OracleError

from . import programs
from .campaign import Campaign, CampaignError, Config
from .journal import read_journal
from .layout import JOURNAL
from .strategies import program_seed
from .weakening import explain_counterexample, minimize, weakening

RESULT = "weakening.json"
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
    """Programs 0, 1, ... of the seed until the time or the program count is reached."""

    def __init__(self, config: Config, progress=None, stop=None):
        super().__init__(config, progress=progress, stop=stop)
        self.against = config.backend.partition(":")[2]
        self.family = programs.family("TILEIR")
        self.stats = WeakeningStats()
        self._seen: set[str] = set()          # the keys of the counterexamples recorded
        self._t0 = time.monotonic()

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
        try:
            weakening(self.family.draw(0, 0), self.cfg.model, self.against)
        except Exception:
            pass
        self._t0 = time.monotonic()

    def _batched(self, indices):
        return indices

    def open(self) -> None:
        super().open()
        os.makedirs(self.cx_dir, exist_ok=True)
        for e in read_journal(os.path.join(self.dir, JOURNAL)):   # resume: what was recorded
            if e.get("type") == "program" and isinstance(e.get("counterexample"), str):
                self._seen.add(e.get("key"))
                self.stats.counterexamples += 1
                self.stats.found.append({"dir": os.path.join(self.cx_dir, e["counterexample"]),
                                         "from": e.get("name")})

    @property
    def cx_dir(self) -> str:
        return os.path.join(self.dir, COUNTEREXAMPLES)

    def _count_status(self, st, n: int) -> None:
        s = self.stats
        s.programs += n
        if st in RACE_FREE:
            s.race_free += n
        elif st == "racy":
            s.racy += n
        elif st == "oracle-error":
            s.over_budget += n

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
                self._record(test, entry)
        entry["seconds"] = round(time.monotonic() - t0, 4)
        return entry

    def _record(self, test, entry: dict) -> None:
        """Minimize the counterexample; a new one goes to ``counterexamples/NNN/`` and the
        journal entry names it (a repeat names the key only)."""
        small = minimize(test, self.cfg.model, self.against, self.cfg.minimize_seconds)
        key = format_tileir(dataclasses.replace(small, name="cx"))
        entry["key"] = hashlib.sha256(key.encode()).hexdigest()[:16]
        if entry["key"] in self._seen:
            return
        self._seen.add(entry["key"])
        st = self.stats
        n = st.counterexamples + 1
        d = os.path.join(self.cx_dir, f"{n:03d}")
        os.makedirs(d, exist_ok=True)
        small = dataclasses.replace(small, name=f"cx{n:03d}-from-{test.name}")
        for name, text in (("tileir.litmus", format_tileir(small)), ("ptx.litmus", lower(small)),
                           ("explanation.txt",
                            explain_counterexample(small, self.cfg.model, self.against))):
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        st.counterexamples = n
        entry["counterexample"] = f"{n:03d}"
        st.found.append({"dir": d, "from": test.name})
        self.new_findings += 1
        st.seconds = time.monotonic() - self._t0
        self._write()

    # -- figures ---------------------------------------------------------------------------------
    def figures_config(self) -> dict:
        return {"model": self.cfg.model, "against": self.against, "seed": self.cfg.seed,
                "seconds_limit": self.cfg.time, "programs_limit": self.cfg.programs}

    def _write(self) -> None:
        tmp = os.path.join(self.dir, RESULT + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.stats.as_json(self.figures_config()), f, indent=1)
        os.replace(tmp, os.path.join(self.dir, RESULT))


class WeakeningProgress:
    """The progress line on stderr every 50 programs (the loop's ``Progress`` protocol)."""

    EVERY = 50

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()

    def begin(self, st) -> None:
        self.t0 = time.monotonic()

    def update(self, st, coverage=None) -> None:
        if st.programs % self.EVERY == 0:
            secs = time.monotonic() - self.t0
            print(f"\r{st.programs} programs ({st.race_free} race-free, {st.racy} racy, "
                  f"{st.over_budget} over budget), {st.counterexamples} counterexample(s), "
                  f"{st.programs / max(secs, 1e-9):.1f} programs/s", end="", file=self.stream)

    def finish(self, st, coverage=None) -> None:
        return None


__all__ = ["WeakeningProgress", "WeakeningCampaign", "WeakeningStats", "weakening_config", "CampaignError", "RESULT"]

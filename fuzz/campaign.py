"""The fuzz campaign: draw, oracle, run, compare; confirm, minimize, deduplicate, record.

A campaign directory holds

- ``campaign.json``: its parameters (backend, seed, features, shard, iterations, and the model when
  one is named: ``--model ptx`` draws PTX programs, :mod:`fuzz.ptx_strategies`), written once;
- ``journal.jsonl``: one line per session start and per program done (status, coverage,
  executions, the finding it led to, or the error it raised), written before the next program starts
  and fsynced at most once a second (``fuzz/journal.py``), rotated into sealed segments
  ``journal.000001.jsonl``... every 64 MiB; ``--resume`` and ``report`` stream it;
- ``findings/<id>/``: one directory per distinct minimized finding (``fuzz/findings.py``).

Program *i* is a pure function of (seed, i) (the draw of the campaign's program family,
:mod:`fuzz.programs`: :func:`fuzz.strategies.draw_program` for AMDGPU), shard K/N takes the
programs with ``i % N == K - 1``, and the journal says which programs are done: ``--resume`` skips them
and redoes a program whose line a kill cut off. A finding is published (one rename) before its program's
journal line is written; publishing it again on resume only adds a source if it is not already there.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from litmus import Test, canonical_hash, format_test, parse
from litmus.about import git_revision, version
from litmus.dialects import DEFAULT_MODEL

import hw
import oracle
from hw import Backend, BackendSpec
from hw.backend import BackendRefused, EvidenceBackend

from . import coverage as cov
from . import programs
from .buckets import bucket_id, bucket_of
from .compare import compare
from .finding import Finding, as_finding
from .findings import TEST_FILE, add_sources, findings_dir, load_finding_records, publish
from .journal import (CAMPAIGN_SYNC_SECONDS, DoneSet, Journal, atomic_write, clean_temporaries,
                      read_json)
from .known import known_for, load_known_files
from .minimize import forbidding_condition, minimize, renumber_registers, tidy_placements
from .programs import ProgramFamily
from .progress import Progress
from .replay import EXECUTED, replay
from .strategies import (MAX_EVENTS, estimate_events, parse_features,
                         program_seed)
from .warm import compile_ahead

from .layout import JOURNAL, META  # noqa: E402  (re-exported: the one-process layout's files)


class CampaignError(Exception):
    """A campaign cannot start (bad options, a directory holding another campaign): one line."""


def parse_shard(text: str | None) -> tuple[int, int]:
    """``"K/N"`` -> (K, N) with 1 <= K <= N."""
    if text is None:
        return (1, 1)
    k, sep, n = text.partition("/")
    try:
        k_i, n_i = int(k), int(n)
    except ValueError:
        raise CampaignError(f"bad --shard {text!r}: expected K/N, e.g. 1/4") from None
    if not sep or n_i < 1 or not 1 <= k_i <= n_i:
        raise CampaignError(f"bad --shard {text!r}: need 1 <= K <= N")
    return (k_i, n_i)


@dataclass
class Config:
    """Campaign parameters (``scopefuzz fuzz`` options)."""

    backend: str
    out: str = "campaign"
    seed: int = 0
    programs: int | None = None       # total over all shards (program numbers 0..N-1)
    time: float | None = None         # seconds of this session
    features: frozenset = field(default_factory=lambda: parse_features(None))
    shard: tuple[int, int] = (1, 1)
    iterations: int = 1000
    near_miss: float = 0.5
    minimize_tries: int = 300
    minimize_seconds: float = 60.0
    repro_runs: int = 3
    resume: bool = False
    baseline: str | None = None       # a reference backend (e.g. "sim" for "sim:MUTANT")
    max_findings: int | None = None   # stop after this many new findings (not on the baseline)
    model: str | None = None          # the oracle's model; None: AMDGPU programs, amdgpu model
    findings_root: str | None = None  # the directory whose findings/ this campaign publishes to
    #                                   (a parallel campaign's shards share their parent's); None: out
    #: known-bugs files (``--known``, fuzz/known.py): a finding in a known bug's bucket is counted
    #: there, not minimized. Not part of the identity (it does not change what a program is).
    known: tuple = ()
    #: ``--forms-per-bucket N``: once N programs of a bucket (as found, before minimization) have
    #: been minimized in this campaign (at most N forms), later findings in it are counted, not
    #: minimized; None: no limit (every finding is minimized). Not part of the identity.
    forms_per_bucket: int | None = None

    def identity(self) -> dict:
        """What must match for ``--resume`` (program numbering and meaning of each program)."""
        out = {"backend": self.backend, "seed": self.seed, "features": sorted(self.features),
               "shard": f"{self.shard[0]}/{self.shard[1]}", "iterations": self.iterations,
               "near_miss": self.near_miss, "baseline": self.baseline}
        if self.model is not None:
            out["model"] = self.model
        return out


#: steps plus model evaluations of the oracle's search per program in a campaign (about 1-3 s with
#: incremental model evaluation): a program with a huge candidate space is journaled as an oracle
#: error instead of stalling the campaign
ORACLE_BUDGET = 5_000_000


def lock_campaign(directory: str):
    """One process per campaign directory: an exclusive ``flock`` on ``DIR/.lock`` (it dies with
    the process, even on SIGKILL). Returns the open lock file (closing it releases the lock)."""
    import fcntl
    f = open(os.path.join(directory, ".lock"), "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise CampaignError(f"{directory}: another scopefuzz process is running this "
                            "campaign") from None
    return f


def default_checker(model: str | None = None):
    """``checker(test)`` -> the oracle's lazy :class:`oracle.judge.Judge` (with the campaign's
    budget): the campaign asks it only what it needs, so a program whose observed outcomes are
    all allowed costs outcome queries, never the full allowed set."""
    try:
        from oracle.judge import Judge
        return functools.partial(Judge, model=model, budget=ORACLE_BUDGET)
    except (ImportError, AttributeError) as e:
        raise CampaignError(f"the oracle is not available: {e}") from None


def budget_hit(e: Exception) -> bool:
    """Is ``e`` the oracle's search running past its budget (not another oracle error)?"""
    try:
        from oracle.errors import BudgetExhausted
    except ImportError:
        return False
    return isinstance(e, BudgetExhausted)


def program_family(model: str | None) -> ProgramFamily:
    """The program family a campaign of ``--model`` draws from (fuzz/programs/: the first one
    whose dialect the model reads; AMDGPU without a model); CampaignError when none fits."""
    try:
        return programs.for_model(model)
    except programs.FamilyError as e:
        raise CampaignError(str(e)) from None


#: programs drawn ahead and prepared together by a backend that batches (``prepare``)
BATCH = 32
#: journal statuses of programs that errored (the oracle, the backend, or the size limit)
ERRORED = ("oracle-error", "backend-error", "too-big")


@dataclass
class Stats:
    programs: int = 0
    executed: int = 0
    executions: int = 0
    findings: int = 0
    undef: int = 0
    errors: int = 0
    budget: int = 0           # programs whose oracle search ran past ORACLE_BUDGET (among errors)
    refused: int = 0          # programs the backend cannot express (BackendRefused)
    unconfirmed: int = 0
    active: float = 0.0


class Campaign:
    """One campaign directory; :meth:`run` fuzzes until the program count or time is reached."""

    def __init__(self, config: Config, backend: Backend | None = None,
                 checker: Callable | None = None, progress: Progress | None = None,
                 baseline: Backend | None = None, stop: Callable[[], bool] | None = None,
                 claim: Callable[[dict, int], bool] | None = None):
        self.cfg = config
        # asked before minimizing a finding (its bucket, program number): False when another
        # worker of a distributed campaign minimizes that bucket (fuzz/claims.py)
        self._claim = claim
        self.dir = config.out
        self.root = config.findings_root or config.out   # where findings/ is
        self._stop = stop            # asked between programs: True ends the session early
        self._backend = backend
        self._baseline = baseline
        self._spec: BackendSpec | None = None
        self._injected = backend is not None
        self._draw_features: frozenset | None = None
        self._drawn: dict = {}           # programs drawn ahead for a batch (`_batched`)
        self.new_findings = 0
        self._checker = checker
        self.progress = progress
        self.stats = Stats()
        self.coverage = cov.Coverage()
        self.done = DoneSet(config.shard[0] - 1, config.shard[1])   # bounded memory on resume
        self.known: dict[str, Finding] = {}     # this campaign's findings, by id
        self.known_bugs = load_known_files(config.known)    # a bad file fails before DIR is touched
        self.counted = 0             # findings counted in a bucket, not minimized (this session)
        self.uid = (f"{config.backend}-seed{config.seed}-"
                    f"shard{config.shard[0]}of{config.shard[1]}")

    # -- set-up ----------------------------------------------------------------------------------
    def open(self) -> None:
        meta_path = os.path.join(self.dir, META)
        jpath = os.path.join(self.dir, JOURNAL)
        exists = os.path.exists(meta_path) or os.path.exists(jpath)
        if exists and not self.cfg.resume:
            raise CampaignError(f"{self.dir}: already holds a campaign (use --resume, or another "
                                "--out)")
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(findings_dir(self.root), exist_ok=True)
        self._lock()
        clean_temporaries(self.dir)
        if self.root == self.dir:     # a shared findings/ is cleaned by the parent, not a shard
            clean_temporaries(findings_dir(self.root))
        if os.path.exists(meta_path):
            meta = read_json(meta_path, CampaignError)
            mine = self.cfg.identity()
            for k in list(mine) + ["model"] * ("model" not in mine):   # model: only when named
                if meta.get(k) != mine.get(k):
                    raise CampaignError(f"{self.dir}: --resume with {k}={mine.get(k)!r}, but the "
                                        f"campaign was started with {k}={meta.get(k)!r}")
        else:
            meta = dict(self.cfg.identity(), uid=self.uid, created=time.time(), version=1)
            atomic_write(meta_path, json.dumps(meta, indent=1, sort_keys=True) + "\n")
        # streamed into per-status counts (fuzz/replay.py), folded into the statistics here: one
        # dictionary update per program, not a dozen
        r = replay(jpath, self.done, self.coverage, self.stats.active)
        self.stats.executions += r.executions
        self.stats.budget += r.budget
        self.stats.active = r.active
        for st, n in r.statuses.items():
            self._count_status(st, n)
        for rec in load_finding_records(self.root):
            self.known[rec.id] = rec
        self.stats.findings = len(self.known)
        self.journal = Journal(jpath, sync_every=CAMPAIGN_SYNC_SECONDS)
        self.journal.append({"type": "session", "ts": time.time(), "resume": self.cfg.resume,
                             "pid": os.getpid(), "done": len(self.done)})

    def _lock(self) -> None:
        self._lock_file = lock_campaign(self.dir)

    def _count(self, e: dict) -> None:
        """Add a journaled program to the statistics and the coverage."""
        self.stats.executions += e.get("executions", 0)
        st = e.get("status")
        self._count_status(st, 1)
        if e.get("budget"):      # an oracle error that was the search budget running out
            self.stats.budget += 1
        if st in EXECUTED:      # coverage is what ran, not what was drawn
            self.coverage.add(e.get("kinds", []), e.get("pairs", []))

    def _count_status(self, st, n: int) -> None:
        """Add ``n`` programs of journal status ``st`` to the statistics."""
        s = self.stats
        s.programs += n
        if st in ("undef", "all-undef"):
            s.undef += n
        elif st in ERRORED:
            s.errors += n
        elif st == "refused":
            s.refused += n
        elif st == "unconfirmed":
            s.unconfirmed += n
        if st in EXECUTED:
            s.executed += n

    @property
    def backend_spec(self) -> BackendSpec:
        """The backend name read by hw (:func:`hw.parse_backend_spec`), once per campaign: its
        family, its mutant (None for a profile or target alone, e.g. ``sim:gfx90a``)."""
        if self._spec is None:
            self._spec = spec_of(self.cfg.backend, self._injected)
        return self._spec

    @property
    def simulated(self) -> bool:
        """Does the campaign run the simulator (a ``sim`` or ``isa`` backend or baseline, as hw
        reads their names)?"""
        base = self.cfg.baseline
        return self.backend_spec.simulator or bool(
            base and spec_of(base, self._baseline is not None).simulator)

    @property
    def backend(self):
        if self._backend is None:
            try:
                self._backend = hw.get_backend(self.cfg.backend)
            except hw.BackendError as e:
                raise CampaignError(str(e)) from None
        return self._backend

    @property
    def draw_features(self) -> frozenset:
        """The features programs are drawn with: the campaign's, narrowed to what the backend
        (and the baseline) declare they can express (``capabilities()``), when the program
        family narrows (:meth:`fuzz.programs.ProgramFamily.narrowed`)."""
        if self._draw_features is None:
            self._draw_features = program_family(self.cfg.model).narrowed(
                self.cfg.features, lambda: (self.backend, self.baseline))
        return self._draw_features

    @property
    def baseline(self):
        if self._baseline is None and self.cfg.baseline:
            try:
                self._baseline = hw.get_backend(self.cfg.baseline)
            except hw.BackendError as e:
                raise CampaignError(f"baseline: {e}") from None
        return self._baseline

    @property
    def checker(self):
        if self._checker is None:
            self._checker = default_checker() if self.cfg.model is None else \
                default_checker(self.cfg.model)
        return self._checker

    def check_backend(self) -> None:
        """The backend must run the programs' dialect (the simulator models AMD hardware and
        runs AMDGPU programs; PTX programs need an NVIDIA device)."""
        dialect = program_family(self.cfg.model).dialect
        for name, b in ((self.cfg.backend, self.backend), (self.cfg.baseline, self.baseline)):
            runs = b.dialects if b is not None else (dialect,)
            if dialect not in runs:
                raise CampaignError(f"backend {name} runs {'/'.join(runs)} programs, not "
                                    f"{dialect}: {b.why_not(dialect)}")

    # -- the loop --------------------------------------------------------------------------------
    def indices(self):
        k, n = self.cfg.shard
        i = k - 1
        while self.cfg.programs is None or i < self.cfg.programs:
            if i not in self.done:
                yield i
            i += n

    def run(self) -> Stats:
        _ = self.backend, self.checker, self.baseline   # bad names fail before DIR is touched
        self.check_backend()
        self.open()
        self._warm_up()
        if self.progress:
            self.progress.begin(self.stats)
        start = time.monotonic()
        base = self.stats.active
        try:
            for i in self._batched(self.indices()):
                if self.cfg.time is not None and time.monotonic() - start >= self.cfg.time:
                    break
                entry = self.one(i, lambda: base + time.monotonic() - start)
                entry["t"] = round(base + time.monotonic() - start, 4)
                entry["ts"] = round(time.time(), 3)
                self.journal.append(entry)
                self.done.add(i)
                self._count(entry)
                self.stats.active = entry["t"]
                if self.progress:
                    self.progress.update(self.stats, self.coverage)
                if self.cfg.max_findings is not None and \
                        self.new_findings >= self.cfg.max_findings:
                    break
                if self._stop is not None and self._stop():
                    break
        finally:
            self.journal.close()
            self._lock_file.close()
            if self.progress:
                self.progress.finish(self.stats, self.coverage)
        return self.stats

    def _batched(self, indices):
        """``indices``, read :data:`BATCH` ahead: the programs of each batch are drawn at once
        and handed to the backend's ``prepare`` (the isa backend compiles them in one clang-22
        call, hw/isa/toolchain.compile_batch), so that ``one`` finds them compiled.

        On a backend whose ``prepare_overlaps`` is true (the isa backend), the compile of batch
        k+1 overlaps the run of batch k: ``prepare`` runs in a background thread (it waits on
        clang-22, a process of its own that another core can run) while this thread examines
        batch k, and batch k+1 starts only once its compile is done. Each
        program's result is the same as without the overlap (the same code, from the same
        cache); only the wall time changes. When the campaign stops early the compile under way
        is cancelled (its processes killed, nothing cached)."""
        prepare = getattr(self.backend, "prepare", None)
        if prepare is None:
            yield from indices
            return
        import threading
        draw = program_family(self.cfg.model).draw
        it = iter(indices)
        cancel = threading.Event()
        overlap = getattr(self.backend, "prepare_overlaps", False)

        def take():
            batch = [i for _, i in zip(range(BATCH), it)]
            return batch, {i: draw(self.cfg.seed, i, self.draw_features, self.cfg.near_miss)
                           for i in batch}

        if not overlap:               # prepare each batch right before running it
            while True:
                batch, drawn = take()
                if not batch:
                    return
                self._drawn = drawn
                try:
                    prepare(list(drawn.values()))
                except Exception:        # each program then meets its own error in `one`
                    pass
                yield from batch

        def start(drawn):
            def work():
                try:
                    prepare(list(drawn.values()), cancel=cancel)
                except Exception:        # each program then meets its own error in `one`
                    pass
            th = threading.Thread(target=work, name="scopefuzz-prepare", daemon=True)
            th.start()
            return th

        batch, drawn = take()
        worker = start(drawn) if batch else None
        try:
            while batch:
                worker.join()
                self._drawn.update(drawn)
                batch_now = batch
                batch, drawn = take()
                worker = start(drawn) if batch else None
                yield from batch_now
        finally:
            if worker is not None and worker.is_alive():
                cancel.set()
                worker.join()

    def _warm_up(self) -> None:
        """Compile the oracle's and the backends' kernels (numba JIT) before the clock starts, so
        ``--time`` is spent fuzzing: the simulator (when a backend is ``sim``/``isa`` and its
        kernel is not in numba's cache) in a process of its own while this one compiles the
        oracle's model (fuzz/warm.py ``compile_ahead``), each showing its progress on stderr.
        Failures here are ignored: the loop records them per program."""
        wait = compile_ahead(self.simulated, model=checked_model(self.cfg.model))
        mp = warm_up_program(self.cfg.model)
        try:
            warm_up_oracle(self.checker, mp, self.cfg.model)
        finally:
            wait()
        for step in (lambda: self.backend.run(mp, 8, 0),
                     lambda: self.baseline.run(mp, 8, 0) if self.baseline is not None else None):
            try:
                step()
            except Exception:
                pass

    def _run(self, test: Test, iterations: int, seed: int, counter: list):
        hist = self.backend.run(test, iterations, seed)
        counter[0] += hist.total or iterations
        return hist

    def _forbidden(self, res, test: Test, seed: int, counter: list | None = None,
                   iterations: int | None = None) -> int:
        """Run, compare, count: the iterations of one run of ``test`` (seed ``seed``) whose
        outcome ``res`` (the oracle's answer for ``test``) forbids. On the campaign's backend,
        adding its executions to ``counter``; with ``counter`` None, on the baseline backend
        (whose executions are not the campaign's)."""
        iterations = self.cfg.iterations if iterations is None else iterations
        if counter is None:
            hist = self.baseline.run(test, iterations, seed)
        else:
            hist = self._run(test, iterations, seed, counter)
        return compare(res, hist, test.condition).forbidden

    def one(self, i: int, clock) -> dict:
        """Program number ``i``: its journal entry (and its finding, published before)."""
        pseed = program_seed(self.cfg.seed, i)
        draw = program_family(self.cfg.model).draw
        test = self._drawn.pop(i, None) or draw(self.cfg.seed, i, self.draw_features,
                                                self.cfg.near_miss)
        entry = {"type": "program", "campaign": self.uid, "i": i, "seed": pseed, "name": test.name,
                 "kinds": cov.kinds(test), "pairs": cov.scope_pairs(test), "size": test.size}
        execs = [0]
        t0 = time.monotonic()
        try:
            entry["status"] = self._examine(test, i, pseed, entry, execs, clock)
        finally:
            entry["executions"] = execs[0]
            entry["seconds"] = round(time.monotonic() - t0, 4)
        return entry

    def _examine(self, test, i, pseed, entry, execs, clock) -> str:
        if estimate_events(test) > MAX_EVENTS:
            entry["error"] = f"{test.name}: more than {MAX_EVENTS} events"
            return "too-big"
        if not test.locations:        # nothing observable (and the oracle need not see it)
            return "no-memory"
        try:            # the judge answers lazily: every answer asked for here is in the try
            res = self.checker(test)
            if res.verdict == "Undef":
                entry["ub"] = list(res.ub)[:3]
                return "undef"
            if res.all_undef:     # every outcome is allowed: running it cannot find anything
                return "all-undef"
            entry["verdict"] = res.verdict
        except Exception as e:       # an oracle error on one program: recorded, campaign goes on
            return _oracle_error(entry, e)
        try:
            hist = self._run(test, self.cfg.iterations, pseed, execs)
        except BackendRefused as e:       # a construct the backend cannot express
            entry["error"] = _one_line(e)
            return "refused"
        except Exception as e:
            entry["error"] = _one_line(e)
            return "backend-error"
        try:                      # the observed outcomes are asked about now
            seen = compare(res, hist, test.condition)
        except Exception as e:
            return _oracle_error(entry, e)
        entry["witnesses"] = seen.witnesses
        if not seen.forbidden:
            return "ok"
        # confirm with another seed
        try:
            confirmed = self._forbidden(res, test, pseed + 1, execs) > 0
        except Exception as e:
            confirmed = False
            entry["error"] = _one_line(e)
        if not confirmed:
            entry["test"] = format_test(test)
            entry["forbidden"] = [o for o, _ in seen.forbidden_outcomes()[:3]]
            return "unconfirmed"
        on_base = 0
        if self.baseline is not None:
            try:
                on_base = self._forbidden(res, test, pseed)
            except Exception as e:
                entry["error"] = "baseline: " + _one_line(e)
            entry["baseline_forbidden"] = on_base
        try:
            res.states            # the finding's record lists the allowed states
        except Exception as e:
            return _oracle_error(entry, e)
        found = None              # the bucket as found, before minimization (when asked for)
        if self._claim is not None or self.known_bugs or self.cfg.forms_per_bucket is not None:
            found = self._found_bucket(test, seen)
            entry["bucket"] = found["id"]
            into = self._count_into(found)
            if into is not None:
                fid, known = into
                if fid is not None:        # counted in the bucket's finding, not minimized
                    return self._counted(test, i, pseed, seen, entry, fid, known)
                entry["finding"] = self._finding(test, i, pseed, res, hist, execs, clock,
                                                 on_base == 0, found=found, known=known)
                entry["known"] = known["name"]
                return "finding"
        if self._claim is not None and not self._claimed(test, i, seen, entry, found):
            return "claimed"
        entry["finding"] = self._finding(test, i, pseed, res, hist, execs, clock, on_base == 0,
                                         found=found)
        return "finding"

    def _found_bucket(self, test, seen) -> dict:
        """The bucket of a confirmed finding as found (the program drawn, its first forbidden
        outcome), before any minimization: the key of claims and of counting."""
        forbidden = [o for o, _ in seen.forbidden_outcomes()[:3]]
        return finding_bucket({"id": canonical_hash(test), "test": format_test(test),
                               "forbidden": [{"outcome": forbidden[0]}]}, self.backend,
                              self.cfg.model)

    def _bucket_findings(self, bid: str) -> tuple[list[str], int]:
        """Ids of this campaign's findings in bucket ``bid`` (their bucket, or the bucket they
        were found in: ``bucket.found_as``, since minimization may move a finding to another),
        and how many programs were minimized into them (their sources neither counted nor
        another worker's claim: several minimizations may give one form)."""
        out, minimized = [], 0
        for fid, rec in self.known.items():
            b = rec.bucket
            if bid in (b.get("id"), b.get("found_as")):
                out.append(fid)
                minimized += sum(1 for s in rec.sources or [{}]
                                 if not s.get("counted") and "claimed_by_other" not in s) or 1
        return out, minimized

    def _count_into(self, found: dict):
        """Whether a finding in bucket ``found`` (as found) is to be counted rather than
        minimized: None (minimize it, as always), or ``(fid, known)``: ``fid`` the finding of
        the bucket to count it in (None: the bucket has none yet; a known bug's first finding is
        then published without minimizing), ``known`` the known bug (fuzz/known.py: it matches
        the bucket, or the bucket of a finding minimized from it, as finding 2's minimized forms
        from programs whose first forbidden outcome looked otherwise) or None
        (``--forms-per-bucket`` programs of the bucket were minimized already). The findings of
        other shards of a parallel campaign (one shared findings/) are read again before
        answering."""
        known = known_for(found["signature"], self.known_bugs) if self.known_bugs else None
        limit = self.cfg.forms_per_bucket
        if known is None and limit is None and not self.known_bugs:
            return None
        for pass_ in (0, 1):
            fids, minimized = self._bucket_findings(found["id"])
            if known is None and self.known_bugs:     # found elsewhere, minimized into a known bug
                known = next((k for k in (known_for(str(self.known[f].bucket.get("signature", "")),
                                                    self.known_bugs)
                                          for f in fids) if k is not None), None)
            if fids and (known is not None or (limit is not None and minimized >= limit)):
                return fids[0], known
            if pass_ == 0 and self.root != self.dir:     # another shard may have published one
                for rec in load_finding_records(self.root, on_bad=lambda m: None):
                    self.known.setdefault(rec.id, rec)
        return (None, known) if known is not None else None

    def _counted(self, test, i, pseed, seen, entry, fid: str, known) -> str:
        """Count a finding in finding ``fid``'s bucket without minimizing it: the program as
        found and its forbidden outcomes go into the journal entry, a source naming the program
        and its first forbidden outcome into ``fid`` (``counted``: not minimized)."""
        forbidden = [o for o, _ in seen.forbidden_outcomes()[:3]]
        entry["test"], entry["forbidden"] = format_test(test), forbidden
        entry["counted"] = "known" if known is not None else "forms"
        if known is not None:
            entry["known"] = known["name"]
        add_sources(self.root, fid, [{"campaign": self.uid, "index": i, "seed": pseed,
                                      "counted": entry["counted"], "outcome": forbidden[0]}])
        self.counted += 1
        entry["finding"] = fid
        return "finding"

    def _claimed(self, test, i, seen, entry, found=None) -> bool:
        """Ask the ``claim`` hook for the bucket of the finding as found; when another worker
        holds it, keep the program and its forbidden outcomes in the entry (False)."""
        forbidden = [o for o, _ in seen.forbidden_outcomes()[:3]]
        b = found if found is not None else self._found_bucket(test, seen)
        entry["claim"] = b["id"]
        if self._claim(b, i):
            return True
        entry["test"], entry["forbidden"] = format_test(test), forbidden
        return False

    def _fails(self, execs, seed_box, clean_baseline: bool):
        """The minimizer's predicate: some forbidden outcome shows on the backend (in one of two
        runs) and, when the original was clean on the baseline backend, none shows there."""
        def still_fails(t: Test) -> bool:
            if estimate_events(t) > MAX_EVENTS or not t.locations:
                return False
            r = self.checker(t)
            if r.verdict == "Undef":
                return False
            for _ in range(2):
                seed_box[0] += 1
                if self._forbidden(r, t, seed_box[0], execs):
                    break
            else:
                return False
            if clean_baseline and self.baseline is not None:
                return not self._forbidden(r, t, seed_box[0])
            return True
        return still_fails

    def _prepare_ahead(self):
        """The minimizer's ``prepare``: the backend's, when it is cheap to call ahead (the isa
        backend compiles a window of variants in one clang-22 call); else None."""
        if not getattr(self.backend, "prepare_overlaps", False):
            return None
        return self.backend.prepare

    def _finding(self, test, i, pseed, res, hist, execs, clock, clean_baseline=True,
                 found: dict | None = None, known: dict | None = None) -> str:
        """Minimize (unless ``known``: the first finding of a known bug's bucket is published as
        found), re-run, and publish a finding; its id. ``found``: its bucket as found."""
        seed_box = [pseed * 7 + 1000]
        if known is not None:
            from .minimize import MinimizeStats
            small, mstats = test, MinimizeStats(size_before=test.size)
            mstats.steps.append(f"(not minimized: known bug {known['name']!r}, --known)")
        else:
            small, mstats = minimize(test, self._fails(execs, seed_box, clean_baseline),
                                     self.cfg.minimize_tries, self.cfg.minimize_seconds,
                                     self._prepare_ahead())
        small = tidy_placements(renumber_registers(small))
        try:
            r = self.checker(small)
            r.states          # the record lists the allowed states: the full check, here
        except Exception:
            small, mstats.steps = test, mstats.steps + ["(minimized test rejected by the oracle)"]
            r = res
        # the record's histogram: the first re-run that shows a forbidden outcome
        runs, hits, forb_iters, total = self.cfg.repro_runs, 0, 0, 0
        shown = None
        shown_seed, shown_params = pseed, dict(hist.params)
        for k in range(runs):
            seed_box[0] += 1
            try:
                h = self._run(small, self.cfg.iterations, seed_box[0], execs)
            except Exception:
                continue
            c = compare(r, h, small.condition)
            total += h.total
            if c.forbidden:
                hits += 1
                forb_iters += c.forbidden
                if shown is None:
                    shown, shown_seed, shown_params = c, seed_box[0], dict(h.params)
        if shown is None:                 # minimized too far for these seeds: keep the original
            small, r, shown = renumber_registers(test), res, compare(res, hist, test.condition)
            shown_seed, shown_params = pseed, dict(hist.params)
        f = shown.forbidden_outcomes()
        cond = forbidding_condition(small, f[0][0], r.states)
        small = Test(f"{test.name}-min", small.locations, small.threads, cond,
                     (f"Found by scopefuzz on {self.cfg.backend}: campaign seed {self.cfg.seed}, "
                      f"program {i}.",), small.reg_init, small.dialect)
        fid = canonical_hash(small)
        base = None
        if self.baseline is not None:
            try:
                bh = self.baseline.run(small, self.cfg.iterations * max(1, runs), pseed)
                base = {"backend": self.cfg.baseline, "iterations": bh.total,
                        "forbidden": compare(r, bh, small.condition).forbidden}
            except Exception as e:
                base = {"backend": self.cfg.baseline, "error": _one_line(e)}
        record = {
            "id": fid, "backend": self.cfg.backend, "mutant": self.backend_spec.mutant,
            "model": r.model, "campaign_seed": self.cfg.seed,
            "test": format_test(small), "original": format_test(test),
            "condition": format_test(small).rstrip("\n").splitlines()[-1],
            "forbidden": [{"outcome": o, "count": n} for o, n in f],
            "histogram": shown.histogram(),
            "allowed": [dict(s) for s in r.states],
            "verdict": r.verdict, "flags": list(r.flags),
            "iterations": self.cfg.iterations,
            "reproduced": {"runs": runs, "hits": hits, "forbidden_iterations": forb_iters,
                           "iterations": total},
            "minimize": {"tried": mstats.tried, "accepted": mstats.accepted,
                         "steps": mstats.steps, "size_before": mstats.size_before,
                         "size_after": small.size, "seconds": round(mstats.seconds, 3)},
            "first": {"campaign": self.uid, "index": i, "seed": pseed, "t": round(clock(), 3)},
            "sources": [{"campaign": self.uid, "index": i, "seed": pseed}],
            "baseline": base,
        }
        record.update(reproduction(self.cfg.backend, shown_seed, self.cfg.iterations,
                                   shown_params, kernel_source(self.backend, small)))
        if isinstance(self.backend, EvidenceBackend):     # e.g. the isa backend's compiled code
            try:
                record["evidence"] = self.backend.evidence(small)
            except Exception as e:
                record["evidence"] = f"(evidence unavailable: {_one_line(e)})\n"
        record["bucket"] = finding_bucket(record, self.backend, self.cfg.model)
        if found is not None:
            record["bucket"]["found_as"] = found["id"]
        if known is not None:
            record["known"] = {k: known[k] for k in ("name", "links") if k in known}
        if publish(self.root, record):
            self.known[fid] = as_finding(record)
            self.stats.findings = len(self.known)
            if (base is None or base.get("forbidden", 1) == 0) and known is None:
                self.new_findings += 1          # --stop-after: a known bug's is not new
        else:
            self._noted_source(fid, record["sources"])
        return fid

    def _noted_source(self, fid: str, sources: list[dict]) -> None:
        """Sources added to an existing finding on disk (``publish`` of a form found before),
        added to its record here too (``_count_into`` counts a bucket's minimized programs)."""
        rec = self.known.get(fid)
        if rec is not None:
            rec.sources = list(rec.sources) + list(sources)


def reproduction(backend: str, seed: int, iterations: int, params: dict,
                 kernel: str | None) -> dict:
    """What a finding needs to be reproduced from its record alone: the tool's version and git
    revision, the ``scopefuzz run`` command line of the run shown (same backend, seed and
    iterations: on the simulator it gives the same histogram), the backend's parameters (device,
    driver, build options, stress settings, scope mapping) and the generated kernel, if any."""
    return {
        "tool": {"version": version(), "git": git_revision()},
        "reproduce": {"command": f"scopefuzz run --backend {backend} --seed {seed} "
                                 f"--iterations {iterations} {TEST_FILE}",
                      "backend": backend, "seed": seed, "iterations": iterations},
        "params": json.loads(json.dumps(params, default=str)),
        "kernel": kernel,
    }


def finding_bucket(record: dict, backend, model: str | None = None) -> dict:
    """The finding's bucket (fuzz/buckets.py), explained under the campaign's model; an
    explanation that fails leaves the finding its own bucket, with the reason."""

    def explainer(test, outcome):
        return oracle.explain(test, outcome, model)
    try:
        return bucket_of(record, backend, explainer)
    except Exception as e:
        sig = f"finding {record['id']}"
        return {"kind": "none", "signature": sig, "id": bucket_id(sig), "error": _one_line(e)}


def kernel_source(backend, test: Test) -> str | None:
    """The generated kernel source of ``test`` on backends that compile one (OpenCL), else None."""
    kernel_for = getattr(backend, "kernel_for", None)
    if kernel_for is None:
        return None
    try:
        return kernel_for(test).source
    except Exception:
        return None


def read_spec(name: str) -> BackendSpec:
    """Backend name ``name`` read by hw (:func:`hw.parse_backend_spec`: the one grammar of backend
    names); hw's one-line error as a :class:`CampaignError`."""
    try:
        return hw.parse_backend_spec(name)
    except hw.BackendError as e:
        raise CampaignError(str(e)) from None


def spec_of(name: str, injected: bool) -> BackendSpec:
    """:func:`read_spec` of ``name``; for a backend object handed to the campaign (``injected``:
    tests, embedders) a name hw does not read is the caller's label: one opaque family, no
    mutant."""
    try:
        return read_spec(name)
    except CampaignError:
        if not injected:
            raise
        return BackendSpec(name, name, None)


def uses_simulator(cfg: Config) -> bool:
    """Does the campaign run the simulator (a ``sim`` or ``isa`` backend or baseline)?"""
    return any(read_spec(name).simulator for name in (cfg.backend, cfg.baseline) if name)


def checked_model(model: str | None) -> str | None:
    """The model the oracle checks a campaign's programs under: ``--model``, or the default
    model of the programs' dialect (None if the dialect has none)."""
    if model is not None:
        return model
    return DEFAULT_MODEL.get(program_family(model).dialect)


def warm_up_program(model: str | None) -> Test:
    """The small program a campaign of ``model`` runs before its clock starts."""
    return parse(program_family(model).warm_up())


def warm_up_oracle(checker, mp: Test, model: str | None = None) -> None:
    """Ask the oracle what the campaign asks of each program (a lazy judge computes when
    asked), and the explanation a finding's report draws (its compiled evaluation is another
    entry point), so that their compiled code is loaded or compiled now, not inside the first
    finding (in every worker at once); errors are ignored."""
    try:
        res = checker(mp)
        res.verdict, res.all_undef
    except Exception:
        pass
    try:
        import oracle
        from litmus.ir import prop_atoms
        oracle.explain(mp, {a.key: a.value for a in prop_atoms(mp.condition.prop)},
                       model).text()
    except Exception:
        pass


def _oracle_error(entry: dict, e: Exception) -> str:
    """Record an oracle error in ``entry`` (``budget: true`` when the search ran past the
    campaign's budget); its status."""
    entry["error"] = _one_line(e)
    if budget_hit(e):
        entry["budget"] = True
    return "oracle-error"


def _one_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    msg = text[0] if text else ""
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__

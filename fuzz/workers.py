"""``scopefuzz fuzz --jobs N``: one campaign on N worker processes of this machine.

Worker *j* runs sub-shard *j* of the campaign (:func:`fuzz.layout.sub_shard`: the deterministic
``--shard`` split, so the programs and what each finds are those of a one-process campaign) as an
ordinary :class:`~fuzz.campaign.Campaign` in ``DIR/shard-KofN/`` with its own journal; every shard
publishes into the one ``DIR/findings/``, where a finding two shards reach is one finding with both
sources (``fuzz.findings.publish``: one rename, sources added under a lock). The parent holds
``DIR/.lock``, starts the workers (``multiprocessing``, spawn: a fresh interpreter, the numba thread
count set before numba loads), sums what they report over a pipe into one progress line, and
restarts a worker that dies before its shard is done: the restarted worker resumes its shard
(``--resume`` semantics: programs journaled are not run again, the one a kill cut off is redone).
A worker dies with its parent (``PR_SET_PDEATHSIG`` on Linux; elsewhere it stops at the next
program when its pipe closes), so a killed campaign leaves no orphan holding a shard's lock, and
``--resume`` resumes every shard. A worker that cannot write its shard (an ``OSError``: read-only,
disk full) sends the error home; the parent stops the others and raises it, so ``scopefuzz fuzz``
exits 3 as a one-process campaign does; the summary sums every shard's counts (exit 4 when most
programs of all shards errored).

Backends that own a device get one device per worker: ``devices`` (``--devices B1,B2,...``) gives
worker *j* entry ``j mod len(devices)``, as the pytest plugin's ``--litmus-devices`` does.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import signal
import sys
import time

import hw
from litmus.jitcache import cores

from .campaign import (Campaign, CampaignError, Config, Stats, checked_model, default_checker,
                       lock_campaign, uses_simulator, warm_up_oracle, warm_up_program)
from .coverage import Coverage
from .findings import findings_dir
from .journal import atomic_write, clean_temporaries
from .layout import META, read_meta, shard_dirname, sub_shard
from .warm import compile_ahead

#: restarts of one shard's worker before the campaign gives up on it (a worker that dies at once
#: every time, e.g. a backend that crashes the process, must not loop forever)
MAX_RESTARTS = 5
#: seconds between the parent's looks at the workers
TICK = 0.25


def default_jobs(backend: str, devices: list[str] | None) -> int:
    """Workers when ``--jobs`` is not given: one per device for device backends (one device
    unless ``--devices`` lists more), else one per core."""
    if devices:
        return len(devices)
    try:
        device = hw.parse_backend_spec(backend).device
    except hw.BackendError:           # named by the campaign when it opens the backend
        device = False
    return 1 if device else cores()


def numba_threads(jobs: int) -> int:
    """The simulator's numba threads per worker: the cores shared out, at least one, and no more
    than the user's ``NUMBA_NUM_THREADS`` when it is set (``NUMBA_NUM_THREADS=1 scopefuzz fuzz``
    runs every worker's simulator on one thread, whatever ``--jobs``)."""
    share = max(1, cores() // max(1, jobs))
    try:
        cap = int(os.environ.get("NUMBA_NUM_THREADS", ""))
    except ValueError:
        return share
    return max(1, min(share, cap))


class numba_thread_limit:
    """``with numba_thread_limit(k):`` the simulator's parallel loops use at most ``k`` threads in
    this thread (``numba.set_num_threads``; for processes numba already runs in, e.g. an xdist
    worker, where ``NUMBA_NUM_THREADS`` can no longer be set)."""

    def __init__(self, k: int):
        self.k = k
        self.saved = None

    def __enter__(self):
        from hw.sim.threads import wait_passively
        wait_passively()        # numba.get_num_threads starts the OpenMP threads: policy first
        try:
            import numba
            self.saved = numba.get_num_threads()
            numba.set_num_threads(max(1, min(self.k, numba.config.NUMBA_NUM_THREADS)))
        except (ImportError, ValueError, RuntimeError):
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            import numba
            numba.set_num_threads(self.saved)
        return False


class ParallelCampaign:
    """The parent of a ``--jobs N`` campaign (N >= 2; one job is :class:`Campaign` itself)."""

    #: the class each worker runs its shard with (a subclass names its own, e.g. the compiler
    #: campaign's; handed to the worker process, so this module never imports the subclasses)
    shard_campaign = Campaign

    def __init__(self, config: Config, jobs: int, devices: list[str] | None = None,
                 progress=None, log=None):
        if jobs < 2:
            raise CampaignError(f"bad --jobs {jobs}: a parallel campaign needs at least 2 workers")
        self.cfg = config
        self.jobs = jobs
        self.devices = devices or None
        self.dir = config.out
        self.progress = progress
        self.log = log if log is not None else (lambda line: print(line, file=sys.stderr))
        self.uid = f"{config.backend}-seed{config.seed}-jobs{jobs}"
        self.shards = [sub_shard(config.shard, jobs, j) for j in range(jobs)]
        self.workers: list[_Worker] = []
        self.stats = Stats()
        self.coverage = Coverage()

    # -- set-up ----------------------------------------------------------------------------------
    def identity(self) -> dict:
        mine = self.cfg.identity()
        mine.update(jobs=self.jobs, devices=self.devices,
                    shards=[shard_dirname(s) for s in self.shards])
        return mine

    def open(self) -> None:
        meta = read_meta(self.dir, CampaignError)
        if meta is not None and not self.cfg.resume:
            raise CampaignError(f"{self.dir}: already holds a campaign (use --resume, or another "
                                "--out)")
        if meta is None and self.cfg.resume and os.path.exists(os.path.join(self.dir, "journal.jsonl")):
            raise CampaignError(f"{self.dir}: holds a one-process campaign; resume it with --jobs 1")
        os.makedirs(findings_dir(self.dir), exist_ok=True)
        self._lock_file = lock_campaign(self.dir)
        if meta is not None:
            if "jobs" not in meta:
                raise CampaignError(f"{self.dir}: holds a one-process campaign; resume it with "
                                    "--jobs 1")
            for k, v in self.identity().items():
                if meta.get(k) != v:
                    raise CampaignError(f"{self.dir}: --resume with {k}={v!r}, but the campaign "
                                        f"was started with {k}={meta.get(k)!r}")
        else:
            meta = dict(self.identity(), uid=self.uid, created=time.time(), version=1)
            atomic_write(os.path.join(self.dir, META),
                         json.dumps(meta, indent=1, sort_keys=True) + "\n")
        clean_temporaries(self.dir)
        clean_temporaries(findings_dir(self.dir))    # no worker runs yet

    def worker_config(self, j: int, resume: bool, time_left: float | None) -> Config:
        backend = self.devices[j % len(self.devices)] if self.devices else self.cfg.backend
        return dataclasses.replace(
            self.cfg, backend=backend, shard=self.shards[j], resume=resume, time=time_left,
            out=os.path.join(self.dir, shard_dirname(self.shards[j])), findings_root=self.dir)

    # -- the run ---------------------------------------------------------------------------------
    def _compile_ahead(self) -> None:
        """Compile the oracle's model here, and the simulator in a process of its own, before the
        workers start: with an empty numba cache, every worker would otherwise compile the same
        code at the same time (fuzz/warm.py); the workers then load it from the cache."""
        wait = compile_ahead(uses_simulator(self.cfg), model=checked_model(self.cfg.model))
        try:
            checker = default_checker() if self.cfg.model is None else \
                default_checker(self.cfg.model)       # as Campaign.checker asks for it
            warm_up_oracle(checker, warm_up_program(self.cfg.model), self.cfg.model)
        finally:
            wait()

    def check_backends(self) -> None:
        """Bad backend names fail here, before DIR is touched (device backends are opened by the
        workers only: a device belongs to one process)."""
        for spec in sorted(set(self.devices or [self.cfg.backend]) | {self.cfg.baseline} - {None}):
            try:
                if hw.parse_backend_spec(spec).device:    # read for its shape, opened by workers
                    continue
                b = hw.get_backend(spec)
                try:       # it must run the programs' dialect (--model ptx: not the simulator)
                    Campaign(dataclasses.replace(self.cfg, backend=spec, baseline=None),
                             backend=b).check_backend()
                finally:
                    b.close()
            except hw.BackendError as e:
                raise CampaignError(str(e)) from None

    def run(self) -> Stats:
        self.check_backends()
        self.open()
        self._compile_ahead()
        ctx = multiprocessing.get_context("spawn")
        start = time.monotonic()
        failure = None
        try:
            for j in range(self.jobs):
                self.workers.append(_Worker(j, ctx, self))
                self.workers[-1].start(self.worker_config(j, self.cfg.resume, self.cfg.time))
            began = False
            stopping = False
            while any(w.alive or w.pending or not w.finished for w in self.workers):
                self._wait()
                for w in self.workers:
                    failure = failure or w.drain()
                    if not failure and not w.alive and not w.finished:
                        failure = w.drain()   # a dead worker's last words are in the pipe now
                        if not w.finished:
                            self._restart(w, start, stopping)
                if failure:
                    break
                if not began and all(w.base is not None for w in self.workers):
                    began = True
                    if self.progress:
                        self.progress.begin(dataclasses.replace(
                            self._sum(), executions=sum(w.base for w in self.workers)))
                stats = self._sum()
                if began and self.progress:
                    self.progress.update(stats, self.coverage)
                if (not stopping and self.cfg.max_findings is not None
                        and sum(w.new_findings for w in self.workers) >= self.cfg.max_findings):
                    stopping = True
                    for w in self.workers:
                        w.send_stop()
        except KeyboardInterrupt:
            for w in self.workers:
                w.send_stop()
            self._join(grace=30)
            raise
        finally:
            if failure:
                for w in self.workers:
                    w.kill()
            self._join(grace=60)
            for w in self.workers:
                failure = failure or w.drain()
            clean_temporaries(findings_dir(self.dir))   # what killed workers left half-built
            self._lock_file.close()
            self.stats = self._sum()
            if self.progress and any(w.base is not None for w in self.workers):
                self.progress.finish(self.stats, self.coverage)
        if failure:
            storage = next((w.storage for w in self.workers if w.storage), None)
            if storage is not None:   # a shard's directory could not be written: exit 3, as --jobs 1
                raise OSError(*storage)
            raise CampaignError(failure)
        return self.stats

    def _wait(self) -> None:
        from multiprocessing.connection import wait
        handles = [w.conn for w in self.workers if w.conn is not None]
        handles += [w.proc.sentinel for w in self.workers if w.alive]
        if handles:
            wait(handles, timeout=TICK)
        else:
            time.sleep(TICK)

    def _restart(self, w: "_Worker", start: float, stopping: bool) -> None:
        code = w.proc.exitcode
        why = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        if stopping:                 # the campaign is stopping anyway: --resume redoes the rest
            w.finished = True
            return
        if w.restarts >= MAX_RESTARTS:
            w.finished = True
            w.error = (f"worker {w.j + 1}/{self.jobs} ({shard_dirname(self.shards[w.j])}) died "
                       f"{MAX_RESTARTS + 1} times ({why}); resume the campaign with --resume")
            self.log(f"scopefuzz fuzz: {w.error}")
            return
        left = None
        if self.cfg.time is not None:
            left = self.cfg.time - (time.monotonic() - start)
            if left <= 0:
                w.finished = True
                return
        w.restarts += 1
        self.log(f"scopefuzz fuzz: worker {w.j + 1}/{self.jobs} died ({why}); resuming "
                 f"{shard_dirname(self.shards[w.j])}")
        w.start(self.worker_config(w.j, True, left))

    def _join(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        for w in self.workers:
            if w.proc is not None:
                w.proc.join(max(0.0, deadline - time.monotonic()))
                if w.proc.is_alive():
                    w.kill()
                    w.proc.join()

    def _sum(self) -> Stats:
        """The campaign's counts: every shard's, findings counted once (they share findings/)."""
        total = Stats()
        cov = Coverage()
        for w in self.workers:
            for f in ("programs", "executed", "executions", "undef", "errors", "budget",
                      "refused", "unconfirmed"):
                setattr(total, f, getattr(total, f) + w.stats.get(f, 0))
            total.active = max(total.active, w.stats.get("active", 0.0))
            for k, n in w.kinds.items():
                cov.kinds[k] = cov.kinds.get(k, 0) + n
            for p, n in w.pairs.items():
                cov.pairs[p] = cov.pairs.get(p, 0) + n
        d = findings_dir(self.dir)
        total.findings = sum(1 for n in os.listdir(d) if not n.startswith(".")) \
            if os.path.isdir(d) else 0
        self.coverage = cov
        return total

    @property
    def errors(self) -> list[str]:
        return [w.error for w in self.workers if w.error]


class _Worker:
    """The parent's handle on worker ``j``: its process, its pipe and the last counts it sent."""

    def __init__(self, j: int, ctx, parent: ParallelCampaign):
        self.j = j
        self.ctx = ctx
        self.parent = parent
        self.proc = None
        self.conn = None
        self.restarts = 0
        self.finished = False        # its shard is done (or it stopped on request)
        self.error: str | None = None
        self.storage: tuple | None = None    # (errno, strerror, filename) of a storage error
        self.base = None             # executions journaled before this run (first report)
        self.stats: dict = {}
        self.kinds: dict = {}
        self.pairs: dict = {}
        self.new_findings = 0
        self._new_before = 0         # new findings of earlier (killed) processes of this shard

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    @property
    def pending(self) -> bool:
        return self.conn is not None and self.conn.poll()

    def start(self, cfg: Config) -> None:
        here, there = self.ctx.Pipe(duplex=True)
        saved = os.environ.get("NUMBA_NUM_THREADS")
        os.environ["NUMBA_NUM_THREADS"] = str(numba_threads(self.parent.jobs))
        try:
            self.proc = self.ctx.Process(target=worker_main,
                                         args=(cfg, there, os.getpid(),
                                               self.parent.shard_campaign),
                                         name=f"scopefuzz-{shard_dirname(cfg.shard)}",
                                         daemon=False)
            self.proc.start()
        finally:
            if saved is None:
                os.environ.pop("NUMBA_NUM_THREADS", None)
            else:
                os.environ["NUMBA_NUM_THREADS"] = saved
        there.close()
        self._new_before = self.new_findings
        self.conn = here

    def drain(self) -> str | None:
        """Read what the worker sent; returns a fatal error's text (bad options, a backend that
        cannot open): the campaign stops."""
        fatal = None
        while self.conn is not None:
            try:
                if not self.conn.poll():
                    break
                kind, body = self.conn.recv()
            except (EOFError, OSError):
                self.conn.close()
                self.conn = None
                break
            if kind == "stats":
                if self.base is None:
                    self.base = body["stats"]["executions"]
                self.stats, self.kinds, self.pairs = body["stats"], body["kinds"], body["pairs"]
                self.new_findings = self._new_before + body["new_findings"]
            elif kind == "done":
                self.finished = True
            elif kind == "error":
                self.finished = True
                self.error = fatal = body
            elif kind == "storage":           # an OSError writing the shard: the campaign stops
                self.finished = True
                self.storage = tuple(body)
                self.error = fatal = f"{body[2] or self.parent.dir}: {body[1]}"
        return fatal

    def send_stop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send("stop")
            except (OSError, BrokenPipeError):
                pass

    def kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ------------------------------------------------------------------------------ in the worker


class _PipeProgress:
    """The worker's progress: its counts to the parent, at most every ``interval`` seconds."""

    def __init__(self, conn, interval: float = 0.2):
        self.conn = conn
        self.interval = interval
        self.last = 0.0
        self.campaign: Campaign | None = None
        self.stop_asked = False
        self.sent_findings = 0

    def _send(self, stats, coverage) -> None:
        body = {"stats": dataclasses.asdict(stats), "kinds": dict(coverage.kinds),
                "pairs": dict(coverage.pairs),
                "new_findings": self.campaign.new_findings if self.campaign else 0}
        self.sent_findings = body["new_findings"]
        try:
            self.conn.send(("stats", body))
        except (OSError, BrokenPipeError):
            self.stop_asked = True          # the parent is gone: stop at the next program

    def begin(self, stats) -> None:
        self._send(stats, self.campaign.coverage)
        self.last = time.monotonic()

    def update(self, stats, coverage) -> None:
        now = time.monotonic()
        news = self.campaign.new_findings if self.campaign else 0
        if now - self.last >= self.interval or news != self.sent_findings:   # --stop-after
            self.last = now
            self._send(stats, coverage)

    def finish(self, stats, coverage) -> None:
        self._send(stats, coverage)

    def stop(self) -> bool:
        """Asked by the campaign between programs: did the parent say stop (or go away)?"""
        try:
            while self.conn.poll():
                if self.conn.recv() == "stop":
                    self.stop_asked = True
        except (EOFError, OSError):
            self.stop_asked = True
        return self.stop_asked


def _die_with_parent(parent_pid: int) -> None:
    """Linux: the kernel sends this process SIGKILL when its parent dies (the campaign's parent
    killed with -9 must not leave workers holding their shards)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)           # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:              # the parent died before prctl took effect
        os._exit(1)


def worker_main(cfg: Config, conn, parent_pid: int, campaign_class=Campaign) -> None:
    """A worker process: run shard ``cfg.shard`` as a ``campaign_class`` campaign (the parent's
    :attr:`ParallelCampaign.shard_campaign`), reporting counts over ``conn``."""
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent asks it to stop instead
    progress = _PipeProgress(conn)
    camp = campaign_class(cfg, progress=progress, stop=progress.stop)
    progress.campaign = camp
    try:
        camp.run()
    except CampaignError as e:
        conn.send(("error", f"{shard_dirname(cfg.shard)}: {e}"))
        conn.close()
        return
    except OSError as e:          # storage (read-only, disk full): the parent exits 3 with it
        conn.send(("storage", (e.errno, e.strerror or str(e), e.filename or cfg.out)))
        conn.close()
        return
    conn.send(("done", None))
    conn.close()

"""The compilers-in-the-loop campaign (``scopefuzz fuzz --compile SPEC``, issue 29), run by the main
campaign machinery.

:class:`CompilerCampaign` is a :class:`fuzz.campaign.Campaign`: the same directory layout
(``campaign.json``, ``journal.jsonl``, ``findings/<id>/``), the same loop, lock, journal and
``--resume`` (programs journaled are not run again; the one a kill cut off is redone; a finding is
published before its program's journal line, and publishing it again only adds a missing source),
and ``--jobs N`` through :class:`fuzz.workers.ParallelCampaign` (shards ``DIR/shard-KofN/``
publishing into one ``DIR/findings/``; every worker shares hw/ptxc's on-disk compile cache).
What differs is what one program is:

- program *i* is :func:`fuzz.c_strategies.draw_source` (the CUDA draw of
  :mod:`fuzz.cuda_strategies`, spelled in the source dialect: ``cuda``, ``c`` or ``opencl``),
  compiled by a real compiler (:mod:`hw.ptxc`; drawn :data:`fuzz.campaign.BATCH` at a time and
  compiled in one compiler run, :func:`hw.ptxc.compile_many`), read back and judged
  (:func:`fuzz.compilers.judge`: PTX outcomes must be allowed by the source model);
- journal statuses: ``ok`` (holds), ``undef`` (racy source: skipped), ``refused``,
  ``backend-error`` (the compiler or the PTX reader), ``oracle-error`` (``budget`` when the
  search ran past its budget), ``finding``;
- a counterexample is bucketed (:mod:`fuzz.compile_buckets`: the PTX instruction that does not
  carry the source's order or scope). When its bucket is a **known** bug (``--known``,
  :mod:`fuzz.known`; the maintained NVPTX list is hw/ptxc/known-clang22-nvptx.json) and a finding
  of that exact bucket exists, the program is added to that finding's sources and not minimized
  again (a campaign on clang-22 would otherwise spend its time re-minimizing the atomicrmw bug).
  Otherwise it is minimized (:func:`fuzz.cuda_strategies.smaller`: fewer threads and ops, weaker
  orders, narrower scopes, while the compiled program still escapes the source model) and
  published under the canonical hash of (backend, minimized source);
- with a planted PTX mutant (backend ``ptxc:SPEC:MUTANT``) the un-mutated PTX is the baseline: a
  program whose real PTX escapes too is published with ``baseline.forbidden`` set and does not
  count towards ``--stop-after``; minimization keeps a clean baseline.

The campaign's backend string is ``ptxc:NAME:sm_XX,Oo[,per-role][:MUTANT]`` and its features are
the source dialect (``{"cuda"}``): both are in ``campaign.json``'s identity, so ``--resume`` with
another compiler, mutant or dialect is refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass

import hw
import hw.ptxc as ptxc
from hw.ptxc.emit_common import emit
from litmus import canonical_hash, parse
from litmus.about import git_revision, version
from litmus.lexer import ParseError
from oracle import OracleError
from oracle.deadline import Timeout, call_with_timeout

from . import coverage as cov
from . import programs
from .c_strategies import NATURAL, SOURCES
from .campaign import BATCH, Campaign, CampaignError, Config, budget_hit
from .compile_buckets import compiler_bucket, marked_rows
from .compilers import explain_counterexample, judge
from .finding import as_finding
from .findings import add_sources, publish
from .workers import ParallelCampaign, _die_with_parent

PREFIX = "ptxc:"
#: compiled programs with at most this many memory rows (loads, stores, RMWs, CAS, fences) are
#: checked in this process: they take milliseconds, and the fork of a time-limited check costs
#: 40-80 ms on a loaded machine; bigger ones get ``check_seconds`` in a forked child
SMALL_CHECK = 8


@dataclass
class CompileConfig(Config):
    """A compiler campaign's parameters: :class:`fuzz.campaign.Config` with ``backend``
    ``ptxc:SPEC[:MUTANT]`` and ``features`` the source dialect (the known-bugs files and
    ``forms_per_bucket`` are the base class's)."""

    #: wall-clock limit of one program's check (source and PTX oracle calls, in a forked child:
    #: numba loops cannot be interrupted); past it the program is an ``oracle-error`` with
    #: ``budget``. A few random mixes with many ``fence.sc`` take minutes, and the loop only
    #: looks at ``--time`` between programs. 0: no limit, in this process.
    check_seconds: float = 30.0


def backend_name(spec: str, mutant: str | None = None) -> str:
    """``ptxc:SPEC[:MUTANT]`` with SPEC canonical (BackendError on a bad spec or mutant)."""
    comp = ptxc.parse_spec(spec)
    if mutant:
        from hw.ptxc.mutants import get
        get(mutant)
    return PREFIX + comp.spec() + (f":{mutant}" if mutant else "")


def parse_backend(name: str):
    """(Compiler, mutant or None) of ``ptxc:NAME[:OPTS][:MUTANT]``, as hw reads it
    (:func:`hw.parse_backend_spec`)."""
    try:
        spec = hw.parse_backend_spec(name)
    except hw.BackendError as e:
        raise CampaignError(str(e)) from None
    if not spec.compiler:
        raise CampaignError(f"not a compiler campaign backend: {name!r}")
    return spec.detail, spec.mutant


def source_of(features) -> str:
    src = [f for f in features if f in SOURCES]
    if len(src) != 1:
        raise CampaignError(f"a compiler campaign draws one source dialect, got {sorted(features)}")
    return src[0]


class CompilerCampaign(Campaign):
    """One compiler campaign directory (a shard of one with ``--jobs``)."""

    def __init__(self, config: Config, progress=None, stop=None, **_):
        super().__init__(config, progress=progress, stop=stop)
        self.compiler, self.mutant = parse_backend(config.backend)
        self.source = source_of(config.features)
        #: the source dialect's program family (draw, render, smaller): fuzz/programs/
        self.family = programs.family(self.source.upper())
        self.mutate = None
        if self.mutant:
            from hw.ptxc.mutants import get
            try:
                self.mutate = get(self.mutant)
            except hw.BackendError as e:
                raise CampaignError(str(e)) from None
        self._progs: dict = {}
        self._compiled: dict = {}
        self._tests: dict = {}                 # the batch's parsed sources (not parsed twice)

    # -- what Campaign asks of a backend ---------------------------------------------------------
    @property
    def backend(self):
        return self.compiler

    @property
    def checker(self):
        return judge

    @property
    def draw_features(self) -> frozenset:
        return self.cfg.features

    def check_backend(self) -> None:
        why = ptxc.available(self.compiler)
        if why:
            raise CampaignError(f"{self.compiler.spec()} is not available: {why}")

    def _warm_up(self) -> None:
        """Compile and judge one MP program before the clock starts (numba JIT of the oracle)."""
        try:
            self.verdict(self.family.draw(0, 0))
        except Exception:
            pass

    def _batched(self, indices):
        """``indices``, :data:`BATCH` at a time: their programs drawn and compiled in one
        compiler run; a program the batch could not give is compiled alone in :meth:`one`."""
        it = iter(indices)
        while True:
            batch = [i for _, i in zip(range(BATCH), it)]
            if not batch:
                return
            self._progs, self._compiled, self._tests = {}, {}, {}
            tests = {}
            for i in batch:
                p = self.family.draw(self.cfg.seed, i)
                self._progs[i] = p
                try:
                    tests[i] = parse(self.family.render(p), f"{p.name}.litmus")
                except ParseError:
                    pass
            if len(tests) > 1:
                try:
                    got = ptxc.compile_many(list(tests.values()), self.compiler, self.mutate)
                    self._compiled = {i: c for i, c in zip(tests, got)
                                      if isinstance(c, ptxc.Compiled)}
                except Exception:              # each program meets its own error in `one`
                    self._compiled = {}
            self._tests = tests
            yield from batch

    # -- one program -----------------------------------------------------------------------------
    def verdict(self, prog, compiled=None, mutate="campaign", test=None):
        """(status, test, compiled, verdict or message, budget) of one program; status is a
        journal status: ok / undef / refused / backend-error / oracle-error / finding.
        ``test``: the program already parsed (the batch parsed it to compile it)."""
        mutate = self.mutate if mutate == "campaign" else mutate
        if test is None:
            text = self.family.render(prog)
            try:
                test = parse(text, f"{prog.name}.litmus")
            except ParseError as e:
                return "backend-error", None, None, f"source does not parse: {e}", False
        try:
            why = ptxc.refusal(test, self.compiler)
            if why:
                return "refused", test, None, why, False
            if compiled is None:
                compiled = ptxc.compile_test(test, self.compiler, mutate)
        except hw.BackendRefused as e:
            return "refused", test, None, _line(e), False
        except hw.BackendError as e:
            return "backend-error", test, None, _line(e), False
        try:
            secs = getattr(self.cfg, "check_seconds", 0)
            if secs and _memory_rows(compiled.test) > SMALL_CHECK:
                v = call_with_timeout(_judge_in_child, secs, os.getpid(), test, compiled.test)
            else:
                v = judge(test, compiled.test)
        except Timeout as e:
            return "oracle-error", test, compiled, _line(e), True
        except (OracleError, ValueError, RuntimeError) as e:
            return "oracle-error", test, compiled, _line(e), budget_hit(e)
        status = {"holds": "ok", "skipped": "undef", "counterexample": "finding"}[v.status]
        return status, test, compiled, v, False

    def one(self, i: int, clock) -> dict:
        prog = self._progs.pop(i, None) or self.family.draw(self.cfg.seed, i)
        entry = {"type": "program", "campaign": self.uid, "i": i, "seed": self.cfg.seed,
                 "name": prog.name, "kinds": [], "pairs": [],
                 "size": sum(len(t.ops) for t in prog.threads)}
        t0 = time.monotonic()
        try:
            status, test, compiled, v, budget = self.verdict(prog, self._compiled.pop(i, None),
                                                             test=self._tests.pop(i, None))
            if test is not None:
                try:
                    entry["kinds"], entry["pairs"] = cov.kinds(test), cov.scope_pairs(test)
                except Exception:
                    pass
            if compiled is not None and compiled.cached:
                entry["cached"] = True
            if status in ("refused", "backend-error", "oracle-error"):
                entry["error"] = v
                if budget:
                    entry["budget"] = True
            elif status == "finding":
                entry["extra"] = v.extra[:3]
                clean = True
                if self.mutate is not None:
                    clean = self.verdict(prog, mutate=None)[0] != "finding"
                    entry["baseline_forbidden"] = int(not clean)
                try:
                    entry["finding"] = self._finding(prog, test, v, i, clock, clean, entry)
                except OSError:
                    raise                   # storage: the campaign stops (exit 3)
                except Exception as e:      # the counterexample stays in the journal line
                    entry["error"] = "recording the finding: " + _line(e)
                    status = "backend-error"
            entry["status"] = status
        finally:
            entry["executions"] = 0
            entry["seconds"] = round(time.monotonic() - t0, 4)
        return entry

    # -- findings --------------------------------------------------------------------------------
    def _still_fails(self, clean_baseline: bool):
        def fails(p) -> bool:
            if self.verdict(p)[0] != "finding":
                return False
            if self.mutate is not None and clean_baseline:
                return self.verdict(p, mutate=None)[0] != "finding"
            return True
        return fails

    def minimize(self, prog, fails):
        """The smallest program :func:`smaller` reaches that still ``fails`` (greedy, first
        accepted candidate each round), within the campaign's tries and seconds."""
        t0 = time.monotonic()
        tried = accepted = 0
        steps = []
        changed = True
        while changed:
            changed = False
            here = self.family.render(prog)
            for cand in self.family.smaller(prog):
                if (tried >= self.cfg.minimize_tries
                        or time.monotonic() - t0 >= self.cfg.minimize_seconds):
                    return prog, tried, accepted, steps, time.monotonic() - t0
                if self.family.render(cand) == here:   # e.g. a scope C cannot say
                    continue
                tried += 1
                if fails(cand):
                    prog, changed = cand, True
                    accepted += 1
                    steps.append(_step(here, cand))
                    break
        return prog, tried, accepted, steps, time.monotonic() - t0

    def bucket(self, test, compiled, v) -> dict:
        """The finding's bucket (fuzz/compile_buckets.py), from a one-program compile (the
        kernel lines of a batch are not the program's own)."""
        em = emit(test, ptxc.SPELLINGS[self.compiler.name](), self.compiler.per_role)
        return compiler_bucket(test, compiled, v.extra[0], v.source_model, em.lines)

    def _finding(self, prog, test, v, i, clock, clean_baseline: bool, entry: dict) -> str:
        src = {"campaign": self.uid, "index": i, "seed": self.cfg.seed}
        one = ptxc.compile_test(test, self.compiler, self.mutate)   # the program's own kernel
        b0 = self.bucket(test, one, v)
        entry["bucket"] = b0["id"]
        into = self._count_into(b0)         # (fid, known bug) when counted, not minimized
        if into is not None and into[0] is not None:
            add_sources(self.root, into[0], [dict(src, counted="known" if into[1] else "forms")])
            if into[1] is not None:
                entry["known"] = True
            entry["counted"] = "known" if into[1] is not None else "forms"
            self.counted += 1
            return into[0]
        small, tried, accepted, steps, secs = self.minimize(prog, self._still_fails(clean_baseline))
        status, stest, scomp, sv, _ = self.verdict(small)
        if status != "finding":             # minimized into something else: keep the original
            small, stest, scomp, sv = prog, test, one, v
        else:
            scomp = ptxc.compile_test(stest, self.compiler, self.mutate)
        bucket = self.bucket(stest, scomp, sv)
        text = self.family.render(small)
        canon = canonical_hash(stest)
        fid = hashlib.sha256(f"{self.cfg.backend}|{canon}".encode()).hexdigest()[:16]
        ws = bucket.get("weakened", [])
        outcome = sv.extra[0]
        base = None
        if self.mutate is not None:
            base = {"backend": PREFIX + self.compiler.spec(), "iterations": 0,
                    "forbidden": int(not clean_baseline)}
        mut = f" --ptx-mutant {self.mutant}" if self.mutant else ""
        record = {
            "id": fid, "kind": "compiler", "backend": self.cfg.backend, "mutant": self.mutant,
            "compiler": self.compiler.spec(), "command": scomp.command, "version": scomp.version,
            "source_dialect": self.source, "model": sv.source_model,
            "campaign_seed": self.cfg.seed, "test": text, "original": self.family.render(prog),
            "condition": text.rstrip("\n").splitlines()[-1],
            "forbidden": [{"outcome": o, "count": 1} for o in sv.extra],
            "histogram": [], "allowed": [], "verdict": "Forbid", "flags": [], "iterations": 0,
            "reproduced": {"runs": 0, "hits": 0, "forbidden_iterations": 0, "iterations": 0},
            "minimize": {"tried": tried, "accepted": accepted, "steps": steps,
                         "size_before": sum(len(t.ops) for t in prog.threads),
                         "size_after": sum(len(t.ops) for t in small.threads),
                         "seconds": round(secs, 3)},
            "first": {"campaign": self.uid, "index": i, "seed": self.cfg.seed,
                      "t": round(clock(), 3)},
            "sources": [src], "baseline": base,
            "kernel_source": scomp.source, "ptx": scomp.ptx,
            "marked": marked_rows(scomp, ws, scomp.source.splitlines()),
            "check": explain_counterexample(stest, scomp, sv),
            "tool": {"version": version(), "git": git_revision()},
            "reproduce": {"command": f"scopefuzz run --compile {self.compiler.spec()}{mut} "
                                     "minimized.litmus", "backend": self.cfg.backend},
            "bucket": {k: bucket[k] for k in ("kind", "signature", "id", "family", "instruction")
                       if k in bucket} | {"weakened": ws, "outcome": outcome,
                                          "found_as": b0["id"]},
        }
        if publish(self.root, record):
            self.known[fid] = as_finding(record)
            self.stats.findings = len(self.known)
            if clean_baseline:
                self.new_findings += 1
        else:
            self._noted_source(fid, record["sources"])
        return fid


def _memory_rows(test) -> int:
    return sum(1 for th in test.threads for ins in th.code
               if ins.base in ("ld", "st", "rmw", "cas", "fence"))


def _judge_in_child(parent_pid: int, test, compiled_test):
    """:func:`judge` in the forked child of :func:`oracle.deadline.call_with_timeout`, which dies
    with its parent (``PR_SET_PDEATHSIG``): a campaign killed with SIGKILL must not leave a child
    computing on, holding the campaign's lock (inherited with the fork) against ``--resume``."""
    _die_with_parent(parent_pid)
    return judge(test, compiled_test)


def _step(before: str, cand) -> str:
    return f"-> {sum(len(t.ops) for t in cand.threads)} ops in {len(cand.threads)} threads"


def _line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


class ParallelCompilerCampaign(ParallelCampaign):
    """``fuzz --compile ... --jobs N``: :class:`fuzz.workers.ParallelCampaign` whose workers run
    :class:`CompilerCampaign` shards (``shard_campaign``, handed to each worker process); the
    compiler is checked here, before DIR is touched."""

    shard_campaign = CompilerCampaign

    def __init__(self, config, jobs, progress=None, log=None):
        super().__init__(config, jobs, None, progress=progress, log=log)

    def check_backends(self) -> None:
        CompilerCampaign(dataclasses.replace(self.cfg, resume=False)).check_backend()


def default_source(spec: str) -> str:
    return NATURAL[ptxc.parse_spec(spec).name]


__all__ = ["CompileConfig", "CompilerCampaign", "ParallelCompilerCampaign", "backend_name",
           "parse_backend", "default_source"]

"""The ``sim`` backend: lower a test, run the numba kernel, return a Histogram."""

from __future__ import annotations

import time

import numpy as np

from litmus import Test

from ..backend import BackendError, ExhaustiveBackend, Histogram
from . import kernel
from .lower import DIALECTS, LoweringError, Machine, lower, refusal
from .mutants import MUTANTS
from .profiles import DEFAULT_PROFILE, PROFILES, Profile, with_options

#: chunks of a randomized run (fixed, so results do not depend on the number of cores)
NCHUNKS = 16


def parse_spec(spec: str | None) -> tuple[Profile, str | None]:
    """``None`` | ``PROFILE`` | ``MUTANT`` | ``MUTANT@PROFILE``, then ``,option`` ... ."""
    tokens = (spec or "").split(",")
    head, options = tokens[0], [t for t in tokens[1:] if t]
    mutant, prof_name = None, None
    if "@" in head:
        head, prof_name = head.split("@", 1)
    if head in MUTANTS:
        mutant = head
    elif head in PROFILES and prof_name is None:
        prof_name = head
    elif head:
        if head == "tgsplit" or head.startswith("mtype="):
            options.insert(0, head)
        else:
            raise BackendError(
                f"unknown sim variant {head!r}: expected a profile ({', '.join(PROFILES)}) or "
                f"a mutant (see `scopefuzz mutants`)")
    if mutant is not None:
        m = MUTANTS[mutant]
        if prof_name is None:
            prof_name = m.profile
        if not any(o.split("=")[0] == d.split("=")[0] for d in m.options for o in options):
            options = list(m.options) + options
    prof_name = prof_name or DEFAULT_PROFILE
    if prof_name not in PROFILES:
        raise BackendError(f"unknown sim profile {prof_name!r} (known: {', '.join(PROFILES)})")
    try:
        profile = with_options(PROFILES[prof_name], options)
    except ValueError as e:
        raise BackendError(str(e)) from None
    return profile, mutant


class SimBackend(ExhaustiveBackend):
    """The CPU simulator for one profile, optionally with one mutant (randomized ``run`` and
    exhaustive ``explore``)."""

    dialects = DIALECTS

    def why_not(self, dialect: str) -> str:
        return refusal(dialect)

    def __init__(self, profile: Profile, mutant: str | None = None):
        self.profile = profile
        self.mutant = mutant
        self.name = "sim" + (f":{mutant}@{profile.label()}" if mutant else
                             ("" if profile.label() == DEFAULT_PROFILE else f":{profile.label()}"))

    def machine(self, test: Test) -> Machine:
        try:
            return lower(test, self.profile, self.mutant)
        except (LoweringError, KeyError) as e:
            raise BackendError(f"{test.name}: {e}") from None

    def culprit(self, test: Test, reads: list[tuple[int, int]]) -> dict | None:
        """For a mutant: the micro-ops its edits change in ``test``'s lowering against the correct
        lowering of the same profile (the planted bug's mechanism), so that the forms of one
        planted bug share a bucket, as the ``isa`` backend names the compiled instruction at
        fault (fuzz/buckets.py). None for the correct simulator or when this test's lowering is
        unchanged (the model-level bucket stands)."""
        if self.mutant is None:
            return None
        from collections import Counter
        try:
            good = lower(test, self.profile)
            bad = lower(test, self.profile, self.mutant)
        except (LoweringError, KeyError):
            return None
        diff: set[str] = set()
        for t in range(len(good.listing)):
            g = Counter(_uop_key(u) for _, u in good.listing[t])
            b = Counter(_uop_key(u) for _, u in bad.listing[t])
            diff |= {f"missing {k}" for k in g - b} | {f"extra {k}" for k in b - g}
        if not diff:
            return None
        fam = self.profile.family.upper()
        text = "; ".join(sorted(diff))
        return {"kind": "sim", "family": fam, "instruction": sorted(diff)[0],
                "signature": f"sim {fam}: {text}"}

    def _histogram(self, m: Machine, keys, counts, used) -> Histogram:
        """The kernel's outcome tables (``used`` marks the filled rows) as a Histogram, rows in
        table order. Only the filled rows are converted: walking every row of the tables in
        Python (16 chunks x 256 rows, a few of them used) cost as much as the 1,000 iterations."""
        h = Histogram(list(m.observables), params={"profile": self.profile.label(),
                                                  "mutant": self.mutant})
        rows = np.flatnonzero(used.reshape(-1))
        for k, n in zip(keys.reshape(-1, keys.shape[-1])[rows].tolist(),
                        counts.reshape(-1)[rows].tolist()):
            h.add(tuple(k), n)
        return h

    def run(self, test: Test, iterations: int, seed: int = 0) -> Histogram:
        """Randomized mode: ``iterations`` random schedulings (deterministic for a seed)."""
        if iterations <= 0:
            raise BackendError("iterations must be positive")
        m = self.machine(test)
        t0 = time.perf_counter()
        nch = min(NCHUNKS, iterations)
        nobs = max(1, len(m.observables))
        cap = 256
        while True:
            keys = np.zeros((nch, cap, nobs), np.int64)
            counts = np.zeros((nch, cap), np.int64)
            used = np.zeros((nch, cap), np.uint8)
            stats = np.zeros((nch, 2), np.int64)
            kernel.run_random(*m.args(), iterations, seed & 0x7FFFFFFFFFFFFFFF, nch,
                              keys, counts, used, stats)
            if stats[:, 1].sum() == 0:
                break
            cap *= 4
            if cap > 1 << 20:
                raise BackendError(f"{test.name}: too many distinct outcomes")
        dead = int(stats[:, 0].sum())
        if dead == iterations:
            raise BackendError(f"{test.name}: every iteration deadlocked "
                               f"(a barrier wait that never completes)")
        h = self._histogram(m, keys, counts, used)
        h.seconds = time.perf_counter() - t0
        # deadlocked iterations (a hang: some barrier wait never completes) have no outcome
        h.params.update(iterations=iterations, seed=seed, mode="random", deadlocks=dead)
        return h

    def explore(self, test: Test, max_schedules: int = 200_000) -> tuple[Histogram, bool]:
        """Exhaustive mode: every scheduling up to ``max_schedules``; counts are schedules.
        Returns the histogram and whether the exploration was complete."""
        m = self.machine(test)
        t0 = time.perf_counter()
        nobs = max(1, len(m.observables))
        cap = 1024
        while True:
            keys = np.zeros((cap, nobs), np.int64)
            counts = np.zeros(cap, np.int64)
            used = np.zeros(cap, np.uint8)
            stats = np.zeros(4, np.int64)
            kernel.run_exhaustive(*m.args(), max_schedules, keys, counts, used, stats)
            if stats[2] == 0:
                break
            cap *= 4
        if stats[1] == stats[0]:
            raise BackendError(f"{test.name}: every schedule deadlocked "
                               f"(a barrier wait that never completes)")
        h = self._histogram(m, keys, counts, used)
        h.seconds = time.perf_counter() - t0
        h.params.update(mode="exhaustive", schedules=int(stats[0]), complete=bool(stats[3]),
                        deadlocks=int(stats[1]))
        return h, bool(stats[3])


def _uop_key(u) -> str:
    """A micro-op as the mutant edits see it: its kind, counter (waits), level (accesses) and
    switches (no-ack store, weak cas, per-wave arrive, wait on the operand); no locations or
    values, so every test's form of one edit reads the same."""
    from .uops import (BARRIVE, BARWAIT, COUNTER_NAMES, GCAS, GLD, GRMW, GST, GSTR, NAMES, WAIT)
    op = u[0]
    name = NAMES.get(op, str(op))
    if op == WAIT:
        return f"{name} {COUNTER_NAMES.get(u[1], u[1])}"
    if op in (GLD, GST, GRMW, GCAS, GSTR) and len(u) > 3:
        name += f" L{u[3]}"
        if op == GST and len(u) > 6 and u[6]:
            name += " noack"
        if op == GCAS and len(u) > 7 and u[7]:
            name += " weak"
    if op in (BARRIVE, BARWAIT) and len(u) > 2 and u[2]:
        name += " per-wave" if op == BARRIVE else " on-operand"
    return name

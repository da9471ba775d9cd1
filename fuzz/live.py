"""The controller's live view of a distributed campaign: programs/s, findings and buckets, per host.

Workers send their counters every second over the side channel (:mod:`fuzz.claims`); each claim
is one finding (a confirmed forbidden outcome) of one bucket. :class:`LiveView` keeps the latest
counters per (worker, work item) and the items received, and renders one line:

``scopefuzz live 12s: 3/8 items, 1,204 programs (100/s), 9 finding(s) in 2 bucket(s) | hostA:
800 programs 67/s 6 findings 2 buckets | hostB: ...``

(the session's age; programs per second since the first counters came, so the workers' start-up
does not dilute them).

:meth:`tick` says when the line is due (every :data:`REFRESH` seconds, by the clock given: a fake one
in tests). On a terminal, :class:`Refresher` rewrites the line in place from a thread; under ``-q`` or
into a pipe there is no thread, and the controller prints a line per item received, as before.
"""

from __future__ import annotations

import threading
import time

#: seconds between two refreshes of the live line
REFRESH = 2.0


class LiveView:
    def __init__(self, items: int, clock=time.monotonic, refresh: float = REFRESH):
        self.items, self.clock, self.refresh = items, clock, refresh
        self.start = clock()
        self.began: float | None = None     # the first counters: fuzzing began (rates from here)
        self.last: float | None = None
        self._lock = threading.Lock()
        self.running: dict[tuple[str, str, int], int] = {}    # (host, worker, item) -> programs
        self.done: dict[int, tuple[str, int]] = {}             # item -> (host, programs)
        self.findings: dict[str, int] = {}                      # host -> findings
        self.buckets: dict[str, set[str]] = {}                  # host -> bucket ids

    # -- events ------------------------------------------------------------------------------
    def stats(self, host: str, worker: str, item: int, programs: int) -> None:
        with self._lock:
            if self.began is None:
                self.began = self.clock()
            if item not in self.done:
                self.running[(host, worker, item)] = programs

    def finding(self, host: str, worker: str, bucket: str) -> None:
        with self._lock:
            self.findings[host] = self.findings.get(host, 0) + 1
            self.buckets.setdefault(host, set()).add(bucket)

    def item_done(self, host: str, worker: str, item: int, programs: int) -> None:
        with self._lock:
            self.running.pop((host, worker, item), None)
            self.done[item] = (host, programs)

    def worker_lost(self, worker: str) -> None:
        """A lost worker's running item: its programs do not come home (the item runs again)."""
        with self._lock:
            for k in [k for k in self.running if k[1] == worker]:
                del self.running[k]

    # -- the line ----------------------------------------------------------------------------
    def tick(self) -> str | None:
        """The line when a refresh is due (the first at once), else None."""
        now = self.clock()
        if self.last is not None and now - self.last < self.refresh:
            return None
        self.last = now
        return self.line(now)

    def line(self, now: float | None = None) -> str:
        """The line at ``now``: its age is the session's, its rates are over the time since the
        first counters came (workers' start-up, collection and warm-up are not fuzzing)."""
        now = self.clock() if now is None else now
        age = now - self.start
        el = max(now - (self.began if self.began is not None else now), 1e-9)
        with self._lock:
            per: dict[str, int] = {}
            for (host, _, _), n in self.running.items():
                per[host] = per.get(host, 0) + n
            for host, n in self.done.values():
                per[host] = per.get(host, 0) + n
            hosts = sorted(set(per) | set(self.findings))
            total = sum(per.values())
            finds = sum(self.findings.values())
            buckets = set().union(*self.buckets.values()) if self.buckets else set()
            parts = [f"{h}: {per.get(h, 0):,} programs {per.get(h, 0) / el:,.0f}/s "
                     f"{self.findings.get(h, 0)} findings {len(self.buckets.get(h, ()))} buckets"
                     for h in hosts]
            done = len(self.done)
        return (f"scopefuzz live {age:.0f}s: {done}/{self.items} items, {total:,} programs "
                f"({total / el:,.0f}/s), {finds} finding(s) in {len(buckets)} bucket(s)"
                + "".join(f" | {p}" for p in parts))


class Refresher:
    """A thread that rewrites the live line in place on a terminal (``write(text)``) whenever
    :meth:`LiveView.tick` says it is due; :meth:`stop` ends the line."""

    def __init__(self, view: LiveView, write, width=lambda: 80, poll: float = 0.25):
        self.view, self.write, self.poll, self.columns = view, write, poll, width
        self._stop = threading.Event()
        self.width = 0
        self.lock = threading.Lock()          # the controller's own lines take it too
        self._thread = threading.Thread(target=self._run, name="scopefuzz-live", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            text = self.view.tick()
            if text is not None:
                self.show(text)

    def show(self, text: str) -> None:
        """Rewrite the line: cut to the terminal's width (a wrapped line could not be rewritten)
        and padded over what was there (pytest's progress characters included)."""
        cols = max(20, self.columns() - 1)
        with self.lock:
            self.write("\r" + text[:cols].ljust(cols))
            self.width = cols

    def clear(self) -> None:
        """Before another line is written: the live line is ended (the next refresh redraws)."""
        with self.lock:
            if self.width:
                self.write("\n")
                self.width = 0

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        self.clear()

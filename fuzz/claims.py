"""Findings deduplicated by bucket across xdist workers *before* minimizing: one worker minimizes.

Minimizing a finding costs hundreds of backend runs; a fleet of hosts fuzzing one buggy backend
finds the same bug on every host, and each used to minimize it again. Over a side channel (an
execnet channel the controller opens into each worker, beside xdist's own), a worker's campaign
asks the controller "claim bucket B?" before it minimizes a confirmed finding, where B is the
finding's bucket (:mod:`fuzz.buckets`) computed on the program as found: the controller answers yes
to the first claimant only. The others journal the finding with status ``claimed`` (the program as
found and its forbidden outcomes are kept) and go on fuzzing; at the merge, each claimed finding is
added as a source of the claimant's minimized finding, so it counts under that bucket.

A claim is *held* while its claimant's work item runs, then *minimized* when the item's result holds
the finding minimized under it. A claimant lost before that (its worker or host gone: the channel
closes, or xdist reports the node down) releases its claims: the next claimant of the bucket (the
lost item re-run elsewhere, or another host finding the bug again) minimizes it.

The same channel carries each worker's live counters (programs, findings) to the controller every
:data:`STATS_EVERY` seconds for the live view (:mod:`fuzz.live`).

Messages (plain tuples, execnet-serializable): worker -> controller ``("claim", bucket_id,
signature, item, index)`` answered by ``True``/``False``, and ``("stats", item, programs,
findings)``, not answered.
"""

from __future__ import annotations

import threading
import time

#: how often a worker sends its counters for the live view (seconds)
STATS_EVERY = 1.0
#: how long a worker waits for the controller's answer; then it minimizes (a duplicate
#: minimization costs time, a finding not minimized by anyone would cost the finding)
ANSWER_TIMEOUT = 60.0


class ClaimTable:
    """The controller's claims: bucket id -> its state, thread-safe (execnet delivers each
    worker's messages on its own receiver thread)."""

    def __init__(self, on_event=None):
        self._lock = threading.Lock()
        self.buckets: dict[str, dict] = {}
        #: ``on_event(text)``: told when a claim is released (for the terminal)
        self.on_event = on_event

    def claim(self, bucket: str, signature: str, host: str, worker: str, item: int,
              index: int) -> bool:
        """True for the first live claimant of ``bucket``, False (skip it) for every other."""
        with self._lock:
            b = self.buckets.setdefault(bucket, {"id": bucket, "signature": signature,
                                                 "state": "open", "owner": None, "claims": 0,
                                                 "released": []})
            b["claims"] += 1
            if b["state"] == "open":
                b["state"] = "held"
                b["owner"] = {"host": host, "worker": worker, "item": item, "index": index}
                return True
            return False

    def preload(self, results: dict[int, dict]) -> None:
        """Buckets minimized in items received before this session (``--litmus-resume``): claims
        of them are answered no, as if made in this session."""
        with self._lock:
            for j in sorted(results):
                r = results[j]
                for e in r.get("entries", []):
                    k = e.get("claim")
                    if e.get("status") == "finding" and k and k not in self.buckets:
                        self.buckets[k] = {
                            "id": k, "signature": None, "state": "minimized", "claims": 0,
                            "owner": {"host": r.get("host", "?"), "worker": r.get("worker", "?"),
                                      "item": j, "index": e.get("i")}, "released": []}

    def item_done(self, worker: str, item: int, minimized: set[str]) -> None:
        """Work item ``item`` of ``worker`` came home; ``minimized``: the buckets its findings
        were minimized under. Its other held claims are released (it ended without one)."""
        with self._lock:
            for b in self.buckets.values():
                o = b["owner"]
                if b["state"] == "held" and o["worker"] == worker and o["item"] == item:
                    if b["id"] in minimized:
                        b["state"] = "minimized"
                    else:
                        self._release(b, "its work item ended without minimizing it")

    def worker_lost(self, worker: str, why: str) -> list[str]:
        """Release every claim ``worker`` still holds; returns the buckets released."""
        out = []
        with self._lock:
            for b in self.buckets.values():
                if b["state"] == "held" and b["owner"]["worker"] == worker:
                    self._release(b, why)
                    out.append(b["id"])
        return out

    def _release(self, b: dict, why: str) -> None:
        o = b["owner"]
        b["released"].append(dict(o, why=why))
        b["state"], b["owner"] = "open", None
        if self.on_event is not None:
            self.on_event(f"scopefuzz: claim on bucket {b['id']} released ({o['worker']} on "
                          f"{o['host']}, item {o['item']}: {why}); the next finder minimizes it")

    def snapshot(self) -> dict[str, dict]:
        with self._lock:
            return {k: dict(v, released=list(v["released"])) for k, v in self.buckets.items()}


class SideChannel:
    """The controller's end of one worker's side channel: claims answered from the table,
    counters handed to the live view, the worker's loss releasing its claims."""

    def __init__(self, channel, table: ClaimTable, live, host: str, worker: str):
        self.channel, self.table, self.live = channel, table, live
        self.host, self.worker = host, worker
        self.closed = False
        channel.setcallback(self.receive, endmarker=None)

    def receive(self, msg) -> None:
        if msg is None:                     # the channel closed: the worker is gone or done
            self.closed = True
            self.table.worker_lost(self.worker, "its worker's side channel closed")
            return
        kind = msg[0]
        if kind == "claim":
            _, bucket, sig, item, index = msg
            yes = self.table.claim(bucket, sig, self.host, self.worker, item, index)
            if self.live is not None:
                self.live.finding(self.host, self.worker, bucket)
            try:
                self.channel.send(yes)
            except (OSError, EOFError, ValueError, IOError):    # the worker is already gone
                pass
        elif kind == "stats" and self.live is not None:
            _, item, programs, findings = msg
            self.live.stats(self.host, self.worker, item, programs)


class ClaimClient:
    """The worker's end: :meth:`claim` for :class:`fuzz.campaign.Campaign`'s ``claim`` hook and
    the live counters as a campaign ``progress`` (``begin``/``update``/``finish``)."""

    def __init__(self, channel, item: int, clock=time.monotonic):
        self.channel, self.item, self.clock = channel, item, clock
        self.last = 0.0
        self.claimed = 0                  # findings skipped: another worker holds their bucket

    def claim(self, bucket: dict, index: int) -> bool:
        try:
            self.channel.send(("claim", bucket["id"], bucket.get("signature", ""), self.item,
                               index))
            yes = bool(self.channel.receive(ANSWER_TIMEOUT))
        except Exception:                 # no controller to ask: minimize here
            return True
        self.claimed += not yes
        return yes

    # -- the campaign's progress interface ---------------------------------------------------
    def begin(self, stats) -> None:
        self.last = self.clock()
        self._send(stats)

    def update(self, stats, coverage=None) -> None:
        now = self.clock()
        if now - self.last >= STATS_EVERY:
            self.last = now
            self._send(stats)

    def finish(self, stats, coverage=None) -> None:
        self._send(stats)

    def _send(self, stats) -> None:
        try:
            self.channel.send(("stats", self.item, stats.programs, stats.findings))
        except Exception:
            pass

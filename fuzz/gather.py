"""One fuzz campaign over pytest-xdist workers, on one host or many (``--tx ssh=...``).

``pytest --litmus-fuzz=SECONDS -n N`` gives every worker the same N campaign items; item K runs
shard K/N of the campaign seed (``--litmus-seed``) into a directory of its own on the worker's host.
Nothing is shared through a filesystem: when the item ends, the worker puts the shard's parameters,
its journal summary (the program entries' report fields, :data:`SUMMARY_FIELDS`) and its finding
records into ``config.workeroutput``, which xdist sends to the controller over execnet with the
worker's end-of-session message. The controller (:class:`Gatherer`) collects them from every worker
that goes down and, at session end, writes each as a campaign directory of its own disk and merges
them (``scopefuzz merge``) into one campaign directory (``.scopefuzz-pytest/<backend>-<time>-merged/``
under its rootdir) with one report.

:class:`PinnedLoadScheduling` (installed through xdist's ``pytest_xdist_make_scheduler`` hook under
the default ``--dist load``) sends fuzz item K to the K-th worker first, so that mixed with ``*.litmus``
items the N shards still run side by side rather than queued on one worker.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import pytest

#: the ``workeroutput`` key of the shards a worker ran
OUTPUT_KEY = "scopefuzz_fuzz"
FUZZ_PREFIX = "litmus-fuzz["


#: the fields of a program entry that reports read: what a worker sends home for each program (the
#: full journal, with seeds, witnesses and sizes, stays on the worker's host)
SUMMARY_FIELDS = ("type", "campaign", "i", "t", "status", "executions", "seconds", "kinds", "pairs",
                  "error", "finding", "name", "test", "forbidden")


def send_home(config, out: str) -> None:
    """On an xdist worker: add campaign directory ``out`` (one shard) to what goes to the
    controller. Without xdist (no ``workeroutput``) there is nothing to gather: ``out`` is the
    campaign."""
    wo = getattr(config, "workeroutput", None)
    if wo is None or not os.path.isdir(out):
        return
    from .findings import load_findings
    from .layout import program_entries, read_meta
    meta = read_meta(out)
    if meta is None:
        return
    wo.setdefault(OUTPUT_KEY, []).append({
        "dir": out,
        "host": os.uname().nodename,
        "meta": meta,
        "entries": [{k: e[k] for k in SUMMARY_FIELDS if k in e}
                    for e in program_entries(out, meta)],
        "findings": load_findings(out),
    })


def write_shard(directory: str, shard: dict) -> None:
    """A shard received from a worker, written on the controller's disk as a campaign directory
    (its parameters, journal summary and findings) for :func:`fuzz.merge.merge`."""
    from .findings import publish
    from .journal import Journal, atomic_write
    from .layout import JOURNAL, META
    os.makedirs(directory)
    atomic_write(os.path.join(directory, META), json.dumps(shard["meta"], sort_keys=True) + "\n")
    j = Journal(os.path.join(directory, JOURNAL), sync=False)   # a bulk copy: fsynced at close
    for e in shard["entries"]:
        j.append(e)
    j.close()
    for rec in shard["findings"]:
        publish(directory, rec)


class Gatherer:
    """The controller's side: shards from each worker's ``workeroutput``; one merged campaign."""

    def __init__(self, config):
        self.config = config
        self.shards: list[dict] = []
        self.lost: list[str] = []
        self.out: str | None = None
        self.counts: dict | None = None
        self.error: str | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        wo = getattr(node, "workeroutput", None) or {}
        shards = wo.get(OUTPUT_KEY, [])
        self.shards.extend(shards)
        if error and not shards:
            self.lost.append(f"{node.gateway.id}: {error}".splitlines()[0])

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config, log):
        if config.getvalue("dist") != "load":
            return None
        return PinnedLoadScheduling(config, log)

    def pytest_sessionfinish(self, session):
        if not self.shards:
            return
        from .merge import MergeError, merge
        from .pytest_plugin import backend_spec
        from .report import ReportError, build_report
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", backend_spec(self.config))
        base = os.path.join(str(self.config.rootpath), ".scopefuzz-pytest")
        out = os.path.join(base, f"{tag}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-merged")
        received = os.path.join(base, f".received-{os.getpid()}")
        try:
            dirs = []
            for k, shard in enumerate(sorted(self.shards, key=lambda s: s["meta"].get("shard", ""))):
                dirs.append(os.path.join(received, f"part{k}"))
                write_shard(dirs[-1], shard)
            self.counts = merge(out, dirs)
            build_report(out)
        except (MergeError, ReportError, OSError) as e:
            self.error = str(e).splitlines()[0]
            return
        finally:
            shutil.rmtree(received, ignore_errors=True)
        self.out = out

    def pytest_terminal_summary(self, terminalreporter):
        if self.error:
            terminalreporter.write_line(f"scopefuzz: could not merge the fuzz shards: {self.error}")
        if self.out:
            c = self.counts
            hosts = sorted({s["host"] for s in self.shards})
            terminalreporter.write_line(
                f"scopefuzz: {c['parts']} fuzz shards from {len(hosts)} host(s) merged into "
                f"{self.out}: {c['programs']} programs, {c['findings']} finding(s); report "
                f"{os.path.join(self.out, 'report.html')} ({c['budget']} programs over the "
                f"oracle's search budget)")
        for line in self.lost:
            terminalreporter.write_line(f"scopefuzz: a worker went down without its shard "
                                        f"({line}); its campaign stays on its host")


def _load_scheduling():
    try:
        from xdist.scheduler import LoadScheduling
    except ImportError:
        return object
    return LoadScheduling


class PinnedLoadScheduling(_load_scheduling()):
    """xdist's ``load`` scheduling, except that the K-th worker's first item is fuzz item K.

    Every worker's first batch goes through ``_send_tests`` during the initial distribution; this
    sends the worker's fuzz item ahead of it (and takes it out of the pending list, so no other
    worker gets it). Fuzz items are the last collected, so the batches before them are
    ``*.litmus`` items.
    """

    _pins: dict | None = None

    def _send_tests(self, node, num):
        if self._pins is None:
            fuzz = [i for i in self.pending
                    if self.collection[i].rpartition("::")[2].startswith(FUZZ_PREFIX)]
            self._pins = dict(zip(self.nodes, fuzz))
        idx = self._pins.pop(node, None)
        if idx is not None and idx in self.pending:
            self.pending.remove(idx)
            self.node2pending[node].append(idx)
            node.send_runtest_some([idx])
            num -= 1
        if num > 0:
            super()._send_tests(node, num)

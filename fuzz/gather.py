"""One fuzz campaign over pytest-xdist workers, on one host or many (``--tx ssh=...``), that survives
a lost host.

The campaign is split into work items (:mod:`fuzz.workitems`): item J runs shard J/M of the campaign
seed for one time slice into a directory on its worker's host, and xdist's ``load`` scheduling hands
the items out. Nothing is shared through a filesystem: when an item ends, its worker attaches the
shard's parameters, journal summary (the program entries' report fields, :data:`SUMMARY_FIELDS`) and
finding records to the item's test report (``report.scopefuzz_item``), which xdist sends to the
controller at once. The controller (:class:`Gatherer`) stores each item as it arrives
(``items/item-J.json``), shows a live line (items, programs/s, findings, per host), and at session
end merges the received items (``scopefuzz merge``) into ``<store>/merged/`` with one report whose
top says what is missing.

A lost worker (its process killed, its host gone or partitioned: the ssh keepalive that the light
plugin adds to ``ssh=`` gateways turns a partition into a lost connection within ~15 s) costs the item
it was running: the controller hands that item to another live worker (``--litmus-retry-lost``, once
by default; the crashed report shows as ``rerun``) or lists it, with the reason, for
``--litmus-resume``. The items queued on the lost worker go back to the others (xdist's own
rescheduling). When xdist cannot start a replacement worker (the host is gone:
``HostNotFound``), the controller says so and goes on with the workers it has instead of ending the
session.

The controller tells every worker, through ``workerinput``, the plan and the items already done (on
``--litmus-resume``); the light entry module (``scopefuzz_pytest``) adds its host's name, its index
among that host's workers and their count, for per-host device lists (``SCOPEFUZZ_DEVICES`` / ini
``litmus_devices``) and simulator threads.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from dataclasses import asdict

import pytest

from . import workitems as wi
from .claims import ClaimTable, SideChannel
from .findings import add_sources, load_findings, publish
from .journal import Journal, atomic_write
from .layout import JOURNAL, META, program_entries, read_meta
from .live import LiveView
from .placement import backend_spec

#: the fields of a program entry that reports read: what a worker sends home for each program (the
#: full journal, with seeds, witnesses and sizes, stays on the worker's host)
SUMMARY_FIELDS = ("type", "campaign", "i", "t", "status", "executions", "seconds", "kinds", "pairs",
                  "error", "finding", "name", "test", "forbidden", "claim")
CLAIMED_FIELDS = SUMMARY_FIELDS + ("seed",)
FUZZ_PREFIX = wi.FUZZ_PREFIX


def item_result(out: str, j: int, host: str, worker: str, seconds: float) -> dict | None:
    """What a worker sends home for work item J, run into campaign directory ``out``."""
    meta = read_meta(out) if os.path.isdir(out) else None
    if meta is None:
        return None
    # a finding skipped for a bucket claimed elsewhere also brings its seed (it becomes a source
    # of the claimant's finding at the merge)
    entries = [{k: e[k] for k in (CLAIMED_FIELDS if e.get("status") == "claimed" else
                                  SUMMARY_FIELDS) if k in e}
               for e in program_entries(out, meta)]
    return {"item": j, "dir": out, "host": host, "worker": worker, "node": os.uname().nodename,
            "seconds": round(seconds, 3), "meta": meta, "entries": entries,
            "programs": sum(1 for e in entries if e.get("type") == "program"),
            "findings": load_findings(out)}


def write_shard(directory: str, shard: dict) -> None:
    """An item received from a worker, written on the controller's disk as a campaign directory
    (its parameters, journal summary and findings) for :func:`fuzz.merge.merge`."""
    os.makedirs(directory)
    atomic_write(os.path.join(directory, META), json.dumps(shard["meta"], sort_keys=True) + "\n")
    j = Journal(os.path.join(directory, JOURNAL), sync=False)   # a bulk copy: fsynced at close
    for e in shard["entries"]:
        j.append(e)
    j.close()
    for rec in shard["findings"]:
        publish(directory, rec)


def claimed_sources(out: str, results: dict[int, dict]) -> int:
    """Each finding skipped because another worker held its bucket's claim becomes a source of
    the claimant's minimized finding in merged campaign ``out`` (so it counts under the bucket),
    with the program as found and its forbidden outcomes. Returns how many were added; those
    whose claimant's finding never came home stay in the journal (status ``claimed``) and in
    ``fleet.json``'s ``claims``."""
    owner: dict[str, str] = {}          # bucket claimed -> the claimant's finding id
    for j in sorted(results):
        for e in results[j].get("entries", []):
            if e.get("status") == "finding" and e.get("claim") and e.get("finding"):
                owner.setdefault(e["claim"], e["finding"])
    n = 0
    for j in sorted(results):
        r = results[j]
        for e in r.get("entries", []):
            fid = owner.get(e.get("claim")) if e.get("status") == "claimed" else None
            if fid is None:
                continue
            add_sources(out, fid, [{"campaign": r["meta"].get("uid"), "index": e.get("i"),
                                    "seed": e.get("seed"), "test": e.get("test"),
                                    "forbidden": e.get("forbidden"),
                                    "claimed_by_other": {"host": r.get("host"),
                                                         "worker": r.get("worker"),
                                                         "item": j}}])
            n += 1
    return n


def distributed(config) -> bool:
    """This controller hands items to xdist workers."""
    return bool(getattr(config.option, "tx", None)) and \
        getattr(config.option, "dist", "no") != "no"


def gateway_specs(config) -> list:
    if not distributed(config):
        return []
    import execnet
    from xdist.workermanage import parse_tx_spec_config
    return [execnet.XSpec(s) for s in parse_tx_spec_config(config)]


def resume_command(config, name: str) -> str:
    """The command line that continues campaign ``name`` (this one's, with the campaign named)."""
    args, skip = [], False
    for a in config.invocation_params.args:
        if skip:
            skip = False
            continue
        if a in ("--litmus-resume",) or a.startswith("--litmus-campaign="):
            continue
        if a == "--litmus-campaign":
            skip = True
            continue
        args.append(a)
    return " ".join(shlex.quote(a) for a in
                    ["pytest", *args, f"--litmus-campaign={name}", "--litmus-resume"])


class Gatherer:
    """The controller's side: the plan, the items as they arrive, the lost ones, the merge."""

    def __init__(self, config):
        self.config = config
        self.specs = gateway_specs(config)
        try:
            plan = wi.make_plan(config.getoption("--litmus-campaign"), backend_spec(config),
                                config.getoption("--litmus-seed"),
                                config.getoption("--litmus-fuzz"), max(1, len(self.specs)),
                                config.getoption("--litmus-fuzz-items"),
                                distributed=bool(self.specs))
            self.store = wi.store_dir(str(config.rootpath), plan.name)
            self.plan = wi.open_store(self.store, plan, config.getoption("--litmus-resume"))
        except wi.PlanError as e:
            raise pytest.UsageError(f"scopefuzz: {e}") from None
        self.results = wi.received(self.store)          # J -> result (earlier sessions' too)
        self.done_before = sorted(self.results)
        self.session_items: set[int] = set()
        self.lost: dict[int, str] = {}
        self.retries: dict[int, int] = {}
        self.down: dict[str, str] = {}                  # worker id -> why it went down
        self.duplicates = 0
        self.unrestartable: list[str] = []
        self.start = time.monotonic()
        self.out: str | None = None
        self.counts: dict | None = None
        self.error: str | None = None
        self.fleet: dict | None = None
        # findings claimed by bucket before minimizing, and the live view, over a side channel
        # into each worker (fuzz/claims.py, fuzz/live.py)
        # told on execnet's receiver threads; printed by the main thread (_flush)
        self.events: list[str] = []
        self.claims = ClaimTable(on_event=self.events.append)
        self.claims.preload(self.results)       # buckets minimized before a --litmus-resume
        self.live = LiveView(self.plan.items)
        self.sides: dict[str, object] = {}
        self.refresher = None

    # -- to the workers --------------------------------------------------------------------------
    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        # (its host and place on the host: scopefuzz_pytest.pytest_configure_node)
        node.workerinput["scopefuzz_plan"] = asdict(self.plan)
        node.workerinput["scopefuzz_done"] = self.done_before
        from scopefuzz_pytest import spec_host
        gw = node.gateway
        channel = gw.newchannel()       # sent with workerinput: the worker gets its own end
        self.sides[gw.id] = SideChannel(channel, self.claims, self.live, spec_host(gw.spec), gw.id)
        node.workerinput["scopefuzz_side"] = channel

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        gw = node.gateway.id
        if error:
            self.down[gw] = str(error).strip().splitlines()[-1] if str(error).strip() else "?"
        self._lost_worker(gw, f"worker down: {self.down[gw]}" if gw in self.down
                          else "worker ended")

    def _lost_worker(self, gw: str, why: str) -> None:
        """A worker gone: its claims are released, its running item leaves the live view."""
        self.claims.worker_lost(gw, why)
        self.live.worker_lost(gw)
        self._flush()

    def _flush(self) -> None:
        """Print the claim table's news (released claims), from the main thread."""
        while self.events:
            self._say(self.events.pop(0))

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem, report, sched):
        j = wi.item_index(crashitem)
        if j is None:
            return None
        node = getattr(report, "node", None)
        gw = node.gateway.id if node is not None else "?"
        host = node.workerinput.get("scopefuzz_host", "?") if node is not None else "?"
        why = (f"worker {gw} on {host} went down while running it"
               + (f" ({self.down[gw]})" if gw in self.down else ""))
        self._lost_worker(gw, "went down while running its work item")
        live = [n for n in getattr(sched, "nodes", []) if not n.shutting_down]
        if self.retries.get(j, 0) < self.config.getoption("--litmus-retry-lost") and live \
                and hasattr(sched, "mark_test_pending"):
            self.retries[j] = self.retries.get(j, 0) + 1
            sched.mark_test_pending(crashitem)
            report.outcome = "rerun"
            self.lost[j] = why + "; handed to another worker, which did not finish it"
            self._say(f"scopefuzz: work item {j} lost ({why}); handed to another worker")
            return True
        self.lost[j] = why
        self._say(f"scopefuzz: work item {j} lost ({why}); listed for --litmus-resume")
        return None

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config, log):
        if config.getvalue("dist") != "load":
            return None
        return PinnedLoadScheduling(config, log)

    def pytest_sessionstart(self, session):
        ds = self.config.pluginmanager.get_plugin("dsession")
        if ds is not None and hasattr(ds, "_clone_node"):
            clone = ds._clone_node

            def clone_or_go_on(node):
                # a crashed worker's replacement cannot start (its host is gone): go on without it
                try:
                    return clone(node)
                except Exception as e:      # execnet's HostNotFound, a timeout, an ssh error
                    host = node.workerinput.get("scopefuzz_host", "?")
                    text = str(e).strip()
                    self.unrestartable.append(f"{host}: {type(e).__name__}: "
                                              f"{text.splitlines()[-1] if text else ''}")
                    self._say(f"scopefuzz: cannot restart a worker on {host} "
                              f"({type(e).__name__}); going on without it")
                    return None
            ds._clone_node = clone_or_go_on
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.specs and tr is not None and tr.isatty and self.config.get_verbosity() >= 0:
            # a terminal: the live line is rewritten in place every few seconds
            from .live import Refresher
            self.refresher = Refresher(self.live, lambda text: tr._tw.write(text, flush=True),
                                       lambda: tr._tw.fullwidth)
            self.refresher.start()

    # -- from the workers ------------------------------------------------------------------------
    def pytest_runtest_logreport(self, report):
        j = wi.item_index(report.nodeid)
        if j is None or report.when != "call":
            return
        res = getattr(report, "scopefuzz_item", None)
        if res is None:
            if report.failed and j not in self.results:
                text = str(report.longrepr).strip().splitlines()
                self.lost[j] = f"the item failed before its campaign ran: {text[0] if text else '?'}"
            return
        if not wi.keep(self.store, j, res):
            self.duplicates += 1
            return
        self.results[j] = res
        self.session_items.add(j)
        self.lost.pop(j, None)
        self.claims.item_done(res.get("worker", "?"), j,
                              {e["claim"] for e in res.get("entries", [])
                               if e.get("status") == "finding" and e.get("claim")})
        self.live.item_done(res.get("host", "?"), res.get("worker", "?"), j, res.get("programs", 0))
        self._flush()
        if self.refresher is None:      # no terminal (or -q): one line per item
            self._say(wi.live_line(self.plan, self.results, self.session_items,
                                   time.monotonic() - self.start))

    def _say(self, line: str) -> None:
        if self.refresher is not None:
            self.refresher.clear()
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.ensure_newline()
            tr.write_line(line)
        else:
            print(line, file=sys.stderr)

    # -- the end ---------------------------------------------------------------------------------
    def pytest_sessionfinish(self, session):
        from .merge import MergeError, merge
        from .report import ReportError, build_report
        if self.refresher is not None:
            self.refresher.stop()
            self.refresher = None
        self._flush()
        self.fleet = wi.fleet_summary(self.plan, self.results, self.lost,
                                      resume_command(self.config, self.plan.name),
                                      self.claims.snapshot())
        self.fleet["unrestartable"] = self.unrestartable
        self.fleet["duplicates_ignored"] = self.duplicates
        text = json.dumps(self.fleet, indent=1, sort_keys=True) + "\n"
        atomic_write(os.path.join(self.store, wi.FLEET), text)
        if not self.results:
            return
        out = os.path.join(self.store, wi.MERGED)
        received = os.path.join(self.store, f".received-{os.getpid()}")
        try:
            shutil.rmtree(out, ignore_errors=True)
            dirs = []
            for j in sorted(self.results):
                dirs.append(os.path.join(received, f"item{j}"))
                write_shard(dirs[-1], self.results[j])
            self.counts = merge(out, dirs)
            claimed_sources(out, self.results)
            atomic_write(os.path.join(out, wi.FLEET), text)
            build_report(out)
        except (MergeError, ReportError, OSError) as e:
            self.error = str(e).splitlines()[0]
            return
        finally:
            shutil.rmtree(received, ignore_errors=True)
        self.out = out

    def pytest_terminal_summary(self, terminalreporter):
        w = terminalreporter.write_line
        if self.error:
            w(f"scopefuzz: could not merge the fuzz items: {self.error}")
        f = self.fleet
        if f is None:
            return
        line = wi.incomplete_line(f)
        if line:
            w(f"scopefuzz: {line}")
        for x in f["lost"]:
            w(f"scopefuzz: lost item {x['item']}: {x['reason']}")
        if self.out:
            c = self.counts
            w(f"scopefuzz: {f['received']} of {self.plan.items} work items from "
              f"{len(f['hosts'])} host(s) merged into {self.out}: {c['programs']} programs, "
              f"{c['findings']} finding(s); report {os.path.join(self.out, 'report.html')} "
              f"({c['budget']} programs over the oracle's search budget)")
        for h, r in sorted(f["hosts"].items()):
            w(f"scopefuzz: host {h}: {r['items']} items, {r['programs']} programs, "
              f"{r['rate']:g} programs/s per busy worker, {r['findings']} finding(s)")


def _load_scheduling():
    try:
        from xdist.scheduler import LoadScheduling
    except ImportError:
        return object
    return LoadScheduling


class PinnedLoadScheduling(_load_scheduling()):
    """xdist's ``load`` scheduling, except that each worker's first item is a fuzz item of its own.

    Every worker's first batch goes through ``_send_tests`` during the initial distribution; this
    sends one fuzz item ahead of it (and takes it out of the pending list, so no other worker gets
    it). Fuzz items are the last collected, so mixed with ``*.litmus`` items the first items would
    otherwise all queue behind the litmus files on one worker.
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

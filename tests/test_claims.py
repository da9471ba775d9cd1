"""Findings claimed by bucket before minimizing (fuzz/claims.py), the live view (fuzz/live.py), the
campaign's claim hook, and the claims' summary in fleet.json and the report (fuzz/workitems.py)."""

import math
import os

from fakes import StaleReadBackend, sc_check
from fuzz import workitems as wi
from fuzz.campaign import Campaign, Config
from fuzz.claims import ClaimClient, ClaimTable, SideChannel
from fuzz.findings import load_findings
from fuzz.journal import read_journal
from fuzz.live import LiveView, Refresher
from fuzz.strategies import parse_features


class FakeChannel:
    """An execnet channel's surface: send, receive, setcallback."""

    def __init__(self, answers=(), broken=False):
        self.sent, self.answers, self.broken = [], list(answers), broken
        self.callback = None

    def send(self, msg):
        if self.broken:
            raise OSError("channel closed")
        self.sent.append(msg)

    def receive(self, timeout=None):
        return self.answers.pop(0)

    def setcallback(self, cb, endmarker=None):
        self.callback = cb


class Clock:
    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


def test_the_first_claimant_minimizes_a_lost_claimant_releases_its_claims():
    events = []
    t = ClaimTable(on_event=events.append)
    assert t.claim("B", "may-see: ...", "h1", "gw0", 1, 10)
    assert not t.claim("B", "may-see: ...", "h2", "gw1", 2, 11)      # held by gw0
    assert t.claim("C", "coherence", "h2", "gw1", 2, 13)
    assert t.worker_lost("gw0", "its worker's side channel closed") == ["B"]
    assert "claim on bucket B released (gw0 on h1, item 1: its worker's side channel" in events[0]
    assert t.claim("B", "may-see: ...", "h2", "gw1", 2, 17)          # the next finder gets it
    assert not t.claim("B", "may-see: ...", "h1", "gw2", 1, 10)      # the lost item, re-run
    t.item_done("gw1", 2, {"B"})                                      # B minimized, C not
    snap = t.snapshot()
    assert snap["B"]["state"] == "minimized" and snap["B"]["claims"] == 4
    assert snap["B"]["released"][0]["worker"] == "gw0"
    assert snap["C"]["state"] == "open"                                # its item ended without it
    assert "ended without minimizing it" in snap["C"]["released"][0]["why"]
    assert not t.claim("B", "", "h1", "gw0", 3, 99)                   # minimized: skipped for good
    assert t.worker_lost("gw1", "x") == []                             # nothing held any more


def test_the_side_channel_answers_claims_feeds_the_live_view_and_releases_on_close():
    table, clock = ClaimTable(), Clock()
    live = LiveView(4, clock=clock)
    a, b = FakeChannel(), FakeChannel()
    sa = SideChannel(a, table, live, "h1", "gw0")
    SideChannel(b, table, live, "h2", "gw1")
    a.callback(("claim", "B", "sig", 1, 5))
    b.callback(("claim", "B", "sig", 2, 6))
    assert a.sent == [True] and b.sent == [False]
    b.callback(("stats", 2, 40, 0))
    assert live.running == {("h2", "gw1", 2): 40}
    a.callback(None)                                   # gw0's channel closed: its claim goes
    assert sa.closed and table.snapshot()["B"]["state"] == "open"
    b.callback(("claim", "B", "sig", 2, 9))
    assert b.sent == [False, True]


def test_the_worker_end_asks_counts_skips_and_minimizes_without_a_controller():
    clock = Clock()
    ch = FakeChannel(answers=[True, False])
    c = ClaimClient(ch, 3, clock=clock)
    assert c.claim({"id": "B", "signature": "s"}, 7) and not c.claim({"id": "B"}, 8)
    assert ch.sent == [("claim", "B", "s", 3, 7), ("claim", "B", "", 3, 8)] and c.claimed == 1
    assert ClaimClient(FakeChannel(broken=True), 1).claim({"id": "B"}, 1)   # nobody to ask

    class S:
        programs, findings = 5, 1
    ch.sent.clear()
    c.begin(S)
    c.update(S)                                       # within a second: not sent
    clock.t += 1.0
    c.update(S)
    assert ch.sent == [("stats", 3, 5, 1)] * 2


def test_live_view_refreshes_every_two_seconds_per_host():
    clock = Clock(40.0)
    v = LiveView(8, clock=clock)
    clock.t = 50.0                                  # the first counters: rates count from here
    v.stats("hostA", "gw0", 1, 0)
    clock.t = 60.0
    v.stats("hostA", "gw0", 1, 300)
    v.stats("hostB", "gw1", 2, 100)
    v.finding("hostA", "gw0", "B1")
    v.finding("hostB", "gw1", "B1")
    v.finding("hostB", "gw1", "B2")
    first = v.tick()
    assert first == ("scopefuzz live 20s: 0/8 items, 400 programs (40/s), 3 finding(s) in 2 "
                     "bucket(s) | hostA: 300 programs 30/s 1 findings 1 buckets | hostB: 100 "
                     "programs 10/s 2 findings 2 buckets")
    clock.t = 61.9
    v.stats("hostA", "gw0", 1, 500)
    assert v.tick() is None                         # not due yet: no line
    clock.t = 62.0
    v.item_done("hostA", "gw0", 1, 520)             # the item's final count replaces its running one
    v.stats("hostA", "gw0", 1, 999)                 # a late counter of a received item: ignored
    v.stats("hostA", "gw0", 3, 80)
    v.stats("hostB", "gw2", 4, 20)
    v.worker_lost("gw2")                            # its running item's programs do not come home
    assert v.tick().startswith("scopefuzz live 22s: 1/8 items, 700 programs (58/s), 3 finding(s)")
    assert v.tick() is None


FEATS = parse_features("atomics,plain,fences,rmw")


def _campaign(out, claim):
    cfg = Config(backend="fake", out=str(out), seed=1, programs=24, features=FEATS,
                 iterations=150, minimize_seconds=math.inf)
    return Campaign(cfg, backend=StaleReadBackend(0.3), checker=sc_check, claim=claim).run()


def _programs(out):
    return [e for e in read_journal(os.path.join(out, "journal.jsonl")) if e["type"] == "program"]


def test_a_campaign_asks_before_minimizing_and_keeps_what_it_skips(tmp_path):
    asked = []

    def deny(bucket, i):
        asked.append((bucket["id"], i))
        return False
    stats = _campaign(tmp_path / "no", deny)
    entries = _programs(tmp_path / "no")
    skipped = [e for e in entries if e["status"] == "claimed"]
    assert skipped and stats.findings == 0 and load_findings(str(tmp_path / "no")) == []
    assert [(e["claim"], e["i"]) for e in skipped] == asked
    for e in skipped:                     # the program as found and its forbidden outcomes
        assert e["test"].startswith("AMDGPU") and e["forbidden"]
        assert not sc_check(__import__("litmus").parse(e["test"])).allows(e["forbidden"][0])
    # the same programs, each bucket granted once: the first finder of a bucket minimizes it
    held = set()

    def first(bucket, i):
        if bucket["id"] in held:
            return False
        held.add(bucket["id"])
        return True
    _campaign(tmp_path / "yes", first)
    again = _programs(tmp_path / "yes")
    found = [e for e in again if e["status"] == "finding"]
    assert {e["i"] for e in found} | {e["i"] for e in again if e["status"] == "claimed"} == \
        {e["i"] for e in skipped}
    assert sorted(e["claim"] for e in found) == sorted(held)          # one minimization per bucket
    assert {e["finding"] for e in found} == {r["id"] for r in load_findings(str(tmp_path / "yes"))}


def test_claims_summary_in_fleet_json_and_the_report():
    plan = wi.make_plan("c", "sim", 0, total=10, workers=2, items=3)
    results = {
        1: {"host": "a", "worker": "gw0", "programs": 3, "seconds": 1.0, "findings": [],
            "entries": [{"type": "program", "i": 0, "status": "finding", "claim": "B",
                         "finding": "F1"},
                        {"type": "program", "i": 3, "status": "claimed", "claim": "B"},
                        {"type": "program", "i": 6, "status": "ok"}]},
        2: {"host": "b", "worker": "gw1", "programs": 2, "seconds": 1.0, "findings": [],
            "entries": [{"type": "program", "i": 1, "status": "claimed", "claim": "B"},
                        {"type": "program", "i": 4, "status": "claimed", "claim": "C"}]}}
    table = {"B": {"signature": "may-see: x", "released": []},
             "C": {"signature": "coherence: y",
                   "released": [{"host": "c", "worker": "gw2", "item": 3, "why": "gone"}]}}
    f = wi.fleet_summary(plan, results, {}, "CMD", table)
    b, c = f["claims"]
    assert b == {"bucket": "B", "signature": "may-see: x", "programs": 3, "findings": ["F1"],
                 "minimized_by": {"host": "a", "worker": "gw0", "item": 1, "index": 0},
                 "skipped": [{"host": "a", "worker": "gw0", "item": 1, "index": 3},
                             {"host": "b", "worker": "gw1", "item": 2, "index": 1}],
                 "released": []}
    assert c["minimized_by"] is None and c["programs"] == 1 and c["released"][0]["why"] == "gone"
    md = "\n".join(wi.fleet_markdown(f))
    assert "| B | 3 | a/gw0 item 1 | a: 1, b: 1 | - |" in md
    assert "| C | 1 | nobody (claimant lost) | b: 1 | gw2 on c (gone) |" in md
    html = "\n".join(wi.fleet_html(f))
    assert "<td>nobody (claimant lost)</td>" in html and "<td>gw2 on c (gone)</td>" in html


def test_the_terminal_line_is_rewritten_in_place_within_the_width():
    out = []
    r = Refresher(LiveView(2, clock=Clock()), out.append, width=lambda: 31)
    r.show("scopefuzz live 2s: 0/2 items, 10 programs (5/s)")
    r.show("short")
    assert out == ["\rscopefuzz live 2s: 0/2 items, ", "\rshort" + " " * 25]
    r.clear()                       # another line follows: the live line is ended first
    r.clear()
    assert out[2:] == ["\n"]


def test_buckets_minimized_before_a_resume_are_not_minimized_again():
    t = ClaimTable()
    t.preload({2: {"host": "a", "worker": "gw1", "entries": [
        {"i": 1, "status": "finding", "claim": "B", "finding": "F"},
        {"i": 3, "status": "claimed", "claim": "C"}]}})
    assert not t.claim("B", "s", "b", "gw0", 5, 4)
    assert t.claim("C", "s", "b", "gw0", 5, 7)          # only skipped before: nobody minimized it
    assert t.snapshot()["B"]["owner"] == {"host": "a", "worker": "gw1", "item": 2, "index": 1}

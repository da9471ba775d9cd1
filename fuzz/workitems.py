"""Work items of a fuzz campaign spread over pytest-xdist workers: the plan, the controller's store.

``pytest --litmus-fuzz=S`` with W workers splits one campaign (seed ``--litmus-seed``) into M work
items (``--litmus-fuzz-items``, default 4 x W and slices of at most 10 minutes; 1 without xdist for up to
10 minutes): item J runs shard J/M (programs
``i % M == J-1``, so no two items share a program) for a time slice of ``S * W / M`` seconds, and
xdist's ``load`` scheduling hands the items out as workers become free. M much larger than the
number of hosts bounds what a lost host costs: the one item each of its workers was running.

The controller keeps the campaign under ``<rootdir>/.scopefuzz-pytest/<name>/`` (``name`` is
``--litmus-campaign``, or ``<backend>-seed<S>-<time>-<pid>`` made once and printed):

- ``plan.json``: the plan (:class:`Plan`); ``--litmus-resume`` must see the same one;
- ``items/item-J.json``: what item J's worker sent home when the item ended (its shard's parameters,
  journal summary, finding records, host, worker, wall time), written atomically as it arrives, so a
  controller killed mid-session keeps every item it received; ``--litmus-resume`` runs only the items
  missing here (on any host: an item's programs are a function of (seed, J, M) alone);
- ``merged/``: every received item merged into one campaign directory (``scopefuzz merge``) with its
  report, rebuilt at each session end; ``fleet.json``: per host and worker, programs, throughput, the
  lost items and why (:func:`fleet_markdown` puts it at the top of the report).

Each item is received once: a second copy of an item (an item re-run after its worker was declared
lost but did report) is ignored, so no program is counted twice.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import asdict, dataclass

from .journal import atomic_write

PLAN = "plan.json"
ITEMS = "items"
MERGED = "merged"
FLEET = "fleet.json"
#: how many work items per worker by default (more items: less lost per host, more overhead)
ITEMS_PER_WORKER = 4
#: the longest default time slice: what a lost worker can cost, and how long the live view may wait
MAX_SLICE = 600.0
#: the pytest item names of fuzz items start with this
FUZZ_PREFIX = "litmus-fuzz["


class PlanError(Exception):
    """A campaign store that cannot be used as asked (one line)."""


@dataclass(frozen=True)
class Plan:
    """One distributed campaign: its name, backend tag, seed, item count and each item's slice."""

    name: str
    backend: str
    seed: int
    items: int
    seconds: float            # each item's time slice
    total: float              # --litmus-fuzz: the campaign's wall-clock seconds at W workers
    workers: int

    def identity(self) -> dict:
        """What ``--litmus-resume`` must match: the programs and the meaning of each item."""
        return {"backend": self.backend, "seed": self.seed, "items": self.items,
                "seconds": self.seconds}

    def item_name(self, j: int) -> str:
        if self.items == 1:
            return f"{FUZZ_PREFIX}{self.seconds:g}s]"
        return f"{FUZZ_PREFIX}{self.seconds:g}s-{j}of{self.items}]"


def item_index(name: str) -> int | None:
    """J of a fuzz item's pytest name or node id (``...litmus-fuzz[2.5s-3of8]`` -> 3; ``[5s]``
    -> 1); None for other items."""
    tail = name.rpartition("::")[2]
    if not tail.startswith(FUZZ_PREFIX):
        return None
    m = re.search(r"-(\d+)of(\d+)\]$", tail)
    return int(m.group(1)) if m else 1


def tag(backend: str) -> str:
    """A backend spec as a file-name part."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", backend)


def make_plan(name: str | None, backend: str, seed: int, total: float, workers: int,
              items: int | None, distributed: bool = True) -> Plan:
    """``distributed``: xdist workers run the items (even one worker may be lost: 4 items); a
    plain session runs one item of up to :data:`MAX_SLICE` seconds."""
    workers = max(1, workers)
    if items is None:
        items = 1 if not distributed and total <= MAX_SLICE else \
            max(ITEMS_PER_WORKER * workers, math.ceil(total * workers / MAX_SLICE))
    if items < 1:
        raise PlanError(f"--litmus-fuzz-items={items}: need at least 1")
    if name is None:
        name = f"{tag(backend)}-seed{seed}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    elif not re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*", name):
        raise PlanError(f"--litmus-campaign={name!r}: use letters, digits, '.', '_' and '-'")
    seconds = round(total * workers / items, 3)
    return Plan(name, backend, seed, items, seconds, total, workers)


def store_dir(rootdir: str, name: str) -> str:
    return os.path.join(rootdir, ".scopefuzz-pytest", name)


def item_path(store: str, j: int) -> str:
    return os.path.join(store, ITEMS, f"item-{j}.json")


def open_store(store: str, plan: Plan, resume: bool) -> Plan:
    """Create the store for ``plan``, or (``resume``) check it holds the same campaign; returns
    the plan to run (on resume, the stored one: its slice and item count)."""
    path = os.path.join(store, PLAN)
    if os.path.exists(path):
        if not resume:
            raise PlanError(f"{store}: already holds campaign {plan.name!r}; add --litmus-resume "
                            "to continue it, or name another --litmus-campaign")
        try:
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise PlanError(f"{path}: unreadable plan: {e}") from None
        mine = plan.identity()
        for k in ("backend", "seed"):
            if old.get(k) != mine[k]:
                raise PlanError(f"{store}: --litmus-resume with {k}={mine[k]!r}, but the campaign "
                                f"was started with {k}={old.get(k)!r}")
        return Plan(plan.name, old["backend"], old["seed"], old["items"], old["seconds"],
                    old["total"], plan.workers)
    if resume:
        raise PlanError(f"{store}: no campaign to resume (no {PLAN}); check --litmus-campaign")
    os.makedirs(os.path.join(store, ITEMS), exist_ok=True)
    atomic_write(path, json.dumps(asdict(plan), indent=1, sort_keys=True) + "\n")
    return plan


def received(store: str) -> dict[int, dict]:
    """The items the store holds, by J (a torn or corrupt file is not an item: it runs again)."""
    out = {}
    d = os.path.join(store, ITEMS)
    if not os.path.isdir(d):
        return out
    for name in os.listdir(d):
        m = re.fullmatch(r"item-(\d+)\.json", name)
        if not m:
            continue
        try:
            with open(os.path.join(d, name), encoding="utf-8") as f:
                out[int(m.group(1))] = json.load(f)
        except (OSError, json.JSONDecodeError):
            continue
    return out


def keep(store: str, j: int, result: dict) -> bool:
    """Store item J's result; False (nothing written) when J is already stored."""
    path = item_path(store, j)
    if os.path.exists(path):
        return False
    atomic_write(path, json.dumps(result, sort_keys=True) + "\n")
    return True


# ------------------------------------------------------------------------------ per host / worker


def tally(results: list[dict]) -> dict:
    """Per host and per worker: items, programs, findings (distinct ids), busy seconds."""
    hosts: dict[str, dict] = {}
    workers: dict[str, dict] = {}
    for r in results:
        for table, key in ((hosts, r.get("host", "?")),
                           (workers, f"{r.get('host', '?')}/{r.get('worker', '?')}")):
            row = table.setdefault(key, {"items": 0, "programs": 0, "seconds": 0.0,
                                         "findings": set()})
            row["items"] += 1
            row["programs"] += r.get("programs", 0)
            row["seconds"] += r.get("seconds", 0.0)
            row["findings"].update(f["id"] for f in r.get("findings", []))
    for table in (hosts, workers):
        for row in table.values():
            row["findings"] = len(row["findings"])
            row["rate"] = round(row["programs"] / row["seconds"], 1) if row["seconds"] else 0.0
            row["seconds"] = round(row["seconds"], 2)
    return {"hosts": hosts, "workers": workers}


def fleet_summary(plan: Plan, results: dict[int, dict], lost: dict[int, str],
                  resume_hint: str, claims: dict[str, dict] | None = None) -> dict:
    """``fleet.json``: the plan, per host and worker, the missing items (lost with their reason,
    or never run), whether the campaign is complete, and the buckets claimed before minimizing
    (``claims``: the controller's claim table, :func:`claim_summary`)."""
    missing = [j for j in range(1, plan.items + 1) if j not in results]
    t = tally([results[j] for j in sorted(results)])
    return {"plan": asdict(plan), "received": len(results), "complete": not missing,
            "lost": [{"item": j, "reason": lost[j]} for j in missing if j in lost],
            "not_run": [j for j in missing if j not in lost],
            "hosts": t["hosts"], "workers": t["workers"],
            "programs": sum(r.get("programs", 0) for r in results.values()),
            "resume": resume_hint if missing else None,
            "claims": claim_summary(results, claims)}


def claim_summary(results: dict[int, dict], table: dict[str, dict] | None = None) -> list[dict]:
    """Per bucket claimed before minimizing (:mod:`fuzz.claims`), from the items received: who
    minimized it (its finding ids), every program that found it (``programs``), those found and
    skipped because another worker held the claim (``skipped``: host, worker, item, program), and
    the claims released by lost claimants (``table``: the controller's claim table)."""
    out: dict[str, dict] = {}

    def row(k: str) -> dict:
        return out.setdefault(k, {"bucket": k, "signature": None, "minimized_by": None,
                                  "findings": [], "programs": 0, "skipped": [], "released": []})
    for j in sorted(results):
        r = results[j]
        for e in r.get("entries", []):
            k = e.get("claim")
            if not k or e.get("status") not in ("finding", "claimed"):
                continue
            b = row(k)
            b["programs"] += 1
            if e["status"] == "finding":          # the claimant minimized it into this finding
                if e.get("finding") and e["finding"] not in b["findings"]:
                    b["findings"].append(e["finding"])
                if b["minimized_by"] is None:
                    b["minimized_by"] = {"host": r.get("host", "?"),
                                         "worker": r.get("worker", "?"), "item": j,
                                         "index": e.get("i")}
            else:
                b["skipped"].append({"host": r.get("host", "?"), "worker": r.get("worker", "?"),
                                     "item": j, "index": e.get("i")})
    for k, t in (table or {}).items():
        if k in out or t.get("released"):
            b = row(k)
            b["signature"] = t.get("signature")
            b["released"] = [{x: o.get(x) for x in ("host", "worker", "item", "why")}
                             for o in t.get("released", [])]
    return [out[k] for k in sorted(out)]


CLAIMS_TITLE = "Findings deduplicated before minimizing"
CLAIMS_TEXT = ("Each bucket was minimized by its first claimant; the other programs that found it "
               "were counted under it and kept as found (sources of its finding).")
CLAIMS_HEAD = ("bucket", "programs", "minimized by", "skipped (host: programs)", "released")


def claim_rows(fleet: dict) -> list[tuple[str, ...]]:
    """One row of cells (:data:`CLAIMS_HEAD`) per bucket claimed across workers."""
    out = []
    for b in fleet.get("claims") or []:
        m = b["minimized_by"]
        who = f"{m['host']}/{m['worker']} item {m['item']}" if m else "nobody (claimant lost)"
        per: dict[str, int] = {}
        for x in b["skipped"]:
            per[x["host"]] = per.get(x["host"], 0) + 1
        skipped = ", ".join(f"{h}: {n}" for h, n in sorted(per.items())) or "-"
        rel = "; ".join(f"{x['worker']} on {x['host']} ({x['why']})" for x in b["released"]) or "-"
        out.append((b["bucket"], str(b["programs"]), who, skipped, rel))
    return out


def claims_markdown(fleet: dict) -> list[str]:
    """The report's lines on buckets claimed across workers (nothing when there are none)."""
    rows = claim_rows(fleet)
    if not rows:
        return []
    return ([f"### {CLAIMS_TITLE}", "", CLAIMS_TEXT, "", "| " + " | ".join(CLAIMS_HEAD) + " |",
             "|---|---:|---|---|---|"]
            + ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows] + [""])


def read_fleet(directory: str) -> dict | None:
    """``fleet.json`` of a merged campaign directory (its parent store's), or None."""
    for path in (os.path.join(directory, FLEET), os.path.join(directory, os.pardir, FLEET)):
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as f:
                    return json.load(f)
            except (OSError, json.JSONDecodeError):
                return None
    return None


def incomplete_line(fleet: dict) -> str | None:
    """The report's top line when work items are missing, else None."""
    if fleet.get("complete", True):
        return None
    p = fleet["plan"]
    lost, never = fleet["lost"], fleet["not_run"]
    return (f"INCOMPLETE: {p['items'] - fleet['received']} of {p['items']} work items missing "
            f"({len(lost)} lost, {len(never)} never run); continue it with: {fleet['resume']}")


def fleet_markdown(fleet: dict) -> list[str]:
    """The report's section on hosts, workers and missing items (markdown lines)."""
    p = fleet["plan"]
    lines = ["## Hosts and work items", "",
             f"Campaign `{p['name']}`: {p['items']} work items of {p['seconds']:g} s "
             f"(shard J/{p['items']} each), {fleet['received']} received, "
             f"{fleet['programs']} programs.", ""]
    for title, table in (("host", fleet["hosts"]), ("worker", fleet["workers"])):
        lines += [f"| {title} | items | programs | busy s | programs/s | findings |",
                  "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {k} | {r['items']} | {r['programs']} | {r['seconds']:g} | {r['rate']:g} | "
                  f"{r['findings']} |" for k, r in sorted(table.items())]
        lines.append("")
    if fleet["lost"] or fleet["not_run"]:
        lines += ["Missing work items:", ""]
        lines += [f"- item {x['item']}: lost: {x['reason']}" for x in fleet["lost"]]
        if fleet["not_run"]:
            lines.append(f"- never run (no worker took them): "
                         f"{', '.join(map(str, fleet['not_run']))}")
        lines.append("")
    return lines + claims_markdown(fleet)


def live_line(plan: Plan, results: dict[int, dict], session: set[int], elapsed: float) -> str:
    """The controller's live line: items, programs/s this session, findings, per host."""
    mine = [results[j] for j in sorted(session) if j in results]
    programs = sum(r.get("programs", 0) for r in mine)
    ids = {f["id"] for r in results.values() for f in r.get("findings", [])}
    # a finding's bucket is the record fuzz.buckets writes: {"id", "signature", ...}
    buckets = {f["bucket"]["id"] for r in results.values() for f in r.get("findings", [])
               if isinstance(f.get("bucket"), dict) and "id" in f["bucket"]}
    hosts = tally(mine)["hosts"]
    per = " | ".join(f"{h}: {r['items']} items {r['programs']} programs "
                     f"{r['programs'] / max(elapsed, 1e-9):.0f}/s"
                     for h, r in sorted(hosts.items()))
    return (f"scopefuzz live: {len(results)}/{plan.items} items, {programs} programs this session "
            f"({programs / max(elapsed, 1e-9):.0f}/s), {len(ids)} finding(s)"
            + (f" in {len(buckets)} bucket(s)" if buckets else "")
            + (f" | {per}" if per else ""))


def fleet_html(fleet: dict | None) -> list[str]:
    """The same section as :func:`fleet_markdown`, in HTML (nothing without a fleet)."""
    if not fleet:
        return []
    import html
    e = html.escape
    out = []
    top = incomplete_line(fleet)
    if top:
        out.append(f'<p class="forbidden">{e(top)}</p>')
    p = fleet["plan"]
    out.append(f'<section id="hosts"><h2>Hosts and work items</h2><p>Campaign '
               f'<code>{e(p["name"])}</code>: {p["items"]} work items of {p["seconds"]:g} s, '
               f'{fleet["received"]} received, {fleet["programs"]} programs.</p>')
    for title, table in (("host", fleet["hosts"]), ("worker", fleet["workers"])):
        out.append(f"<table><tr><th>{title}</th><th>items</th><th>programs</th><th>busy s</th>"
                   "<th>programs/s</th><th>findings</th></tr>")
        out += [f'<tr><td>{e(k)}</td><td class="num">{r["items"]}</td><td class="num">'
                f'{r["programs"]}</td><td class="num">{r["seconds"]:g}</td><td class="num">'
                f'{r["rate"]:g}</td><td class="num">{r["findings"]}</td></tr>'
                for k, r in sorted(table.items())]
        out.append("</table>")
    if fleet["lost"] or fleet["not_run"]:
        out.append("<p>Missing work items:</p><ul>")
        out += [f"<li>item {x['item']}: lost: {e(x['reason'])}</li>" for x in fleet["lost"]]
        if fleet["not_run"]:
            out.append(f"<li>never run: {', '.join(map(str, fleet['not_run']))}</li>")
        out.append("</ul>")
    rows = claim_rows(fleet)
    if rows:
        out.append(f"<h3>{e(CLAIMS_TITLE)}</h3><p>{e(CLAIMS_TEXT)}</p><table><tr>"
                   + "".join(f"<th>{e(h)}</th>" for h in CLAIMS_HEAD) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows]
        out.append("</table>")
    out.append("</section>")
    return out

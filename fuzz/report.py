"""``scopefuzz report DIR``: ``DIR/report.html`` (standard library, inline SVG) and ``DIR/report.md``.

Per finding: the minimized test, the observed histogram against the allowed set, the forbidden
outcome, the oracle's explanation (``oracle.explain``: failed axiom, witness cycle, execution graph
SVG), how often it reproduced, the backend/mutant and the minimization steps. Per campaign: throughput,
coverage of instruction kinds and scope pairs, and a timeline of programs and findings. The journal
is streamed into counters and bounded samples, so a week-long campaign's report needs no more memory
than a minute's.
The Markdown is meant to be pasted into a bug report.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections import Counter
from typing import Callable

import oracle
from litmus.scopes import SCOPES

from .buckets import group
from .campaign import ERRORED, EXECUTED, META
from .coverage import ComboTally
from .finding import Finding
from .findings import (allowed_lines, baseline_text, finding_markdown, histogram_table,
                       load_finding_records, outcome_text, reproduced_text)
from .journal import atomic_write, read_json
from .known import mark_known
from .layout import part_metas, program_entries
from .strategies import ALL_KINDS, ALL_SCOPE_PAIRS
from .weakening_findings import figures_html, figures_markdown, is_weakening, \
    no_counterexample_line, summary_line as weakening_summary
from .workitems import fleet_html, fleet_markdown, incomplete_line, read_fleet


class ReportError(Exception):
    """The directory is not a campaign (one line)."""


# --- gathering ----------------------------------------------------------------------------------

#: bounds of what a report keeps per campaign, whatever the journal's length (aggregates are
#: counters; only these samples keep per-program detail)
TIMELINE_POINTS = 2000      # per part: the cumulative-programs curve, thinned by halving
UNCONFIRMED_SAMPLE = 50     # unconfirmed observations shown in full
ERROR_KINDS = 1000          # distinct error messages counted (the rest as "(other errors)")


class _Part:
    """One campaign part's aggregates, built while the journal streams past."""

    def __init__(self, uid: str, meta: dict):
        self.uid, self.meta = uid, meta
        self.n = 0
        self.status: Counter = Counter()
        self.executions = 0
        self.budget = 0           # programs whose oracle search ran past the campaign's budget
        self.active = 0.0
        self.points: list[tuple[float, int]] = []     # (t, programs so far), every `stride`-th
        self.stride = 1

    def add(self, e: dict) -> None:
        self.n += 1
        st = e.get("status", "?")
        if type(st) is not str:     # a hand-edited line: counted, under "?"
            st = "?"
        self.status[st] += 1
        ex = e.get("executions", 0)
        if type(ex) is int:
            self.executions += ex
        self.budget += bool(e.get("budget"))
        t = e.get("t", 0.0)
        if type(t) is not float and type(t) is not int:
            t = 0.0
        if t > self.active:         # max(), without the call
            self.active = t
        if self.n % self.stride == 0:
            self.points.append((t, self.n))
            if len(self.points) > TIMELINE_POINTS:      # thin: keep every other point
                self.points = self.points[1::2]
                self.stride *= 2

    def finish(self) -> None:
        if self.n and (not self.points or self.points[-1][1] != self.n):
            self.points.append((self.active, self.n))

    # dict-style access for the renderers
    def __getitem__(self, key):
        return {"uid": self.uid, "meta": self.meta, "status": self.status,
                "executions": self.executions, "active": self.active}[key]


def _count_bounded(counter: Counter, msg: str) -> None:
    """Count ``msg``, keeping at most :data:`ERROR_KINDS` distinct messages."""
    if type(msg) is not str:        # a hand-edited line's message: its JSON text
        msg = json.dumps(msg, sort_keys=True)
    counter[msg if msg in counter or len(counter) < ERROR_KINDS else "(other errors)"] += 1


#: campaign.json fields the report prints as text: a damaged file with another type there is named
#: in one line rather than failing deep in the Markdown or HTML writer
META_STRINGS = ("uid", "backend", "model", "shard")


def _check_meta(m, path: str) -> None:
    """A ReportError naming ``path`` when a campaign's parameters are not an object, or one of
    :data:`META_STRINGS` holds something other than a string."""
    if not isinstance(m, dict):
        raise ReportError(f"{path}: a campaign's parameters are {type(m).__name__}, expected an "
                          "object")
    for key in META_STRINGS:
        if m.get(key) is not None and not isinstance(m[key], str):
            raise ReportError(f"{path}: field {key!r} is {type(m[key]).__name__} "
                              f"{json.dumps(m[key])[:60]}, expected a string")


def load_campaign(directory: str, known: list[dict] | None = None) -> dict:
    """Stream the campaign's journal(s) into aggregates (memory bounded by the constants above,
    not by the number of programs) and load its findings, grouped by bucket (``known``: the
    known bugs of :func:`fuzz.known.load_known`, which mark their buckets)."""
    meta_path = os.path.join(directory, META)
    if not os.path.exists(meta_path):
        raise ReportError(f"{directory}: not a campaign directory (no {META})")
    meta = read_json(meta_path, ReportError)
    parts: dict[str, _Part] = {}
    metas = part_metas(meta, directory, ReportError)
    for m in (meta, *metas.values()):
        _check_meta(m, meta_path)
    kinds, pairs, errors, refused = Counter(), Counter(), Counter(), Counter()
    combos = ComboTally(kinds, pairs, lambda k, p: (kinds.update(k), pairs.update(p)))
    unconfirmed: list[dict] = []
    uid, p = None, None
    for e in program_entries(directory, meta, ReportError):   # every part's journals, streamed
        if e["campaign"] != uid:
            uid = e["campaign"]
            p = parts.get(uid)
            if p is None:
                p = parts[uid] = _Part(uid, metas.get(uid, meta))
        p.add(e)
        st = e.get("status")
        if type(st) is not str:     # counted as a program by p.add, nothing else
            continue
        if st in EXECUTED:          # coverage: what ran, not what was drawn
            combos.add(e.get("kinds", []), e.get("pairs", []))
        elif st in ERRORED:
            _count_bounded(errors, e.get("error", ""))
        elif st == "refused":
            _count_bounded(refused, e.get("error", ""))
        if st == "unconfirmed" and len(unconfirmed) < UNCONFIRMED_SAMPLE:
            unconfirmed.append(e)
    combos.flush()
    for p in parts.values():
        p.finish()
    findings = sorted(load_finding_records(directory),     # smallest (most actionable) first
                      key=lambda r: (r.size_after, r.first_seen, r.id))
    return {"dir": directory, "meta": meta, "parts": parts, "kinds": kinds, "pairs": pairs,
            "errors": errors, "refused": refused, "unconfirmed": unconfirmed,
            "findings": findings, "buckets": mark_known(group(findings), known)}


def oracle_explainer(test, outcome):
    """The default explainer: :func:`oracle.explain` under the test's default model."""
    return oracle.explain(test, outcome)


def explain_finding(record: Finding, explainer: Callable | None) -> tuple[str, str]:
    """(text, svg) of ``explainer``'s explanation of the finding's forbidden outcome (an object
    with ``text()`` and ``svg()``, as :func:`oracle.explain` returns); None: no explanation."""
    if explainer is None:
        return "explanation unavailable: no explainer given", ""
    try:
        from litmus import parse
        test = parse(record.test)
        outcome = dict(record.outcome)
        if not outcome:
            raise ValueError("the record names no forbidden outcome")
        ex = explainer(test, outcome)
        text = ex.text()
        try:
            svg = ex.svg()
        except Exception as e:   # drawing is optional; the text is what matters
            svg = ""
            text += f"\n(no drawing: {e})"
        return text, _strip_xml_decl(svg or "")
    except Exception as e:
        first = (str(e).splitlines() or [""])[0]
        return f"explanation unavailable: {type(e).__name__}: {first}", ""


def _strip_xml_decl(svg: str) -> str:
    return re.sub(r"^\s*<\?xml[^>]*>\s*", "", svg)


_SVG_ID = re.compile(r'\bid="([^"]+)"')


def scope_svg_ids(svg: str, prefix: str) -> str:
    """``svg`` with every ``id`` it defines (and every ``url(#id)`` / ``href="#id"`` reference to
    one) prefixed, so that several drawings inlined in one page (each explanation defines its
    own arrow marker) keep distinct ids and each references its own definitions."""
    ids = set(_SVG_ID.findall(svg))
    if not ids:
        return svg

    def ref(m: re.Match) -> str:
        name = m.group(2)
        return f"{m.group(1)}{prefix}{name}" if name in ids else m.group(0)

    svg = _SVG_ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    return re.sub(r'(url\(#|href="#)([^)"]+)', ref, svg)


# --- SVG ----------------------------------------------------------------------------------------

def _programs_at(points: list[tuple[float, int]], t: float) -> float:
    """Programs run by time ``t`` on a part's cumulative curve (linear between its points)."""
    prev = (0.0, 0)
    for pt in points:
        if pt[0] >= t:
            (t0, n0), (t1, n1) = prev, pt
            return n1 if t1 <= t0 else n0 + (n1 - n0) * (t - t0) / (t1 - t0)
        prev = pt
    return prev[1]


def timeline_svg(camp: dict, width: int = 640, height: int = 230) -> str:
    """Cumulative programs over campaign time, one line per part, and one red mark per distinct
    finding, at the time it was first found (``first.t`` of its record) on the curve of the part
    that found it. (Programs whose outcome was forbidden but that repeat a known finding are not
    marked: a campaign finds the same bug many times.) Axis labels and a legend say what is
    drawn."""
    pad_l, pad_b, pad_t, pad_r = 60, 44, 26, 10
    parts = list(camp["parts"].values())
    tmax, nmax = 1e-9, 1
    for p in parts:
        if p.points:
            tmax = max(tmax, max(t for t, _ in p.points))
            nmax = max(nmax, p.points[-1][1])
    marks = []
    for r in camp["findings"]:
        t = r.first_seen
        campaign = r.first.get("campaign")
        part = (camp["parts"].get(campaign) if isinstance(campaign, str) else None) or \
            (parts[0] if len(parts) == 1 else None)
        if part is None:        # a merged record naming no part of this directory
            continue
        tmax = max(tmax, t)
        marks.append((t, _programs_at(part.points, t), r.id, part.uid))
    w, h = width - pad_l - pad_r, height - pad_t - pad_b

    def xy(t, n):
        return pad_l + w * t / tmax, pad_t + h - h * n / nmax

    e = html.escape
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="programs over campaign time, one mark per finding">',
           f'<rect x="{pad_l}" y="{pad_t}" width="{w}" height="{h}" fill="none" stroke="#999"/>',
           f'<text x="{pad_l}" y="{pad_t + h + 14}" font-size="11">0</text>',
           f'<text x="{pad_l + w}" y="{pad_t + h + 14}" font-size="11" text-anchor="end">'
           f'{tmax:.1f}</text>',
           f'<text x="{pad_l + w / 2}" y="{pad_t + h + 30}" font-size="12" text-anchor="middle">'
           f'campaign time (s)</text>',
           f'<text x="{pad_l - 4}" y="{pad_t + 10}" font-size="11" text-anchor="end">{nmax}</text>',
           f'<text x="{pad_l - 4}" y="{pad_t + h}" font-size="11" text-anchor="end">0</text>',
           f'<text x="14" y="{pad_t + h / 2}" font-size="12" text-anchor="middle" '
           f'transform="rotate(-90 14 {pad_t + h / 2})">programs run</text>']
    colors = ["#3366cc", "#109618", "#ff9900", "#990099", "#0099c6", "#dd4477"]
    color_of = {}
    for k, p in enumerate(parts):
        c = color_of[p.uid] = colors[k % len(colors)]
        if not p.points:
            continue
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(t, n) for t, n in [(0.0, 0)] + p.points))
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{path}">'
                   f'<title>{e(p.uid)}</title></polyline>')
    for t, n, fid, uid in marks:
        x, y = xy(t, n)
        out.append(f'<circle class="finding" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#d62728">'
                   f'<title>finding {e(fid)}, first found at {t:.2f} s</title></circle>')
    # the legend: a line per part (named when there are several), the finding mark
    lx = pad_l
    items = [(f"programs run ({p.uid})" if len(parts) > 1 else "programs run", color_of[p.uid])
             for p in parts]
    for name, c in items:
        out.append(f'<line x1="{lx}" y1="{pad_t - 12}" x2="{lx + 18}" y2="{pad_t - 12}" '
                   f'stroke="{c}" stroke-width="1.5"/><text x="{lx + 22}" y="{pad_t - 8}" '
                   f'font-size="11">{e(name)}</text>')
        lx += 30 + 6 * len(name)
    out.append(f'<circle cx="{lx + 4}" cy="{pad_t - 12}" r="4" fill="#d62728"/>'
               f'<text x="{lx + 12}" y="{pad_t - 8}" font-size="11">finding, when first found '
               f'({len(marks)})</text>')
    out.append("</svg>")
    return "\n".join(out)


# --- Markdown -----------------------------------------------------------------------------------

def md_cell(text: str) -> str:
    """``text`` as one Markdown table cell: plain characters (no HTML entities), pipes escaped."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def part_findings(camp: dict, part: dict) -> int:
    """Distinct findings first found by ``part`` (so the column sums to the report's total)."""
    if len(camp["parts"]) == 1:
        return len(camp["findings"])
    return sum(1 for r in camp["findings"] if r.first.get("campaign") == part["uid"])


def _throughput_rows(camp: dict) -> list[str]:
    rows = ["| part | backend | programs | findings | undef | errors | unconfirmed | seconds | "
            "programs/s | executions/s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in camp["parts"].values():
        m, s, t = p["meta"], p["status"], max(p["active"], 1e-9)
        n = p.n
        errs = s["oracle-error"] + s["backend-error"] + s["too-big"]
        rows.append(f"| {p['uid']} | `{m.get('backend', '?')}` | {n} | {part_findings(camp, p)} | "
                    f"{s['undef'] + s['all-undef']} | {errs} | {s['unconfirmed']} | {p['active']:.1f} | "
                    f"{n / t:.1f} | {p['executions'] / t:,.0f} |")
    return rows


def budget_text(camp: dict) -> str:
    """How many programs the oracle could not decide within the campaign's search budget (a
    safety net that no program of the default generator should reach)."""
    n = counts(camp)
    return (f"Oracle search budget: {n['budget']} of {n['programs']} programs reached it "
            f"(journaled as oracle errors, not run).")


def _coverage_lines(camp: dict) -> list[str]:
    k, p = camp["kinds"], camp["pairs"]
    missing_k = [x for x in ALL_KINDS if x not in k]
    lines = [budget_text(camp), "", f"Instruction kinds: {sum(1 for x in ALL_KINDS if x in k)}/{len(ALL_KINDS)}; "
             f"scope pairs: {sum(1 for a, b in ALL_SCOPE_PAIRS if f'{a}/{b}' in p)}/"
             f"{len(ALL_SCOPE_PAIRS)}.", "",
             "| kind | programs |", "|---|---:|"]
    lines += [f"| `{x}` | {k.get(x, 0)} |" for x in ALL_KINDS]
    if missing_k:
        lines += ["", "Never drawn: " + ", ".join(f"`{x}`" for x in missing_k)]
    lines += ["", "| scope pair | programs |", "|---|---:|"]
    lines += [f"| {a}/{b} | {p.get(f'{a}/{b}', 0)} |" for a, b in ALL_SCOPE_PAIRS]
    return lines


def counts(camp: dict) -> dict[str, int]:
    """Programs drawn, executed on the backend, errored, and whose oracle search ran past the
    campaign's budget (counted among the errored), over all parts."""
    n = {"programs": 0, "executed": 0, "errors": 0, "budget": 0}
    for p in camp["parts"].values():
        n["programs"] += p.n
        n["budget"] += p.budget
        n["executed"] += sum(p["status"][s] for s in EXECUTED)
        n["errors"] += sum(p["status"][s] for s in ERRORED)
    return n


def summary_text(camp: dict) -> str:
    """The report's first line: findings, programs drawn, executed and errored."""
    if is_weakening(camp["meta"]):
        return weakening_summary(camp)
    n = counts(camp)
    bs = camp.get("buckets", [])
    known = sum(1 for g in bs if g.get("known"))
    counted = sum(g.get("counted", 0) for g in bs)
    return (f"{len(camp['findings'])} finding(s) in {len(bs)} bucket(s)"
            + (f" ({len(bs) - known} new, {known} known)" if known else "")
            + (f", {counted} more program(s) counted in their bucket without minimizing"
               if counted else "")
            + f"; {n['programs']} programs drawn, "
            f"{n['executed']} executed on the backend, {n['errors']} errored.")


def no_finding_text(camp: dict) -> str:
    """What an empty findings list means: nothing forbidden seen, or nothing run at all."""
    if is_weakening(camp["meta"]):
        return no_counterexample_line(camp)
    n = counts(camp)
    if n["executed"] == 0:
        return ("No program was executed on the backend"
                + (f" ({n['errors']} errored, see Errors)" if n["errors"] else "")
                + ": this campaign tested nothing.")
    text = f"No forbidden outcome was observed in {n['executed']} executed programs."
    if 2 * n["errors"] > n["programs"]:
        text += f" Most programs errored ({n['errors']} of {n['programs']}, see Errors)."
    return text


def _finding_line(r: Finding) -> str:
    return (f"[{r.id}](findings/{r.id}/report.md): `{r.backend}`, "
            f"forbidden `{outcome_text(r.outcome)}`, "
            f"{r.minimize.get('size_after', '?')} instructions"
            + (" (also on the baseline)" if r.baseline.get("forbidden") else ""))


def bucket_markdown(camp: dict) -> list[str]:
    """One row per bucket (new ones first, then known bugs), its findings (forms) folded under
    it."""
    lines = []
    for title, gs in (("New", [g for g in camp["buckets"] if not g.get("known")]),
                      ("Known", [g for g in camp["buckets"] if g.get("known")])):
        if not gs:
            continue
        lines += [f"### {title} bugs ({len(gs)} bucket(s))", "",
                  "| bucket | cause | programs | forms | first program |" +
                  (" known as |" if title == "Known" else ""),
                  "|---|---|---:|---:|---|" + ("---|" if title == "Known" else "")]
        for g in gs:
            first = g["findings"][0]
            row = (f"| {g['id']} | {md_cell(g['signature'])} | {g['count']} | "
                   f"{len(g['findings'])} | [{first.id}](findings/{first.id}/report.md) "
                   f"(program {first.first.get('index')}) |")
            if title == "Known":
                k = g["known"]
                row += f" {md_cell(k['name'])}: " + ", ".join(k.get("links", [])) + " |"
            lines.append(row)
        lines.append("")
        for g in gs:
            lines += [f"- bucket {g['id']} ({len(g['findings'])} form(s)):"]
            lines += [f"  - {_finding_line(r)}" for r in g["findings"]]
        lines.append("")
    return lines


def campaign_markdown(camp: dict, explanations: dict[str, tuple[str, str]]) -> str:
    fs = camp["findings"]
    lines = [f"# scopefuzz campaign report: {camp['dir']}", ""]
    fleet = read_fleet(camp["dir"])          # a campaign gathered from xdist work items
    top = incomplete_line(fleet) if fleet else None
    lines += [f"**{top}**", ""] if top else []
    lines += [summary_text(camp), ""] + (fleet_markdown(fleet) if fleet else []) + ["## Findings", ""]
    if not fs:
        lines += [no_finding_text(camp), ""]
    lines += bucket_markdown(camp)
    for r in fs:
        body = finding_markdown(r, explanations.get(r.id, ("", ""))[0])
        lines += ["#" + line if line.startswith("#") else line for line in body.splitlines()]
        lines.append("")
    lines += ["## Throughput", ""] + _throughput_rows(camp) + [""]
    if is_weakening(camp["meta"]):      # judged Tile IR programs: figures, no kinds drawn
        lines += ["## Strict-weakening figures", ""] + figures_markdown(camp) + [""]
    else:
        lines += ["## Coverage", ""] + _coverage_lines(camp) + [""]
    if camp["unconfirmed"]:
        lines += ["## Unconfirmed observations", "",
                  "Forbidden outcomes seen once and not again on a re-run (kept here, not lost):", ""]
        for e in camp["unconfirmed"]:
            lines += [f"- program {e['i']} ({e.get('name')}): "
                      + "; ".join(f"`{outcome_text(o)}`" for o in e.get("forbidden", [])),
                      "", "```", e.get("test", "").rstrip("\n"), "```", ""]
    if camp["errors"]:
        lines += ["## Errors", "", "| error | programs |", "|---|---:|"]
        lines += [f"| {md_cell(msg)} | {n} |" for msg, n in camp["errors"].most_common(20)]
        lines.append("")
    if camp["refused"]:
        lines += ["## Refused programs", "", f"{sum(camp['refused'].values())} programs the "
                  "backend cannot express (not run):", "", "| reason | programs |", "|---|---:|"]
        lines += [f"| {md_cell(msg)} | {n} |" for msg, n in camp["refused"].most_common(20)]
        lines.append("")
    return "\n".join(lines) + "\n"


# --- HTML ---------------------------------------------------------------------------------------

_CSS = """body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto}
pre.explanation{white-space:pre-wrap;overflow-wrap:anywhere}
div.graph{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 8px;font-size:90%}td.num{text-align:right}
.forbidden{color:#b00;font-weight:bold}section.finding{border-top:2px solid #888;margin-top:1.5em}
.cov0{background:#fdd}.cov1{background:#dfd}"""


def inline_code(text: str) -> str:
    """Markdown text with `inline code` as HTML: escaped, each backtick pair a ``<code>``."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:        # an unpaired backtick: leave it as a character
        return html.escape(text)
    return "".join(f"<code>{html.escape(x)}</code>" if k % 2 else html.escape(x)
                   for k, x in enumerate(pieces))


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in r)
                   + "</tr>" for r in rows)
    return f'<table class="{cls}"><tr>{h}</tr>{body}</table>'


def _finding_html(r: Finding, text: str, svg: str) -> str:
    if r.kind == "compiler":                      # fuzz --compile: checked, not run
        from .compile_findings import compiler_html
        return compiler_html(r)
    if r.kind == "weakening":                     # fuzz --against: two models, no backend
        from .weakening_findings import weakening_html
        return weakening_html(r)
    e = html.escape
    rows = []
    for hrow in r.histogram:
        mark = ("allowed" if hrow.get("allowed") else '<span class="forbidden">FORBIDDEN</span>')
        rows.append([f"<code>{e(outcome_text(hrow.get('outcome') or {}))}</code>",
                     f'<td class="num">{hrow.get("count")}</td>', mark])
    allowed = "\n".join(line.strip() for line in allowed_lines(r))
    m = r.minimize
    tool = r.tool
    parts = [
        f'<section class="finding" id="f-{e(r.id)}"><h2>Finding {e(r.id)}</h2>',
        "<ul>",
        f"<li>backend: <code>{e(r.backend)}</code>"
        + (f" (mutant <code>{e(r.mutant)}</code>)" if r.mutant else "") + "</li>",
        f"<li>forbidden outcome: <code class=\"forbidden\">"
        f"{e(outcome_text(r.outcome))}</code></li>",
        f"<li>reproduced: {e(reproduced_text(r))}</li>",
        (f"<li>reproduce (in findings/{e(r.id)}/): <code>{e(str(r.reproduce.get('command')))}</code>"
         f" with scopefuzz {e(str(tool.get('version', '?')))}"
         + (f" (git {e(str(tool['git']))})" if tool.get("git") else "")
         + "</li>") if r.reproduce else "",
        f"<li>{inline_code(baseline_text(r)[2:])}</li>" if baseline_text(r) else "",
        f"<li>minimized from {m.get('size_before')} to {m.get('size_after')} instructions</li>",
        "</ul>",
        "<h3>Minimized test</h3>", f'<pre class="litmus">{e(r.test)}</pre>',
        f"<h3>Observed ({r.iterations} iterations)</h3>",
        _table(["outcome", "count", "model"], rows, "histogram"),
        "<h3>Allowed by the model</h3>", f"<pre>{e(allowed)}</pre>",
        "<h3>Why the model forbids it</h3>", f'<pre class="explanation">{e(text)}</pre>',
    ]
    if svg:
        parts.append(f'<div class="graph">{svg}</div>')
    if r.steps:
        parts.append(f"<h3>Minimization</h3><p>{e('; '.join(r.steps))}</p>")
    if r.evidence:
        parts.append(f"<details open><summary>Backend evidence (compiled code)</summary>"
                     f"<pre>{e(r.evidence)}</pre></details>")
    parts += [f"<details><summary>Original program</summary><pre>{e(r.original)}</pre>"
              "</details>", "</section>"]
    return "\n".join(parts)


def campaign_html(camp: dict, explanations: dict[str, tuple[str, str]]) -> str:
    e = html.escape
    fs = camp["findings"]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>scopefuzz report: {e(camp['dir'])}</title><style>{_CSS}</style></head><body>",
           f"<h1>scopefuzz campaign report</h1><p>{e(camp['dir'])}: {e(summary_text(camp))}</p>",
           *fleet_html(read_fleet(camp["dir"])),
           '<section id="summary"><h2>Findings</h2>']
    if fs:
        for title, gs in (("New", [g for g in camp["buckets"] if not g.get("known")]),
                          ("Known", [g for g in camp["buckets"] if g.get("known")])):
            if not gs:
                continue
            rows = []
            for g in gs:
                forms = "".join(
                    f'<li><a href="#f-{e(r.id)}">{e(r.id)}</a>: <code>{e(r.backend)}'
                    f'</code>, forbidden <code>{e(outcome_text(r.outcome))}'
                    f'</code></li>' for r in g["findings"])
                k = g.get("known")
                rows.append([e(g["id"]), f"<code>{e(g['signature'])}</code>"
                             + (f"<br>known: {e(k['name'])} "
                                + " ".join(f'<a href="{e(u)}">{e(u)}</a>' for u in k.get("links", []))
                                if k else ""),
                             f'<td class="num">{g["count"]}</td>',
                             f"<details><summary>{len(g['findings'])} form(s)</summary>"
                             f"<ul>{forms}</ul></details>"])
            out.append(f"<h3>{title} bugs ({len(gs)} bucket(s))</h3>"
                       + _table(["bucket", "cause", "programs", "forms"], rows, "buckets"))
    else:
        out.append(f"<p>{e(no_finding_text(camp))}</p>")
    out.append("</section>")
    for r in fs:
        text, svg = explanations.get(r.id, ("", ""))
        out.append(_finding_html(r, text, scope_svg_ids(svg, f"f-{r.id}-")))
    # throughput
    rows = []
    for p in camp["parts"].values():
        s, t = p["status"], max(p["active"], 1e-9)
        n = p.n
        rows.append([e(p["uid"]), f"<code>{e(p['meta'].get('backend', '?'))}</code>",
                     f'<td class="num">{n}</td>', f'<td class="num">{part_findings(camp, p)}</td>',
                     f'<td class="num">{s["undef"] + s["all-undef"]}</td>',
                     f'<td class="num">{s["oracle-error"] + s["backend-error"] + s["too-big"]}</td>',
                     f'<td class="num">{p["active"]:.1f}</td>', f'<td class="num">{n / t:.1f}</td>',
                     f'<td class="num">{p["executions"] / t:,.0f}</td>'])
    out.append('<section id="throughput"><h2>Throughput</h2>' + _table(
        ["part", "backend", "programs", "findings", "undef", "errors", "seconds", "programs/s",
         "executions/s"], rows) + "</section>")
    out.append('<section id="timeline"><h2>Timeline</h2>' + timeline_svg(camp) + "</section>")
    if is_weakening(camp["meta"]):
        out.append('<section id="figures"><h2>Strict-weakening figures</h2>'
                   + figures_html(camp) + "</section>")
    k, p = camp["kinds"], camp["pairs"]
    krows = [[f"<code>{e(x)}</code>", f'<td class="num cov{int(bool(k.get(x)))}">{k.get(x, 0)}</td>']
             for x in ALL_KINDS]
    grid = []
    for a in SCOPES:
        row = [e(a)]
        for b in SCOPES:
            lo, hi = (a, b) if SCOPES.index(a) <= SCOPES.index(b) else (b, a)
            n = p.get(f"{lo}/{hi}", 0)
            row.append(f'<td class="num cov{int(bool(n))}">{n}</td>')
        grid.append(row)
    out.append("" if is_weakening(camp["meta"]) else '<section id="coverage"><h2>Coverage</h2>'
               + f"<p>{e(budget_text(camp))}</p>"
               + _table(["kind", "programs"], krows, "kinds")
               + "<p>Scope pairs (scoped operations of two threads):</p>"
               + _table(["scope"] + list(SCOPES), grid, "pairs") + "</section>")
    if camp["unconfirmed"]:
        out.append('<section id="unconfirmed"><h2>Unconfirmed observations</h2>' + "".join(
            f"<p>program {x['i']}: " + "; ".join(f"<code>{e(outcome_text(o))}</code>"
                                                for o in x.get("forbidden", []))
            + f"</p><pre>{e(x.get('test', ''))}</pre>" for x in camp["unconfirmed"]) + "</section>")
    if camp["errors"]:
        out.append('<section id="errors"><h2>Errors</h2>' + _table(
            ["error", "programs"], [[e(m), f'<td class="num">{n}</td>']
                                    for m, n in camp["errors"].most_common(20)]) + "</section>")
    if camp["refused"]:
        out.append('<section id="refused"><h2>Refused programs (not expressible)</h2>' + _table(
            ["reason", "programs"], [[e(m), f'<td class="num">{n}</td>']
                                     for m, n in camp["refused"].most_common(20)]) + "</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def build_report(directory: str,
                 explainer: Callable | None = oracle_explainer,
                 known: list[dict] | None = None) -> tuple[str, str]:
    """Write ``report.html`` and ``report.md`` into ``directory``; returns their paths
    (``known``: known bugs, :func:`fuzz.known.load_known`)."""
    camp = load_campaign(directory, known)
    # (a strict-weakening counterexample carries both models' explanations: none is computed)
    explanations = {r.id: explain_finding(r, explainer) for r in camp["findings"]
                    if r.kind != "weakening"}
    md = os.path.join(directory, "report.md")
    page = os.path.join(directory, "report.html")
    atomic_write(md, campaign_markdown(camp, explanations))
    atomic_write(page, campaign_html(camp, explanations))
    return page, md

"""A strict-weakening counterexample written up (``finding.json`` with ``kind: weakening``,
fuzz/weakening_campaign.py), and the campaign-level lines of a weakening campaign's report.

A counterexample is not a run on a backend but two exhaustive checks: the Tile IR model forbids an
outcome that the PTX model allows for the lowered program. Its page names the models, the bucket
(the Tile IR check that forbids the outcome), the outcomes, the Tile IR program, the lowered PTX
program and both sides' explanation (:func:`fuzz.weakening.explain_counterexample`, stored in the
record: the report does not recompute it). :func:`fuzz.findings.finding_markdown` and the report's
HTML call these for such records; the report's summary, empty-findings line and figures section
call :func:`summary_line`, :func:`no_counterexample_line` and :func:`figures_markdown` /
:func:`figures_html` for a campaign whose ``campaign.json`` is a weakening campaign's
(:func:`is_weakening`): its programs are judged, not executed, and draw no instruction kinds.
"""

from __future__ import annotations

import html

#: the ``backend`` of a weakening campaign in ``campaign.json``: ``against:MODEL``
PREFIX = "against:"
#: journal statuses of the programs the Tile IR model finds race-free (judged)
JUDGED = ("holds", "counterexample")


def is_weakening(meta: dict | None) -> bool:
    """Is ``meta`` (``campaign.json``) a strict-weakening campaign's?"""
    return isinstance(meta, dict) and str(meta.get("backend", "")).startswith(PREFIX)


def _outcome(o: dict) -> str:
    return " ".join(f"{k}={v};" for k, v in o.items())


def _block(title: str, text: str) -> list[str]:
    return [f"## {title}", "", "```", (text or "").rstrip("\n"), "```", ""]


def weakening_markdown(record: dict, explanation: str | None = None) -> str:
    """The counterexample as Markdown (``explanation``, the report's own, is not used: the
    record holds both sides' explanation under its models)."""
    b = record.get("bucket") or {}
    m = record.get("minimize") or {}
    fst = record.get("first") or {}
    model, against = record.get("model", "tileir"), record.get("against", "ptx")
    lines = [
        f"# Finding {record['id']}: `{against}` allows an outcome `{model}` forbids "
        f"(strict weakening broken)",
        "",
        f"- models: Tile IR `{model}`, PTX `{against}` (the program lowered by "
        "litmus/mappings/tileir_ptx.py)",
        f"- bucket {b.get('id', '?')}: {b.get('signature', '?')}",
        f"- {len(record.get('forbidden', []))} PTX outcome(s) the Tile IR model forbids: "
        + "; ".join(f"`{_outcome(f['outcome'])}`" for f in record.get("forbidden", [])),
        f"- found by {len(record.get('sources', []))} program(s); first: campaign seed "
        f"{record.get('campaign_seed')}, program {fst.get('index')} ({fst.get('name', '?')})",
        f"- minimized from {m.get('size_before', '?')} to {m.get('size_after', '?')} ops "
        f"in {m.get('seconds', '?')} s; also in counterexamples/{record.get('counterexample')}/",
        "",
    ]
    lines += _block(f"Tile IR program ({model})", record["test"])
    lines += _block(f"Lowered PTX program ({against})", record.get("ptx", ""))
    if record.get("reproduce"):
        lines += ["## Reproduce", "", "In the finding's directory:", "", "```",
                  record["reproduce"]["command"], "```", ""]
    lines += _block("Explanation: both sides", record.get("explanation", ""))
    lines += _block("Original program", record.get("original", ""))
    return "\n".join(lines) + "\n"


def weakening_html(record: dict) -> str:
    """The counterexample as an HTML section of the campaign report."""
    e = html.escape
    b = record.get("bucket") or {}
    m = record.get("minimize") or {}
    fst = record.get("first") or {}
    model, against = record.get("model", "tileir"), record.get("against", "ptx")
    return "\n".join([
        f'<section class="finding" id="f-{e(record["id"])}"><h2>Finding {e(record["id"])}: '
        f"<code>{e(against)}</code> allows an outcome <code>{e(model)}</code> forbids</h2>",
        "<ul>",
        f"<li>models: Tile IR <code>{e(model)}</code>, PTX <code>{e(against)}</code></li>",
        f"<li>bucket {e(b.get('id', '?'))}: <code>{e(b.get('signature', '?'))}</code></li>",
        "<li>PTX outcomes the Tile IR model forbids: "
        + "; ".join(f'<code class="forbidden">{e(_outcome(f["outcome"]))}</code>'
                    for f in record.get("forbidden", [])) + "</li>",
        f"<li>found by {len(record.get('sources', []))} program(s); first: program "
        f"{e(str(fst.get('index')))} ({e(str(fst.get('name', '?')))})</li>",
        f"<li>minimized from {m.get('size_before')} to {m.get('size_after')} ops; "
        f"counterexamples/{e(str(record.get('counterexample')))}/</li>",
        (f"<li>reproduce (in findings/{e(record['id'])}/): "
         f"<code>{e(record['reproduce']['command'])}</code></li>") if record.get("reproduce")
        else "",
        "</ul>",
        f"<h3>Tile IR program ({e(model)})</h3>", f'<pre class="litmus">{e(record["test"])}</pre>',
        f"<h3>Lowered PTX program ({e(against)})</h3>",
        f'<pre class="litmus">{e(record.get("ptx", ""))}</pre>',
        "<h3>Explanation: both sides</h3>",
        f'<pre class="explanation">{e(record.get("explanation", ""))}</pre>',
        f"<details><summary>Original program</summary><pre>{e(record.get('original', ''))}</pre>"
        "</details>", "</section>",
    ])


def figures(camp: dict) -> dict[str, int]:
    """Programs, race-free (judged), racy, over the search budget, over every part."""
    n = {"programs": 0, "race_free": 0, "racy": 0, "over_budget": 0}
    for p in camp["parts"].values():
        s = p["status"]
        n["programs"] += p.n
        n["race_free"] += sum(s[x] for x in JUDGED)
        n["racy"] += s["racy"]
        n["over_budget"] += s["oracle-error"]
    return n


def summary_line(camp: dict) -> str:
    """The report's first line for a weakening campaign."""
    n = figures(camp)
    return (f"{len(camp['findings'])} counterexample(s) in {len(camp.get('buckets', []))} "
            f"bucket(s); {n['programs']} programs drawn, {n['race_free']} race-free and judged, "
            f"{n['racy']} racy (skipped), {n['over_budget']} over the search budget.")


def no_counterexample_line(camp: dict) -> str:
    n = figures(camp)
    if n["race_free"] == 0:
        return "No race-free program was judged: this campaign tested nothing."
    return (f"No counterexample: on {n['race_free']} race-free programs every outcome the PTX "
            "model allows for the lowered program is allowed by the Tile IR model.")


def _rows(camp: dict) -> list[list]:
    out = []
    for p in camp["parts"].values():
        s, t = p["status"], max(p["active"], 1e-9)
        out.append([p["uid"], p.n, sum(s[x] for x in JUDGED), s["racy"], s["oracle-error"],
                    s["counterexample"], f"{p['active']:.1f}", f"{p.n / t:.1f}"])
    return out


HEAD = ["part", "programs", "race-free", "racy", "over budget", "counterexample programs",
        "seconds", "programs/s"]


def figures_markdown(camp: dict) -> list[str]:
    """The figures section's lines (in place of coverage: Tile IR programs draw no kinds)."""
    lines = ["| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * (len(HEAD) - 1)]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in _rows(camp)]
    return lines


def figures_html(camp: dict) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in HEAD)
    body = "".join("<tr>" + "".join(f"<td>{e(str(x))}</td>" for x in r) + "</tr>"
                   for r in _rows(camp))
    return f'<table class="weakening"><tr>{head}</tr>{body}</table>'

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

from .finding import Finding, as_finding

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


def _head(f: Finding) -> tuple[dict, dict, dict, str, str]:
    return f.bucket, f.minimize, f.first, f.model or "tileir", f.against


def weakening_markdown(record: Finding | dict, explanation: str | None = None) -> str:
    """The counterexample as Markdown (``explanation``, the report's own, is not used: the
    record holds both sides' explanation under its models)."""
    f = as_finding(record)
    b, m, fst, model, against = _head(f)
    lines = [
        f"# Finding {f.id}: `{against}` allows an outcome `{model}` forbids "
        f"(strict weakening broken)",
        "",
        f"- models: Tile IR `{model}`, PTX `{against}` (the program lowered by "
        "litmus/mappings/tileir_ptx.py)",
        f"- bucket {b.get('id', '?')}: {b.get('signature', '?')}",
        f"- {len(f.forbidden)} PTX outcome(s) the Tile IR model forbids: "
        + "; ".join(f"`{_outcome(o.get('outcome') or {})}`" for o in f.forbidden),
        f"- found by {len(f.sources)} program(s); first: campaign seed "
        f"{f.campaign_seed}, program {fst.get('index')} ({fst.get('name', '?')})",
        f"- minimized from {m.get('size_before', '?')} to {m.get('size_after', '?')} ops "
        f"in {m.get('seconds', '?')} s; also in counterexamples/{f.counterexample}/",
        "",
    ]
    lines += _block(f"Tile IR program ({model})", f.test)
    lines += _block(f"Lowered PTX program ({against})", f.ptx)
    if f.reproduce:
        lines += ["## Reproduce", "", "In the finding's directory:", "", "```",
                  str(f.reproduce.get("command")), "```", ""]
    lines += _block("Explanation: both sides", f.explanation)
    lines += _block("Original program", f.original)
    return "\n".join(lines) + "\n"


def weakening_html(record: Finding | dict) -> str:
    """The counterexample as an HTML section of the campaign report."""
    e = html.escape
    f = as_finding(record)
    b, m, fst, model, against = _head(f)
    return "\n".join([
        f'<section class="finding" id="f-{e(f.id)}"><h2>Finding {e(f.id)}: '
        f"<code>{e(against)}</code> allows an outcome <code>{e(model)}</code> forbids</h2>",
        "<ul>",
        f"<li>models: Tile IR <code>{e(model)}</code>, PTX <code>{e(against)}</code></li>",
        f"<li>bucket {e(str(b.get('id', '?')))}: <code>{e(str(b.get('signature', '?')))}</code></li>",
        "<li>PTX outcomes the Tile IR model forbids: "
        + "; ".join(f'<code class="forbidden">{e(_outcome(o.get("outcome") or {}))}</code>'
                    for o in f.forbidden) + "</li>",
        f"<li>found by {len(f.sources)} program(s); first: program "
        f"{e(str(fst.get('index')))} ({e(str(fst.get('name', '?')))})</li>",
        f"<li>minimized from {m.get('size_before')} to {m.get('size_after')} ops; "
        f"counterexamples/{e(str(f.counterexample))}/</li>",
        (f"<li>reproduce (in findings/{e(f.id)}/): "
         f"<code>{e(str(f.reproduce.get('command')))}</code></li>") if f.reproduce else "",
        "</ul>",
        f"<h3>Tile IR program ({e(model)})</h3>", f'<pre class="litmus">{e(f.test)}</pre>',
        f"<h3>Lowered PTX program ({e(against)})</h3>",
        f'<pre class="litmus">{e(f.ptx)}</pre>',
        "<h3>Explanation: both sides</h3>",
        f'<pre class="explanation">{e(f.explanation)}</pre>',
        f"<details><summary>Original program</summary><pre>{e(f.original)}</pre>"
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

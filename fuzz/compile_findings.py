"""A compiler finding written up (``finding.json`` with ``kind: compiler``, fuzz/compilers_campaign.py).

The backend findings' page (histogram, re-runs) does not fit a compiled program, which is not run
but checked exhaustively: the report of a compiler finding names the compiler command and version,
the bucket (the PTX instruction that fails to carry the source's order or scope), the source
program, the extra outcomes, the marked PTX rows with their kernel lines, both models'
explanations (:func:`fuzz.compilers.explain_counterexample`), the kernel given to the compiler and
the PTX. :func:`fuzz.findings.finding_markdown` and the report's HTML call these for such records.
"""

from __future__ import annotations

import html


def _outcome(o: dict) -> str:
    return " ".join(f"{k}={v};" for k, v in o.items())


def _lost(record: dict) -> list[str]:
    out = []
    for w in (record.get("bucket") or {}).get("weakened", []):
        ptx = w.get("ptx") or {}
        out.append(f"P{w['thread']} {w['kind']} ({w['source']}, kernel line {w['source_line']}) "
                   f"-> `{ptx.get('text', '(none)')}` (PTX line {ptx.get('line', '-')}): "
                   + "; ".join(w["lost"]))
    return out


def compiler_markdown(record: dict, explanation: str | None = None) -> str:
    """The finding as Markdown, paste-ready for an upstream issue."""
    b = record.get("bucket") or {}
    m = record.get("minimize", {})
    base = record.get("baseline") or {}
    fst = record.get("first") or {}
    lines = [
        f"# Finding {record['id']}: `{record['compiler']}` compiles a program outside the "
        f"{record.get('model', 'source')} model",
        "",
        f"- compiler: `{record['compiler']}`"
        + (f" with PTX mutant `{record['mutant']}`" if record.get("mutant") else ""),
        f"- version: {record.get('version', '?')}",
        f"- command: `{' && '.join(record.get('command') or [])}`",
        f"- bucket {b.get('id', '?')}: {b.get('signature', '?')}",
        f"- source dialect {str(record.get('source_dialect', '?')).upper()}, source model "
        f"`{record.get('model')}`, target model `ptx`",
        f"- PTX outcomes the source model forbids: "
        + "; ".join(f"`{_outcome(f['outcome'])}`" for f in record.get("forbidden", [])),
        f"- found by {len(record.get('sources', []))} program(s); first: campaign seed "
        f"{record.get('campaign_seed')}, program {fst.get('index')}",
        f"- minimized from {m.get('size_before', '?')} to {m.get('size_after', '?')} operations "
        f"({m.get('accepted', 0)} reductions of {m.get('tried', 0)} tried)",
    ]
    if base:
        lines.append(f"- baseline (the real PTX, no mutant): "
                     + ("escapes too: not the planted bug's alone" if base.get("forbidden")
                        else "holds (the finding is the mutant's)"))
    lost = _lost(record)
    if lost:
        lines += ["", "## Instructions weaker than their source operation", ""]
        lines += [f"- {x}" for x in lost]
    lines += ["", "## Source", "", "```", record["test"].rstrip("\n"), "```", ""]
    if record.get("reproduce"):
        lines += ["## Reproduce", "", "In the finding's directory:", "", "```",
                  record["reproduce"]["command"], "```", ""]
    lines += ["## PTX rows (marked) and their kernel lines", "", "```",
              *record.get("marked", []), "```", ""]
    lines += ["## Check: both sides", "", "```", record.get("check", "").rstrip("\n"), "```", ""]
    lines += ["## Kernel given to the compiler", "", "```",
              record.get("kernel_source", "").rstrip("\n"), "```", ""]
    lines += ["## PTX", "", "<details><summary>PTX</summary>", "", "```",
              record.get("ptx", "").rstrip("\n"), "```", "", "</details>", ""]
    if m.get("steps"):
        lines += ["## Minimization", "", "; ".join(m["steps"]), ""]
    lines += ["## Original program", "", "```", record.get("original", "").rstrip("\n"), "```", ""]
    return "\n".join(lines) + "\n"


def compiler_html(record: dict) -> str:
    """The finding as an HTML section of the campaign report."""
    e = html.escape
    b = record.get("bucket") or {}
    m = record.get("minimize", {})
    lost = "".join(f"<li>{e(x)}</li>" for x in _lost(record))
    parts = [
        f'<section class="finding" id="f-{e(record["id"])}"><h2>Finding {e(record["id"])}</h2>',
        "<ul>",
        f"<li>compiler: <code>{e(record['compiler'])}</code>"
        + (f" (PTX mutant <code>{e(record['mutant'])}</code>)" if record.get("mutant") else "")
        + f", {e(str(record.get('version', '?')))}</li>",
        f"<li>command: <code>{e(' && '.join(record.get('command') or []))}</code></li>",
        f"<li>bucket {e(b.get('id', '?'))}: <code>{e(b.get('signature', '?'))}</code></li>",
        "<li>PTX outcomes the source model (" + e(str(record.get("model"))) + ") forbids: "
        + "; ".join(f'<code class="forbidden">{e(_outcome(f["outcome"]))}</code>'
                    for f in record.get("forbidden", [])) + "</li>",
        f"<li>minimized from {m.get('size_before')} to {m.get('size_after')} operations</li>",
        "</ul>",
    ]
    if lost:
        parts.append(f"<h3>Instructions weaker than their source operation</h3><ul>{lost}</ul>")
    parts += [
        "<h3>Source</h3>", f'<pre class="litmus">{e(record["test"])}</pre>',
        "<h3>PTX rows (marked) and kernel lines</h3>",
        f"<pre>{e(chr(10).join(record.get('marked', [])))}</pre>",
        "<h3>Check: both sides</h3>", f'<pre class="explanation">{e(record.get("check", ""))}</pre>',
        f"<details><summary>Kernel given to the compiler</summary>"
        f"<pre>{e(record.get('kernel_source', ''))}</pre></details>",
        f"<details><summary>PTX</summary><pre>{e(record.get('ptx', ''))}</pre></details>",
        f"<details><summary>Original program</summary><pre>{e(record.get('original', ''))}</pre>"
        "</details>", "</section>",
    ]
    return "\n".join(parts)

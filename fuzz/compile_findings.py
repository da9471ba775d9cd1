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

from .finding import Finding, as_finding


def _outcome(o: dict) -> str:
    return " ".join(f"{k}={v};" for k, v in o.items())


def _forbidden(f: Finding) -> list[dict]:
    """The forbidden outcomes, each a dict (a damaged entry reads as no outcome)."""
    return [(x.get("outcome") if isinstance(x, dict) and isinstance(x.get("outcome"), dict) else {})
            for x in (f.forbidden if isinstance(f.forbidden, list) else [])]


def _lost(f: Finding) -> list[str]:
    out = []
    weakened = f.bucket.get("weakened")
    for w in weakened if isinstance(weakened, list) else []:
        if not isinstance(w, dict):
            continue
        ptx = w.get("ptx") if isinstance(w.get("ptx"), dict) else {}
        lost = w.get("lost") if isinstance(w.get("lost"), list) else []
        out.append(f"P{w.get('thread')} {w.get('kind')} ({w.get('source')}, kernel line "
                   f"{w.get('source_line')}) -> `{ptx.get('text', '(none)')}` (PTX line "
                   f"{ptx.get('line', '-')}): " + "; ".join(str(x) for x in lost))
    return out


def compiler_markdown(record: Finding | dict, explanation: str | None = None) -> str:
    """The finding as Markdown, paste-ready for an upstream issue."""
    f = as_finding(record)
    b = f.bucket
    m = f.minimize
    base = f.baseline
    fst = f.first
    model = f.model if f.model is not None else "source"
    lines = [
        f"# Finding {f.id}: `{f.compiler}` compiles a program outside the "
        f"{model} model",
        "",
        f"- compiler: `{f.compiler}`"
        + (f" with PTX mutant `{f.mutant}`" if f.mutant else ""),
        f"- version: {f.version if f.version is not None else '?'}",
        f"- command: `{' && '.join(f.command)}`",
        f"- bucket {b.get('id', '?')}: {b.get('signature', '?')}",
        f"- source dialect {f.source_dialect.upper()}, source model "
        f"`{f.model}`, target model `ptx`",
        f"- PTX outcomes the source model forbids: "
        + "; ".join(f"`{_outcome(o)}`" for o in _forbidden(f)),
        f"- found by {len(f.sources)} program(s); first: campaign seed "
        f"{f.campaign_seed}, program {fst.get('index')}",
        f"- minimized from {m.get('size_before', '?')} to {m.get('size_after', '?')} operations "
        f"({m.get('accepted', 0)} reductions of {m.get('tried', 0)} tried)",
    ]
    if base:
        lines.append(f"- baseline (the real PTX, no mutant): "
                     + ("escapes too: not the planted bug's alone" if base.get("forbidden")
                        else "holds (the finding is the mutant's)"))
    lost = _lost(f)
    if lost:
        lines += ["", "## Instructions weaker than their source operation", ""]
        lines += [f"- {x}" for x in lost]
    lines += ["", "## Source", "", "```", f.test.rstrip("\n"), "```", ""]
    if f.reproduce:
        lines += ["## Reproduce", "", "In the finding's directory:", "", "```",
                  str(f.reproduce.get("command")), "```", ""]
    lines += ["## PTX rows (marked) and their kernel lines", "", "```",
              *f.marked, "```", ""]
    lines += ["## Check: both sides", "", "```", f.check.rstrip("\n"), "```", ""]
    lines += ["## Kernel given to the compiler", "", "```",
              f.kernel_source.rstrip("\n"), "```", ""]
    lines += ["## PTX", "", "<details><summary>PTX</summary>", "", "```",
              f.ptx.rstrip("\n"), "```", "", "</details>", ""]
    if f.steps:
        lines += ["## Minimization", "", "; ".join(f.steps), ""]
    lines += ["## Original program", "", "```", f.original.rstrip("\n"), "```", ""]
    return "\n".join(lines) + "\n"


def compiler_html(record: Finding | dict) -> str:
    """The finding as an HTML section of the campaign report."""
    e = html.escape
    f = as_finding(record)
    b = f.bucket
    m = f.minimize
    lost = "".join(f"<li>{e(x)}</li>" for x in _lost(f))
    parts = [
        f'<section class="finding" id="f-{e(f.id)}"><h2>Finding {e(f.id)}</h2>',
        "<ul>",
        f"<li>compiler: <code>{e(f.compiler)}</code>"
        + (f" (PTX mutant <code>{e(f.mutant)}</code>)" if f.mutant else "")
        + f", {e(f.version if f.version is not None else '?')}</li>",
        f"<li>command: <code>{e(' && '.join(f.command))}</code></li>",
        f"<li>bucket {e(str(b.get('id', '?')))}: <code>{e(str(b.get('signature', '?')))}</code></li>",
        "<li>PTX outcomes the source model (" + e(str(f.model)) + ") forbids: "
        + "; ".join(f'<code class="forbidden">{e(_outcome(o))}</code>'
                    for o in _forbidden(f)) + "</li>",
        f"<li>minimized from {m.get('size_before')} to {m.get('size_after')} operations</li>",
        "</ul>",
    ]
    if lost:
        parts.append(f"<h3>Instructions weaker than their source operation</h3><ul>{lost}</ul>")
    parts += [
        "<h3>Source</h3>", f'<pre class="litmus">{e(f.test)}</pre>',
        "<h3>PTX rows (marked) and kernel lines</h3>",
        f"<pre>{e(chr(10).join(f.marked))}</pre>",
        "<h3>Check: both sides</h3>", f'<pre class="explanation">{e(f.check)}</pre>',
        f"<details><summary>Kernel given to the compiler</summary>"
        f"<pre>{e(f.kernel_source)}</pre></details>",
        f"<details><summary>PTX</summary><pre>{e(f.ptx)}</pre></details>",
        f"<details><summary>Original program</summary><pre>{e(f.original)}</pre>"
        "</details>", "</section>",
    ]
    return "\n".join(parts)

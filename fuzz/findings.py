"""Findings on disk: ``DIR/findings/<id>/`` with the minimized test, ``finding.json`` and ``report.md``.

``<id>`` is the canonical hash (:func:`litmus.canonical_hash`) of the minimized test, so two programs
that minimize to the same test up to renaming are one finding; each program that led to it is kept in
``sources``. Directories are published with one rename and updated by atomic replacement, so a finding
is on disk completely or not at all, whenever the campaign is killed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable

from litmus.ir import UNDEF

from .finding import (Finding, FindingFileError, as_finding, finding_json,  # noqa: F401
                      read_finding)
from .journal import atomic_dir, atomic_write

TEST_FILE = "minimized.litmus"
ORIGINAL_FILE = "original.litmus"
KERNEL_FILE = "kernel.cl"


def findings_dir(campaign_dir: str) -> str:
    return os.path.join(campaign_dir, "findings")


def warn_bad_finding(message: str) -> None:
    print(f"scopefuzz: skipping {message}", file=sys.stderr)


def load_finding_records(campaign_dir: str,
                         on_bad: Callable[[str], None] | None = warn_bad_finding) -> list[Finding]:
    """Every finding of a campaign directory, typed (:class:`fuzz.finding.Finding`), oldest first.

    A corrupt ``finding.json`` is skipped and named through ``on_bad`` (default: a line on stderr);
    ``on_bad=None`` raises :class:`FindingFileError` instead.
    """
    d = findings_dir(campaign_dir)
    out = []
    if not os.path.isdir(d):
        return out
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name, "finding.json")
        if name.startswith(".") or not os.path.exists(path):
            continue
        try:
            rec = read_finding(path)
        except FindingFileError as e:
            if on_bad is None:
                raise
            on_bad(str(e))
            continue
        out.append(rec)
    out.sort(key=lambda r: (r.first_seen, r.id))
    return out


def load_findings(campaign_dir: str,
                  on_bad: Callable[[str], None] | None = warn_bad_finding) -> list[dict]:
    """:func:`load_finding_records` as dictionaries (``finding.json``'s keys), for the callers
    that keep or send the records as they are written (the campaign's known findings, a work
    item's result handed to the xdist controller)."""
    return [r.to_dict() for r in load_finding_records(campaign_dir, on_bad)]


def _source_key(s: dict) -> tuple:
    return (s.get("campaign"), s.get("index"))


def publish(campaign_dir: str, record: Finding | dict) -> bool:
    """Write a new finding, or add ``record``'s sources to the existing one with the same id.

    Returns True when the finding is new.
    """
    f = as_finding(record)
    d = os.path.join(findings_dir(campaign_dir), f.id)
    files = {
        TEST_FILE: f.test,
        ORIGINAL_FILE: f.original,
        "finding.json": f.to_json(),
        "report.md": finding_markdown(f),
    }
    if f.kernel:
        files[KERNEL_FILE] = f.kernel
    if f.kind == "weakening":                   # fuzz --against: the lowered program, both sides
        files.update({"ptx.litmus": f.ptx, "explanation.txt": f.explanation})
    if atomic_dir(d, files):
        return True
    add_sources(campaign_dir, f.id, f.sources, f.to_dict())
    return False


def add_sources(campaign_dir: str, fid: str, sources: list[dict],
                record: dict | None = None) -> None:
    """Add ``sources`` to finding ``fid`` (read, extend, replace: under the findings lock, since
    the shards of a parallel campaign publish into one ``findings/`` at once). A corrupt
    ``finding.json`` is rewritten from ``record`` (the same id: the same minimized test) when one
    is given, else named in a :class:`FindingFileError`."""
    path = os.path.join(findings_dir(campaign_dir), fid, "finding.json")
    with findings_lock(campaign_dir):
        try:
            rec = read_finding(path).to_dict()
        except FindingFileError as e:
            if record is None:
                raise
            warn_bad_finding(f"{e}: rewritten from the new record")
            rec = dict(record, sources=[])
        have = {_source_key(s) for s in rec["sources"]}
        new = [s for s in sources if _source_key(s) not in have]
        if not new:
            return
        rec["sources"] = rec["sources"] + new
        atomic_write(path, finding_json(rec))
        atomic_write(os.path.join(os.path.dirname(path), "report.md"), finding_markdown(rec))


@contextlib.contextmanager
def findings_lock(campaign_dir: str):
    """An exclusive ``flock`` on ``DIR/.findings.lock`` (released by the kernel if its holder
    dies)."""
    import fcntl
    with open(os.path.join(campaign_dir, ".findings.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --- rendering ----------------------------------------------------------------------------------

def outcome_text(outcome: dict) -> str:
    return " ".join(f"{k}={v};" for k, v in outcome.items())


def histogram_table(record: Finding | dict) -> list[str]:
    """Markdown rows: outcome, count, allowed/FORBIDDEN."""
    rows = ["| outcome | count | model |", "|---|---:|---|"]
    for h in as_finding(record).histogram:
        rows.append(f"| `{outcome_text(h.get('outcome') or {})}` | {h.get('count')} | "
                    f"{'allowed' if h.get('allowed') else '**FORBIDDEN**'} |")
    return rows


def allowed_lines(record: Finding | dict, limit: int = 32) -> list[str]:
    states = as_finding(record).allowed
    lines = [f"    {outcome_text(s)}" for s in states[:limit]]
    if len(states) > limit:
        lines.append(f"    ... {len(states) - limit} more")
    if any(UNDEF in s.values() for s in states):
        lines.append("    (undef: any value)")
    return lines


def reproduced_text(record: Finding | dict) -> str:
    f = as_finding(record)
    r = f.reproduced
    iters = f.iterations if f.iterations is not None else "?"
    return (f"forbidden outcome in {r.get('hits', 0)}/{r.get('runs', 0)} re-runs of "
            f"{iters} iterations ({r.get('forbidden_iterations', 0)} of "
            f"{r.get('iterations', 0)} iterations); found by {len(f.sources)} "
            f"program(s)")


def baseline_text(record: Finding | dict) -> str | None:
    b = as_finding(record).baseline
    if not b:
        return None
    if "error" in b:
        return f"- baseline `{b.get('backend')}`: could not run ({b['error']})"
    if b.get("forbidden"):
        return (f"- baseline `{b.get('backend')}` shows it too ({b['forbidden']} of "
                f"{b.get('iterations')} iterations): the reference backend and the model disagree")
    return (f"- baseline `{b.get('backend')}`: never forbidden in {b.get('iterations')} iterations "
            "(the bug is specific to this backend)")


def reproduce_lines(record: Finding | dict) -> list[str]:
    """The "Reproduce" section: command, tool version, backend parameters, kernel file."""
    f = as_finding(record)
    rep = f.reproduce
    if not rep:
        return []
    tool = f.tool
    lines = ["## Reproduce", "", "In the finding's directory:", "", "```", str(rep.get("command")),
             "```", "",
             f"- scopefuzz {tool.get('version', '?')}"
             + (f", git revision `{tool['git']}`" if tool.get("git") else "")]
    for k, v in sorted(f.params.items()):
        lines.append(f"- {k}: `{v}`")
    if f.kernel:
        lines.append(f"- generated kernel: `{KERNEL_FILE}` (beside this report)")
    return lines + [""]


def finding_markdown(record: Finding | dict, explanation: str | None = None) -> str:
    """A finding written up for a bug report (Markdown, paste-ready)."""
    f = as_finding(record)
    if f.kind == "compiler":          # fuzz --compile: checked, not run
        from .compile_findings import compiler_markdown
        return compiler_markdown(f, explanation)
    if f.kind == "weakening":                   # fuzz --against: two models, no backend
        from .weakening_findings import weakening_markdown
        return weakening_markdown(f, explanation)
    m = f.minimize
    first = f.first
    lines = [
        f"# Finding {f.id}: forbidden outcome on `{f.backend}`",
        "",
        f"- backend: `{f.backend}`" + (f" (mutant `{f.mutant}`)" if f.mutant else ""),
        f"- model: `{f.model if 'model' in f.extra else '?'}`; forbidden outcome: "
        f"`{outcome_text(f.outcome)}`" if f.forbidden else "",
        f"- reproduced: {reproduced_text(f)}",
        baseline_text(f),
        f"- minimized from {m.get('size_before', '?')} to {m.get('size_after', '?')} instructions "
        f"({m.get('accepted', 0)} reductions of {m.get('tried', 0)} tried)",
        f"- first found: campaign seed {f.campaign_seed}, program "
        f"{first.get('index')} (program seed {first.get('seed')})",
        "",
        "## Test",
        "",
        "```",
        f.test.rstrip("\n"),
        "```",
        "",
        f"## Observed on `{f.backend}` ({f.iterations if f.iterations is not None else '?'} "
        "iterations)",
        "",
        *histogram_table(f),
        "",
        "## Allowed by the model",
        "",
        *allowed_lines(f),
        "",
    ]
    lines += reproduce_lines(f)
    if explanation:
        lines += ["## Why the model forbids it", "", "```", explanation.rstrip("\n"), "```", ""]
    if f.evidence:                    # backend-provided, e.g. the isa backend's machine code
        lines += [f.evidence.rstrip("\n"), ""]
    if f.steps:
        lines += ["## Minimization", "", "; ".join(f.steps), ""]
    lines += ["## Original program", "", "```", f.original.rstrip("\n"), "```", ""]
    return "\n".join(line for line in lines if line is not None) + "\n"

"""Every corpus test on every isa target: it runs, or it is refused with a one-line reason; the
outcomes the model forbids that show are exactly those docs/isa.md writes up (a new one fails
the test until it is written up; one that no longer shows fails it until the write-up goes); the
cross-check's differences against the hand lowering are all answered in docs/isa.md.

Runs are exhaustive (every scheduling, up to 20,000) and, where that is incomplete, also 3,000
randomized iterations with a fixed seed. Skipped, with the reason, without clang-22.
"""

from __future__ import annotations

import re

import pytest

import hw
import litmus
import oracle
from conftest import CORPORA, ROOT
from hw.backend import BackendError, BackendRefused
from hw.isa import crosscheck, targets, toolchain

pytestmark = pytest.mark.skipif(toolchain.tools_available() is not None,
                                reason=f"isa backend: {toolchain.tools_available()}")

TARGETS = list(targets.TARGETS)
DIRS = sorted(d.name for d in CORPORA.iterdir() if d.is_dir())
DOC = ROOT / "docs" / "isa.md"


def _table(marker: str) -> list[list[str]]:
    """Rows of the Markdown table that follows ``<!-- marker -->`` in docs/isa.md."""
    text = DOC.read_text()
    start = text.index(f"<!-- {marker} -->")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(cells[0]) <= set("-: "):
            continue
        rows.append(cells)
    return rows[1:]                                   # without the header


def documented_forbidden() -> set[tuple[str, str]]:
    out = set()
    for cells in _table("isa-forbidden"):
        path = cells[0].strip("`")
        for t in cells[1].split():
            out.add((path, t))
    return out


def documented_kinds() -> set[str]:
    return {k.strip() for cells in _table("isa-crosscheck")
            for k in re.sub(r"`", "", cells[0]).split(",")}


def _files(corpus: str):
    return sorted((CORPORA / corpus).rglob("*.litmus"))


@pytest.mark.parametrize("corpus", DIRS)
@pytest.mark.parametrize("target", TARGETS)
def test_corpus_runs_or_is_refused(target, corpus):
    be = hw.get_backend(f"isa:{target}")
    seen, refused, ran = set(), 0, 0
    for path in _files(corpus):
        rel = str(path.relative_to(CORPORA).with_suffix(""))
        t = litmus.parse_file(str(path))
        res = oracle.check(t)
        if res.verdict == "Undef":
            continue                                  # not run (scopefuzz run does not either)
        try:
            hist, complete = be.explore(t, 20_000)
            if not complete:
                hist.merge(be.run(t, 3_000, 1))
        except BackendRefused as e:
            refused += 1
            assert str(e) and "\n" not in str(e), rel
            continue
        except BackendError as e:                     # must run or be refused, nothing else
            pytest.fail(f"{rel} on isa:{target}: {e}")
        ran += 1
        if any(not res.allows(o) for o, _ in hist.outcomes()):
            seen.add((rel, target))
    want = {(p, t) for p, t in documented_forbidden()
            if t == target and p.split("/")[0] == corpus}
    assert seen == want, (f"forbidden outcomes on isa:{target} in corpora/{corpus}: "
                          f"not written up in docs/isa.md: {sorted(seen - want)}; "
                          f"written up but not shown: {sorted(want - seen)}")
    assert ran + refused > 0


def test_O0_code_runs_on_the_classic_corpus():
    """-O0 code (the stack in private memory, spills) runs, or is refused (compare-exchange
    branches on its result), and shows nothing the model forbids."""
    be = hw.get_backend("isa:gfx942,O0")
    ran = 0
    for path in _files("classic"):
        t = litmus.parse_file(str(path))
        res = oracle.check(t)
        if res.verdict == "Undef":
            continue
        try:
            hist = be.run(t, 2_000, 1)
        except BackendRefused:
            continue
        ran += 1
        assert all(res.allows(o) for o, _ in hist.outcomes()), path.name
    assert ran > 100


@pytest.mark.parametrize("target", TARGETS)
def test_crosscheck_differences_are_answered(target):
    tg = targets.TARGETS[target]
    kinds: dict[str, str] = {}
    checked = 0
    for corpus in DIRS:
        for path in _files(corpus):
            t = litmus.parse_file(str(path))
            try:
                _, checks = crosscheck.check(t, tg)
            except BackendRefused:
                continue
            checked += 1
            for _, _, kind, _ in crosscheck.differences(checks):
                kinds.setdefault(kind, str(path.relative_to(CORPORA)))
    assert checked > 150
    missing = {k: v for k, v in kinds.items() if k not in documented_kinds()}
    assert not missing, f"differences on {target} not answered in docs/isa.md: {missing}"

"""A campaign against each ISA mutant on gfx942 finds it from an empty corpus and minimizes it.

One parametrized test per mutant (xdist spreads them). Each runs a campaign on
``isa:gfx942:MUTANT`` with the unmutated code (same options) as baseline, bounded by a program
count (not a time: the machine's load decides the time; ``benchmarks/bench_isa.py`` measures
the time to find), stopping at the first finding the baseline does not show. The finding must be
forbidden by the oracle, shown again by the mutant, never shown by the baseline in any
scheduling, no larger than the program it came from, and carry the mutated machine code.
Features: what clang-22 can express (``all,-av,-noav,-async``). Skipped without clang-22.
"""

from __future__ import annotations

import pytest

import hw
import litmus
import oracle
from hw.isa import targets, toolchain
from hw.isa.mutants import MUTANTS

pytestmark = pytest.mark.skipif(toolchain.tools_available() is not None,
                                reason=f"isa backend: {toolchain.tools_available()}")

PROGRAMS = 600          # campaign seed 0 finds each mutant within its first 300 programs


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_campaign_finds_isa_mutant(mutant, tmp_path):
    from fuzz.campaign import Campaign, Config
    from fuzz.findings import load_findings
    from fuzz.strategies import parse_features
    target, _ = targets.parse_spec(f"gfx942:{mutant}", MUTANTS)
    baseline = f"isa:{target.label()}"
    cfg = Config(backend=f"isa:gfx942:{mutant}", baseline=baseline, out=str(tmp_path / "c"),
                 seed=0, programs=PROGRAMS, iterations=500, max_findings=1,
                 minimize_seconds=30, features=parse_features("all,-av,-noav,-async"))
    Campaign(cfg).run()
    clean = [r for r in load_findings(str(tmp_path / "c"))
             if not (r.get("baseline") or {}).get("forbidden", 1)]
    assert clean, f"no finding on isa:gfx942:{mutant} in {PROGRAMS} programs"
    rec = clean[0]
    small = litmus.parse(rec["test"])
    assert small.size <= litmus.parse(rec["original"]).size
    res = oracle.check(small)
    assert res.verdict == "No"
    shown = hw.get_backend(f"isa:gfx942:{mutant}").run(small, 4000, 12345)
    assert any(not res.allows(o) for o, _ in shown.outcomes()), rec["test"]
    base, complete = hw.get_backend(baseline).explore(small, 200_000)
    assert all(res.allows(o) for o, _ in base.outcomes()), rec["test"]
    assert "## Compiled code" in rec["evidence"] and f"[{mutant}:" in rec["evidence"]

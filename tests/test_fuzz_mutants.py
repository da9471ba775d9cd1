"""A campaign against each simulator mutant finds it from an empty corpus and minimizes it.

One parametrized test per mutant (xdist spreads them). Each runs a short campaign on ``sim:MUTANT``
with the correct simulator as baseline (``--baseline sim``); each session stops at the next finding
the correct simulator does not show, and the campaign is resumed until one of them is small enough
or the budget is spent. The minimized finding must be no larger than the hand-written killer
in ``corpora/mutants/`` plus one row, still forbidden by the oracle, and shown by the mutant.

Budget: ``SCOPEFUZZ_MUTANT_PROGRAMS`` programs per mutant (program numbers 0..N-1) and
``MINIMIZE_TRIES`` minimizer steps per finding, never seconds: a campaign is a pure function of its
seed, so the outcome is the same on an idle workstation and on a loaded CI machine, only slower there.
"""

from __future__ import annotations

import math
import os

import pytest

import litmus
from conftest import CORPORA

from hw.sim import mutants as hw_sim  # noqa: E402
MUTANTS = sorted(hw_sim.MUTANTS)
PROGRAMS = int(os.environ.get("SCOPEFUZZ_MUTANT_PROGRAMS", "1500"))
MINIMIZE_TRIES = 300


def _rows(test) -> int:
    return max(len(th.code) for th in test.threads)


def _fits(small, killer) -> bool:
    """No larger than the killer plus one row."""
    return (small.size <= killer.size + len(killer.threads)
            and _rows(small) <= _rows(killer) + 1)


@pytest.mark.parametrize("mutant", MUTANTS)
def test_campaign_kills_mutant(mutant, tmp_path):
    import hw
    import oracle
    from fuzz.campaign import Campaign, Config
    from fuzz.findings import load_findings

    killer = litmus.parse_file(str(CORPORA / "mutants" / f"{mutant}.litmus"))
    try:
        verdict = oracle.check(killer).verdict
    except oracle.OracleError as e:
        pytest.xfail(f"the oracle cannot check this mutant's killer yet: {e}")
    if verdict != "No":
        # the killer is not a kill under today's oracle (corpora/mutants/expected.csv says No):
        # the oracle and the corpus disagree; a campaign cannot be asked to do better
        pytest.xfail(f"oracle verdict {verdict} on corpora/mutants/{mutant}.litmus (expected No)")
    out = tmp_path / "campaign"
    small = best = None
    resume = False
    while True:   # one more clean finding per session, until one is small enough or all are done
        cfg = Config(backend=f"sim:{mutant}", baseline="sim", out=str(out), seed=0,
                     programs=PROGRAMS, iterations=500, max_findings=1,
                     minimize_tries=MINIMIZE_TRIES, minimize_seconds=math.inf, resume=resume)
        camp = Campaign(cfg)
        camp.run()
        resume = True
        clean = [r for r in load_findings(str(out)) if not r["baseline"].get("forbidden", 1)]
        if clean:
            best = min(clean, key=lambda r: (litmus.parse(r["test"]).size, r["id"]))
            small = litmus.parse(best["test"])
            if _fits(small, killer):
                break
        if len(camp.done) >= PROGRAMS:
            break
    assert best, f"no finding on sim:{mutant} in {PROGRAMS} programs that plain sim does not show"
    assert small.size <= killer.size + len(killer.threads), best["test"]
    assert _rows(small) <= _rows(killer) + 1, best["test"]
    # the finding is real: the oracle forbids it and the mutant shows it again
    res = oracle.check(small)
    assert res.verdict == "No"
    hist = hw.get_backend(f"sim:{mutant}").run(small, 4000, 12345)
    assert any(not res.allows(o) for o, _ in hist.outcomes()), best["test"]

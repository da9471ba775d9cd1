"""Every simulator mutant is killed by its test in corpora/mutants/: ``sim:MUTANT`` shows an
outcome the model forbids, while the correct simulator (same profile and options) never does in
any scheduling. Verdicts in ``corpora/mutants/expected.csv`` are hand-derived; where the oracle
handles a test its verdict must agree."""

from __future__ import annotations

import csv
import pathlib

import pytest

import litmus
from hw import BackendError, get_backend
from hw.sim import MUTANTS, PROFILES, make_backend, parse_spec
from hw.sim.lower import lower
from hw.sim.mutants import Edits, Mutant
from hw.sim.uops import NAMES
from litmus.outcome import condition_holds

DIR = pathlib.Path(__file__).resolve().parent.parent / "corpora" / "mutants"


def _expected():
    with open(DIR / "expected.csv", encoding="utf-8", newline="") as f:
        return {row[0]: row[1] for row in csv.reader(f) if row}


def _allows(test, verdict):
    """Allowed-outcome predicate: the oracle's when it handles the test, else the verdict's."""
    try:
        import oracle
        res = oracle.check(test)
    except Exception:
        assert verdict == "No" and test.condition.quantifier == "exists"
        return lambda o: not condition_holds(test.condition, o)
    assert res.verdict == verdict, f"oracle says {res.verdict}, expected.csv says {verdict}"
    return res.allows


def test_at_least_16_documented_mutants():
    assert len(MUTANTS) >= 16
    for m in MUTANTS.values():
        assert m.summary and "\n" not in m.summary
        assert len(m.mechanism) > 40


def test_one_killer_per_mutant_listed_in_expected_csv():
    files = {p.name for p in DIR.glob("*.litmus")}
    assert files == {f"{n}.litmus" for n in MUTANTS}
    assert set(_expected()) == files


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_killed_and_correct_sim_clean(name):
    test = litmus.parse_file(DIR / f"{name}.litmus")
    allows = _allows(test, _expected()[f"{name}.litmus"])
    mutant = get_backend(f"sim:{name}")
    hist = mutant.run(test, 100_000, seed=1)
    killed = sum(n for o, n in hist.outcomes() if not allows(o))
    assert killed > 0, f"sim:{name} not killed by its test"
    profile, _ = parse_spec(name)
    correct = make_backend(profile.label())
    assert correct.mutant is None and correct.profile == profile == mutant.profile
    ehist, complete = correct.explore(test, 200_000)
    assert complete
    assert all(allows(o) for o, _ in ehist.outcomes())
    rhist = correct.run(test, 50_000, seed=1)
    assert all(allows(o) for o, _ in rhist.outcomes())


def test_mutant_profile_can_be_overridden():
    b = get_backend("sim:rel-no-wait@gfx12")
    assert b.profile.name == "gfx12" and b.mutant == "rel-no-wait"
    b = get_backend("sim:nc-rel-no-wbl2@gfx942")
    assert b.profile.name == "gfx942" and b.profile.mtype == "NC"
    b = get_backend("sim:tgsplit-wg-as-wave,mtype=UC")
    assert b.profile.tgsplit and b.profile.mtype == "UC"


@pytest.mark.parametrize("spec", ["sim:nope", "sim:gfx942,wat", "sim:gfx12,tgsplit",
                                  "sim:acq-no-inv@gfx1", "sim:gfx942,mtype=XX"])
def test_bad_backend_names_are_one_line_errors(spec):
    with pytest.raises(BackendError) as e:
        get_backend(spec)
    assert "\n" not in str(e.value) and str(e.value)


ACQ = """AMDGPU acq
{ x = 0; }
 P0                     ;
 ld.atom.acq.agent r0, x ;
exists (P0:r0 == 0)
"""


def _ops(test, mutant=None, profile="gfx942"):
    m = lower(test, PROFILES[profile], mutant)
    return [NAMES[u[0]] for _, u in m.listing[0]]


def test_mutants_are_data_a_record_of_edits(monkeypatch):
    """What a mutant changes is its Edits record: an agent acquire is gld, vmcnt(0), lgkmcnt(0),
    L1 invalidate (lower.py's table); dropping inv.l1 removes the invalidate, whichever record
    says so, and a new record with the same edits lowers exactly as acq-no-inv."""
    test = litmus.parse(ACQ)
    assert _ops(test) == ["gld", "wait", "wait", "inv.l1"]
    assert _ops(test, "acq-no-inv") == ["gld", "wait", "wait"]
    assert _ops(test, "acq-no-wait") == ["gld", "wait", "inv.l1"]       # lgkmcnt(0) stays
    again = Mutant("acq-no-inv-again", "the same edits under another name", "test double " * 5,
                   Edits(acquire_drops=frozenset({"inv.l1"})))
    monkeypatch.setitem(MUTANTS, again.name, again)
    killer = litmus.parse_file(DIR / "acq-no-inv.litmus")
    same = [lower(killer, PROFILES["gfx942"], n).prog.tolist() for n in ("acq-no-inv", again.name)]
    assert same[0] == same[1] != lower(killer, PROFILES["gfx942"]).prog.tolist()
    with pytest.raises(ValueError, match="unknown droppable micro-op 'inv.l3'"):
        Edits(release_drops=frozenset({"inv.l3"}))

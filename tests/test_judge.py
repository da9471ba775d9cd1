"""The lazy judge (``oracle.judge.Judge``) and the harness asking it only about observed outcomes.

- On every corpus file and on Hypothesis-generated AMDGPU and C programs (with drawn conditions:
  exists / ~exists / forall over conjunctions, disjunctions and ``!=``), the judge, asked first
  with every cache empty, answers as ``oracle.check``'s Result: ``ub``, ``verdict``,
  ``all_undef``, every allowed state (undef positions given a value) allowed, and an outcome no
  allowed state matches forbidden. The two answer by different searches (outcome queries with
  required values against the full enumeration), so agreement is a cross-check.
- A campaign with the real oracle and the simulator runs no full check (``oracle.check``,
  counted through the name the judge calls) for a program whose condition is an equality
  conjunction under exists/~exists: the common path costs outcome queries only.
- ``scopefuzz run``'s comparison runs no full check either, and judges each row as the full set.
- ``all_undef`` is decided by one batch of ``DEFINED`` queries, never the full check: on every
  corpus file and on generated AMDGPU and C programs it equals "every full-check state is undef
  at every observable"; by hand, a program whose one allowed state is undef everywhere (two
  plain writes, rule 5) is all undef, and so are campaign programs that once ran past the
  campaign's budget (rmws on one location across agents, their reads undef by rule 3), decided
  within that budget.
- Queries of pre-executions above ``SPLIT_ABOVE`` answer the same searched whole or split.
- A campaign whose oracle budget is made tiny (the ``ORACLE_BUDGET`` hook) counts the programs
  that ran past it: the journal's ``budget`` field, the ``fuzz`` summary line, ``report.md``'s
  coverage section, ``merge``'s counts, a parallel campaign's sums and the progress line; other
  oracle errors are not counted.
"""

from __future__ import annotations

import itertools
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import litmus
import oracle
from litmus.dialects import litmus_files, parse_file
from litmus.ir import UNDEF
from oracle.explore import DEFINED
from oracle.judge import Judge, equality_outcome
from test_conformance_rc11 import c_programs
from test_oracle_props import programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _concrete(state: dict) -> dict:
    """An observed outcome that the allowed state matches (undef positions: 0)."""
    return {k: (0 if v == UNDEF else v) for k, v in state.items()}


def _forbidden(result, keys: list[str]) -> dict | None:
    """An outcome over ``keys`` that no allowed state matches (values seen in the states and
    one past them), or None when every such outcome is allowed."""
    vals = {k: sorted({s[k] for s in result.states if s[k] != UNDEF} | {0}) for k in keys}
    for k in keys:
        vals[k].append(max(vals[k]) + 1)
    for n, combo in enumerate(itertools.product(*(vals[k] for k in keys))):
        if n > 2000:
            return None
        o = dict(zip(keys, combo))
        if not any(all(s[k] == UNDEF or s[k] == o[k] for k in keys) for s in result.states):
            return o
    return None


def _where(test) -> str:
    """The test in a failure message (its printed form where the printer takes it)."""
    try:
        return f"{test.name}\n{litmus.format_test(test)}"
    except Exception:
        return f"{test.name} ({test.dialect})"


def assert_judge_agrees(test, model=None) -> Judge:
    """The judge's answers (asked before anything is cached) are the full check's."""
    oracle.clear_cache()
    want = oracle.check(test, model)
    oracle.clear_cache()
    j = Judge(test, model)
    where = _where(test)
    assert j.ub == want.ub, where
    assert j.verdict == want.verdict, where
    assert j.all_undef == want.all_undef, where
    keys = test.observables()
    allowed = [_concrete(s) for s in want.states[:40]]
    bad = _forbidden(want, keys)
    asked = allowed + ([bad] if bad is not None else [])
    got = j.allows_many(asked)
    assert got == [True] * len(allowed) + [False] * (bad is not None), where
    if bad is not None:                     # one at a time, a fresh judge: the same
        oracle.clear_cache()
        assert not Judge(test, model).allows(bad), where
    if allowed:
        oracle.clear_cache()
        assert Judge(test, model).allows(allowed[-1]), where
    # the fields only the full check gives are the full check's
    assert j.states == want.states and j.flags == want.flags, where
    return j


def _all_undef(states: list[dict]) -> bool:
    return all(v == UNDEF for s in states for v in s.values())


def assert_all_undef_by_query(test, model=None) -> bool:
    """A fresh judge's ``all_undef`` comes from its queries alone and is the full check's."""
    oracle.clear_cache()
    want = _all_undef(oracle.check(test, model).states)
    oracle.clear_cache()
    j = Judge(test, model)
    assert j.all_undef == want and not j.checked, _where(test)
    return want


def _corpus():
    out = []
    for path in litmus_files([os.path.join(ROOT, "corpora")]):
        try:
            out.append(parse_file(path))
        except litmus.ParseError:
            continue            # corpora of bad input (tests of the parser)
    return out


def test_the_judge_answers_as_the_full_check_on_every_corpus_file():
    tests = _corpus()
    assert len(tests) > 300
    decided = queried = undef = 0
    for t in tests:
        try:
            oracle.check(t)
        except oracle.OracleError as e:     # the judge refuses the same programs
            oracle.clear_cache()
            with pytest.raises(oracle.OracleError):
                j = Judge(t)
                j.verdict, j.all_undef
            continue
        oracle.clear_cache()
        lazy = Judge(t)
        lazy.verdict, lazy.all_undef
        queried += not lazy.checked
        assert_judge_agrees(t)
        undef += assert_all_undef_by_query(t)
        decided += 1
    assert decided > 300 and undef >= 5
    # most corpus files are decided by queries alone (conditions that are equality conjunctions
    # under exists / ~exists, no state undef everywhere)
    assert queried > decided // 2


@st.composite
def _conditions(draw, keys: list[str]) -> str:
    """A condition over ``keys``: a quantifier and a conjunction of ``==`` atoms (mostly), or a
    disjunction, or an atom with ``!=``."""
    q = draw(st.sampled_from(["exists", "~exists", "forall"]))
    atoms = [f"{k} == {draw(st.integers(0, 2))}"
             for k in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3))]
    shape = draw(st.sampled_from(["and", "and", "and", "or", "ne"]))
    if shape == "or":
        prop = " \\/ ".join(atoms)
    elif shape == "ne":
        prop = " /\\ ".join(atoms[:-1] + [atoms[-1].replace("==", "!=")])
    else:
        prop = " /\\ ".join(atoms)
    return f"{q} ({prop})"


def _with_condition(draw, text: str):
    t = litmus.parse(text)
    cond = draw(_conditions(t.observables()))
    return litmus.parse(text.rstrip("\n").rsplit("\n", 1)[0] + f"\n{cond}\n")


@st.composite
def _amdgpu_tests(draw):
    return _with_condition(draw, draw(programs(max_instrs=5)))


@st.composite
def _c_tests(draw):
    return _with_condition(draw, draw(c_programs()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_amdgpu_tests())
def test_the_judge_answers_as_the_full_check_on_generated_amdgpu_programs(t):
    assert_judge_agrees(t)
    assert_all_undef_by_query(t)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_c_tests())
def test_the_judge_answers_as_the_full_check_on_generated_c_programs(t):
    assert_judge_agrees(t, "rc11")
    assert_all_undef_by_query(t, "rc11")


TWO_WRITERS = """AMDGPU two-writers
{ x = 0; }
 P0@wg 0 | P1@wg 1 ;
 st x, 1 | st x, 2 ;
exists (x == 1)
"""


def test_a_program_whose_only_state_is_undef_is_all_undef_by_queries():
    """Two plain writes in different workgroups, neither lo-before the other: final memory sees
    both (rule 5), so the one allowed state has x undef. ``x`` is never DEFINED; any value of
    it is allowed (undef matches it); the judge says all undef without the full check."""
    t = litmus.parse(TWO_WRITERS)
    oracle.clear_cache()
    assert oracle.allows_many(t, [{"x": DEFINED}, {"x": 1}, {"x": 7}, {}]) == \
        [False, True, True, True]
    oracle.clear_cache()
    j = Judge(t)
    assert j.all_undef and not j.checked
    assert [s["x"] for s in oracle.check(t).states] == [UNDEF]
    # one plain write only: final memory reads it (rule 4), x = 1 is DEFINED
    one = litmus.parse(TWO_WRITERS.replace("st x, 2", "      "))
    oracle.clear_cache()
    assert oracle.allows(one, {"x": DEFINED}) and not oracle.allows(one, {"x": 2})
    oracle.clear_cache()
    assert not Judge(one).all_undef


#: campaign programs (default generator, seed 0, numbers 9140 and 5194) that ran past the
#: campaign's oracle budget when all_undef fell to the full check: rmws and atomics on one
#: location from threads whose scopes do not include each other, most reads undef by rule 3
BUDGET_PROGRAMS = ["""AMDGPU random3
{ x = 0; }
 P0@wave 0, wg 0             | P1@wave 1, wg 0              | P2@agent 1               ;
 rmw.add.sc.wg.noav r0, x, 0 | ld.atom r0, x                | ld.atom.acq.agent r0, x  ;
 ld.atom.wg r1, x            | cas.acq_rel.wave r1, x, 0, 2 | cas.agent r1, x, 0, 3    ;
 ld.atom.sc.cluster r2, x    |                              | ld.atom.acq.wg r2, x     ;
 st.atom.sc.cluster x, 1     |                              | st.atom.rel.cluster x, 4 ;
exists (P0:r0 == 3 /\\ P0:r1 == 0 /\\ P0:r2 == 3 /\\ P1:r0 == 4 /\\ P1:r1 == 2 /\\ P2:r0 == 0 /\\ P2:r2 == 1)
""", """AMDGPU random3
{ x = 0; }
 P0@wave 0, wg 0     | P1@cluster 1               | P2@wave 1, wg 0           ;
 rmw.add.sc r0, x, 0 | rmw.add.acq.agent r0, x, 0 | ld.atom.sc.wave r0, x     ;
 fence.acq.cluster   | rmw.add.wave r1, x, 0      | rmw.xchg.cluster r1, x, 1 ;
 ld.atom.wave r1, x  |                            | rmw.add.acq.wave r2, x, 0 ;
                     |                            | st.atom.sc x, 2           ;
exists (P0:r0 == 2 /\\ P0:r1 == 1 /\\ P1:r0 == 2 /\\ P1:r1 == 2 /\\ P2:r1 == 1 /\\ P2:r2 == 2)
"""]


@pytest.mark.parametrize("text", BUDGET_PROGRAMS)
def test_programs_that_reached_the_campaign_budget_are_judged_within_it(text):
    """What a campaign asks (verdict, all_undef) is answered within ``ORACLE_BUDGET`` by
    queries alone, as the full check (computed without a budget) answers it."""
    from fuzz.campaign import ORACLE_BUDGET
    t = litmus.parse(text)
    oracle.clear_cache()
    want = oracle.check(t)
    oracle.clear_cache()
    j = Judge(t, budget=ORACLE_BUDGET)
    assert (j.verdict, j.all_undef) == (want.verdict, _all_undef(want.states))
    assert not j.checked
    assert any(_all_undef([s]) for s in want.states)       # the case that took the full check


MP = """AMDGPU mp
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                 ;
 st.atom.agent x, 1     | ld.atom.acq.agent r0, y ;
 st.atom.rel.agent y, 1 | ld.atom.agent r1, x     ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_equality_conjunctions_are_recognised_by_hand():
    def cond(c):
        return equality_outcome(litmus.parse(MP.replace("exists (P1:r0 == 1 /\\ P1:r1 == 0)", c)))
    assert cond("exists (P1:r0 == 1 /\\ P1:r1 == 0)") == {"P1:r0": 1, "P1:r1": 0}
    assert cond("~exists (x == 1)") == {"x": 1}
    assert cond("exists (P1:r0 == 1 \\/ P1:r1 == 0)") is None
    assert cond("exists (P1:r0 != 1)") is None
    assert cond("exists (P1:r0 == 1 /\\ P1:r0 == 0)") is None      # two values: the full check


def test_mp_by_hand_decided_by_queries_alone(monkeypatch):
    """Release/acquire MP at agent scope: r0=1, r1=0 forbidden (verdict No), r0=1, r1=1 allowed,
    no UB, not all undef; none of it needs the full allowed set."""
    import oracle.judge as judge_mod
    calls = []
    monkeypatch.setattr(judge_mod, "check", lambda *a, **k: calls.append(a) or oracle.check(*a))
    oracle.clear_cache()
    j = Judge(litmus.parse(MP))
    assert j.ub == [] and j.verdict == "No" and not j.all_undef
    assert j.allows_many([{"P1:r0": 1, "P1:r1": 0, "x": 1, "y": 1},
                          {"P1:r0": 1, "P1:r1": 1, "x": 1, "y": 1}]) == [False, True]
    assert calls == [] and not j.checked
    # forall is decided by a counter-witness search too (oracle/witness.py): every state has
    # x == 1 (the one write is co-after the init), proved without the full set
    fa = litmus.parse(MP.replace("exists (P1:r0 == 1 /\\ P1:r1 == 0)", "forall (x == 1)"))
    oracle.clear_cache()
    j = Judge(fa)
    assert j.verdict == "Ok" and calls == [] and not j.checked
    # and a forall that fails: some state has P1:r0 == 0
    fb = litmus.parse(MP.replace("exists (P1:r0 == 1 /\\ P1:r1 == 0)", "forall (P1:r0 == 1)"))
    oracle.clear_cache()
    assert Judge(fb).verdict == "No" and calls == []


def test_the_judge_under_a_timeout_answers_the_same():
    """With ``timeout`` every computation runs in a forked child; the answers come back."""
    t = litmus.parse(MP)
    oracle.clear_cache()
    j = Judge(t, timeout=120)
    assert j.verdict == "No" and j.ub == [] and not j.all_undef
    assert j.allows_many([{"P1:r0": 1, "P1:r1": 0, "x": 1, "y": 1},
                          {"P1:r0": 0, "P1:r1": 0, "x": 1, "y": 1}]) == [False, True]
    assert [tuple(s.values()) for s in j.states] == \
        [tuple(s.values()) for s in oracle.check(t).states]


def test_a_campaigns_common_path_runs_no_full_check(tmp_path, monkeypatch):
    import oracle.judge as judge_mod
    from fuzz.campaign import Campaign, Config, default_checker
    from fuzz.journal import read_journal
    full: list = []
    real = oracle.check

    def counting(test, *a, **k):
        full.append(test)
        return real(test, *a, **k)

    monkeypatch.setattr(judge_mod, "check", counting)
    judges: list = []
    make = default_checker()

    def checker(test):
        judges.append(make(test))
        return judges[-1]

    oracle.clear_cache()
    cfg = Config(backend="sim", out=str(tmp_path / "c"), seed=5, programs=40, iterations=200)
    Campaign(cfg, checker=checker).run()
    entries = [e for e in read_journal(str(tmp_path / "c" / "journal.jsonl"))
               if e["type"] == "program"]
    assert len(entries) == 40 and all(e["status"] != "finding" for e in entries)
    assert len(full) == sum(j.checked for j in judges)
    plain = 0
    for j in judges:
        quick = equality_outcome(j.test) is not None and \
            j.test.condition.quantifier in ("exists", "~exists")
        if quick and j.test.locations:
            assert not j.checked, _where(j.test)
            plain += 1
    assert plain >= 20          # the common path is common


def test_programs_past_the_budget_are_counted_in_journal_summary_report_and_merge(
        tmp_path, monkeypatch, capsys):
    import fuzz.campaign
    from fuzz.cli import main
    from fuzz.journal import read_journal
    from fuzz.merge import merge
    monkeypatch.setattr(fuzz.campaign, "ORACLE_BUDGET", 100)   # the test hook: a tiny budget
    out = str(tmp_path / "c")
    main(["fuzz", "--backend", "sim", "--jobs", "1", "--seed", "1", "--programs", "60",
          "--iterations", "100", "--out", out, "--quiet", "--report"])
    err = capsys.readouterr().err
    entries = [e for e in read_journal(os.path.join(out, "journal.jsonl"))
               if e["type"] == "program"]
    over = [e for e in entries if e.get("budget")]
    assert 0 < len(over) < len(entries)
    assert all(e["status"] == "oracle-error" and "search budget" in e["error"] for e in over)
    assert not any("search budget" in e.get("error", "") for e in entries if not e.get("budget"))
    m = re.search(r"(\d+) errors \((\d+) over the oracle's search budget\)", err)
    assert m, err
    assert int(m.group(2)) == len(over) <= int(m.group(1))
    md = open(os.path.join(out, "report.md")).read()
    cov = md.split("## Coverage", 1)[1]
    assert f"Oracle search budget: {len(over)} of {len(entries)} programs reached it" in cov
    counts = merge(str(tmp_path / "m"), [out])
    assert counts["budget"] == len(over) and counts["programs"] == len(entries)
    # resumed, the counts come back from the journal
    main(["fuzz", "--backend", "sim", "--jobs", "1", "--seed", "1", "--programs", "60",
          "--iterations", "100", "--out", out, "--quiet", "--resume"])
    assert f"({len(over)} over the oracle's search budget)" in capsys.readouterr().err


def test_other_oracle_errors_are_not_counted_as_budget(tmp_path):
    """A checker raising a plain oracle error: journaled as oracle-error without ``budget``."""
    from fuzz.campaign import Campaign, Config
    from fakes import StaleReadBackend

    def refuses(test):
        raise oracle.OracleError("no model for this")

    cfg = Config(backend="fake", out=str(tmp_path / "c"), seed=1, programs=5, iterations=50)
    stats = Campaign(cfg, backend=StaleReadBackend(0.0), checker=refuses).run()
    assert stats.errors == 5 and stats.budget == 0
    lines = [json.loads(ln) for ln in open(tmp_path / "c" / "journal.jsonl")]
    assert all("budget" not in e for e in lines if e["type"] == "program")


def test_queries_of_split_pre_executions_answer_the_same_whole_or_split(monkeypatch):
    """A query of a pre-execution above ``SPLIT_ABOVE`` searches it whole within
    ``QUERY_WHOLE_STEPS`` and splits it into blocks past that: forced either way (a cap of one
    step: always split; a huge cap: always whole), the answers are the full check's."""
    import oracle.search as search
    from oracle.check import pre_executions
    from oracle.registry import get as get_unit
    big = []
    for t in _corpus():
        try:
            r = oracle.check(t)
            pes = pre_executions(get_unit(r.model), t)
        except oracle.OracleError:
            continue
        if any(search.estimate(pe) > search.SPLIT_ABOVE for pe in pes) and len(r.states) < 200:
            big.append((t, r))
    assert len(big) >= 5
    for cap in (1, 10**9):
        monkeypatch.setattr(search, "QUERY_WHOLE_STEPS", cap)
        for t, r in big:
            keys = t.observables()
            asked = [_concrete(s) for s in r.states[:10]]
            bad = _forbidden(r, keys)
            asked += [bad] if bad is not None else []
            oracle.clear_cache()
            assert Judge(t).allows_many(asked) == \
                [True] * min(10, len(r.states)) + [False] * (bad is not None), (cap, t.name)
            if bad is not None:
                oracle.clear_cache()
                assert not oracle.allows(t, bad), (cap, t.name)


def test_run_asks_about_the_observed_outcomes_only(monkeypatch):
    """``scopefuzz run``'s comparison (``fuzz.run.run_one``) of MP on the simulator: no full
    check, and the JSON object's rows are judged as the full allowed set judges them."""
    import hw
    import oracle.judge as judge_mod
    from fuzz.run import run_one
    calls = []
    real = oracle.check
    monkeypatch.setattr(judge_mod, "check", lambda *a, **k: calls.append(a) or real(*a, **k))
    t = litmus.parse(MP)
    oracle.clear_cache()
    obj = run_one(hw.get_backend("sim"), t, "mp.litmus", 2000, 3)
    assert calls == []
    full = real(t)
    assert obj["histogram"] and all(row["allowed"] == full.allows(row["outcome"])
                                    for row in obj["histogram"])
    assert obj["forbidden"] == 0 and sum(r["count"] for r in obj["histogram"]) == 2000


def test_the_progress_line_and_a_parallel_campaigns_sums_carry_the_budget_count(tmp_path):
    """Each worker sends its counts (``dataclasses.asdict(Stats)``); the parent's sum keeps the
    budget count apart from the other errors, and the progress line shows it once nonzero."""
    import dataclasses
    from types import SimpleNamespace
    from fuzz.campaign import Config, Stats
    from fuzz.coverage import Coverage
    from fuzz.progress import Progress
    from fuzz.workers import ParallelCampaign
    par = ParallelCampaign(Config(backend="sim", out=str(tmp_path / "p")), 2)
    par.workers = [SimpleNamespace(stats=dataclasses.asdict(Stats(programs=10, errors=3, budget=2)),
                                   kinds={}, pairs={}),
                   SimpleNamespace(stats=dataclasses.asdict(Stats(programs=5, errors=1, budget=1)),
                                   kinds={}, pairs={})]
    total = par._sum()
    assert (total.programs, total.errors, total.budget) == (15, 4, 3)
    assert "errors 4 (budget 3) |" in Progress(tty=False).line(total, Coverage())
    assert "budget" not in Progress(tty=False).line(Stats(programs=3, errors=1), Coverage())

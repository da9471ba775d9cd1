"""The strict-weakening property (fuzz/weakening.py): Tile IR 7.11 says the Tile IR model is a
strict weakening of PTX. For a race-free Tile IR program every outcome the PTX model allows for
its lowering (litmus/mappings/tileir_ptx.py) must be allowed by the Tile IR model.

These tests need the ``ptx`` model unit (the PTX dialect and model, engineer H1's issue); they
are skipped, saying so, in a checkout without it.
"""

from __future__ import annotations

import json
import os

import pytest

import oracle
from conftest import CORPORA
from litmus import parse, parse_file
from litmus.mappings.tileir_ptx import lower
from oracle import registry

pytestmark = pytest.mark.skipif(
    not os.path.isdir(os.path.join(os.path.dirname(registry.__file__), "models", "ptx")),
    reason="needs the ptx model unit (oracle/models/ptx, the PTX issue) to compare against")

TILE = CORPORA / "tileir"

#: 7.12.1 and the token rules: shapes where Tile IR allows the condition and PTX, whose program
#: order the lowering turns tokens into, forbids it (hand-derived: PTX orders same-thread
#: accesses by po; SB/LB inside one PTX thread are forbidden by po-loc / causality)
TILEIR_ALLOWS_MORE = ["SB.intrablock.litmus", "LB.intrablock.litmus", "LB.intrablock+tokens.litmus",
                      "Future.notoken.tile_block.litmus", "CoRR+notoken.device.xblock.litmus",
                      "MP+relacq.notoken.writer.litmus", "MP+relacq.notoken.reader.litmus",
                      "MP+relacq.make_token.litmus", "MP+relacq.join.partial.litmus",
                      "MP+relpattern.device.litmus", "WRC+relacq.device.litmus"]


@pytest.mark.parametrize("name", TILEIR_ALLOWS_MORE)
def test_tile_ir_allows_more_than_ptx(name):
    t = parse_file(str(TILE / name))
    assert oracle.check(t, "tileir").verdict == "Ok"
    assert oracle.check(parse(lower(t)), "ptx").verdict == "No"


@pytest.mark.parametrize("path", sorted(TILE.glob("*.litmus")), ids=lambda p: p.name)
def test_the_property_holds_on_the_corpus(path):
    from fuzz.weakening import weakening
    t = parse_file(str(path))
    v = weakening(t, budget=None)
    expected = "racy" if oracle.check(t, "tileir").verdict == "Undef" else "holds"
    assert v.status == expected, v.extra


SC_MODEL = """include "tileir.model"
# a planted flaw: Tile IR made sequentially consistent over token order, stronger than PTX
acyclic tko | rf | co | fr as sc
"""


@pytest.fixture
def tileir_sc(tmp_path, monkeypatch):
    """A scratch unit: the tileir model plus SC (forbids SB, which PTX allows)."""
    import dataclasses
    from oracle.lang import load_model
    from oracle.models.tileir import UNIT
    d = tmp_path / "tileir-sc"
    d.mkdir()
    for f in os.listdir(UNIT.directory):
        if f.endswith(".model"):
            (d / f).write_text(open(os.path.join(UNIT.directory, f)).read())
    (d / "tileir-sc.model").write_text(SC_MODEL)
    registry.names()                  # every unit imported and registered before the copy
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    load_model.cache_clear()
    registry.register(dataclasses.replace(UNIT, name="tileir-sc", directory=str(d)))
    yield "tileir-sc"
    load_model.cache_clear()


def test_a_planted_flaw_is_a_counterexample_minimized_and_explained(tileir_sc, tmp_path):
    from fuzz.weakening import explain_counterexample, minimize, weakening
    sb = parse_file(str(TILE / "SB+rlx.device.xblock.litmus"))
    v = weakening(sb, tileir_sc)
    assert v.status == "counterexample"
    assert {"P0:r0": 0, "P1:r1": 0, "x": 1, "y": 1} in v.extra
    small = minimize(sb, tileir_sc, seconds=120)
    assert weakening(small, tileir_sc).status == "counterexample"
    # SB needs both blocks and all four ops: nothing can go
    assert sum(len(th.code) for th in small.threads) == 4
    text = explain_counterexample(small, tileir_sc)
    assert "is ALLOWED by model ptx" in text and "is FORBIDDEN by model tileir-sc" in text
    assert "fails 'sc'" in text


def test_minimize_drops_what_the_counterexample_does_not_need(tileir_sc):
    from fuzz.weakening import minimize, weakening
    t = parse("""TILEIR sb-plus
{ x = 0; y = 0; z = 0; }
 P0@block 0, device 0                        | P1@block 1, device 0                        | P2@block 2 ;
 t0 = store relaxed device [x, z], [1, 5]    | t2 = store relaxed device [y], [1]          | t0 = store relaxed sys [z], [7] ;
 [r0], t1 = load relaxed device [y] token=t0 | [r1], t3 = load relaxed device [x] token=t2 |  ;
exists (true)
""")
    assert weakening(t, tileir_sc).status == "counterexample"
    small = minimize(t, tileir_sc, seconds=120)
    assert len(small.threads) == 2
    assert sorted(len(op.addrs) for th in small.threads for op in th.code) == [1, 1, 1, 1]
    assert weakening(small, tileir_sc).status == "counterexample"


def test_the_campaign_writes_its_figures(tmp_path):
    from fuzz.cli import main
    out = tmp_path / "w"
    assert main(["fuzz", "--against", "ptx", "--programs", "12", "--seed", "5", "--out",
                 str(out), "--quiet"]) == 0
    res = json.loads((out / "weakening.json").read_text())
    assert res["programs"] == 12 and res["counterexamples"] == 0
    assert res["race_free"] + res["racy"] + res["over_budget"] == 12
    assert main(["fuzz", "--against", "amdgpu", "--out", str(out)]) == 2


#: found by `fuzz --against ptx --model tileir-casnowrite --seed 0` (program 611, minimized): a
#: cas that always fails. If its failed lane does not write (A2 off), the program is race-free and
#: P0's weak load cannot read 1 (only P0's own token-later store writes 1: sc-per-location). The
#: lowered PTX atom.cas writes back what it read; P0's ld.weak may read that write-back of P0's
#: store (a PTX race is not UB; no causality reaches the weak load), so PTX allows r2 = 1.
CAS_WRITEBACK = """TILEIR cas-writeback
{ x = 0; }
 P0@block 0, device 0                        | P1@block 2, device 0                            ;
 [r2], t1 = load weak [x]                    | [r1], t0 = atomic_cas relaxed device [x], [2], [3] ;
 t2 = store release device [x], [1] token=t1 |                                                 ;
exists (P0:r2 == 1)
"""


def test_failed_cas_without_a_write_breaks_the_claim_under_this_mapping():
    from fuzz.weakening import weakening
    t = parse(CAS_WRITEBACK)
    v = weakening(t, "tileir-casnowrite", budget=None)
    assert v.status == "counterexample"
    assert {"P0:r2": 1, "P1:r1": 1, "x": 1} in v.extra
    # the default reading (a failed cas writes) makes it a race with the weak load: no claim
    assert weakening(t, "tileir", budget=None).status == "racy"


def _figures(out):
    res = json.loads((out / "weakening.json").read_text())
    for k in ("seconds", "programs_per_s", "race_free_per_s"):
        res.pop(k)
    return res


def test_the_campaign_runs_on_the_campaign_loop_and_resumes(tileir_sc, tmp_path):
    """Journal, counterexample directories and figures agree; a campaign resumed half-way ends
    where one run of all its programs ends. Every third program is SB (a counterexample under the
    planted flaw), the others the TILEIR family's draws."""
    import dataclasses
    from fuzz import programs
    from fuzz.campaign import CampaignError
    from fuzz.journal import read_journal
    from fuzz.weakening import weakening
    from fuzz.weakening_campaign import WeakeningCampaign, weakening_config
    sb = parse_file(str(TILE / "SB+rlx.device.xblock.litmus"))
    tile = programs.family("TILEIR")

    def draw(seed, i, features=None, near_miss=0.5):
        return dataclasses.replace(sb, name=f"sb-{i}") if i % 3 == 1 else tile.draw(seed, i)

    def campaign(out, n, resume=False):
        c = WeakeningCampaign(weakening_config(str(out), tileir_sc, seed=3, seconds=None,
                                               programs=n, minimize_seconds=120, resume=resume))
        c.family = dataclasses.replace(tile, draw=draw)
        return c

    n = 8
    whole = tmp_path / "whole"
    st = campaign(whole, n).run()
    lines = [e for e in read_journal(str(whole / "journal.jsonl")) if e["type"] == "program"]
    assert [e["i"] for e in lines] == list(range(n))
    statuses = [e["status"] for e in lines]
    assert [statuses[i] for i in (1, 4, 7)] == ["counterexample"] * 3
    assert st.programs == n and st.racy == statuses.count("racy")
    assert st.race_free == statuses.count("holds") + statuses.count("counterexample")
    # the three SB programs minimize to one counterexample: recorded once, the others name its key
    assert st.counterexamples == 1
    named = [e for e in lines if "counterexample" in e]
    assert [(e["i"], e["counterexample"]) for e in named] == [(1, "001")]
    assert len({e["key"] for e in lines if e["status"] == "counterexample"}) == 1
    d = whole / "counterexamples" / "001"
    assert sorted(os.listdir(d)) == ["explanation.txt", "ptx.litmus", "tileir.litmus"]
    assert weakening(parse_file(str(d / "tileir.litmus")), tileir_sc).status == "counterexample"
    fig = _figures(whole)
    assert fig["found"] == [{"dir": str(d), "from": "sb-1"}]
    assert (fig["programs"], fig["counterexamples"]) == (n, 1)

    half = tmp_path / "half"
    campaign(half, n // 2).run()
    with pytest.raises(CampaignError, match="already holds a campaign"):
        campaign(half, n).run()
    campaign(half, n, resume=True).run()
    resumed = _figures(half)
    assert [f["from"] for f in resumed.pop("found")] == [f["from"] for f in fig.pop("found")]
    assert resumed == fig

"""The ptx (PTX ISA 7.5) and ptx60 (6.0) models against Dat3M's PTX suites (PTXv7_5.csv,
PTXv6_0.csv; 1 = the condition holds), the two models against each other, the engine against the
plain-Python evaluation of the same model files (tests/reference.py), and hand-derived cases of
the model's choices (docs/conformance.md)."""

import dataclasses

import pytest

import oracle
from litmus import parse, parse_file
from litmus.expected import read_expected
from oracle import OracleError, registry
from oracle.check import pre_executions
from oracle.lang import load_model
from reference import candidates

#: Tests where a model and the expected verdict may differ, with the reason (docs/conformance.md).
#: Empty: both models agree with every test of their suite.
DOCUMENTED: dict[str, str] = {}


def rows(conformance, suite, model):
    csv = registry.get(model).expected_csv(str(conformance), suite)
    return [(e.path, e.written) for e in read_expected(csv).rows]


def disagreements(conformance, suite, model):
    bad = []
    for rel, want in rows(conformance, suite, model):
        res = oracle.check(parse_file(conformance / rel), model)
        got = {"Ok": "1", "No": "0"}[res.verdict]
        if got != want and rel not in DOCUMENTED:
            bad.append((rel, want, got))
    return bad


def test_ptx60_agrees_with_the_ptxv6_0_suite(conformance):
    assert len(rows(conformance, "PTXv6_0", "ptx60")) >= 90
    assert disagreements(conformance, "PTXv6_0", "ptx60") == []


def test_ptx_agrees_with_the_ptxv7_5_suite(conformance):
    assert len(rows(conformance, "PTXv7_5", "ptx")) >= 180
    assert disagreements(conformance, "PTXv7_5", "ptx") == []


def test_without_proxies_the_two_models_allow_the_same_outcomes(conformance):
    """ptx.model differs from ptx60.model only where proxies preserve causality: on programs
    without aliases and proxies, same states, verdicts and race flags."""
    for rel, _ in rows(conformance, "PTXv6_0", "ptx60"):
        t = parse_file(conformance / rel)
        a, b = oracle.check(t, "ptx"), oracle.check(t, "ptx60")
        assert (a.verdict, a.flags) == (b.verdict, b.flags), rel
        assert sorted(map(repr, a.states)) == sorted(map(repr, b.states)), rel


def test_ptx60_refuses_proxies_and_aliases(conformance):
    t = parse_file(conformance / "PTX" / "Nvidia" / "proxy" /
                   "Proxy-MP-sur-tex-fenceCorrectThread.litmus")
    with pytest.raises(OracleError, match=r"model ptx60 \(PTX ISA 6.0\) has no proxies or "
                                          r"aliases .*; use the ptx model"):
        oracle.check(t, "ptx60")
    assert oracle.check(t).model == "ptx"                 # the PTX dialect's default


# --- the engine against the plain-Python evaluation ----------------------------------------------

def reference(test, model):
    """(states, race flag) of tests/reference.py's enumeration: no search hints, no pruning."""
    prog = load_model(model)
    keys = test.observables()
    states, racy = set(), False
    for pe in pre_executions(registry.get(model), test):
        for c in candidates(pe, prog):
            if c is None or c.failed is not None:
                continue
            o = c.outcome()
            states.add(tuple(o[k] for k in keys))
            racy = racy or "racy" in c.flags
    return states, racy


def engine(test, model):
    res = oracle.check(test, model)
    return {tuple(s[k] for k in test.observables()) for s in res.states}, "racy" in res.flags


SMALL = ["Manual/MP-cta.litmus", "Manual/SB+sc-gpu-multiFence.litmus",
         "Manual/CoRR-acquire-weak.litmus", "Manual/Atom-plus-register.litmus",
         "Manual/PC-bar-sync-arrive.litmus", "Barrier/quorum3-pass.litmus",
         "Manual/SB+named-bar-sta-reg-const.litmus", "Manual/LB+RMW-a.litmus",
         "Nvidia/proxy/Proxy-MP-Alias+diffProxy-aliasFence+proxyFence-correctOrder1.litmus",
         "Nvidia/proxy/Proxy-MP-sur-tex-fenceCorrectThread.litmus",
         "Manual/proxy/Proxy-Alias-AliasFence.litmus", "Memalloy/WRC2.litmus"]


@pytest.mark.parametrize("rel", SMALL)
def test_engine_and_reference_agree_on_suite_tests(conformance, rel):
    t = parse_file(conformance / "PTX" / rel)
    assert engine(t, "ptx") == reference(t, "ptx")


def test_engine_and_reference_agree_on_the_corpus():
    from conftest import CORPORA
    for path in sorted((CORPORA / "ptx").glob("*.litmus")):
        t = parse_file(path)
        assert engine(t, "ptx") == reference(t, "ptx"), path.name


def test_search_hints_change_no_outcome(conformance, tmp_path, monkeypatch):
    """The coherence pruning on uniform locations (oracle/models/ptx/builder.py) against the
    same model searched with no hint but the coherence orders themselves."""
    unit = registry.get("ptx")
    (tmp_path / "ptx-bare.model").write_text(f'include "{unit.model_file}"\n')
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    registry.register(dataclasses.replace(unit, name="ptx-bare", hints=frozenset({"CO", "IW"}),
                                          directory=str(tmp_path)))
    for rel, _ in rows(conformance, "PTXv7_5", "ptx"):
        t = parse_file(conformance / rel)
        assert engine(t, "ptx") == engine(t, "ptx-bare"), rel


# --- choices, derived by hand ---------------------------------------------------------------------

def mp(data_store, data_load, flag_w="st.release.gpu", flag_r="ld.acquire.gpu", second="cta 1"):
    return parse(f"""PTX mp
{{ x=0; y=0; }}
 P0@cta 0,gpu 0       | P1@{second},gpu 0   ;
 {data_store} x, 1    | {flag_r} r0, y      ;
 {flag_w} y, 1        | {data_load} r1, x   ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
""")


def test_data_races_are_flagged_without_changing_the_verdict():
    """8.7.1: conflicting accesses neither morally strong nor ordered by causality race; races
    keep the axioms (8.7.2)."""
    # the weak data accesses race in the executions where the flag is not seen
    res = oracle.check(mp("st.weak", "ld.weak"))
    assert res.verdict == "No" and "racy" in res.flags
    # strong .gpu data accesses are morally strong: no race, and the same verdict
    res = oracle.check(mp("st.relaxed.gpu", "ld.relaxed.gpu"))
    assert res.verdict == "No" and "racy" not in res.flags
    # .cta data accesses of two CTAs are not morally strong: a race
    assert "racy" in oracle.check(mp("st.relaxed.cta", "ld.relaxed.cta")).flags
    barrier = parse("""PTX bar
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 st.weak x, 1   | bar.cta.sync 0 ;
 bar.cta.sync 0 | ld.weak r0, x  ;
exists (P1:r0 == 0)
""")
    res = oracle.check(barrier)
    assert res.verdict == "No" and "racy" not in res.flags      # ordered in every execution


def test_fence_sc_orders_are_the_acyclic_orientations_of_morally_strong_pairs():
    """8.9.3: Fence-SC order relates every morally strong pair of fence.sc; two fences per
    thread in two threads of one CTA give the orders of 4 fences consistent with program order
    (6 interleavings); a .cta fence in another CTA is related to nothing."""
    t = parse("""PTX f
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 1,gpu 0 ;
 fence.sc.cta   | fence.sc.cta   | fence.sc.cta   ;
 fence.sc.cta   | fence.sc.cta   | st.weak x, 1   ;
exists (x == 1)
""")
    from litmus.cfg import paths_per_thread
    from oracle.models.path_executions import build_combination
    from oracle.models.ptx import builder
    combo = [ps[0] for ps in paths_per_thread(t, seed=False, deps=True)]
    st = builder._Static(t, build_combination(t, combo), builder._path_deps(combo))
    orders = {frozenset((a, b) for a, row in enumerate(o) for b in builder._bits(row))
              for o in st.all_fence_sc_orders()}
    assert len(orders) == 6
    assert all(len(o) == 6 for o in orders)        # every pair of the 4 fences, once
    # every fence here is leading (nothing but fence.sc before it in its thread): the builder
    # gives the search one order, fences in event order (builder doc)
    pes = registry.get("ptx").build(t)
    assert len(pes) == 1
    fences = [e for e in range(pes[0].n) if e in pes[0].sets["SC"]
              and pes[0].events[e].thread in (0, 1)]       # P2's .cta fence: related to none
    assert set(pes[0].pairs("fsc")) == {(a, b) for i, a in enumerate(fences)
                                        for b in fences[i + 1:]}


def test_a_barrier_that_never_completes_has_no_outcome():
    t = parse("""PTX hang
{ x=0; }
 P0@cta 0,gpu 0       | P1@cta 0,gpu 0       ;
 st.weak x, 1         | bar.cta.sync 0, 1, 3 ;
 bar.cta.sync 0, 1, 3 | ld.weak r0, x        ;
exists (P1:r0 == 0 \\/ P1:r0 == 1)
""")
    res = oracle.check(t)
    assert res.states == [] and res.verdict == "No"


def test_a_barrier_id_in_a_register_synchronizes_when_the_values_match():
    """Dat3M's bar.cta.sync INST, ID: barriers of one instance synchronize when their ids are
    equal on the path (SB+named-bar-sta-reg-const): with r2 = 1 the SB outcome is forbidden,
    with r2 = 0 it is allowed."""
    text = """PTX reg
{ x=0; y=0; P0:r2=%d; }
 P0@cta 0,gpu 0     | P1@cta 0,gpu 0    ;
 st.weak x, 1       | st.weak y, 1      ;
 bar.cta.sync 1, r2 | bar.cta.sync 1, 1 ;
 ld.weak r0, y      | ld.weak r1, x     ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
"""
    assert oracle.check(parse(text % 1)).verdict == "No"
    assert oracle.check(parse(text % 0)).verdict == "Ok"


def test_more_writes_to_one_location_than_the_search_orders_is_an_error():
    cells = "\n".join(" st.weak x, %d ;" % v for v in range(1, 10))
    t = parse(f"PTX many\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{cells}\nexists (x == 9)\n")
    with pytest.raises(OracleError, match=r"many: more than 8 writes to x in one execution"):
        oracle.check(t)

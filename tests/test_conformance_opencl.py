"""The opencl model (Batty, Donaldson, Wickerson, POPL 2016) against the Dat3M OPENCL suites:
verdicts (OPENCL.csv) and data races (OPENCL-DR.csv, 1 = no execution is racy); the engine
against the pure-Python evaluation of the same model file (tests/reference.py) on the suite and
on random OpenCL programs; ``scopefuzz check`` reads OPENCL tests with ``opencl`` by default."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
from litmus import parse, parse_file
from litmus.dialects import DEFAULT_MODEL
from litmus.expected import read_expected
from fuzz.cli import main
from oracle import registry
from reference import few_writes, reference_check
from visits import same_visits

#: Tests where the model and the expected verdict are allowed to differ, with the reason
#: (docs/conformance.md). Empty: the model agrees on every test.
DOCUMENTED: dict[str, str] = {}


def expected(conformance, suite):
    csv_path = registry.get("opencl").expected_csv(str(conformance), suite)
    return [(e.path, e.written) for e in read_expected(csv_path).rows]


def observed(res, race):
    if race:
        return "0" if "racy" in res.flags else "1"
    return {"Ok": "1", "No": "0"}[res.verdict]


def run_suite(conformance, suite):
    race = suite.endswith("-DR")
    bad = []
    for rel, want in expected(conformance, suite):
        res = oracle.check(parse_file(conformance / rel), "opencl")
        if observed(res, race) != want and rel not in DOCUMENTED:
            bad.append((rel, want, observed(res, race)))
    return bad


def test_opencl_suite_agrees(conformance):
    assert len(expected(conformance, "OPENCL")) >= 120
    assert run_suite(conformance, "OPENCL") == []


def test_opencl_dr_suite_agrees(conformance):
    assert len(expected(conformance, "OPENCL-DR")) >= 25
    assert run_suite(conformance, "OPENCL-DR") == []


def test_engine_and_reference_agree_on_the_suite(conformance):
    seen = set()
    for rel, _ in expected(conformance, "OPENCL") + expected(conformance, "OPENCL-DR"):
        if rel in seen:
            continue
        seen.add(rel)
        t = parse_file(conformance / rel)
        res = oracle.check(t, "opencl")
        states, _, consistent = reference_check(t, "opencl")
        assert {tuple(s[k] for k in t.observables()) for s in res.states} == states, rel
        assert same_visits(res, t, "opencl", consistent), rel


def test_check_picks_opencl_for_the_dialect(conformance, capsys):
    assert DEFAULT_MODEL["OPENCL"] == "opencl"
    f = conformance / "OPENCL/overhauling/MP_ra_dev.litmus"
    assert main(["check", "--json", str(f)]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["model"] == "opencl"
    # MP with release/acquire at device scope across work-groups: forbidden (OPENCL.csv: 0)
    assert row["verdict"] == "No"


ORDERS = {"st": ["relaxed", "release", "seq_cst"], "ld": ["relaxed", "acquire", "seq_cst"],
          "rmw": ["relaxed", "acquire", "release", "acq_rel", "seq_cst"],
          "fence": ["acquire", "release", "acq_rel", "seq_cst"]}
SCOPES = ["memory_scope_work_item", "memory_scope_work_group", "memory_scope_device",
          "memory_scope_all_svm_devices"]
FLAGS = ["CLK_GLOBAL_MEM_FENCE", "CLK_LOCAL_MEM_FENCE",
         "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"]
PARAMS = "(global atomic_int* x, local atomic_int* y, global int* z)"


@st.composite
def opencl_programs(draw):
    """Two or three work-items in one or two work-groups over a global atomic x, a local
    atomic y and a global non-atomic z: scoped atomics, fences with flags, plain accesses and
    (in every thread, or in some: divergence) a barrier."""
    nthreads = draw(st.integers(2, 3))
    barrier = draw(st.sampled_from([None, "all", "some"]))
    threads, regs, reg = [], [], 0
    for tid in range(nthreads):
        lines = []
        for k in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["st", "ld", "rmw", "fence", "plain_st", "plain_ld"]))
            loc = draw(st.sampled_from(["x", "y"]))
            scope = draw(st.sampled_from(SCOPES))
            if kind in ("st", "ld", "rmw"):
                order = f"memory_order_{draw(st.sampled_from(ORDERS[kind]))}"
            if kind == "st":
                lines.append(f"atomic_store_explicit({loc}, {draw(st.integers(1, 2))}, {order}, "
                             f"{scope});")
            elif kind in ("ld", "rmw"):
                call = (f"atomic_load_explicit({loc}, {order}, {scope})" if kind == "ld" else
                        f"atomic_fetch_add_explicit({loc}, 1, {order}, {scope})")
                lines.append(f"int r{reg} = {call};")
                regs.append((tid, reg))
                reg += 1
            elif kind == "fence":
                lines.append(f"atomic_work_item_fence({draw(st.sampled_from(FLAGS))}, "
                             f"memory_order_{draw(st.sampled_from(ORDERS['fence']))}, "
                             f"{draw(st.sampled_from(SCOPES[1:]))});")
            elif kind == "plain_st":
                lines.append(f"*z = {draw(st.integers(1, 2))};")
            else:
                lines.append(f"int r{reg} = *z;")
                regs.append((tid, reg))
                reg += 1
            if k == 0 and (barrier == "all" or barrier == "some" and tid == 0):
                lines.append(f"B1: barrier({draw(st.sampled_from(FLAGS))});")
        wg = draw(st.integers(0, 1))
        threads.append(f"P{tid}@wg {wg}, dev 0 {PARAMS} {{ " + " ".join(lines) + " }")
    cond = " /\\ ".join(f"{t}:r{r}=0" for t, r in regs[:2]) or "x=0"
    return ("OPENCL rand\n{ [x] = 0; [y] = 0; [z] = 0; }\n" + "\n".join(threads)
            + f"\nexists ({cond})\n")


@settings(max_examples=25, deadline=None)
@given(opencl_programs().filter(lambda text: few_writes(parse(text))))
def test_engine_and_reference_agree_on_random_programs(text):
    t = parse(text)
    res = oracle.check(t, "opencl")
    states, _, consistent = reference_check(t, "opencl")
    assert {tuple(s[k] for k in t.observables()) for s in res.states} == states, text
    assert same_visits(res, t, "opencl", consistent), text

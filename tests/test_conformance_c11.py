"""The c11 model (Batty et al. 2011 with the simplified SC axiom of Batty, Donaldson, Wickerson
2016) against the Dat3M C11 suite (C11.csv); the engine against the pure-Python evaluation of the
same model file (tests/reference.py) on the suite and on random C programs; and, on small
programs whose verdicts are derived by hand, the places where C11 and RC11 differ."""

import json

from hypothesis import given, settings

import oracle
from litmus import parse, parse_file
from litmus.expected import read_expected
from oracle import registry
from reference import few_writes, reference_check
from test_conformance_rc11 import c_programs
from test_thin_air import OOTA_C
from visits import same_visits

#: Tests of the suite where the model and the expected verdict are allowed to differ, with the
#: reason (docs/conformance.md). Empty: the model agrees on every test.
DOCUMENTED: dict[str, str] = {}


def expected(conformance, suite="C11"):
    csv_path = registry.get("c11").expected_csv(str(conformance), suite)
    return [(e.path, e.written) for e in read_expected(csv_path).rows]


def herd(verdict):
    return {"Ok": "1", "No": "0"}[verdict]


def test_c11_suite_agrees(conformance):
    rows = expected(conformance)
    assert len(rows) >= 90
    bad = []
    for rel, want in rows:
        res = oracle.check(parse_file(conformance / rel), "c11")
        if herd(res.verdict) != want and rel not in DOCUMENTED:
            bad.append((rel, want, res.verdict))
    assert bad == []


def test_engine_and_reference_agree_on_the_suite(conformance):
    for rel, _ in expected(conformance):
        t = parse_file(conformance / rel)
        res = oracle.check(t, "c11")
        states, _, consistent = reference_check(t, "c11")
        assert {tuple(s[k] for k in t.observables()) for s in res.states} == states, rel
        assert same_visits(res, t, "c11", consistent), rel


@settings(max_examples=25, deadline=None)
@given(c_programs().filter(lambda text: few_writes(parse(text))))
def test_engine_and_reference_agree_on_random_programs(text):
    t = parse(text)
    res = oracle.check(t, "c11")
    states, _, consistent = reference_check(t, "c11")
    assert {tuple(s[k] for k in t.observables()) for s in res.states} == states
    assert same_visits(res, t, "c11", consistent)


def verdicts(text):
    t = parse(text)
    return oracle.check(t, "c11").verdict, oracle.check(t, "rc11").verdict


def test_load_buffering_through_dependencies():
    # C11 has no no-thin-air axiom: the (sb | rf) cycle is consistent; RC11 forbids it
    assert verdicts("""C lb
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  if (r0) { atomic_store_explicit(y, 1, memory_order_relaxed); }
}
P1 (atomic_int* x, atomic_int* y) {
  int r1 = atomic_load_explicit(y, memory_order_relaxed);
  atomic_store_explicit(x, r1, memory_order_relaxed);
}
exists (0:r0=1 /\\ 1:r1=1)
""") == ("Ok", "No")


def test_out_of_thin_air_value():
    # nothing writes 42: only a cycle of rf and data dependencies justifies it (C11: allowed)
    assert verdicts(OOTA_C) == ("Ok", "No")


def test_release_sequence_is_mo_contiguous_in_c11():
    # P0's y=3 is sb-after its release y=1. P3 sees 1 then 2, and y ends at 3: mo is 1, 2, 3,
    # so P2's y=2 (another thread, no rmw) breaks C11's release sequence of y=1 before 3
    # (Batty et al. 2011): reading 3 does not synchronise, x may read 0. RC11's rs keeps the
    # sb-later write of the same location ([W] ; (sb & loc)? ; ...): it synchronises.
    assert verdicts("""C rseq
{ [x] = 0; [y] = 0; }
P0 (int* x, atomic_int* y) {
  *x = 1;
  atomic_store_explicit(y, 1, memory_order_release);
  atomic_store_explicit(y, 3, memory_order_relaxed);
}
P1 (int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = -1;
  if (r0 == 3) { r1 = *x; }
}
P2 (atomic_int* y) { atomic_store_explicit(y, 2, memory_order_relaxed); }
P3 (atomic_int* y) {
  int a = atomic_load_explicit(y, memory_order_relaxed);
  int b = atomic_load_explicit(y, memory_order_relaxed);
}
exists (1:r0=3 /\\ 1:r1=0 /\\ 3:a=1 /\\ 3:b=2 /\\ y=3)
""") == ("Ok", "No")


def test_operands_of_plus_are_unsequenced():
    # C11 6.5p3: the acquire load and the read of *y in one '+' are unsequenced, so the read
    # of *y is not hb-after P0's *y = 1 and (non-atomic: a visible side effect) reads 0; split
    # into two statements, sb orders them and t = 2 is possible
    text = """C unseq
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, int* y) { *y = 1; atomic_store_explicit(x, 1, memory_order_release); }
P1 (atomic_int* x, int* y) { %s }
exists (1:t=2)
"""
    one = parse(text % "int t = atomic_load_explicit(x, memory_order_acquire) + *y;")
    two = parse(text % "int t = atomic_load_explicit(x, memory_order_acquire); t = t + *y;")
    assert oracle.check(one, "c11").verdict == "No"
    assert oracle.check(two, "c11").verdict == "Ok"


def test_sc_axiom_forbids_iriw_with_acquire_readers_only_in_c11(conformance):
    # Batty et al. 2016's SC axiom orders the SC writes of IRIW-sc-sc-acq-sc-acq-sc through
    # hb, fr and mo: forbidden; RC11's psc (scb instead of hb) allows it
    t = parse_file(conformance / "C11/manual/IRIW-sc-sc-acq-sc-acq-sc.litmus")
    assert oracle.check(t, "c11").verdict == "No"
    assert oracle.check(t, "rc11").verdict == "Ok"


def test_check_model_c11_on_the_command_line(conformance, capsys):
    # rc11 stays the C dialect's default; --model c11 reads the same files
    from fuzz.cli import main
    f = conformance / "C11/manual/IRIW-sc-sc-acq-sc-acq-sc.litmus"
    assert main(["check", "--json", str(f)]) == 0
    assert main(["check", "--json", "--model", "c11", str(f)]) == 0
    rows = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [(r["model"], r["verdict"]) for r in rows] == [("rc11", "Ok"), ("c11", "No")]

"""Values out of thin air (issue 13, rule 5): a model without a no-thin-air axiom declares it
(``allow thin-air`` in its model file), and its builder then lets reads take values that flow
around a cycle of rf and data dependencies, enumerated over the program's and the condition's
constants plus one value distinct from them. Expectations are hand-derived; the Vulkan one is
also Dat3M's (VULKAN/Manual/OOTA expects 1)."""

from __future__ import annotations

import pytest

import oracle
from litmus import parse
from litmus.cfg import data_constants, thin_air_values, value_domains
from oracle import OracleError
from oracle.lang import compile_model, load_model, parse_model
import oracle.models.vulkan.reference as vk_ref

OOTA = """Vulkan OOTA
{ x=0; y=0; P0:r0=0; P1:r1=0; }
 P0@sg 0, wg 0, qf 0  | P1@sg 0, wg 0, qf 0  ;
 ld.atom.wg.sc0 r0, x | ld.atom.wg.sc0 r1, y ;
 st.atom.wg.sc0 y, r0 | st.atom.wg.sc0 x, r1 ;
exists (P0:r0 == 42 /\\ P1:r1 == 42)
"""

OOTA_C = """C OOTA
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  atomic_store_explicit(y, r0, memory_order_relaxed);
}
P1 (atomic_int* x, atomic_int* y) {
  int r1 = atomic_load_explicit(y, memory_order_relaxed);
  atomic_store_explicit(x, r1, memory_order_relaxed);
}
exists (0:r0=42 /\\ 1:r1=42)
"""


def test_the_models_declare_it():
    # vulkan has no no-thin-air axiom; rc11 has one (po | rf acyclic); amdgpu keeps LLVM's
    # no-thin-air reading
    assert load_model("vulkan").allow == {"thin-air"}
    assert load_model("rc11").allow == frozenset()
    assert load_model("amdgpu").allow == frozenset()


def test_allow_statement_and_its_errors():
    prog = compile_model(parse_model("allow thin-air\nempty a as never\n"))
    assert prog.allow == {"thin-air"} and prog.checks == ["never"]
    with pytest.raises(OracleError, match=r"^m:2:7: unknown property 'thin-ice'"):
        parse_model("let a = b\nallow thin-ice\n", "m")


def test_constants_of_a_program_and_its_condition():
    t = parse("""Vulkan consts
{ x=3; y=0; P0:r0=5; }
 P0@sg 0, wg 0, qf 0  | P1@sg 0, wg 0, qf 0  ;
 ld.atom.wg.sc0 r0, x | ld.atom.wg.sc0 r1, y ;
 add r2, r0, 7        | st.atom.wg.sc0 x, 9  ;
 st.atom.wg.sc0 y, r2 |                      ;
exists (P1:r1 == 42)
""", "consts.litmus")
    # initial values 3, 0 (y, registers left out), 5 (P0:r0); the literal 7, the stored 9; the
    # condition's 42
    assert data_constants(t) == {0, 3, 5, 7, 9, 42}
    assert thin_air_values(t) == {0, 3, 5, 7, 9, 42, 43}
    # only with thin_air do the domains start with them, and only the domains of locations some
    # write stores a register-dependent value into (y = r2): x is only ever written the
    # constant 9, so it holds 3 or 9 and never a value out of thin air (nor does y get 42 + 7)
    assert value_domains(t)["y"] == {0, 10, 16}
    dom = value_domains(t, thin_air=True)
    assert dom["y"] == {0, 3, 5, 7, 9, 42, 43, 10, 16}
    assert dom["x"] == {3, 9}


def test_vulkan_allows_the_out_of_thin_air_copy_cycle():
    t = parse(OOTA, "oota.litmus")
    for res in (oracle.check(t, "vulkan"), vk_ref.check(t)):
        assert res.verdict == "Ok"
        pairs = {(s["P0:r0"], s["P1:r1"]) for s in res.states}
        # the initial values, and each thin-air value copied around the cycle; never two
        # different values (each read returns what the other thread wrote)
        assert pairs == {(0, 0), (42, 42), (43, 43)}


def test_rc11_forbids_it():
    res = oracle.check(parse(OOTA_C, "oota.litmus"))
    assert res.model == "rc11" and res.verdict == "No"
    assert {(s["P0:r0"], s["P1:r1"]) for s in res.states} == {(0, 0)}


def test_no_thin_air_value_without_a_cycle():
    # P1 copies y into x, but only P0's initial-valued x feeds y: no cycle, no 42
    t = parse(OOTA.replace(" st.atom.wg.sc0 y, r0 | st.atom.wg.sc0 x, r1 ;",
                           "                      | st.atom.wg.sc0 x, r1 ;"), "one.litmus")
    res = oracle.check(t, "vulkan")
    assert res.verdict == "No"
    assert {(s["P0:r0"], s["P1:r1"]) for s in res.states} == {(0, 0)}

"""One read-modify-write encoding (litmus/rmw.py) shared by the oracle, the simulator and the
Python front ends, and one definition of the value an rmw writes."""

from __future__ import annotations

import itertools

import pytest

import litmus
import oracle
from hw.sim import make_backend
from litmus.ir import RMW_OPS
from litmus.rmw import OP_CODES, RMW_CODES, apply_rmw

# (op, old, operand, written value), worked out by hand
CASES = [
    ("add", 5, 3, 8), ("add", -2, 3, 1),
    ("sub", 5, 3, 2), ("sub", 1, 3, -2),
    ("xchg", 5, 3, 3),
    ("and", 6, 3, 2), ("and", -1, 5, 5),
    ("or", 6, 3, 7), ("or", 4, 1, 5),
    ("xor", 6, 3, 5), ("xor", 7, 7, 0),
    ("max", 5, 3, 5), ("max", -1, 3, 3),
    ("min", 5, 3, 3), ("min", -1, 3, -1),
    ("const", 9, 4, 4), ("copy", 9, 4, 9),
    # PTX atom.inc/atom.dec wrap at the operand (PTX ISA, atom)
    ("inc", 2, 5, 3), ("inc", 5, 5, 0), ("inc", 7, 5, 0),
    ("dec", 3, 5, 2), ("dec", 0, 5, 5), ("dec", 7, 5, 5),
]


@pytest.mark.parametrize("op,old,operand,want", CASES)
def test_apply_rmw_by_hand(op, old, operand, want):
    assert apply_rmw(RMW_CODES[op], old, operand) == want


def test_compiled_apply_rmw_agrees_with_python_on_signed_values():
    from litmus.rmw_jit import apply_rmw as compiled
    for code, old, operand in itertools.product(RMW_CODES.values(), (-7, -1, 0, 1, 6, 1 << 40),
                                                (-3, 0, 3, 1 << 33)):
        assert compiled(code, old, operand) == apply_rmw(code, old, operand), (code, old, operand)


def test_oracle_and_simulator_use_the_one_encoding():
    from hw.sim.uops import RMW_OPS as SIM_CODES
    from oracle.events import RMW_CODES as ORACLE_CODES
    assert ORACLE_CODES == RMW_CODES
    assert SIM_CODES == OP_CODES == {op: RMW_CODES[op] for op in RMW_OPS}
    assert len(set(RMW_CODES.values())) == len(RMW_CODES)


# every rmw operation once, on global memory (GRMW) and on LDS (LRMW); one thread, so the
# outcome is determined: each register holds the initial value, each location the written one
ALL_OPS = """AMDGPU rmw-ops
{ a = 5; b = 5; c = 5; d = 6; e = 6; f = 6; g = 5; h = -1; lds k = 6; lds m = 5; }
 P0                   ;
 rmw.add.agent r0, a, 3 ;
 rmw.sub.agent r1, b, 3 ;
 rmw.xchg.agent r2, c, 3 ;
 rmw.and.agent r3, d, 3 ;
 rmw.or.agent r4, e, 3 ;
 rmw.xor.agent r5, f, 3 ;
 rmw.max.agent r6, g, 3 ;
 rmw.min.agent r7, h, 3 ;
 rmw.xor.wg r8, k, 3 ;
 rmw.min.wg r9, m, 3 ;
 ld.atom.wg r10, k ;
 ld.atom.wg r11, m ;
exists (P0:r0 == 5)
"""
WANT = {"P0:r0": 5, "P0:r1": 5, "P0:r2": 5, "P0:r3": 6, "P0:r4": 6, "P0:r5": 6, "P0:r6": 5,
        "P0:r7": -1, "P0:r8": 6, "P0:r9": 5, "P0:r10": 5, "P0:r11": 3,
        "a": 8, "b": 2, "c": 3, "d": 2, "e": 7, "f": 5, "g": 5, "h": -1}


def test_oracle_computes_every_rmw_value():
    res = oracle.check(litmus.parse(ALL_OPS))
    assert res.states == [WANT]


@pytest.mark.parametrize("backend", ["sim", "sim:rmw-split"])
def test_simulator_computes_every_rmw_value(backend):
    # sim:rmw-split computes the global rmws' values in the store half (GSTR)
    hist = make_backend(backend.partition(":")[2] or None).run(litmus.parse(ALL_OPS), 200, 1)
    assert [o for o, _ in hist.outcomes()] == [WANT]

"""Read-modify-write operations: one encoding and one definition of the value an rmw writes.

The oracle (the ``wop`` of an rmw's write event, :mod:`oracle.events`), the simulator (the rmw-op
field of its ``GRMW``/``LRMW``/``GSTR`` micro-ops, :mod:`hw.sim.uops`) and the Python front ends
and references all encode an operation by :data:`RMW_CODES` and compute the written value with
:func:`apply_rmw`. Two extra codes serve the oracle's value flow: ``const`` (a write of its own
constant operand) and ``copy`` (a write of its source read's value: the LDS write of an async copy).
``inc`` and ``dec`` are PTX's wrapping ``atom.inc``/``atom.dec`` (the PTX front end's only; the
AMDGPU ``rmw.OP`` set, :data:`litmus.ir.RMW_OPS`, does not name them).

:func:`apply_rmw` is plain Python that numba can compile; :mod:`litmus.rmw_jit` holds the one
compiled version (kept out of this module so that ``import litmus`` does not import numba).
Compiled callers freeze these codes into their machine code: ``oracle/__init__.py`` and
``hw/sim/__init__.py`` list this file among the sources their numba cache depends on.
"""

from __future__ import annotations

from .ir import RMW_OPS

CONST, ADD, SUB, XCHG, AND, OR, XOR, MAX, MIN, COPY, INC, DEC = range(12)

#: operation name -> code (``rmw.OP`` names, plus the oracle's ``const`` and ``copy``)
RMW_CODES = {"const": CONST, "add": ADD, "sub": SUB, "xchg": XCHG, "and": AND, "or": OR,
             "xor": XOR, "max": MAX, "min": MIN, "copy": COPY, "inc": INC, "dec": DEC}

#: the operations an ``rmw.OP`` instruction may name (:data:`litmus.ir.RMW_OPS`), by code
OP_CODES = {op: RMW_CODES[op] for op in RMW_OPS}


def apply_rmw(op, old, operand):
    """The value an rmw with code ``op`` writes, from the value ``old`` it read and its operand.

    ``xchg`` and ``const`` write the operand, ``copy`` writes ``old``; ``max``/``min`` compare as
    signed integers. ``inc``/``dec`` wrap as PTX's ``atom.inc``/``atom.dec`` do (PTX ISA,
    atom: ``inc(r, s) = (r >= s) ? 0 : r+1``; ``dec(r, s) = (r == 0 || r > s) ? s : r-1``).
    """
    if op == ADD:
        return old + operand
    if op == SUB:
        return old - operand
    if op == AND:
        return old & operand
    if op == OR:
        return old | operand
    if op == XOR:
        return old ^ operand
    if op == MAX:
        return old if old > operand else operand
    if op == MIN:
        return old if old < operand else operand
    if op == COPY:
        return old
    if op == INC:
        return 0 if old >= operand else old + 1
    if op == DEC:
        return operand if old == 0 or old > operand else old - 1
    return operand

"""The Tile IR program model (CUDA Tile IR, chapter 7 "Memory Model"; docs/tileir.md).

A Tile IR litmus test (dialect ``TILEIR``) is a :class:`litmus.ir.Test` whose threads are *tile
blocks* and whose instructions are :class:`TileOp` s: token-ordered tile operations over a tile of
element addresses (``load``, ``store``, ``atomic_rmw``, ``atomic_cas``) and the token operations
``make_token`` / ``join_tokens``. Each memory op produces a token and may consume one
(``token=tK``, the real ops' optional input token); ``join_tokens`` consumes two or more.

A :class:`TileOp` is an :class:`~litmus.ir.Instr` (so ``Test.observables``, registers and sizes
work unchanged) carrying the Tile IR fields: the ordering ``sem`` in Tile IR's words, the scope in
Tile IR's words (``tile_block``, ``device``, ``sys``), one address per lane (possibly aliased:
``[x[0], x[0]]``), the values / compare values / result registers per lane, the lane mask, the token
it produces and the tokens it consumes. Which orderings and scopes each op accepts is the
verifier's rule (``NVIDIA/cuda-tile`` ``CudaTile.cpp``): :data:`SEMS_OF`, :func:`verify_sem`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import Instr

HEADER = "TILEIR"
#: memory orderings (Tile IR 7.3), weakest first
SEMS = ("weak", "relaxed", "acquire", "release", "acq_rel")
#: scopes (Tile IR 7.2), narrowest first; the real assembly keyword of tile_block is ``tl_blk``
SCOPES = ("tile_block", "device", "sys")
#: memory ops and the orderings their verifier accepts
SEMS_OF = {
    "load": ("weak", "relaxed", "acquire"),
    "store": ("weak", "relaxed", "release"),
    "atomic_rmw": ("relaxed", "acquire", "release", "acq_rel"),
    "atomic_cas": ("relaxed", "acquire", "release", "acq_rel"),
}
MEMORY_OPS = tuple(SEMS_OF)
TOKEN_OPS = ("make_token", "join_tokens")
#: atomic_rmw modes with an integer meaning (the engine's rmw encoding, litmus/rmw.py)
RMW_MODES = ("add", "and", "or", "xor", "max", "min", "xchg")
#: the Instr ``base`` each op kind is filed under (classification helpers of litmus.ir.Instr)
BASE_OF = {"load": "ld", "store": "st", "atomic_rmw": "rmw", "atomic_cas": "cas",
           "make_token": "token", "join_tokens": "token"}


def verify_sem(kind: str, sem: str, scope: str | None) -> str | None:
    """The verifier's complaint about an ordering/scope pair of a ``kind`` op, or None."""
    if sem not in SEMS_OF[kind]:
        return (f"{kind} accepts the orderings {', '.join(SEMS_OF[kind])}, not {sem!r}")
    if sem == "weak" and scope is not None:
        return f"a weak {kind} must not have a memory scope (got {scope!r})"
    if sem != "weak" and scope is None:
        return f"a {sem} {kind} needs a scope ({', '.join(SCOPES)})"
    return None


def is_acquire(sem: str | None) -> bool:
    return sem in ("acquire", "acq_rel")


def is_release(sem: str | None) -> bool:
    return sem in ("release", "acq_rel")


@dataclass(frozen=True)
class TileOp(Instr):
    """One Tile IR operation of a tile block (see the module docstring).

    ``opname`` is one of :data:`MEMORY_OPS` or :data:`TOKEN_OPS`; ``sem`` an ordering of
    :data:`SEMS`; ``scope`` a scope of :data:`SCOPES` or None (weak); ``addrs`` one element
    location per lane; ``vals`` the stored values / rmw operands / cas new values per lane;
    ``cmps`` the cas compare values; ``regs`` the result register per lane (loads, atomics);
    ``mask`` one bool per lane (``()``: every lane active); ``token`` the token produced;
    ``token_in`` the tokens consumed. ``op`` is the rmw mode.
    """

    opname: str = ""
    sem: str | None = None
    addrs: tuple[str, ...] = ()
    vals: tuple[int, ...] = ()
    cmps: tuple[int, ...] = ()
    regs: tuple[str, ...] = ()
    mask: tuple[bool, ...] = ()
    token: str = ""
    token_in: tuple[str, ...] = ()

    def active(self, lane: int) -> bool:
        return not self.mask or self.mask[lane]

    def lanes(self) -> range:
        return range(len(self.addrs))

    def registers(self) -> tuple[str, ...]:
        return self.regs

    def locations(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.addrs))

    @property
    def is_memory_access(self) -> bool:
        return self.opname in MEMORY_OPS

    @property
    def kind(self) -> str:
        """The coverage label: the op's name."""
        return self.opname


def element_name(tile: str, index: int) -> str:
    """The location name of element ``index`` of tile ``tile``: ``x[2]``."""
    return f"{tile}[{index}]"

"""Tile IR token-graph programs for the strict-weakening campaign (docs/tileir.md).

:func:`build_tileir` draws one TILEIR program from a choice source (:class:`fuzz.strategies.
RandomSource` for campaigns: program *i* of seed *s* is :func:`draw_tileir`; :class:`fuzz.
strategies.HypothesisSource` for :func:`tileir_programs`, a Hypothesis strategy that shrinks toward
fewer blocks, ops and lanes and the first option of every choice):

- 2-4 tile blocks, each on device 0 or (now and then) device 1;
- a pool of 1-3 element locations (a tile ``x[0..k]``, and a scalar ``f`` half the time);
- 1-3 ops per block: ``load``, ``store``, ``atomic_rmw``, ``atomic_cas`` over tiles of 1-4 lanes
  whose addresses are drawn from the pool (so lanes alias), now and then masked; every ordering
  the op accepts (weak with weight ``weak_p`` against 1 for each other one: weak accesses of
  several blocks race unless hb orders them), a scope for every ordering but weak (device,
  sys, and tile_block with weight ``tile_block_p``: across blocks it is not morally strong); ``join_tokens`` of two earlier tokens and
  ``make_token`` now and then; each memory op consumes an earlier token of its block (or a fresh
  one, or none) with probability ``token_p``;
- distinct stored values (1, 2, ...) so that an outcome says which write a read saw.

Programs stay inside the engine's limits: at most :data:`MAX_ACCESS_EVENTS` access events, at
most 3 cas lanes (each doubles the pre-executions) and at most 6 writes per location.
"""

from __future__ import annotations

from litmus.ir import Condition, Const, Location, Test, Thread
from litmus.scopes import Placement
from litmus.tileir import BASE_OF, RMW_MODES, SEMS_OF, TileOp, element_name

from .strategies import HypothesisSource, RandomSource, program_seed

MAX_ACCESS_EVENTS = 12
MAX_CAS_LANES = 2
MAX_WRITES_PER_LOCATION = 3
OPS = (("load", 0.35), ("store", 0.35), ("atomic_rmw", 0.15), ("atomic_cas", 0.1),
       ("join_tokens", 0.05))


def build_tileir(src, token_p: float = 0.6, weak_p: float = 0.3,
                 tile_block_p: float = 0.3) -> Test:
    """One program from the choice source ``src`` (see the module docstring)."""
    nblocks = src.integer(2, 4)
    ntile = src.integer(1, 3)
    pool = [element_name("x", i) for i in range(ntile)] + (["f"] if src.chance(0.5) else [])
    devices = [1 if src.chance(0.2) else 0 for _ in range(nblocks)]
    budget = {"events": MAX_ACCESS_EVENTS, "cas": MAX_CAS_LANES}
    writes = {a: 0 for a in pool}
    value = [0]
    threads = []
    for b in range(nblocks):
        code: list[TileOp] = []
        tokens: list[str] = []
        nregs = 0
        for _ in range(src.integer(1, 3)):
            kind = src.weighted(OPS)
            tok = f"t{len(tokens)}"
            if kind == "join_tokens":
                if len(tokens) < 2:
                    continue
                a, c = src.choice(tokens), src.choice(tokens)
                code.append(TileOp("token", opname=kind, token=tok, token_in=(a, c)))
                tokens.append(tok)
                continue
            lanes = src.weighted(((1, 0.5), (2, 0.3), (3, 0.12), (4, 0.08)))
            addrs = [src.choice(pool) for _ in range(lanes)]
            mask = tuple(src.chance(0.7) for _ in addrs) if src.chance(0.15) else ()
            active = [a for k, a in enumerate(addrs) if not mask or mask[k]]
            atomic = kind in ("atomic_rmw", "atomic_cas")
            cost = len(active) * (2 if atomic else 1)
            writes_needed = {a: active.count(a) for a in active} if kind != "load" else {}
            if (cost > budget["events"] or (kind == "atomic_cas" and len(active) > budget["cas"])
                    or any(writes[a] + n > MAX_WRITES_PER_LOCATION
                           for a, n in writes_needed.items())):
                continue
            budget["events"] -= cost
            if kind == "atomic_cas":
                budget["cas"] -= len(active)
            for a, n in writes_needed.items():
                writes[a] += n
            sems = SEMS_OF[kind]
            sem = src.weighted([(s, weak_p if s == "weak" else 1.0) for s in sems])
            scope = None if sem == "weak" else src.weighted(
                (("device", 1.0), ("sys", 0.6), ("tile_block", tile_block_p)))
            vals: list[int] = []
            cmps: list[int] = []
            if kind in ("store", "atomic_cas"):
                for _ in addrs:
                    value[0] += 1
                    vals.append(value[0])
            if kind == "atomic_rmw":
                vals = [src.choice((1, 2)) for _ in addrs]
            if kind == "atomic_cas":
                cmps = [src.choice((0, max(1, value[0] - 1))) for _ in addrs]
            regs: tuple[str, ...] = ()
            if kind != "store":
                regs = tuple(f"r{nregs + k}" for k in range(lanes))
                nregs += lanes
            token_in: tuple[str, ...] = ()
            if tokens and src.chance(token_p):
                token_in = (src.choice(tokens),)
            elif src.chance(0.05):
                fresh = f"t{len(tokens)}"
                code.append(TileOp("token", opname="make_token", token=fresh))
                tokens.append(fresh)
                tok = f"t{len(tokens)}"
                token_in = (fresh,)
            code.append(TileOp(BASE_OF[kind], opname=kind, sem=sem, scope=scope,
                               op=src.choice(RMW_MODES) if kind == "atomic_rmw" else None,
                               addrs=tuple(addrs), vals=tuple(vals), cmps=tuple(cmps), regs=regs,
                               mask=mask, token=tok, token_in=token_in))
            tokens.append(tok)
        threads.append(Thread(Placement(wg=b, agent=devices[b]), tuple(code)))
    return Test("tileir-program", tuple(Location(a) for a in pool), tuple(threads),
                Condition("exists", Const(True)), dialect="TILEIR")


def draw_tileir(seed: int, index: int, token_p: float = 0.6) -> Test:
    """Program number ``index`` of the weakening campaign with seed ``seed`` (deterministic)."""
    test = build_tileir(RandomSource(program_seed(seed, index)), token_p)
    return Test(f"tileir-{seed}-{index}", test.locations, test.threads, test.condition,
                dialect="TILEIR")


def tileir_programs(token_p: float = 0.6):
    """A Hypothesis strategy of TILEIR programs (see the module docstring)."""
    from hypothesis import strategies as st

    @st.composite
    def _programs(draw):
        return build_tileir(HypothesisSource(draw), token_p)

    return _programs()

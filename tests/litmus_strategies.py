"""A basic Hypothesis strategy over the whole AMDGPU instruction set and placements.

Used by the foundation's property tests (round trip, canonical form). It aims at breadth of syntax,
not at interesting concurrency (the fuzzer's biased strategies live in ``fuzz/strategies.py``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from litmus.ir import (BARRIER_IDS, CAS_FAIL_ORDERS, FENCE_ORDERS, LOAD_ORDERS, NAMED_BARRIERS,
                       ORDERS, RMW_OPS, STORE_ORDERS, And, Atom, Condition, Const, Instr, Location,
                       Not, Or, Test, Thread)
from litmus.scopes import SCOPES, Placement

values = st.integers(min_value=-3, max_value=5)
scopes = st.sampled_from(SCOPES)


@st.composite
def placements(draw):
    return Placement(
        wave=draw(st.none() | st.integers(0, 2)),
        wg=draw(st.none() | st.integers(0, 2)),
        cluster=draw(st.integers(0, 1)),
        agent=draw(st.integers(0, 1)),
    )


@st.composite
def instrs(draw, globals_, lds, reg):
    """One instruction; ``reg`` is the next free register name (loads use it)."""
    glob = st.sampled_from(globals_)
    anyloc = st.sampled_from(globals_ + lds)
    kind = draw(st.sampled_from(
        ["ld", "ld.atom", "ld.vis", "ld.vol", "st", "st.atom", "st.av", "st.vol", "rmw", "cas",
         "fence"] + (["async.ld"] if lds else []) +
        ["async.mark", "async.wait", "barrier", "bar.signal", "bar.wait", "bar.init", "bar.join",
         "bar.leave"]))
    if kind.startswith("ld"):
        acc = kind.partition(".")[2] or "plain"
        return Instr("ld", access=acc,
                     order=draw(st.sampled_from(LOAD_ORDERS)) if acc == "atom" else None,
                     scope=draw(scopes) if acc in ("atom", "vis") else None,
                     noav=draw(st.booleans()) if acc == "atom" else False,
                     reg=reg, loc=draw(anyloc))
    if kind.startswith("st"):
        acc = kind.partition(".")[2] or "plain"
        return Instr("st", access=acc,
                     order=draw(st.sampled_from(STORE_ORDERS)) if acc == "atom" else None,
                     scope=draw(scopes) if acc in ("atom", "av") else None,
                     noav=draw(st.booleans()) if acc == "atom" else False,
                     loc=draw(anyloc), args=(draw(values),))
    if kind == "rmw":
        return Instr("rmw", access="atom", order=draw(st.sampled_from(ORDERS)), scope=draw(scopes),
                     noav=draw(st.booleans()), op=draw(st.sampled_from(RMW_OPS)), reg=reg,
                     loc=draw(anyloc), args=(draw(values),))
    if kind == "cas":
        return Instr("cas", access="atom", order=draw(st.sampled_from(ORDERS)),
                     fail_order=draw(st.sampled_from(CAS_FAIL_ORDERS)), scope=draw(scopes),
                     noav=draw(st.booleans()), reg=reg, loc=draw(anyloc),
                     args=(draw(values), draw(values)))
    if kind == "fence":
        return Instr("fence", order=draw(st.sampled_from(FENCE_ORDERS)), scope=draw(scopes),
                     noav=draw(st.booleans()))
    if kind == "async.ld":
        return Instr("async.ld", loc=draw(glob), lds=draw(st.sampled_from(lds)))
    if kind == "async.wait":
        return Instr("async.wait", args=(draw(st.integers(0, 3)),))
    if kind in ("bar.signal", "bar.wait"):
        return Instr(kind, args=(draw(st.sampled_from(BARRIER_IDS)),))
    if kind == "bar.init":
        return Instr(kind, args=(draw(st.sampled_from(NAMED_BARRIERS)), draw(st.integers(-1, 4))))
    if kind == "bar.join":
        return Instr(kind, args=(draw(st.sampled_from(NAMED_BARRIERS)),))
    return Instr(kind)


@st.composite
def props(draw, keys, depth=2):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        if not keys or draw(st.integers(0, 9)) == 0:
            return Const(draw(st.booleans()))
        tid, name = draw(st.sampled_from(keys))
        return Atom(tid, name, draw(st.sampled_from(["==", "!="])), draw(values))
    k = draw(st.sampled_from(["and", "or", "not"]))
    if k == "not":
        return Not(draw(props(keys, depth - 1)))
    args = tuple(draw(st.lists(props(keys, depth - 1), min_size=2, max_size=3)))
    return And(args) if k == "and" else Or(args)


@st.composite
def litmus_tests(draw, max_threads=4, max_instrs=5):
    """A well-formed test over the whole instruction set."""
    n_glob = draw(st.integers(1, 3))
    n_lds = draw(st.integers(0, 2))
    globals_ = [f"x{i}" for i in range(n_glob)]
    lds = [f"a{i}" for i in range(n_lds)]
    locations = tuple([Location(g, draw(values)) for g in globals_] +
                      [Location(a, draw(values), lds=True) for a in lds])
    threads = []
    for tid in range(draw(st.integers(1, max_threads))):
        code = []
        nreg = 0
        for _ in range(draw(st.integers(0, max_instrs))):
            ins = draw(instrs(globals_, lds, f"r{nreg}"))
            if ins.reg is not None:
                nreg += 1
            code.append(ins)
        threads.append(Thread(draw(placements()), tuple(code)))
    reg_init = []
    for tid, th in enumerate(threads):
        regs = th.registers()
        for r in regs:
            if draw(st.integers(0, 4)) == 0:
                reg_init.append((tid, r, draw(values)))
    keys = [(tid, r) for tid, th in enumerate(threads) for r in th.registers()]
    keys += [(None, g) for g in globals_]
    condition = Condition(draw(st.sampled_from(["exists", "~exists", "forall"])),
                          draw(props(keys)))
    name = draw(st.from_regex(r"[A-Za-z0-9+._-]{1,12}", fullmatch=True))
    doc = tuple(draw(st.lists(st.from_regex(r"[A-Za-z0-9 ,.:;()+-]{0,30}", fullmatch=True),
                              max_size=2)))
    return Test(name=name, locations=locations, threads=tuple(threads), condition=condition,
                doc=doc, reg_init=tuple(reg_init))

"""Source programs for the compilers-in-the-loop campaign (issue 29): CUDA litmus tests drawn
deterministically per (seed, index).

A program is a :class:`Prog`: threads of abstract ops over locations ``x``/``y``/``z``, each op
one of the operations compilers lower differently -- ``ld``, ``st``, the RMWs (exchange,
fetch_add/sub/and/or/xor/min/max), strong and weak CAS with a success and a failure order, and
fences -- each with a memory order and a CUDA thread scope. The access skeleton is one of the
classic shapes (MP, SB, LB, IRIW, WRC, ISA2, R, S, 2+2W, CoRR, a release sequence) or a random
mix; writes become a store or an RMW, reads a load, an RMW or a CAS; fences go between ops at
random. Threads sit in CTA 0 or their own CTA of GPU 0, now and then on GPU 1. Every location is
atomic (non-atomics only in race-free positions: the campaign keeps it simple and has none).
:func:`render` prints it in the CUDA dialect (litmus/parse_cuda.py); registers are ``rN``, the
names the PTX read-back keeps. The minimizer (fuzz/compilers_campaign.py) edits a Prog.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

SCOPES = ("block", "device", "system")
RMW_KINDS = ("exchange", "fetch_add", "fetch_sub", "fetch_and", "fetch_or", "fetch_xor",
             "fetch_min", "fetch_max")
LOAD_ORDERS = ("relaxed", "acquire", "seq_cst")
STORE_ORDERS = ("relaxed", "release", "seq_cst")
RMW_ORDERS = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")
FENCE_ORDERS = ("acquire", "release", "acq_rel", "seq_cst")
#: a weaker order of each (minimization steps)
WEAKER = {"seq_cst": "acq_rel", "acq_rel": "release", "release": "relaxed", "acquire": "relaxed"}
NARROWER = {"system": "device", "device": "block"}

#: access skeletons: per thread, ("W"|"R", location)
SHAPES = {
    "MP": [[("W", "x"), ("W", "y")], [("R", "y"), ("R", "x")]],
    "SB": [[("W", "x"), ("R", "y")], [("W", "y"), ("R", "x")]],
    "LB": [[("R", "x"), ("W", "y")], [("R", "y"), ("W", "x")]],
    "IRIW": [[("W", "x")], [("R", "x"), ("R", "y")], [("W", "y")], [("R", "y"), ("R", "x")]],
    "WRC": [[("W", "x")], [("R", "x"), ("W", "y")], [("R", "y"), ("R", "x")]],
    "ISA2": [[("W", "x"), ("W", "y")], [("R", "y"), ("W", "z")], [("R", "z"), ("R", "x")]],
    "R": [[("W", "x"), ("W", "y")], [("W", "y"), ("R", "x")]],
    "S": [[("W", "x"), ("W", "y")], [("R", "y"), ("W", "x")]],
    "2+2W": [[("W", "x"), ("W", "y")], [("W", "y"), ("W", "x")]],
    "CoRR": [[("W", "x")], [("R", "x"), ("R", "x")]],
    "RelSeq": [[("W", "x"), ("W", "y"), ("W", "y")], [("R", "y"), ("R", "x")]],
}


@dataclass(frozen=True)
class Op:
    kind: str                 # ld st rmw cas fence
    loc: str = ""
    order: str = "relaxed"
    scope: str = "device"
    value: int = 0            # st/rmw operand, cas desired
    reg: str = ""             # ld/rmw result, cas expected-and-old register
    rmw: str = ""             # RMW kind, or "strong"/"weak" for cas
    expected: int = 0
    fail: str = "relaxed"     # cas failure order


@dataclass(frozen=True)
class Thread:
    ops: tuple
    cta: int
    gpu: int = 0


@dataclass(frozen=True)
class Prog:
    name: str
    threads: tuple
    locs: tuple = field(default=("x", "y"))


def _fail_order(rng: random.Random, success: str) -> str:
    # the failure order is a load order no stronger than the success order
    allowed = {"relaxed": ("relaxed",), "release": ("relaxed",), "acquire": ("relaxed", "acquire"),
               "acq_rel": ("relaxed", "acquire"), "seq_cst": ("relaxed", "acquire", "seq_cst")}
    return rng.choice(allowed[success])


#: program families and their weights (:func:`draw`). ``mixed`` draws every operation, order
#: and scope at random; the others make shapes that the random mix reaches too rarely for a
#: campaign to find a planted bug quickly (bench_ptxc.py's time-to-find per PTX mutant):
#: ``sc`` -- seq_cst loads/stores or seq_cst fences in the shapes only Fence-SC order forbids
#: (SB, R, 2+2W, S...); ``mp`` -- message passing: release writes (stores, CAS, or a
#: release fence before a relaxed store) and acquire reads in MP/WRC/ISA2/S/RelSeq/LB;
#: ``system`` -- threads alternating between two GPUs at system scope;
#: ``device`` -- every thread in its own CTA at device scope, writes often relaxed RMWs (the
#: atomicity of RMWs from different CTAs rests on device scope).
FAMILIES = (("mixed", 0.35), ("sc", 0.2), ("mp", 0.15), ("system", 0.15), ("device", 0.15))
#: message-passing shapes: a release write publishes, an acquire read observes
MP_SHAPES = ("MP", "WRC", "ISA2", "S", "RelSeq", "LB")
#: shapes where sequential consistency, not release/acquire, forbids the weak outcome
SC_SHAPES = ("SB", "R", "2+2W", "S", "WRC", "MP")
#: their weights (no IRIW: with a fence.sc before each seq_cst access its 6 fences make 13
#: cross-thread pairs, more Fence-SC orientations than the PTX builder enumerates -- an oracle
#: error, not a check; the mixed family still draws IRIW with seq_cst accesses now and then)
SC_WEIGHTS = (5, 3, 3, 2, 1, 1)


def draw(seed: int, index: int) -> Prog:
    """Program ``index`` of ``seed`` (deterministic): a family drawn by :data:`FAMILIES`."""
    rng = random.Random(seed * 1_000_003 + index)
    u, family = rng.random(), FAMILIES[-1][0]
    for name, weight in FAMILIES:
        if u < weight:
            family = name
            break
        u -= weight
    if family == "sc":
        return _draw_sc(rng, seed, index)
    if family == "mp":
        return _draw_mp(rng, seed, index)
    if family == "system":
        return _draw_placed(rng, seed, index, "system")
    if family == "device":
        return _draw_placed(rng, seed, index, "device")
    return _draw_mixed(rng, seed, index)


def _draw_sc(rng: random.Random, seed: int, index: int) -> Prog:
    """An SC shape, every access seq_cst (or relaxed with a seq_cst fence between each two of
    a thread's accesses), one access scope wide enough for the placement. Loads and stores
    only: clang-22 drops the order of an RMW (docs/compilers.md, finding 1), so an RMW here
    would make the compiler's own PTX escape and hide the planted bug."""
    shape = rng.choices(SC_SHAPES, SC_WEIGHTS)[0]
    skeleton = SHAPES[shape]
    fenced = rng.random() < 0.35
    ctas = [rng.choice((0, tid)) for tid in range(len(skeleton))]
    scope = rng.choice(SCOPES if len(set(ctas)) == 1 else ("device", "system"))
    threads, value = [], 0
    for tid, accesses in enumerate(skeleton):
        ops, reg = [], 0
        for j, (rw, loc) in enumerate(accesses):
            if fenced and j:
                ops.append(Op("fence", order="seq_cst", scope=rng.choice((scope, "system"))))
            order = "relaxed" if fenced else "seq_cst"
            if rw == "W":
                value += 1
                ops.append(Op("st", loc, order, scope, value))
            else:
                ops.append(Op("ld", loc, order, scope, reg=f"r{reg}"))
                reg += 1
        threads.append(Thread(tuple(ops), ctas[tid], 0))
    return _prog(f"sc-{shape}-s{seed}-{index}", threads)


def _draw_mp(rng: random.Random, seed: int, index: int) -> Prog:
    """A message-passing shape: each thread's last write is a release (a release store, a
    release/acq_rel compare-exchange from the initial value, or a release fence before a
    relaxed store), each thread's first read an acquire (an acquire load, an acquire/acq_rel
    compare-exchange, or a relaxed load followed by an acquire fence), the rest relaxed. No
    exchange/fetch_OP: clang-22 drops their order (docs/compilers.md, finding 1)."""
    shape = rng.choice(MP_SHAPES)
    skeleton = SHAPES[shape]
    ctas = [rng.choice((0, tid)) for tid in range(len(skeleton))]
    scope = rng.choice(SCOPES if len(set(ctas)) == 1 else ("device", "system"))
    threads, value = [], 0
    for tid, accesses in enumerate(skeleton):
        ops, reg = [], 0
        last_w = max((j for j, (rw, _) in enumerate(accesses) if rw == "W"), default=-1)
        first_r = min((j for j, (rw, _) in enumerate(accesses) if rw == "R"), default=-1)
        for j, (rw, loc) in enumerate(accesses):
            u = rng.random()
            if rw == "W":
                value += 1
                if j != last_w:
                    ops.append(Op("st", loc, "relaxed", scope, value))
                elif u < 0.55:
                    ops.append(Op("st", loc, "release", scope, value))
                elif u < 0.8:
                    succ = rng.choice(("release", "acq_rel"))
                    ops.append(Op("cas", loc, succ, scope, value, f"r{reg}", "strong", 0,
                                  _fail_order(rng, succ)))
                    reg += 1
                else:
                    ops.append(Op("fence", order=rng.choice(("release", "acq_rel")),
                                  scope=scope))
                    ops.append(Op("st", loc, "relaxed", scope, value))
            else:
                if j != first_r:
                    ops.append(Op("ld", loc, "relaxed", scope, reg=f"r{reg}"))
                elif u < 0.55:
                    ops.append(Op("ld", loc, "acquire", scope, reg=f"r{reg}"))
                elif u < 0.8:
                    succ = rng.choice(("acquire", "acq_rel"))
                    value += 1
                    ops.append(Op("cas", loc, succ, scope, value, f"r{reg}", "strong",
                                  rng.choice((0, 1)), _fail_order(rng, succ)))
                else:
                    ops.append(Op("ld", loc, "relaxed", scope, reg=f"r{reg}"))
                    ops.append(Op("fence", order=rng.choice(("acquire", "acq_rel")),
                                  scope=scope))
                reg += 1
        threads.append(Thread(tuple(ops), ctas[tid], 0))
    return _prog(f"mp-{shape}-s{seed}-{index}", threads)


def _draw_placed(rng: random.Random, seed: int, index: int, scope: str) -> Prog:
    """A classic shape with every thread in a CTA of its own (``device``) or alternating
    between GPU 0 and GPU 1 (``system``), every access at ``scope``, orders strong enough to
    forbid the weak outcome now and then. ``device``: writes are often relaxed exchanges /
    fetch_adds (relaxed: clang-22's own RMW bug is in its orders); ``system``: no exchange or
    fetch_OP (clang-22 also narrows a system-scope RMW to gpu scope, finding 1). Both use
    strong compare-exchanges of every success order (clang-22 keeps a cmpxchg's order and
    scope): the ``atom.acq_rel/acquire/release.cas`` that order mutants edit."""
    shape = rng.choice(sorted(SHAPES))
    skeleton = SHAPES[shape]
    threads, value = [], 0
    for tid, accesses in enumerate(skeleton):
        ops, reg = [], 0
        for j, (rw, loc) in enumerate(accesses):
            if j and rng.random() < 0.2:
                ops.append(Op("fence", order=rng.choice(FENCE_ORDERS), scope=scope))
            u = rng.random()
            if rw == "W":
                value += 1
                if scope == "device" and u < 0.45:
                    ops.append(Op("rmw", loc, "relaxed", scope, value, f"r{reg}",
                                  rng.choice(("exchange", "fetch_add"))))
                    reg += 1
                elif u < (0.7 if scope == "device" else 0.25):
                    # a compare-exchange from the initial value: succeeds when first
                    succ = rng.choice(("release", "acq_rel", "acq_rel", "seq_cst", "relaxed"))
                    ops.append(Op("cas", loc, succ, scope, value, f"r{reg}", "strong", 0,
                                  _fail_order(rng, succ)))
                    reg += 1
                else:
                    ops.append(Op("st", loc, rng.choice(("relaxed", "release", "release",
                                                         "seq_cst")), scope, value))
            else:
                if scope == "device" and u < 0.2:
                    ops.append(Op("rmw", loc, "relaxed", scope, 0, f"r{reg}", "fetch_add"))
                elif u < (0.45 if scope == "device" else 0.2):
                    succ = rng.choice(("acquire", "acq_rel", "acq_rel", "seq_cst"))
                    value += 1
                    ops.append(Op("cas", loc, succ, scope, value, f"r{reg}", "strong",
                                  rng.choice((0, 1)), _fail_order(rng, succ)))
                else:
                    ops.append(Op("ld", loc, rng.choice(("relaxed", "acquire", "acquire",
                                                         "seq_cst")), scope, reg=f"r{reg}"))
                reg += 1
        if scope == "device":
            threads.append(Thread(tuple(ops), tid, 0))
        else:
            threads.append(Thread(tuple(ops), rng.choice((0, tid)), tid % 2))
    return _prog(f"{scope}-{shape}-s{seed}-{index}", threads)


def _prog(name: str, threads: list) -> Prog:
    locs = tuple(sorted({op.loc for t in threads for op in t.ops if op.loc}))
    return Prog(name, tuple(threads), locs)


def _draw_mixed(rng: random.Random, seed: int, index: int) -> Prog:
    """The ``mixed`` family: a classic shape (80 %) or a random mix of 2-4 threads; any
    operation, order and scope."""
    if rng.random() < 0.8:
        shape = rng.choice(sorted(SHAPES))
        skeleton = SHAPES[shape]
    else:
        shape = "mix"
        skeleton = [[(rng.choice("WR"), rng.choice("xy")) for _ in range(rng.randint(1, 3))]
                    for _ in range(rng.randint(2, 4))]
    sys_mode = rng.random() < 0.1
    # placement first: access scopes must include every thread, or the program races
    # (heterogeneous race: atomics whose scopes do not include each other); fences may be narrow
    ctas = [rng.choice((0, tid)) for tid in range(len(skeleton))]
    gpus = [1 if sys_mode and tid % 2 else 0 for tid in range(len(skeleton))]
    wide = (SCOPES if len(set(ctas)) == 1 else ("device", "system")) if len(set(gpus)) == 1 \
        else ("system",)
    # one access scope per program: the opencl unit's race definition pairs atomics of the SAME
    # scope (OpenCL 2.0 3.3.4), stricter than scoped C++'s inclusion (docs/compilers.md)
    access_scope = rng.choice(wide)
    threads = []
    value = 0
    for tid, accesses in enumerate(skeleton):
        ops = []
        reg = 0
        for j, (rw, loc) in enumerate(accesses):
            if j and rng.random() < 0.25:
                ops.append(Op("fence", order=rng.choice(FENCE_ORDERS), scope=rng.choice(SCOPES)))
            scope = access_scope
            if rw == "W":
                value += 1
                if rng.random() < 0.7:
                    ops.append(Op("st", loc, rng.choice(STORE_ORDERS), scope, value))
                else:
                    ops.append(Op("rmw", loc, rng.choice(RMW_ORDERS), scope, value, f"r{reg}",
                                  rng.choice(("exchange", "exchange", "fetch_add") + RMW_KINDS)))
                    reg += 1
            else:
                p = rng.random()
                if p < 0.7:
                    ops.append(Op("ld", loc, rng.choice(LOAD_ORDERS), scope, reg=f"r{reg}"))
                elif p < 0.85:
                    ops.append(Op("rmw", loc, rng.choice(RMW_ORDERS), scope, 0, f"r{reg}",
                                  rng.choice(("fetch_add", "fetch_or"))))
                else:
                    succ = rng.choice(RMW_ORDERS)
                    value += 1
                    ops.append(Op("cas", loc, succ, scope, value, f"r{reg}",
                                  rng.choice(("strong", "weak")), rng.choice((0, 1)),
                                  _fail_order(rng, succ)))
                reg += 1
        threads.append(Thread(tuple(ops), ctas[tid], gpus[tid]))
    locs = tuple(sorted({op.loc for t in threads for op in t.ops if op.loc}))
    return Prog(f"{shape}-s{seed}-{index}", tuple(threads), locs)


def _scope(s: str) -> str:
    return f"cuda::thread_scope_{s}"


def _op_text(op: Op) -> list[str]:
    o, s = f"memory_order_{op.order}", _scope(op.scope)
    if op.kind == "ld":
        return [f"int {op.reg} = atomic_load_explicit({op.loc}, {o}, {s});"]
    if op.kind == "st":
        return [f"atomic_store_explicit({op.loc}, {op.value}, {o}, {s});"]
    if op.kind == "rmw":
        return [f"int {op.reg} = atomic_{op.rmw}_explicit({op.loc}, {op.value}, {o}, {s});"]
    if op.kind == "cas":
        return [f"int {op.reg} = {op.expected};",
                f"atomic_compare_exchange_{op.rmw}_explicit({op.loc}, &{op.reg}, {op.value}, {o}, "
                f"memory_order_{op.fail}, {s});"]
    return [f"atomic_thread_fence({o}, {s});"]


def render(p: Prog) -> str:
    """The program as a CUDA-dialect litmus test."""
    params = ", ".join(f"atomic_int* {loc}" for loc in p.locs)
    out = [f"CUDA {p.name}", "{ " + " ".join(f"[{loc}] = 0;" for loc in p.locs) + " }"]
    for tid, t in enumerate(p.threads):
        out.append(f"P{tid}@cta {t.cta},gpu {t.gpu} ({params}) {{")
        for op in t.ops:
            out += ["  " + line for line in _op_text(op)]
        out.append("}")
    out.append(f"exists ({p.locs[0]}=0)" if p.locs else "exists (0=0)")
    return "\n".join(out) + "\n"


def smaller(p: Prog):
    """Candidate simplifications of ``p``, simplest first: fewer threads, fewer ops, weaker
    orders, narrower scopes (the minimizer keeps the first that is still a counterexample)."""
    if len(p.threads) > 1:
        for i in range(len(p.threads)):
            yield replace(p, threads=p.threads[:i] + p.threads[i + 1:])
    for i, t in enumerate(p.threads):
        for j in range(len(t.ops)):
            if len(t.ops) > 1:
                yield _with(p, i, t.ops[:j] + t.ops[j + 1:])
    for i, t in enumerate(p.threads):
        for j, op in enumerate(t.ops):
            w = _weaker(op)
            if w:
                yield _with(p, i, t.ops[:j] + (replace(op, order=w, fail=_weaker_fail(op, w)),)
                            + t.ops[j + 1:])
            n = NARROWER.get(op.scope)
            if n:
                yield _with(p, i, t.ops[:j] + (replace(op, scope=n),) + t.ops[j + 1:])


def _weaker(op: Op) -> str | None:
    """The next weaker order valid for the op's kind (None: already the weakest)."""
    if op.kind == "ld":
        return {"seq_cst": "acquire", "acquire": "relaxed"}.get(op.order)
    if op.kind == "st":
        return {"seq_cst": "release", "release": "relaxed"}.get(op.order)
    if op.kind == "fence":
        return {"seq_cst": "acq_rel", "acq_rel": "release"}.get(op.order)
    return WEAKER.get(op.order)


def _weaker_fail(op: Op, succ: str) -> str:
    if op.kind != "cas":
        return op.fail
    rank = {"relaxed": 0, "acquire": 1, "seq_cst": 2}
    cap = {"relaxed": 0, "release": 0, "acquire": 1, "acq_rel": 1, "seq_cst": 2}[succ]
    return op.fail if rank[op.fail] <= cap else ("acquire" if cap == 1 else "relaxed")


def _with(p: Prog, i: int, ops: tuple) -> Prog:
    ts = list(p.threads)
    ts[i] = replace(ts[i], ops=ops)
    locs = tuple(sorted({op.loc for t in ts for op in t.ops if op.loc}))
    return replace(p, threads=tuple(ts), locs=locs)


__all__ = ["Op", "Thread", "Prog", "draw", "render", "smaller", "SHAPES", "FAMILIES"]

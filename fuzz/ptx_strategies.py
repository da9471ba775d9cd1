"""PTX program generators for fuzzing (``scopefuzz fuzz --model ptx``): the PTX-dialect
counterpart of :mod:`fuzz.strategies`, with the same sources of choices (seeded campaign draws and
Hypothesis strategies of one definition) and the same builder of tests.

Programs are :class:`~litmus.ir.Test` s of dialect ``PTX`` built the way the PTX front end
lowers its instructions (:mod:`litmus.parse_ptx`), so :func:`litmus.print_ptx.format_ptx` prints
them and parsing the text gives the same test back. Threads are placed in CTAs, clusters and GPUs
(a thread joins an earlier thread's CTA, another CTA of its cluster, another cluster of its GPU,
or another GPU); scopes are ``.cta`` ``.cluster`` ``.gpu`` ``.sys`` (the program model's ``wg``
``cluster`` ``agent`` ``sys``). Shapes, biased toward what exposes bugs (as in fuzz/strategies.py):

- ``cycle``: diy-style cycles of po/rf/co/fr edges (MP, SB, LB, S, R, 2+2W, 3- and 4-thread
  cycles), synchronized by release/acquire operations, release/acquire patterns with
  ``fence.acq_rel``, or ``fence.sc`` where a write must be ordered before a read;
- ``coherence``: CoRR, CoWR, CoRW, CoWW on one location;
- ``barrier``: message passing through ``bar.cta.sync`` / ``bar.cta.arrive`` (with a thread
  count sometimes);
- ``atomicity``: concurrent ``atom``/``red`` on one location (weak: a lost update);
- ``proxy``: message passing or a single thread through a virtual alias or a surface/texture
  view, with the alias and proxy fences it needs;
- ``random``: anything from the enabled instruction set.

Synchronization is drawn correct (scopes that include both threads), then with probability
``near_miss`` almost right: one scope one level too narrow, one order weakened, one fence
(memory or proxy) dropped, a reader that arrives at a barrier instead of waiting. Every write of
a location stores a value no other write to it stores; the condition is ``exists`` of the
shape's weak outcome.
"""

from __future__ import annotations

import dataclasses

from litmus.ir import Instr, Test, cas_default_fail
from litmus.scopes import Placement

from .strategies import FeatureError, RandomSource, HypothesisSource, _Builder, program_seed

#: Feature names of PTX programs (``scopefuzz fuzz --model ptx --features``).
PTX_FEATURES: tuple[str, ...] = (
    "weak",       # ld.weak / st.weak
    "strong",     # ld.relaxed/.acquire, st.relaxed/.release with scopes
    "atom",       # atom.OP (and atom.cas)
    "red",        # red.OP
    "fences",     # fence.acq_rel / .acquire / .release
    "sc",         # fence.sc
    "barriers",   # bar.cta.sync / bar.cta.arrive
    "cluster",    # clusters of CTAs and the .cluster scope
    "gpus",       # threads on different GPUs (the .sys scope matters)
    "proxies",    # virtual aliases, surface/texture accesses, fence.proxy.*
)
#: Every instruction kind PTX programs use (coverage denominator, :attr:`Instr.kind`).
PTX_KINDS: tuple[str, ...] = ("ld", "ld.atom", "st", "st.atom", "rmw", "cas", "fence", "cbar")
#: the program model's scope words for .cta, .cluster, .gpu, .sys, narrowest first
SCOPES = ("wg", "cluster", "agent", "sys")
#: the models whose programs these are
MODELS = ("ptx", "ptx60")


def parse_ptx_features(text) -> frozenset[str]:
    """Like :func:`fuzz.strategies.parse_features`, over :data:`PTX_FEATURES`."""
    if text is None:
        return frozenset(PTX_FEATURES)
    items = text.replace(",", " ").split() if isinstance(text, str) else \
        [w for t in text for w in t.replace(",", " ").split()]
    out: set[str] = set(PTX_FEATURES) if not items or items[0].startswith("-") else set()
    for w in items:
        name = w[1:] if w.startswith("-") else w
        if name == "all":
            chosen = set(PTX_FEATURES)
        elif name in PTX_FEATURES:
            chosen = {name}
        else:
            raise FeatureError(f"unknown PTX feature {name!r} (known: all "
                               f"{' '.join(PTX_FEATURES)})")
        out = out - chosen if w.startswith("-") else out | chosen
    if not out & {"weak", "strong", "atom"}:
        raise FeatureError("features select no memory access (need one of weak strong atom)")
    return frozenset(out)


# --- placements and scopes ----------------------------------------------------------------------

def draw_placements(src, n: int, features: frozenset[str]) -> tuple[Placement, ...]:
    """``n`` placements: each thread joins an earlier thread's CTA, another CTA of its cluster,
    another cluster of its GPU or another GPU (weighted toward crossing a CTA boundary)."""
    opts = [("cta", 3.0), ("xcta", 4.0)]
    if "cluster" in features:
        opts.append(("xcluster", 1.5))
    if "gpus" in features:
        opts.append(("xgpu", 1.5))
    ids = [[0, 0, 0]]                        # gpu, cluster, cta
    for i in range(1, n):
        ref = list(ids[src.integer(0, i - 1)])
        rel = src.weighted(opts)
        if rel == "cta":
            new = ref
        elif rel == "xcta":
            new = ref[:2] + [1 + max(p[2] for p in ids if p[:2] == ref[:2])]
        elif rel == "xcluster":
            new = ref[:1] + [1 + max(p[1] for p in ids if p[:1] == ref[:1]), 0]
        else:
            new = [1 + max(p[0] for p in ids), 0, 0]
        ids.append(new)
    return tuple(Placement(wave=None, wg=c, cluster=k, agent=g) for g, k, c in ids)


def common_scope(pl, a: int, b: int, features: frozenset[str]) -> str:
    """The narrowest scope that includes both threads."""
    pa, pb = pl[a], pl[b]
    if pa.agent != pb.agent:
        return "sys"
    if pa.cluster != pb.cluster or "cluster" not in features:
        return "agent" if pa.cluster != pb.cluster or pa.wg != pb.wg else "wg"
    return "cluster" if pa.wg != pb.wg else "wg"


def wider(a: str, b: str) -> str:
    return a if SCOPES.index(a) >= SCOPES.index(b) else b


def widen(src, scope: str, features: frozenset[str]) -> str:
    """The scope itself, mostly; sometimes a wider one (still correct)."""
    if src.chance(0.2):
        opts = [s for s in SCOPES[SCOPES.index(scope):] if s != "cluster" or "cluster" in features]
        return src.choice(opts)
    return scope


def narrower(scope: str, features: frozenset[str]) -> str | None:
    i = SCOPES.index(scope)
    while i > 0:
        i -= 1
        if SCOPES[i] != "cluster" or "cluster" in features:
            return SCOPES[i]
    return None


# --- instructions, as the PTX front end lowers them -----------------------------------------------

def load(b: _Builder, tid: int, loc: str, kind: str, order: str, scope: str) -> Instr:
    """``ld.weak`` / ``ld.relaxed|acquire.S`` / an atomic read (``atom.add r, x, 0``)."""
    r = b.reg(tid)
    if kind == "weak":
        return b.emit(tid, Instr("ld", access="plain", reg=r, loc=loc))
    if kind == "atom":
        return b.emit(tid, Instr("rmw", access="atom", order=order, scope=scope, op="add", reg=r,
                                 loc=loc, args=(0,)))
    return b.emit(tid, Instr("ld", access="atom", order=order, scope=scope, reg=r, loc=loc))


def store(b: _Builder, tid: int, loc: str, kind: str, order: str, scope: str, value: int) -> Instr:
    """``st.weak`` / ``st.relaxed|release.S`` / ``atom.exch``."""
    if kind == "weak":
        return b.emit(tid, Instr("st", access="plain", loc=loc, args=(value,)))
    if kind == "atom":
        return b.emit(tid, Instr("rmw", access="atom", order=order, scope=scope, op="xchg",
                                 reg=b.reg(tid), loc=loc, args=(value,)))
    return b.emit(tid, Instr("st", access="atom", order=order, scope=scope, loc=loc,
                             args=(value,)))


def fence(b: _Builder, tid: int, order: str, scope: str) -> Instr:
    return b.emit(tid, Instr("fence", order=order, scope=scope))


def _fit(order: str, k: str, kind: str) -> str:
    """The order an access of ``kind`` can carry: loads acquire, stores release, atom both."""
    if kind == "weak":
        return None
    if kind == "atom":
        return order
    if k == "R":
        return order if order in ("rlx", "acq") else "acq" if order == "acq_rel" else "rlx"
    return order if order in ("rlx", "rel") else "rel" if order == "acq_rel" else "rlx"


def _kinds(features: frozenset[str], sync: bool = False) -> list[tuple[str, float]]:
    opts = []
    if "strong" in features:
        opts.append(("strong", 5.0))
    if "atom" in features:
        opts.append(("atom", 2.0))
    if "weak" in features and not sync:
        opts.append(("weak", 2.0))
    return opts or [("weak", 1.0)]


def _value(ins: Instr) -> int:
    return ins.args[-1]


# --- near misses ----------------------------------------------------------------------------------

def near_miss(src, b: _Builder, features: frozenset[str]) -> str:
    """One change that may break the synchronization: narrower scope, weaker order, a fence
    (memory or proxy) dropped. Returns what changed."""
    cands = []
    for tid, code in enumerate(b.code):
        for i, ins in enumerate(code):
            if ins.scope is not None and ins.base != "cbar" and narrower(ins.scope, features):
                cands.append(("narrow", tid, i))
            if ins.order in ("acq", "rel", "acq_rel", "sc") and ins.base != "fence":
                cands.append(("weaken", tid, i))
            if ins.base == "fence":
                cands.append(("drop", tid, i))
    if not cands:
        return ""
    what, tid, i = src.choice(cands)
    ins = b.code[tid][i]
    if what == "narrow":
        b.code[tid][i] = ins.replace(scope=narrower(ins.scope, features))
    elif what == "weaken":
        fail = cas_default_fail("rlx") if ins.base == "cas" else ins.fail_order
        b.code[tid][i] = ins.replace(order="rlx", fail_order=fail)
    else:
        del b.code[tid][i]
    return f"{what} P{tid}#{i}"


# --- shapes ---------------------------------------------------------------------------------------

def _cycle(src, features, near) -> Test:
    """Thread i accesses x_i then x_{i+1}; consecutive threads communicate through x_{i+1}."""
    n = src.weighted([(2, 5.0), (3, 3.0), (4, 1.5)])
    pl = draw_placements(src, n, features)
    b = _Builder(pl)
    kinds = []
    for i in range(n):
        first = "W" if i > 0 and kinds[i - 1][1] == "R" else src.choice("RW")
        second = "W" if i == n - 1 and kinds[0][0] == "R" else src.choice("RW")
        kinds.append((first, second))
    names = ("x", "y", "z", "w")
    locs = [b.loc(names[i]) for i in range(n)]
    scope = [common_scope(pl, (i - 1) % n, i, features) for i in range(n)]   # of location x_i
    data = src.integer(0, n - 1) if "weak" in features and src.chance(0.6) else -1
    modes = [("none", 1.0)]
    if "fences" in features or "sc" in features:
        modes.append(("fence", 2.0))
    if "strong" in features or "atom" in features:
        modes.append(("orders", 2.0))
    written: dict[str, list[tuple[int, Instr]]] = {}
    reads: list[tuple[int, Instr, str]] = []
    for i in range(n):
        (ka, kb), mode = kinds[i], src.weighted(modes)
        la, lb = locs[i], locs[(i + 1) % n]
        span = wider(scope[i], scope[(i + 1) % n])
        oa = ob = "rlx"
        if mode == "orders" and (ka, kb) != ("W", "R"):
            oa = "acq" if ka == "R" else "rlx"
            ob = "rel" if kb == "W" else "rlx"
        elif mode == "orders" or (mode == "fence" and (ka, kb) == ("W", "R")):
            mode = "fence" if "sc" in features else "none"
        fo = None
        if mode == "fence":
            fo = "sc" if (ka, kb) == ("W", "R") or "fences" not in features else \
                src.choice(("acq_rel", "acq_rel", "sc") if "sc" in features else ("acq_rel",))
            if fo == "acq_rel" and src.chance(0.3):
                fo = {("W", "W"): "rel", ("R", "R"): "acq"}.get((ka, kb), "acq_rel")
        for which, (k, loc, order, sc) in enumerate(((ka, la, oa, scope[i]),
                                                     (kb, lb, ob, scope[(i + 1) % n]))):
            idx = i if which == 0 else (i + 1) % n
            kind = "weak" if idx == data else src.weighted(_kinds(features, sync=True))
            # release/acquire patterns need strong accesses (PTX ISA 8.8): a strong read
            # before an acquire fence, a strong write after a release fence, and the
            # release/acquire operations themselves
            if kind == "weak" and (order != "rlx" or fo is not None and fo != "sc" and
                                   (which, k) in ((0, "R"), (1, "W"))):
                kind = "strong" if "strong" in features else "atom"
            sc = widen(src, span if order != "rlx" else sc, features)
            if k == "W":
                ins = store(b, i, loc, kind, _fit(order, "W", kind), sc, b.value(loc))
                written.setdefault(loc, []).append((i, ins))
            else:
                reads.append((i, load(b, i, loc, kind, _fit(order, "R", kind), sc), loc))
            if which == 0 and fo is not None:
                fence(b, i, fo, widen(src, span, features))
    for i in range(n):
        loc, j = locs[i], (i - 1) % n
        src_w = [ins for t, ins in written.get(loc, []) if t == j]
        dst_w = [ins for t, ins in written.get(loc, []) if t == i]
        rd_i = [ins for t, ins, lc in reads if t == i and lc == loc]
        rd_j = [ins for t, ins, lc in reads if t == j and lc == loc]
        if src_w and rd_i:
            b.expect(i, rd_i[0].reg, _value(src_w[0]))
        elif rd_j and dst_w:
            b.expect(j, rd_j[0].reg, 0)
        elif src_w and dst_w:
            b.expect(None, loc, _value(dst_w[0]))
    change = near_miss(src, b, features) if src.chance(near) else ""
    shape = "".join(k for pair in kinds for k in pair)
    return _ptx(b.test(f"cycle{n}-{shape}", f"diy-style cycle {shape}" +
                       (f"; near miss: {change}" if change else "")))


def _coherence(src, features, near) -> Test:
    pl = draw_placements(src, 2, features)
    b = _Builder(pl)
    x = b.loc("x")
    scope = common_scope(pl, 0, 1, features)
    shape = src.choice(("CoRR", "CoWR", "CoRW", "CoWW"))

    def kind():
        return src.weighted(_kinds(features))

    if shape == "CoRR":
        w = store(b, 0, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        r0 = load(b, 1, x, kind(), "rlx", widen(src, scope, features))
        r1 = load(b, 1, x, kind(), "rlx", widen(src, scope, features))
        b.expect(1, r0.reg, _value(w))
        b.expect(1, r1.reg, 0)
    elif shape == "CoWR":
        w0 = store(b, 0, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        r = load(b, 0, x, kind(), "rlx", widen(src, scope, features))
        w1 = store(b, 1, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        b.expect(0, r.reg, _value(w1))
        b.expect(None, x, _value(w0))
    elif shape == "CoRW":
        r = load(b, 0, x, kind(), "rlx", widen(src, scope, features))
        w0 = store(b, 0, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        w1 = store(b, 1, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        b.expect(0, r.reg, _value(w1))
        b.expect(None, x, _value(w1))
        del w0
    else:
        store(b, 0, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        w1 = store(b, 0, x, kind(), "rlx", widen(src, scope, features), b.value(x))
        r0 = load(b, 1, x, kind(), "rlx", widen(src, scope, features))
        r1 = load(b, 1, x, kind(), "rlx", widen(src, scope, features))
        b.expect(1, r0.reg, _value(w1))
        b.expect(1, r1.reg, _value(b.code[0][0]))
    change = near_miss(src, b, features) if src.chance(near) else ""
    return _ptx(b.test(shape, f"coherence shape {shape}" +
                       (f"; near miss: {change}" if change else "")))


def _barrier(src, features, near) -> Test:
    """Message passing through a CTA barrier: data; bar | bar; read (an arrive on the writer's
    side is enough; one on the reader's side is a near miss)."""
    same = Placement(wave=None, wg=0, cluster=0, agent=0)
    other = Placement(wave=None, wg=1, cluster=0, agent=0)
    miss = src.chance(near)
    how = src.choice(("cta", "arrive-reader")) if miss else "ok"
    b = _Builder((same, other if how == "cta" else same))
    x = b.loc("x")
    kind = src.weighted(_kinds(features))
    w = store(b, 0, x, kind, "rlx", "wg", b.value(x))
    count = src.chance(0.3)
    tail = ("id=1", "quorum=2") if count else ()
    writer = "arrive" if src.chance(0.4) and how != "arrive-reader" else "sync"
    b.emit(0, Instr("cbar", scope="wg", attrs=("inst=0",) + tail +
                    (("arrive",) if writer == "arrive" else ())))
    b.emit(1, Instr("cbar", scope="wg", attrs=("inst=0",) + tail +
                    (("arrive",) if how == "arrive-reader" else ())))
    r = load(b, 1, x, src.weighted(_kinds(features)), "rlx", "wg")
    b.expect(1, r.reg, 0)
    del w
    return _ptx(b.test("barrier", "message passing through bar.cta" +
                       (f"; near miss: {how}" if miss else "")))


def _atomicity(src, features, near) -> Test:
    """Concurrent atomic adds of distinct powers of two: a lost update is the weak outcome."""
    n = src.weighted([(2, 4.0), (3, 1.0)])
    pl = draw_placements(src, n, features)
    b = _Builder(pl)
    x = b.loc("x")
    span = "wg"
    for t in range(1, n):
        span = wider(span, common_scope(pl, 0, t, features))
    for t in range(n):
        red = "red" in features and src.chance(0.4)
        ins = Instr("rmw", access="atom", order="rlx", scope=widen(src, span, features), op="add",
                    reg=None if red else b.reg(t), loc=x, args=(1 << t,),
                    attrs=("red",) if red else ())
        b.emit(t, ins)
    b.expect(None, x, (1 << n) - 1 - 1)      # the update of thread 0 is lost
    change = near_miss(src, b, features) if src.chance(near) else ""
    return _ptx(b.test(f"atomicity{n}", "concurrent atomic adds; weak: a lost update" +
                       (f"; near miss: {change}" if change else "")))


def _proxy(src, features, near) -> Test:
    """Data through another virtual address or proxy: a write to x, read through the alias y or
    the texture view t of x (or written through the surface view s), with the fences 8.9.5 asks
    for: fence.proxy.alias, or the proxy fences of the non-generic side in its own CTA."""
    solo = src.chance(0.4)
    pl = (Placement(wave=None, wg=0, cluster=0, agent=0),) if solo else \
        draw_placements(src, 2, features - {"gpus"})
    b = _Builder(pl)
    x = b.loc("x")
    writer, reader = 0, 0 if solo else 1
    how = src.choice(("alias", "texture", "surface"))
    if how == "surface":
        b.emit(writer, Instr("st", access="plain", loc=x, args=(b.value(x),),
                             attrs=("via=s@surface", "proxy=surface")))
        b.emit(writer, Instr("fence", attrs=("proxy=surface",)))
    else:
        b.emit(writer, Instr("st", access="plain", loc=x, args=(b.value(x),)))
        if how == "alias":
            b.emit(writer, Instr("fence", attrs=("proxy=alias",)))
    if not solo:
        scope = common_scope(pl, 0, 1, features)
        flag = b.loc("flag")
        b.emit(0, Instr("st", access="atom", order="rel", scope=scope, loc=flag, args=(1,)))
        r = load(b, 1, flag, "strong", "acq", scope)
        b.expect(1, r.reg, 1)
    if how == "texture":
        b.emit(reader, Instr("fence", attrs=("proxy=texture",)))
    r = b.reg(reader)
    attrs = {"alias": ("via=y@generic", "vloc=y"), "texture": ("via=t@texture",
                                                                "proxy=texture"),
             "surface": ()}[how]
    b.emit(reader, Instr("ld", access="plain", reg=r, loc=x, attrs=attrs))
    b.expect(reader, r, 0)
    miss = ""
    if src.chance(near):
        fences = [(t, i) for t, code in enumerate(b.code) for i, ins in enumerate(code)
                  if ins.base == "fence" and ins.order is None]
        if fences:
            t, i = src.choice(fences)
            del b.code[t][i]
            miss = f"drop P{t}#{i}"
    return _ptx(b.test(f"proxy-{how}", f"data through the {how} {'view' if how != 'alias' else ''}"
                       .strip() + (f"; near miss: {miss}" if miss else "")))


def _random(src, features, near) -> Test:
    n = src.weighted([(2, 5.0), (3, 3.0), (4, 1.0)])
    pl = draw_placements(src, n, features)
    b = _Builder(pl)
    glob = [b.loc(nm) for nm in ("x", "y", "z")[:src.integer(1, 3)]]
    values: dict[str, list[int]] = {}
    reads: list[tuple[int, Instr]] = []
    for t in range(n):
        for _ in range(src.integer(1, 4)):
            if sum(len(c) for c in b.code) >= 10:
                break
            if b.code[t] and ("fences" in features or "sc" in features) and src.chance(0.2):
                orders = (("acq_rel", "acq", "rel") if "fences" in features else ()) + \
                    (("sc",) if "sc" in features else ())
                fence(b, t, src.choice(orders), src.choice(SCOPES))
                continue
            loc = src.choice(glob)
            kind = src.weighted(_kinds(features))
            scope = src.choice([s for s in SCOPES if s != "cluster" or "cluster" in features])
            if src.chance(0.5):
                order = src.choice(("rlx", "rel") if kind != "atom" else
                                   ("rlx", "acq", "rel", "acq_rel"))
                ins = store(b, t, loc, kind, _fit(order, "W", kind), scope, b.value(loc))
                values.setdefault(loc, []).append(_value(ins))
                if ins.reg:
                    reads.append((t, ins))
            else:
                order = src.choice(("rlx", "acq"))
                reads.append((t, load(b, t, loc, kind, _fit(order, "R", kind), scope)))
    for t, ins in reads:
        if src.chance(0.8):
            b.expect(t, ins.reg, src.choice([0] + values.get(ins.loc, [])))
    return _ptx(b.test(f"random{n}", "random program"))


def _ptx(test: Test) -> Test:
    return dataclasses.replace(test, dialect="PTX")


SHAPES = {"cycle": _cycle, "coherence": _coherence, "barrier": _barrier,
          "atomicity": _atomicity, "proxy": _proxy, "random": _random}


def shape_weights(features: frozenset[str]) -> list[tuple[str, float]]:
    out = [("cycle", 6.0), ("random", 1.5), ("coherence", 1.5)]
    if "barriers" in features:
        out.append(("barrier", 1.5))
    if "atom" in features or "red" in features:
        out.append(("atomicity", 1.0))
    if "proxies" in features and "strong" in features:
        out.append(("proxy", 1.5))
    return out


def build_program(src, features: frozenset[str] | None = None, near_miss: float = 0.5,
                  shapes=None) -> Test:
    """One PTX program from ``src`` (a RandomSource or HypothesisSource)."""
    features = frozenset(PTX_FEATURES) if features is None else frozenset(features)
    opts = [(s, w) for s, w in shape_weights(features) if shapes is None or s in shapes]
    if not opts:
        raise FeatureError(f"no PTX program shape fits features {sorted(features)} "
                           f"and shapes {list(shapes or [])}")
    return SHAPES[src.weighted(opts)](src, features, near_miss)


def draw_program(seed: int, index: int, features: frozenset[str] | None = None,
                 near_miss: float = 0.5) -> Test:
    """Program number ``index`` of the PTX campaign with seed ``seed`` (deterministic)."""
    return build_program(RandomSource(program_seed(seed, index)), features, near_miss)


def programs(features=None, near_miss: float = 0.5, shapes=None):
    """A Hypothesis strategy of PTX programs."""
    from hypothesis import strategies as st
    feats = parse_ptx_features(features) if not isinstance(features, frozenset) else features

    @st.composite
    def _programs(draw):
        return build_program(HypothesisSource(draw), feats, near_miss, shapes)

    return _programs()


__all__ = ["PTX_FEATURES", "PTX_KINDS", "MODELS", "build_program", "draw_program",
           "parse_ptx_features", "programs"]

"""Program generators for fuzzing: Hypothesis strategies and seeded campaign draws of one definition.

Every program is built by :func:`build_program` from a *source* of choices. Two sources exist:

- :class:`HypothesisSource` draws through Hypothesis (``st.data()``), so :func:`programs` is an ordinary
  strategy that shrinks in property tests;
- :class:`RandomSource` draws from a seeded :class:`random.Random`, so a campaign's program number *i*
  is the same program on every machine, every run and every Hypothesis version (resume and shards need
  that). A campaign shrinks findings with its own backend-in-the-loop minimizer (``fuzz/minimize.py``).

The builder is biased toward the shapes that expose memory-model bugs (notes/gpu-litmus-testing.md):

- ``cycle``: diy-style cycles of po/rf/co/fr edges, each communication edge crossing a scope boundary of
  the drawn scope tree (MP, SB, LB, S, R, 2+2W, WRC-like 3- and 4-thread cycles);
- ``coherence``: po-loc shapes (CoRR, CoWR, CoRW) whose forbidden outcome reverses program order;
- ``async``: message passing whose consumer reads the data through async LDS DMA and asyncmark waits;
- ``barrier``: message passing through workgroup, split, cluster and named barriers with fences;
- ``cumulativity``: a write carried to an observer by two synchronization hops at different
  scopes, one of them between two waves of a workgroup (release cumulativity through another wave);
- ``random``: anything from the enabled instruction set, for breadth.

Synchronization is drawn *correct* (scopes that include both threads, matching orders), then with
probability ``near_miss`` made *almost right*: one scope one level too narrow, one ``.noav``, one order
weakened, one fence or wait dropped, one wait count too large. Every write stores a value no other write
to its location stores, so each outcome names the write each read saw. The condition is ``exists`` of the
shape's interesting (weak) outcome. Sizes stay far below the oracle's 64 events.
"""

from __future__ import annotations

import random
from typing import Sequence

from litmus.ir import (And, Atom, Condition, Const, Instr, Location, Test, Thread, RMW_OPS,
                       CLUSTER_BARRIER, WORKGROUP_BARRIER)
from litmus.scopes import SCOPES, SCOPE_RANK, Placement, instance

#: Feature names accepted by ``features=`` and ``scopefuzz fuzz --features``.
FEATURES: tuple[str, ...] = (
    "atomics",    # ld.atom / st.atom with orders and scopes
    "plain",      # non-atomic ld / st
    "av",         # ld.vis / st.av
    "vol",        # ld.vol / st.vol
    "rmw",        # rmw.OP
    "cas",        # cas
    "fences",     # fence.O.S
    "noav",       # the .noav MMRA on atomics and fences
    "lds",        # LDS locations (threads of one workgroup)
    "async",      # async.ld / async.mark / async.wait
    "barriers",   # barrier, bar.signal / bar.wait on the workgroup barrier
    "cluster",    # cluster scope instances and the cluster barrier
    "named",      # named barriers: bar.init / bar.join / bar.wait / bar.leave
    "agents",     # threads on different agents (system scope matters)
)

#: Drawing restrictions a backend's capabilities add to a feature set (:func:`for_backend`):
#: not features a user names, markers the shapes read.
NO_SPLIT_BARRIERS = "!split-barriers"
NO_CLUSTER_BARRIER = "!cluster-barrier"
NO_LANES = "!lanes"            # no two threads in one wave

#: feature -> the capability (hw.backend.CAPABILITIES) it needs; a feature whose capability
#: the backend lacks is not drawn
FEATURE_NEEDS: dict[str, tuple[str, ...]] = {
    "av": ("av",), "noav": ("noav",), "cas": ("cas",), "lds": ("lds",),
    "async": ("asyncmark", "lds-dma", "lds"), "named": ("named-barriers",),
}


def for_backend(features: frozenset[str], caps: frozenset[str] | None) -> frozenset[str]:
    """``features`` narrowed to what a backend with capabilities ``caps`` can run (None: all):
    the features it cannot express are dropped, and barrier kinds it lacks are marked, so that a
    campaign draws only programs the backend runs (docs/fuzzing.md "Only expressible
    programs")."""
    if caps is None:
        return features
    out = {f for f in features if all(c in caps for c in FEATURE_NEEDS.get(f, ()))}
    if "split-barriers" not in caps:
        out.add(NO_SPLIT_BARRIERS)
    if "cluster-barrier" not in caps:
        out.add(NO_CLUSTER_BARRIER)
    if "lanes" not in caps:
        out.add(NO_LANES)
    if not out & {"atomics", "plain", "av", "vol", "rmw", "cas"}:
        return features              # nothing left to draw: keep the user's set (refusals say why)
    return frozenset(out)


#: Every instruction kind (``Instr.kind``): the fuzzer's coverage denominator.
ALL_KINDS: tuple[str, ...] = (
    "ld", "ld.atom", "ld.vis", "ld.vol", "st", "st.atom", "st.av", "st.vol", "rmw", "cas", "fence",
    "async.ld", "async.mark", "async.wait", "barrier", "bar.signal", "bar.wait", "bar.init",
    "bar.join", "bar.leave")

#: Unordered pairs of scopes (of scoped operations in two different threads): coverage denominator.
ALL_SCOPE_PAIRS: tuple[tuple[str, str], ...] = tuple(
    (a, b) for i, a in enumerate(SCOPES) for b in SCOPES[i:])

#: Program size limits: the oracle refuses programs over 64 events; typical programs stay small.
from oracle.events import MAX_EVENTS  # noqa: E402 (the engine's limit, defined once)
MAX_THREADS = 4
#: Random programs stop growing here: the oracle's cost grows fast with racing accesses.
RANDOM_MAX_SIZE = 10


class FeatureError(ValueError):
    """An unknown feature name (one-line message)."""


def parse_features(text: str | Sequence[str] | None) -> frozenset[str]:
    """``"atomics,fences"`` / ``["atomics", "fences"]`` / None (= all) -> a feature set.

    ``all`` means every feature; ``-name`` removes one (``all,-async``).
    """
    if text is None:
        return frozenset(FEATURES)
    items = text.replace(",", " ").split() if isinstance(text, str) else \
        [w for t in text for w in t.replace(",", " ").split()]
    out: set[str] = set()
    if not items or items[0].startswith("-"):
        out = set(FEATURES)
    for w in items:
        name = w[1:] if w.startswith("-") else w
        if name == "all":
            chosen = set(FEATURES)
        elif name in FEATURES:
            chosen = {name}
        else:
            raise FeatureError(f"unknown feature {name!r} (known: all {' '.join(FEATURES)})")
        out = out - chosen if w.startswith("-") else out | chosen
    if not out & {"atomics", "plain", "av", "vol", "rmw", "cas"}:
        raise FeatureError("features select no memory access (need one of atomics plain av vol "
                           "rmw cas)")
    return frozenset(out)


# --- sources of choices -------------------------------------------------------------------------

class RandomSource:
    """Choices from a seeded :class:`random.Random` (deterministic for a seed)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def choice(self, seq: Sequence):
        return seq[self.rng.randrange(len(seq))]

    def weighted(self, options: Sequence[tuple[object, float]]):
        total = sum(w for _, w in options)
        x = self.rng.random() * total
        for value, w in options:
            x -= w
            if x < 0:
                return value
        return options[-1][0]


class HypothesisSource:
    """Choices drawn through Hypothesis; every choice shrinks toward its first (simplest) option."""

    def __init__(self, draw):
        from hypothesis import strategies as st
        self.draw = draw
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def chance(self, p: float) -> bool:
        if p <= 0:
            return False
        # shrinks toward 0, i.e. toward "no"
        return self.draw(self.st.integers(0, 999)) >= 1000 - int(p * 1000)

    def choice(self, seq: Sequence):
        return seq[self.integer(0, len(seq) - 1)]

    def weighted(self, options: Sequence[tuple[object, float]]):
        scale = [max(1, int(round(w * 100))) for _, w in options]
        x = self.integer(0, sum(scale) - 1)
        for (value, _), w in zip(options, scale):
            x -= w
            if x < 0:
                return value
        return options[-1][0]


# --- the scope tree -----------------------------------------------------------------------------

def draw_placements(src, n: int, features: frozenset[str]) -> tuple[Placement, ...]:
    """``n`` placements: each thread joins an earlier thread's wave, workgroup, cluster or agent.

    Relations are weighted toward crossing a boundary (other workgroup, other wave), where scoped
    synchronization matters. Unshared ids are left out so the printed placements stay short.
    """
    rel_opts = [("wg", 4.0), ("wave", 3.0)]
    if NO_LANES not in features:
        rel_opts.append(("lane", 0.5))
    if "cluster" in features:
        rel_opts.append(("cluster", 1.5))
    if "agents" in features:
        rel_opts.append(("agent", 2.0))
    ids: list[list[int]] = [[0, 0, 0, 0]]  # agent, cluster, wg, wave
    for i in range(1, n):
        ref = list(ids[src.integer(0, i - 1)])
        rel = src.weighted(rel_opts)
        if rel == "lane":
            new = ref
        elif rel == "wave":
            new = ref[:3] + [1 + max(p[3] for p in ids if p[:3] == ref[:3])]
        elif rel == "wg":
            new = ref[:2] + [1 + max(p[2] for p in ids if p[:2] == ref[:2]), 0]
        elif rel == "cluster":
            new = ref[:1] + [1 + max(p[1] for p in ids if p[:1] == ref[:1]), 0, 0]
        else:
            new = [1 + max(p[0] for p in ids), 0, 0, 0]
        ids.append(new)
    return normalize_placements(ids)


def normalize_placements(ids: list[list[int]]) -> tuple[Placement, ...]:
    """Placements from explicit [agent, cluster, wg, wave] ids, leaving out unshared wg/wave ids."""
    out = []
    for a, c, g, w in ids:
        wg_shared = sum(1 for p in ids if p[:3] == [a, c, g]) > 1
        wave_shared = sum(1 for p in ids if p == [a, c, g, w]) > 1
        if not wg_shared:
            out.append(Placement(wave=None, wg=None, cluster=c, agent=a))
        else:
            waves_in_wg = {p[3] for p in ids if p[:3] == [a, c, g]}
            out.append(Placement(wave=w if (wave_shared or len(waves_in_wg) > 1) else None,
                                 wg=g, cluster=c, agent=a))
    # a wave id is only meaningful when another thread shares the workgroup
    return tuple(out)


def common_scope(placements: Sequence[Placement], a: int, b: int) -> str:
    """The narrowest scope whose instance holds both threads (``wave`` .. ``sys``)."""
    for s in ("wave", "wg", "cluster", "agent"):
        if instance(placements[a], a, s) == instance(placements[b], b, s):
            return s
    return "sys"


def narrower(scope: str) -> str:
    return SCOPES[max(0, SCOPE_RANK[scope] - 1)]


def widen(src, scope: str) -> str:
    """The scope itself, mostly; sometimes a wider one (still correct)."""
    if src.chance(0.2):
        return SCOPES[src.integer(SCOPE_RANK[scope], len(SCOPES) - 1)]
    return scope


# --- the program builder ------------------------------------------------------------------------

class _Builder:
    """Collects threads, locations, distinct store values and the condition's atoms."""

    def __init__(self, placements: Sequence[Placement]):
        self.placements = tuple(placements)
        self.code: list[list[Instr]] = [[] for _ in placements]
        self.locs: dict[str, Location] = {}
        self.next_value: dict[str, int] = {}
        self.atoms: list[Atom] = []

    def loc(self, name: str, lds: bool = False, init: int = 0) -> str:
        if name not in self.locs:
            self.locs[name] = Location(name, init, lds)
            self.next_value[name] = init + 1
        return name

    def value(self, loc: str) -> int:
        v = self.next_value[loc]
        self.next_value[loc] = v + 1
        return v

    def reg(self, tid: int) -> str:
        n = sum(1 for ins in self.code[tid] if ins.reg is not None)
        return f"r{n}"

    def emit(self, tid: int, ins: Instr) -> Instr:
        self.code[tid].append(ins)
        return ins

    def expect(self, tid: int | None, name: str, value: int) -> None:
        self.atoms.append(Atom(tid, name, "==", value))

    def test(self, name: str, doc: str) -> Test:
        keep = [t for t in range(len(self.code)) if self.code[t]]
        if len(keep) < len(self.code):     # drop empty threads, renumbering the condition
            remap = {old: new for new, old in enumerate(keep)}
            self.code = [self.code[t] for t in keep]
            self.placements = tuple(self.placements[t] for t in keep)
            self.atoms = [Atom(remap[a.thread], a.name, a.op, a.value) if a.thread is not None
                          else a for a in self.atoms if a.thread is None or a.thread in remap]
        used = {n for th in self.code for ins in th for n in ins.locations()}
        used |= {a.name for a in self.atoms if a.thread is None}
        locs = tuple(loc for n, loc in sorted(self.locs.items(), key=lambda kv: (kv[1].lds, kv[0]))
                     if n in used)   # globals first, as the printer lays them out
        threads = tuple(Thread(p, tuple(c)) for p, c in zip(self.placements, self.code))
        prop = (self.atoms[0] if len(self.atoms) == 1 else
                And(tuple(self.atoms)) if self.atoms else Const(True))
        return Test(name=name, locations=locs, threads=threads,
                    condition=Condition("exists", prop), doc=(doc,))


def _access_kind(src, features: frozenset[str], write: bool, lds: bool,
                 atomic_only: bool = False) -> str:
    """atom | plain | av | vol | rmw | cas, weighted toward atomics.

    ``atomic_only`` (when the features allow an atomic) keeps racing accesses atomic: a race of
    non-atomic accesses makes the read undef under the AMDGPU model, and undef hides bugs.
    """
    opts = []
    if "atomics" in features:
        opts.append(("atom", 6.0))
    if atomic_only:
        atomic = list(opts)
        if "rmw" in features:
            atomic.append(("rmw", 1.0))
        if "cas" in features:        # a read: a cas that fails (with its failure order)
            atomic.append(("cas", 0.7 if write else 0.5))
        if atomic:
            return src.weighted(atomic)
    if "plain" in features:
        opts.append(("plain", 1.5))
    if "av" in features and not lds:
        opts.append(("av", 1.5))
    if "vol" in features:
        opts.append(("vol", 1.0))
    if "rmw" in features:
        opts.append(("rmw", 1.0))
    if "cas" in features:
        opts.append(("cas", 0.7 if write else 0.5))   # reads: a cas that never matches (_read)
    return src.weighted(opts)


def _sync_access(src, features: frozenset[str], current: str, write: bool) -> str:
    """The access kind of a synchronizing (acquire/release) access: atom, rmw or cas."""
    opts = [(k, w) for k, w, f in (("atom", 3.0, "atomics"), ("rmw", 1.5, "rmw"),
                                   ("cas", 1.5 if not write else 1.0, "cas")) if f in features]
    return src.weighted(opts) if opts else current


def _read(b: _Builder, tid: int, loc: str, kind: str, order: str, scope: str, noav: bool) -> Instr:
    r = b.reg(tid)
    if kind == "atom":
        return b.emit(tid, Instr("ld", access="atom", order=order, scope=scope, noav=noav,
                                 reg=r, loc=loc))
    if kind == "rmw":   # a read that writes back what it read: rmw.add 0 / rmw.or 0
        return b.emit(tid, Instr("rmw", access="atom", order=order, scope=scope, noav=noav,
                                 op="add", reg=r, loc=loc, args=(0,)))
    if kind == "cas":   # an atomic read: expects -1, which no write of a generated test stores
        return b.emit(tid, Instr("cas", access="atom", order=order, fail_order=order,
                                 scope=scope, noav=noav, reg=r, loc=loc, args=(-1, -1)))
    if kind == "av":
        return b.emit(tid, Instr("ld", access="vis", scope=scope, reg=r, loc=loc))
    if kind == "vol":
        return b.emit(tid, Instr("ld", access="vol", reg=r, loc=loc))
    return b.emit(tid, Instr("ld", access="plain", reg=r, loc=loc))


def _write(b: _Builder, tid: int, loc: str, kind: str, order: str, scope: str, noav: bool,
           value: int, expected: int = 0) -> Instr:
    if kind == "atom":
        return b.emit(tid, Instr("st", access="atom", order=order, scope=scope, noav=noav,
                                 loc=loc, args=(value,)))
    if kind == "rmw":
        return b.emit(tid, Instr("rmw", access="atom", order=order, scope=scope, noav=noav,
                                 op="xchg", reg=b.reg(tid), loc=loc, args=(value,)))
    if kind == "cas":
        fail = {"rlx": "rlx", "acq": "acq", "rel": "rlx", "acq_rel": "acq", "sc": "sc"}[order]
        return b.emit(tid, Instr("cas", access="atom", order=order, fail_order=fail, scope=scope,
                                 noav=noav, reg=b.reg(tid), loc=loc, args=(expected, value)))
    if kind == "av":
        return b.emit(tid, Instr("st", access="av", scope=scope, loc=loc, args=(value,)))
    if kind == "vol":
        return b.emit(tid, Instr("st", access="vol", loc=loc, args=(value,)))
    return b.emit(tid, Instr("st", access="plain", loc=loc, args=(value,)))


def _is_sync(ins: Instr) -> bool:
    return ins.base == "fence" or (ins.access == "atom" and ins.order != "rlx")


def _near_miss(src, b: _Builder, features: frozenset[str], protected: set[int] = frozenset()) -> str:
    """Make the synchronization almost right: one change that may break it. Returns what changed."""
    cands = []
    for tid, code in enumerate(b.code):
        for i, ins in enumerate(code):
            if ins.scope is not None and ins.scope not in ("thread",) and \
                    (ins.base == "fence" or ins.access in ("atom", "vis", "av")):
                cands.append(("narrow", tid, i))
            if "noav" in features and (ins.base == "fence" or ins.access == "atom") and \
                    _is_sync(ins) and not ins.noav:
                cands.append(("noav", tid, i))
            if _is_sync(ins) and ins.base != "fence":
                cands.append(("weaken", tid, i))
            if ins.base in ("fence", "async.wait", "async.mark") and id(ins) not in protected:
                cands.append(("drop", tid, i))
            if ins.base == "async.wait":
                cands.append(("lax", tid, i))
    if not cands:
        return ""
    if "noav" in features and any(c[0] == "noav" for c in cands) and src.chance(0.15):
        for w, tid, i in cands:    # .noav on every synchronizing op, as MMRA-annotated code has
            if w == "noav":
                b.code[tid][i] = b.code[tid][i].replace(noav=True)
        return "noav everywhere"
    what, tid, i = src.choice(cands)
    ins = b.code[tid][i]
    if what == "narrow":
        b.code[tid][i] = ins.replace(scope=narrower(ins.scope))
    elif what == "noav":
        b.code[tid][i] = ins.replace(noav=True)
    elif what == "weaken":
        weaker = {"sc": "acq_rel" if ins.is_rmw else ("acq" if ins.reads else "rel"),
                  "acq_rel": src.choice(("acq", "rel")), "acq": "rlx", "rel": "rlx"}
        new = weaker.get(ins.order, "rlx")
        if ins.base == "ld" and new not in ("rlx", "acq", "sc"):
            new = "rlx"
        if ins.base == "st" and new not in ("rlx", "rel", "sc"):
            new = "rlx"
        fail = ins.fail_order
        if ins.base == "cas":
            fail = {"rlx": "rlx", "acq": "acq", "rel": "rlx", "acq_rel": "acq", "sc": "sc"}[new]
        b.code[tid][i] = ins.replace(order=new, fail_order=fail)
    elif what == "drop":
        del b.code[tid][i]
    elif what == "lax":
        b.code[tid][i] = ins.replace(args=(ins.args[0] + 1,))
    return f"{what} P{tid}#{i}"


# -- shapes --------------------------------------------------------------------------------------

def _cycle(src, features: frozenset[str], near_miss: float) -> Test:
    """A diy-style cycle: thread i accesses x_i then x_{i+1}; consecutive threads communicate."""
    n = src.weighted([(2, 5.0), (3, 3.0), (4, 1.5)])
    pl = draw_placements(src, n, features)
    b = _Builder(pl)
    # kinds[i] = (first, second) with "R"/"W"; no R->R communication edge (diy has none)
    kinds = []
    for i in range(n):
        first = src.choice("RW")
        if i > 0 and kinds[i - 1][1] == "R":
            first = "W"
        second = src.choice("RW")
        if i == n - 1 and kinds[0][0] == "R":
            second = "W"
        kinds.append((first, second))
    names = ["x", "y", "z", "w"]
    locname = []
    for i in range(n):
        # location x_i is shared by thread i-1 (second access) and thread i (first access)
        j = (i - 1) % n
        same_wg = common_scope(pl, i, j) in ("wave", "wg")
        co_edge = kinds[j][1] == "W" and kinds[i][0] == "W"   # observed by the final value
        lds = "lds" in features and same_wg and not co_edge and src.chance(0.25)
        locname.append(b.loc(names[i], lds=lds))
    edge_scope = [common_scope(pl, (i - 1) % n, i) for i in range(n)]  # scope of location x_i
    fence_ok = "fences" in features
    order_ok = "atomics" in features or "rmw" in features or "cas" in features
    sync_mode = []
    for i in range(n):
        opts = [("none", 1.0)]
        if fence_ok:
            opts.append(("fence", 2.0))
        if order_ok:
            opts.append(("orders", 2.0))
        sync_mode.append(src.weighted(opts))
    written: dict[str, list[tuple[int, Instr]]] = {}
    reads: list[tuple[int, Instr, str]] = []
    # at most one location may be accessed non-atomically (the "data" of message passing)
    data = src.integer(0, n - 1) if src.chance(0.6) else -1
    for i in range(n):
        la, lb = locname[i], locname[(i + 1) % n]
        sa, sb = edge_scope[i], edge_scope[(i + 1) % n]
        ka, kb = kinds[i]
        mode = sync_mode[i]
        span = SCOPES[max(SCOPE_RANK[sa], SCOPE_RANK[sb])]
        # orders on the accesses themselves
        oa = ob = "rlx"
        if mode == "orders":
            if (ka, kb) == ("W", "R"):
                oa = ob = "sc"
            else:
                if kb == "W":
                    ob = "rel"
                if ka == "R":
                    oa = "acq"
        acc_a = _access_kind(src, features, ka == "W", b.locs[la].lds, i != data)
        acc_b = _access_kind(src, features, kb == "W", b.locs[lb].lds, (i + 1) % n != data)
        if mode == "orders":   # orders need atomics; acquire/release rmw and cas lower
            # differently from loads and stores (waits, failure orders), so they get a fair share
            if oa != "rlx":
                acc_a = _sync_access(src, features, acc_a, ka == "W")
            if ob != "rlx":
                acc_b = _sync_access(src, features, acc_b, kb == "W")
        for which, (k, loc, acc, order, scope) in enumerate(
                ((ka, la, acc_a, oa, sa), (kb, lb, acc_b, ob, sb))):
            if acc in ("atom", "rmw", "cas"):
                scope = widen(src, span if order != "rlx" else scope)
            else:
                scope = widen(src, scope)
            if acc == "atom" and k == "R" and order == "rel":
                order = "rlx"
            if k == "W":
                v = b.value(loc)
                ins = _write(b, i, loc, acc if acc in ("atom", "rmw", "cas", "plain", "av", "vol")
                             else "atom", _fit_order(order, "W", acc), scope, False, v)
                written.setdefault(loc, []).append((i, ins))
            else:
                ins = _read(b, i, loc, acc, _fit_order(order, "R", acc), scope, False)
                reads.append((i, ins, loc))
            if which == 0 and mode == "fence":
                fo = {("W", "W"): "rel", ("R", "R"): "acq", ("R", "W"): "acq_rel",
                      ("W", "R"): "sc"}[(ka, kb)]
                b.emit(i, Instr("fence", order=fo, scope=widen(src, span)))
    # the weak outcome: per location x_i, edge from thread i-1's second access to thread i's first
    for i in range(n):
        loc = locname[i]
        j = (i - 1) % n
        src_ins = [ins for t, ins in written.get(loc, []) if t == j]
        dst_ins = [ins for t, ins in written.get(loc, []) if t == i]
        rd_i = [ins for t, ins, l in reads if t == i and l == loc]
        rd_j = [ins for t, ins, l in reads if t == j and l == loc]
        if src_ins and rd_i:                      # rf: thread i reads thread j's write
            b.expect(i, rd_i[0].reg, _written_value(src_ins[0]))
        elif rd_j and dst_ins:                    # fr: thread j read the initial value
            b.expect(j, rd_j[0].reg, 0)
        elif src_ins and dst_ins and not b.locs[loc].lds:   # co: thread i's write is last
            b.expect(None, loc, _written_value(dst_ins[0]))
        # a cas is a write of the cycle only when it succeeds: it must read the write co-before
        # it (thread j's, on a co edge) or the initial value, and the condition says so
        for t, ins in written.get(loc, []):
            if ins.base != "cas":
                continue
            before = src_ins[0] if (t == i and src_ins and dst_ins) else None
            expected = _written_value(before) if before is not None else 0
            new = ins.replace(args=(expected, ins.args[1]))
            b.code[t][next(k for k, x in enumerate(b.code[t]) if x is ins)] = new
            b.expect(t, new.reg, expected)
    change = ""
    if src.chance(near_miss):
        change = _near_miss(src, b, features)
    shape = "".join(k for pair in kinds for k in pair)
    return b.test(f"cycle{n}-{shape}", f"diy-style cycle {shape}" +
                  (f"; near miss: {change}" if change else ""))


def _fit_order(order: str, k: str, acc: str) -> str:
    if acc in ("plain", "av", "vol"):
        return "rlx"
    if acc == "atom":
        if k == "R":
            return order if order in ("rlx", "acq", "sc") else "rlx"
        return order if order in ("rlx", "rel", "sc") else "rlx"
    return order


def _written_value(ins: Instr) -> int:
    return ins.args[1] if ins.base == "cas" else ins.args[0]


def _coherence(src, features: frozenset[str], near_miss: float) -> Test:
    """po-loc shapes on one location: CoRR, CoWR, CoRW; the weak outcome reverses program order."""
    pl = draw_placements(src, 2, features)
    b = _Builder(pl)
    shape = src.choice(("CoRR", "CoWR", "CoRW"))
    # CoWR/CoRW need the final value, which LDS does not have
    lds = "lds" in features and common_scope(pl, 0, 1) in ("wave", "wg") and shape == "CoRR" \
        and src.chance(0.25)
    x = b.loc("x", lds=lds)
    scope = common_scope(pl, 0, 1)

    def acc(write: bool) -> str:
        # no cas: a cas that fails is not a write, and the shapes need every write to happen
        k = _access_kind(src, features - {"cas"}, write, lds, atomic_only=True)
        return k

    if shape == "CoRR":
        w = _write(b, 0, x, acc(True), "rlx", widen(src, scope), False, b.value(x))
        r0 = _read(b, 1, x, acc(False), "rlx", widen(src, scope), False)
        r1 = _read(b, 1, x, acc(False), "rlx", widen(src, scope), False)
        b.expect(1, r0.reg, _written_value(w))
        b.expect(1, r1.reg, 0)
    elif shape == "CoWR":
        w0 = _write(b, 0, x, acc(True), "rlx", widen(src, scope), False, b.value(x))
        r = _read(b, 0, x, acc(False), "rlx", widen(src, scope), False)
        w1 = _write(b, 1, x, acc(True), "rlx", widen(src, scope), False, b.value(x))
        b.expect(0, r.reg, _written_value(w1))
        if not lds:
            b.expect(None, x, _written_value(w0))
    else:
        r = _read(b, 0, x, acc(False), "rlx", widen(src, scope), False)
        w0 = _write(b, 0, x, acc(True), "rlx", widen(src, scope), False, b.value(x))
        w1 = _write(b, 1, x, acc(True), "rlx", widen(src, scope), False, b.value(x))
        b.expect(0, r.reg, _written_value(w1))
        if not lds:
            b.expect(None, x, _written_value(w1))
    # no near miss: a scope too narrow on a racing atomic only makes every read undef
    return b.test(shape, f"coherence shape {shape}")


def _atomicity(src, features: frozenset[str], near_miss: float) -> Test:
    """Concurrent rmw/cas on one location: the weak outcome is a lost update (both read the init).

    Operands are distinct powers of two, so the final value names the updates that took effect.
    """
    n = src.weighted([(2, 4.0), (3, 1.0)])
    pl = draw_placements(src, n, features)
    b = _Builder(pl)
    x = b.loc("x")
    ops = [("add", 3.0), ("or", 1.0), ("xor", 1.0), ("max", 0.5)]
    span = "wave"
    for t in range(1, n):
        span = SCOPES[max(SCOPE_RANK[span], SCOPE_RANK[common_scope(pl, 0, t)])]
    for t in range(n):
        v = 1 << t
        scope = widen(src, span)
        if "cas" in features and ("rmw" not in features or src.chance(0.3)):
            ins = b.emit(t, Instr("cas", access="atom", order="rlx", fail_order="rlx", scope=scope,
                                  reg=b.reg(t), loc=x, args=(0, v)))
        else:
            ins = b.emit(t, Instr("rmw", access="atom", order="rlx", scope=scope,
                                  op=src.weighted(ops), reg=b.reg(t), loc=x, args=(v,)))
        b.expect(t, ins.reg, 0)
    summing = all(c[0].base == "rmw" and c[0].op in ("add", "or", "xor") for c in b.code)
    if summing and src.chance(0.5):      # the final value misses an update
        b.atoms = []
        b.expect(None, x, 1 << (n - 1))
    return b.test(f"atomicity{n}", "concurrent read-modify-writes; weak: a lost update")


def _producer(src, b: _Builder, tid: int, features, data: str, flag: str, scope: str) -> None:
    """``data = v ; release ; flag = 1`` with the release as a fence or a release store."""
    _write(b, tid, data, src.choice(_plainish(features)), "rlx", scope, False, b.value(data))
    if "fences" in features and (src.chance(0.5) or "atomics" not in features):
        b.emit(tid, Instr("fence", order="rel", scope=widen(src, scope)))
        _write(b, tid, flag, "atom" if "atomics" in features else "rmw", "rlx", widen(src, scope),
               False, b.value(flag))
    else:
        _write(b, tid, flag, "atom" if "atomics" in features else "rmw", "rel", widen(src, scope),
               False, b.value(flag))


def _plainish(features) -> tuple[str, ...]:
    out = tuple(k for k, f in (("plain", "plain"), ("atom", "atomics"), ("av", "av"),
                               ("vol", "vol")) if f in features)
    return out or ("rmw",)


def _async(src, features: frozenset[str], near_miss: float) -> Test:
    """Data read through async LDS DMA: (acquire a flag;) async.ld; mark; wait; ld LDS.

    Mostly in one thread, copying locations whose initial values (1, 2) tell the copies apart (the
    DMA's read is outside program order, so only the initial write is surely location-ordered
    before it); sometimes after message passing from another thread.
    """
    solo = src.chance(0.7)
    pl = (Placement(),) if solo else draw_placements(src, 2, features)
    b = _Builder(pl)
    c = 0 if solo else 1
    nload = src.weighted([(1, 3.0), (2, 2.0)])
    srcs = [b.loc(n, init=(k + 1) if solo else 0) for k, n in enumerate(("x", "z")[:nload])]
    dsts = [b.loc(n, lds=True) for n in ("a", "c")[:nload]]
    scope = "wg" if solo else common_scope(pl, 0, 1)
    if not solo:
        flag = b.loc("y")
        _producer(src, b, 0, features, srcs[0], flag, scope)
        r = _read(b, c, flag, "atom" if "atomics" in features else "rmw", "acq", widen(src, scope),
                  False)
        b.expect(c, r.reg, 1)
    protected = set()
    marks_after = []
    for k in range(nload):
        b.emit(c, Instr("async.ld", loc=srcs[k], lds=dsts[k]))
        if src.chance(0.85):
            b.emit(c, Instr("async.mark"))
            marks_after.append(k)
    # wait for the first load's mark: that many later marks may stay outstanding
    if marks_after and marks_after[0] == 0:
        waits = len(marks_after) - 1
    else:
        waits = 0
    w = b.emit(c, Instr("async.wait", args=(waits,)))
    protected.add(id(w))
    r = _read(b, c, dsts[0], "plain", "rlx", "wg", False)
    b.expect(c, r.reg, 0)      # the stale LDS value: the DMA's copy was not waited for
    change = _near_miss(src, b, features) if src.chance(near_miss) else ""
    return b.test("async-mp" if not solo else "async-own",
                  f"data read through async LDS DMA" + (f"; near miss: {change}" if change else ""))


def _barrier(src, features: frozenset[str], near_miss: float) -> Test:
    """Message passing through an execution barrier with release/acquire fences around it."""
    kinds = [("wg", 3.0)]
    if NO_SPLIT_BARRIERS not in features:
        kinds.append(("split", 2.0))
    if "cluster" in features and NO_CLUSTER_BARRIER not in features:
        kinds.append(("cluster", 1.5))
    if "named" in features:
        kinds.append(("named", 1.5))
    kind = src.weighted(kinds)
    if kind == "cluster" and src.chance(0.5):
        return _cluster_waves(src, features, near_miss)
    if kind == "cluster":
        pl = (Placement(cluster=0), Placement(cluster=0))   # two workgroups of one cluster
        scope = "cluster"
    else:
        pl = (Placement(wave=0, wg=0), Placement(wave=1, wg=0))
        scope = "wg"
    b = _Builder(pl)
    lds = kind != "cluster" and "lds" in features and src.chance(0.3)
    x = b.loc("a" if lds else "x", lds=lds)
    decoy = False
    if kind == "named":
        bid = src.integer(1, 2)
        b.emit(0, Instr("bar.init", args=(bid, 2)))
        # the consumer waits with another barrier's id: a wait waits on the last *joined* named
        # barrier, whatever its operand; the other barrier (count 1) completes at once
        decoy = src.chance(0.4)
        if decoy:
            b.emit(1, Instr("bar.init", args=(3 - bid, 1)))
        for t in (0, 1):
            b.emit(t, Instr("barrier"))
            b.emit(t, Instr("bar.join", args=(bid,)))
    v = b.value(x)
    _write(b, 0, x, src.choice(_plainish(features)) if not lds else "plain", "rlx",
           widen(src, scope), False, v)
    fenced = "fences" in features
    if fenced:
        b.emit(0, Instr("fence", order="rel", scope=widen(src, scope)))
    bid = {"wg": WORKGROUP_BARRIER, "split": WORKGROUP_BARRIER, "cluster": CLUSTER_BARRIER}.get(kind)
    for t in (0, 1):
        if kind == "wg":
            b.emit(t, Instr("barrier"))
        elif kind == "named":
            nb = b.code[0][0].args[0]
            b.emit(t, Instr("bar.signal", args=(nb,)))
            if t == 1 and decoy:
                b.emit(t, Instr("bar.signal", args=(3 - nb,)))
            b.emit(t, Instr("bar.wait", args=(3 - nb if t == 1 and decoy else nb,)))
        else:
            b.emit(t, Instr("bar.signal", args=(bid,)))
            b.emit(t, Instr("bar.wait", args=(bid,)))
    if fenced:
        b.emit(1, Instr("fence", order="acq", scope=widen(src, scope)))
    r = _read(b, 1, x, src.choice(_plainish(features)) if not lds else "plain", "rlx",
              widen(src, scope), False)
    b.expect(1, r.reg, 0)
    if kind == "named" and src.chance(0.3):
        for t in (0, 1):
            b.emit(t, Instr("bar.leave"))
    change = _near_miss(src, b, features) if src.chance(near_miss) else ""
    return b.test(f"barrier-{kind}", f"message passing through a {kind} barrier" +
                  (f"; near miss: {change}" if change else ""))


def _cluster_waves(src, features: frozenset[str], near_miss: float) -> Test:
    """The cluster barrier with a two-wave workgroup: one wave of it arrives, the other does not.

    P0 (workgroup 1) writes, releases at cluster scope, arrives and waits (a workgroup drops the
    cluster barrier when its last wave ends, and an arrive followed by that drop with no wait in
    between is undefined); P1 and P2 are waves of workgroup 0: P1 arrives, waits, acquires and
    reads; P2 never touches the barrier. The cluster barrier expects one arrival per workgroup,
    so P1's wait ends only after P0's arrival.
    """
    pl = (Placement(wave=0, wg=1), Placement(wave=0, wg=0), Placement(wave=1, wg=0))
    b = _Builder(pl)
    x = b.loc("x")
    _write(b, 0, x, src.choice(_plainish(features)), "rlx", "cluster", False, b.value(x))
    fenced = "fences" in features
    if fenced:
        b.emit(0, Instr("fence", order="rel", scope=widen(src, "cluster")))
    b.emit(0, Instr("bar.signal", args=(CLUSTER_BARRIER,)))
    b.emit(0, Instr("bar.wait", args=(CLUSTER_BARRIER,)))
    b.emit(1, Instr("bar.signal", args=(CLUSTER_BARRIER,)))
    b.emit(1, Instr("bar.wait", args=(CLUSTER_BARRIER,)))
    if fenced:
        b.emit(1, Instr("fence", order="acq", scope=widen(src, "cluster")))
    r = _read(b, 1, x, src.choice(_plainish(features)), "rlx", "cluster", False)
    b.expect(1, r.reg, 0)
    y = b.loc("y")
    _read(b, 2, y, src.choice(_plainish(features)), "rlx", "wg", False)   # a bystander wave
    change = _near_miss(src, b, features) if src.chance(near_miss) else ""
    return b.test("barrier-cluster-waves", "message passing through the cluster barrier in a "
                  "cluster whose workgroup 0 has two waves" +
                  (f"; near miss: {change}" if change else ""))


def _random(src, features: frozenset[str], near_miss: float) -> Test:
    """Anything from the enabled instruction set, for breadth (no barriers: they need structure)."""
    n = src.weighted([(2, 5.0), (3, 3.0), (4, 1.0)])
    pl = draw_placements(src, n, features)
    b = _Builder(pl)
    nloc = src.integer(1, 3)
    glob = [b.loc(nm) for nm in ("x", "y", "z")[:nloc]]
    same_wg = all(common_scope(pl, 0, t) in ("wave", "wg") for t in range(n))
    lds = [b.loc("a", lds=True)] if "lds" in features and same_wg and src.chance(0.4) else []
    values: dict[str, list[int]] = {}
    reads: list[tuple[int, Instr]] = []
    for t in range(n):
        for _ in range(src.integer(1, 4)):
            if len(b.code[t]) >= 5 or sum(len(c) for c in b.code) >= RANDOM_MAX_SIZE:
                break
            opts = [("access", 6.0)]
            if "fences" in features:
                opts.append(("fence", 2.0))
            if "async" in features and lds:
                opts.append(("async", 1.0))
            what = src.weighted(opts) if b.code[t] else "access"
            if what == "fence":
                b.emit(t, Instr("fence", order=src.choice(("acq", "rel", "acq_rel", "sc")),
                                scope=src.choice(SCOPES[1:]),
                                noav="noav" in features and src.chance(0.15)))
                continue
            if what == "async":
                b.emit(t, Instr("async.ld", loc=src.choice(glob), lds=lds[0]))
                b.emit(t, Instr("async.mark"))
                b.emit(t, Instr("async.wait", args=(0,)))
                continue
            loc = src.choice(glob + lds)
            write = src.chance(0.5)
            acc = _access_kind(src, features, write, b.locs[loc].lds)
            scope = src.choice(SCOPES[1:])
            noav = "noav" in features and acc in ("atom", "rmw", "cas") and src.chance(0.15)
            if write:
                order = src.choice(("rlx", "rel", "sc") if acc == "atom" else
                                   ("rlx", "acq", "rel", "acq_rel", "sc"))
                v = b.value(loc)
                ins = _write(b, t, loc, acc, order, scope, noav, v)
                values.setdefault(loc, []).append(_written_value(ins))
                if ins.reg:
                    reads.append((t, ins))
            else:
                order = src.choice(("rlx", "acq", "sc"))
                reads.append((t, _read(b, t, loc, acc, order, scope, noav)))
    for t, ins in reads:
        cands = [0] + values.get(ins.loc, [])
        if src.chance(0.8):
            b.expect(t, ins.reg, src.choice(cands))
    return b.test(f"random{n}", "random program")


def _hop(src, b: _Builder, features, sender: int, receiver: int, flag: str, scope: str) -> Instr:
    """One synchronization hop ``sender -> receiver`` through ``flag`` at ``scope``: a release
    (a release store/rmw/cas, or a release fence then a relaxed write) in ``sender``, an acquire
    (an acquire load/rmw/cas, or a relaxed read then an acquire fence) in ``receiver``; the
    receiver's read is expected to see the sender's write. Returns the receiver's read."""
    fence = "fences" in features and src.chance(0.4)
    kind = _sync_access(src, features, "atom", True)
    v = b.value(flag)
    if fence:
        b.emit(sender, Instr("fence", order="rel", scope=widen(src, scope)))
        w = _write(b, sender, flag, kind, "rlx", widen(src, scope), False, v)
    else:
        w = _write(b, sender, flag, kind, "rel", widen(src, scope), False, v)
    if w.base == "cas":                       # a cas writes only when it reads the initial value
        b.expect(sender, w.reg, 0)
    fence = "fences" in features and src.chance(0.4)
    kind = _sync_access(src, features, "atom", False)
    r = _read(b, receiver, flag, kind, "rlx" if fence else "acq", widen(src, scope), False)
    if fence:
        b.emit(receiver, Instr("fence", order="acq", scope=widen(src, scope)))
    b.expect(receiver, r.reg, _written_value(w))
    return r


def _cumulativity(src, features: frozenset[str], near_miss: float) -> Test:
    """Cumulativity through another wave: P0 writes x, then a chain of two synchronization hops
    at *different* scopes carries it to an observer, and the observer must see x (``hb`` is
    transitive across scopes).

    - ``narrow-wide`` (release cumulativity): P0 and P1 are two waves of one workgroup; P0 signals
      P1 at workgroup scope (through LDS or global memory), P1 releases at the scope that holds
      P2 (another workgroup, cluster or agent), P2 acquires and reads x (or writes it: the final
      value must then be P2's). A workgroup release that does not wait for its wave's global
      stores is cumulative only if another wave's wider release waits for them.
    - ``wide-narrow`` (acquire side): P0 in another workgroup releases to P1 at the wide scope;
      P1 releases at workgroup scope to P2, another wave of its workgroup, which reads x.

    Every scope is drawn correct (the common scope of the hop, sometimes wider); a near miss
    makes one hop too weak, so the same family also draws allowed variants.
    """
    wide_where = [("wg", 4.0)]
    if "cluster" in features:
        wide_where.append(("cluster", 1.0))
    if "agents" in features:
        wide_where.append(("agent", 1.5))
    where = src.weighted(wide_where)
    other = {"wg": [0, 0, 1, 0], "cluster": [0, 1, 0, 0], "agent": [1, 0, 0, 0]}[where]
    direction = src.weighted([("narrow-wide", 2.0), ("wide-narrow", 1.0)])
    if direction == "narrow-wide":
        ids = [[0, 0, 0, 0], [0, 0, 0, 1], other]
    else:
        ids = [other, [0, 0, 0, 0], [0, 0, 0, 1]]
    pl = normalize_placements(ids)
    b = _Builder(pl)
    x = b.loc("x")
    narrow_hop = 0 if direction == "narrow-wide" else 1        # the hop inside the workgroup
    lds = "lds" in features and src.chance(0.5)
    flags = [b.loc("y", lds=lds and narrow_hop == 0), b.loc("z", lds=lds and narrow_hop == 1)]
    wide = common_scope(pl, 0, 2)
    data_kind = _access_kind(src, features, True, False, atomic_only=src.chance(0.5))
    w = _write(b, 0, x, data_kind, "rlx", widen(src, wide), False, b.value(x))
    if w.base == "cas":
        b.expect(0, w.reg, 0)
    for hop in (0, 1):
        _hop(src, b, features, hop, hop + 1, flags[hop], "wg" if hop == narrow_hop else
             common_scope(pl, hop, hop + 1))
    if features & {"atomics", "plain", "rmw", "av", "vol"} and src.chance(0.25):
        # the observer writes x (not with a cas, which may fail): it must be co-after P0's write
        k = _access_kind(src, features - {"cas"}, True, False, atomic_only=src.chance(0.5))
        w2 = _write(b, 2, x, k, "rlx", widen(src, wide), False, b.value(x))
        b.expect(None, x, _written_value(w))
        last = f"W{'(' + w2.base + ')' if w2.base != 'st' else ''}"
    else:
        k = _access_kind(src, features, False, False, atomic_only=src.chance(0.5))
        r = _read(b, 2, x, k, "rlx", widen(src, wide), False)
        b.expect(2, r.reg, 0)
        last = "R"
    change = _near_miss(src, b, features) if src.chance(near_miss) else ""
    return b.test(f"cumul-{direction}-{where}{'-lds' if lds else ''}-{last}",
                  f"cumulativity through another wave ({direction}, hops wg and {wide})" +
                  (f"; near miss: {change}" if change else ""))


SHAPES = {"cycle": _cycle, "coherence": _coherence, "async": _async, "barrier": _barrier,
          "atomicity": _atomicity, "random": _random, "cumulativity": _cumulativity}


def shape_weights(features: frozenset[str]) -> list[tuple[str, float]]:
    out = [("cycle", 6.0), ("random", 1.5)]
    if features & {"atomics", "rmw", "plain", "av", "vol"}:
        out.append(("coherence", 1.5))
    if "async" in features and "lds" in features:
        out.append(("async", 1.5))
    if "barriers" in features:
        out.append(("barrier", 1.5))
    if "rmw" in features or "cas" in features:
        out.append(("atomicity", 1.0))
    if features & {"atomics", "rmw", "cas"}:
        out.append(("cumulativity", 1.5))
    return out


def build_program(src, features: frozenset[str] | None = None, near_miss: float = 0.5,
                  shapes: Sequence[str] | None = None) -> Test:
    """Draw one program from ``src`` (a :class:`RandomSource` or :class:`HypothesisSource`)."""
    features = frozenset(FEATURES) if features is None else frozenset(features)
    opts = [(s, w) for s, w in shape_weights(features) if shapes is None or s in shapes]
    if not opts:
        raise FeatureError(f"no program shape fits features {sorted(features)} "
                           f"and shapes {list(shapes or [])}")
    shape = src.weighted(opts)
    test = SHAPES[shape](src, features, near_miss)
    return test


def estimate_events(test: Test) -> int:
    """An upper bound of the oracle's event count: per instruction, plus init and final events."""
    n = 0
    for _, _, ins in test.instructions():
        n += 2 if ins.base in ("rmw", "cas", "barrier") else 3 if ins.base == "async.ld" else 1
    n += len(test.locations) + len(test.globals)
    return n


def draw_program(seed: int, index: int, features: frozenset[str] | None = None,
                 near_miss: float = 0.5) -> Test:
    """Program number ``index`` of the campaign with seed ``seed`` (deterministic)."""
    src = RandomSource(program_seed(seed, index))
    test = build_program(src, features, near_miss)
    return test


def program_seed(seed: int, index: int) -> int:
    """Disjoint per-program seeds: a campaign's programs never share a random stream."""
    return (seed * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9 + 1) % (1 << 63)


def programs(features: Sequence[str] | str | None = None, near_miss: float = 0.5,
             shapes: Sequence[str] | None = None):
    """A Hypothesis strategy of whole programs (shrinks toward simpler shapes and choices)."""
    from hypothesis import strategies as st
    feats = parse_features(features) if not isinstance(features, frozenset) else features

    @st.composite
    def _programs(draw):
        return build_program(HypothesisSource(draw), feats, near_miss, shapes)

    return _programs()


def litmus_programs(features: Sequence[str] | str | None = None, near_miss: float = 0.5):
    """The public Hypothesis strategy of litmus programs (:class:`litmus.Test`), stable API.

    ``features``: a comma-separated subset of :data:`FEATURES` (or a sequence; default all, and
    ``"all,-async"`` removes one); ``near_miss``: the share of programs drawn one synchronization
    short of forbidding their condition (the interesting ones for a differential test). Programs
    shrink toward fewer threads and instructions; a falsifying example prints as litmus text::

        from hypothesis import given
        from fuzz.strategies import litmus_programs

        @given(litmus_programs("atomics,fences"))
        def test_my_backend(test):
            ...
    """
    return programs(features, near_miss)


__all__ = ["FEATURES", "ALL_KINDS", "ALL_SCOPE_PAIRS", "FeatureError", "HypothesisSource",
           "RandomSource", "build_program", "draw_program", "estimate_events", "litmus_programs",
           "parse_features", "program_seed", "programs"]

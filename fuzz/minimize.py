"""Backend-in-the-loop minimization of a finding (delta debugging over litmus programs).

Given a program on which the backend showed an outcome the model forbids, try smaller and simpler
variants and keep each one on which *some* forbidden outcome still shows, until none of them does
(or the budget runs out). Reductions, biggest first:

1. fewer threads, 2. fewer instructions, 3. fewer locations (merge two into one),
4. weaker orders (sc -> acq_rel -> acq/rel -> rlx), 5. narrower scopes (one level at a time),
6. no ``.noav``, simpler accesses (``rmw.xchg`` -> ``st.atom``, ``ld.vol``/``ld.vis`` -> ``ld``),
7. simpler values and wait counts, 8. simpler placements.

Each variant is checked by a caller-supplied predicate (oracle + backend runs; see
:class:`fuzz.campaign.Campaign`), so this module knows nothing of backends. At the end registers are
renumbered and the condition becomes the smallest conjunction of the observed forbidden outcome's
atoms that the model still forbids (``exists`` with verdict ``No``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from litmus import Test
from litmus.ir import And, Atom, Condition, Const, Instr, Location, Thread, cas_default_fail
from litmus.outcome import count_satisfiable
from litmus.scopes import SCOPES, SCOPE_RANK, Placement

#: weaker order, per instruction base
_WEAKER = {
    "ld": {"sc": "acq", "acq": "rlx"},
    "st": {"sc": "rel", "rel": "rlx"},
    "rmw": {"sc": "acq_rel", "acq_rel": "rel", "rel": "rlx", "acq": "rlx"},
    "cas": {"sc": "acq_rel", "acq_rel": "rel", "rel": "rlx", "acq": "rlx"},
    "fence": {"sc": "acq_rel", "acq_rel": "rel"},
}


@dataclass
class MinimizeStats:
    tried: int = 0
    accepted: int = 0
    seconds: float = 0.0
    steps: list[str] = field(default_factory=list)
    size_before: int = 0
    size_after: int = 0


# --- building variants --------------------------------------------------------------------------

def _used_registers(test: Test) -> dict[int, set[str]]:
    return {t: set(th.registers()) for t, th in enumerate(test.threads)}


def _fix(test: Test, threads, atoms_filter=None) -> Test:
    """Rebuild ``test`` with new threads; drop condition atoms naming registers/locations now gone."""
    threads = tuple(threads)
    tmp = Test(test.name, test.locations, threads, test.condition, test.doc, (), test.dialect)
    regs = _used_registers(tmp)
    used_locs = {n for th in threads for ins in th.code for n in ins.locations()}
    atoms = [a for a in _atoms(test.condition.prop) if atoms_filter is None or atoms_filter(a)]
    keep = []
    for a in atoms:
        if a.thread is None:
            if a.name in used_locs:
                keep.append(a)
        elif a.thread < len(threads) and a.name in regs[a.thread]:
            keep.append(a)
    locs = tuple(loc for loc in test.locations if loc.name in used_locs)
    prop = keep[0] if len(keep) == 1 else And(tuple(keep)) if keep else Const(True)
    reg_init = tuple((t, r, v) for t, r, v in test.reg_init
                     if t < len(threads) and r in regs[t])
    return Test(test.name, locs, threads, Condition("exists", prop), test.doc, reg_init,
                test.dialect)


def _atoms(prop) -> list[Atom]:
    if isinstance(prop, Atom):
        return [prop]
    if isinstance(prop, And):
        return [a for p in prop.args for a in _atoms(p)]
    return []


def _with_code(test: Test, tid: int, code) -> list[Thread]:
    return [Thread(th.placement, tuple(code)) if t == tid else th
            for t, th in enumerate(test.threads)]


def drop_thread(test: Test, tid: int) -> Test:
    threads = [th for t, th in enumerate(test.threads) if t != tid]
    atoms = []
    for a in _atoms(test.condition.prop):
        if a.thread is None:
            atoms.append(a)
        elif a.thread != tid:
            atoms.append(Atom(a.thread - (a.thread > tid), a.name, a.op, a.value))
    prop = atoms[0] if len(atoms) == 1 else And(tuple(atoms)) if atoms else Const(True)
    reg_init = tuple((t - (t > tid), r, v) for t, r, v in test.reg_init if t != tid)
    base = Test(test.name, test.locations, test.threads, Condition("exists", prop), test.doc,
                reg_init, test.dialect)
    return _fix(base, threads)


def _replace_instr(test: Test, tid: int, i: int, new: Instr | None) -> Test:
    code = list(test.threads[tid].code)
    if new is None:
        del code[i]
    else:
        code[i] = new
    return _fix(test, _with_code(test, tid, code))


def _rename_loc(test: Test, old: str, new: str) -> Test:
    def ren(ins: Instr) -> Instr:
        return ins.replace(loc=new if ins.loc == old else ins.loc,
                           lds=new if ins.lds == old else ins.lds)
    threads = [Thread(th.placement, tuple(ren(i) for i in th.code)) for th in test.threads]
    return _fix(test, threads, lambda a: not (a.thread is None and a.name == old))


#: the narrowest scope a dialect writes (PTX has no wave scope: .cta is its narrowest)
NARROWEST = {"PTX": "wg"}


def _simpler_instr(ins: Instr, floor: str = "wave") -> Iterator[tuple[str, Instr | None]]:
    """Weaker, narrower (down to ``floor``), simpler versions of one instruction (never a
    stronger one)."""
    w = _WEAKER.get(ins.base, {}).get(ins.order or "")
    if w is not None:
        fail = ins.fail_order
        if ins.base == "cas":
            fail = min(ins.fail_order, cas_default_fail(w), key=lambda o: ("rlx", "acq", "sc").index(o))
        yield f"weaken {ins.order}->{w}", ins.replace(order=w, fail_order=fail)
    if ins.base == "cas" and ins.fail_order != "rlx" and ins.fail_order != cas_default_fail(ins.order):
        yield "weaken cas failure order", ins.replace(fail_order="rlx")
    if ins.scope is not None and SCOPE_RANK[ins.scope] > SCOPE_RANK[floor]:
        yield f"narrow {ins.scope}->{SCOPES[SCOPE_RANK[ins.scope] - 1]}", \
            ins.replace(scope=SCOPES[SCOPE_RANK[ins.scope] - 1])
    if ins.noav:
        yield "drop .noav", ins.replace(noav=False)
    if ins.base == "rmw" and ins.op == "xchg" and ins.order in ("rlx", "rel", "sc"):
        yield "rmw.xchg -> st.atom", Instr("st", access="atom", order=ins.order, scope=ins.scope,
                                           noav=ins.noav, loc=ins.loc, args=ins.args)
    if ins.base == "rmw" and ins.op != "xchg":
        yield f"rmw.{ins.op} -> rmw.xchg", ins.replace(op="xchg")
    if ins.base == "cas" and ins.order in ("rlx", "rel", "sc"):
        yield "cas -> st.atom", Instr("st", access="atom", order=ins.order, scope=ins.scope,
                                      noav=ins.noav, loc=ins.loc, args=(ins.args[1],))
    if ins.base in ("ld", "st") and ins.access == "atom" and ins.order == "rlx" and not ins.noav:
        yield f"{ins.kind} -> {ins.base}", ins.replace(access="plain", order=None, scope=None)
    if ins.base in ("ld", "st") and ins.access in ("vol", "vis", "av"):
        yield f"{ins.kind} -> {ins.base}", ins.replace(access="plain", scope=None)
    if ins.base == "async.wait" and ins.args[0] > 0:
        yield "smaller wait count", ins.replace(args=(ins.args[0] - 1,))
    if ins.base == "fence" and ins.order == "acq_rel":
        yield "fence acq_rel -> acq", ins.replace(order="acq")


def _fold_fences(test: Test) -> Iterator[tuple[str, Test]]:
    """One instruction fewer: an acquire fence after an atomic read becomes the read's order, a
    release fence before an atomic write the write's order (``ld.atom r; fence.acq.S`` ->
    ``ld.atom.acq.S r``), as a hand-written litmus test would say it."""
    for tid, th in enumerate(test.threads):
        code = th.code
        for i, f in enumerate(code):
            if f.base != "fence" or f.noav:
                continue
            if f.order == "acq" and i > 0 and code[i - 1].is_atomic and code[i - 1].reads \
                    and code[i - 1].order == "rlx":
                acc = code[i - 1].replace(order="acq", scope=f.scope,
                                          fail_order="acq" if code[i - 1].base == "cas"
                                          else code[i - 1].fail_order)
                new = code[:i - 1] + (acc,) + code[i + 1:]
                yield f"P{tid}#{i} fence.acq into the read", _fix(test, _with_code(test, tid, new))
            if f.order == "rel" and i + 1 < len(code) and code[i + 1].is_atomic and \
                    code[i + 1].writes and code[i + 1].order == "rlx":
                acc = code[i + 1].replace(order="rel", scope=f.scope)
                new = code[:i] + (acc,) + code[i + 2:]
                yield f"P{tid}#{i} fence.rel into the write", _fix(test, _with_code(test, tid, new))


def _join_split_barriers(test: Test) -> Iterator[tuple[str, Test]]:
    """``bar.signal -1; bar.wait -1`` -> ``barrier`` (the same arrive-then-wait, one row fewer)."""
    for tid, th in enumerate(test.threads):
        code = th.code
        for i in range(len(code) - 1):
            a, w = code[i], code[i + 1]
            if a.base == "bar.signal" and w.base == "bar.wait" and a.args == w.args == (-1,):
                new = code[:i] + (Instr("barrier"),) + code[i + 2:]
                yield f"P{tid}#{i} split barrier -> barrier", _fix(test, _with_code(test, tid, new))


def _value_variants(test: Test) -> Iterator[tuple[str, Test]]:
    """Smaller stored values, keeping the writes of each location distinguishable."""
    by_loc: dict[str, set[int]] = {}
    for _, _, ins in test.instructions():
        if ins.base in ("st", "rmw") and ins.loc:
            by_loc.setdefault(ins.loc, set()).add(ins.args[0])
        if ins.base == "cas":
            by_loc.setdefault(ins.loc, set()).add(ins.args[1])
    for tid, i, ins in test.instructions():
        if ins.base in ("st",) or (ins.base == "rmw" and ins.op == "xchg"):
            v = ins.args[0]
            used = by_loc[ins.loc] | {test.location(ins.loc).init}
            for smaller in range(1, v):
                if smaller not in used:
                    new = ins.replace(args=(smaller,) + ins.args[1:])
                    yield f"value {v}->{smaller}", _retarget(
                        _replace_instr(test, tid, i, new), test, ins.loc, v, smaller)
                    break


def _retarget(new: Test, old: Test, loc: str, v: int, smaller: int) -> Test:
    """Condition atoms that expected value ``v`` of ``loc`` now expect ``smaller``."""
    readers = {(t, ins.reg) for t, _, ins in old.instructions() if ins.loc == loc and ins.reg}
    atoms = []
    for a in _atoms(new.condition.prop):
        hit = (a.thread, a.name) in readers or (a.thread is None and a.name == loc)
        atoms.append(Atom(a.thread, a.name, a.op, smaller) if hit and a.value == v else a)
    prop = atoms[0] if len(atoms) == 1 else And(tuple(atoms)) if atoms else Const(True)
    return Test(new.name, new.locations, new.threads, Condition("exists", prop), new.doc,
                new.reg_init, new.dialect)


def _placement_variants(test: Test) -> Iterator[tuple[str, Test]]:
    for tid, th in enumerate(test.threads):
        p = th.placement
        if p.agent or p.cluster:
            yield f"P{tid} to agent 0, cluster 0", _set_placement(
                test, tid, Placement(p.wave, p.wg, 0, 0))


def _set_placement(test: Test, tid: int, p: Placement) -> Test:
    threads = [Thread(p, th.code) if t == tid else th for t, th in enumerate(test.threads)]
    return Test(test.name, test.locations, tuple(threads), test.condition, test.doc,
                test.reg_init, test.dialect)


def variants(test: Test) -> Iterator[tuple[str, Test]]:
    """Candidate reductions of ``test``, biggest first."""
    if len(test.threads) > 1:
        for tid in range(len(test.threads)):
            yield f"drop P{tid}", drop_thread(test, tid)
    for tid, i, ins in test.instructions():
        if len(test.threads[tid].code) > 1 or len(test.threads) > 1:
            yield f"drop P{tid}#{i} {ins.kind}", _replace_instr(test, tid, i, None)
    yield from _fold_fences(test)
    yield from _join_split_barriers(test)
    locs = test.locations
    for a in locs:
        for b in locs:
            if a.name != b.name and a.lds == b.lds and a.init == b.init and a.name > b.name:
                yield f"merge {a.name} into {b.name}", _rename_loc(test, a.name, b.name)
    floor = NARROWEST.get(test.dialect, "wave")
    for tid, i, ins in test.instructions():
        for why, new in _simpler_instr(ins, floor):
            yield f"P{tid}#{i} {why}", _replace_instr(test, tid, i, new)
    yield from _value_variants(test)
    yield from _placement_variants(test)


# --- tidying and the final condition ------------------------------------------------------------

def renumber_registers(test: Test) -> Test:
    """Registers r0, r1, ... per thread in order of first write; the condition follows."""
    maps: list[dict[str, str]] = []
    threads = []
    for th in test.threads:
        m: dict[str, str] = {}
        for ins in th.code:
            if ins.reg is not None and ins.reg not in m:
                m[ins.reg] = f"r{len(m)}"
        maps.append(m)
        threads.append(Thread(th.placement, tuple(
            ins.replace(reg=m[ins.reg]) if ins.reg is not None else ins for ins in th.code)))
    atoms = [Atom(a.thread, maps[a.thread].get(a.name, a.name) if a.thread is not None else a.name,
                  a.op, a.value) for a in _atoms(test.condition.prop)]
    prop = atoms[0] if len(atoms) == 1 else And(tuple(atoms)) if atoms else Const(True)
    reg_init = tuple((t, maps[t][r], v) for t, r, v in test.reg_init if r in maps[t])
    return Test(test.name, test.locations, tuple(threads), Condition("exists", prop), test.doc,
                reg_init, test.dialect)


def tidy_placements(test: Test) -> Test:
    """Leave out workgroup/wave ids no other thread shares (the same scope instances)."""
    threads = []
    for t, th in enumerate(test.threads):
        p = th.placement
        wg_mates = [u for u in range(len(test.threads))
                    if u != t and test.same(t, u, "wg")]
        if not wg_mates and p.wg is not None:
            p = Placement(None, None, p.cluster, p.agent)
        threads.append(Thread(p, th.code))
    return Test(test.name, test.locations, tuple(threads), test.condition, test.doc,
                test.reg_init, test.dialect)


def forbidding_condition(test: Test, outcome: dict, states: Sequence[dict]) -> Condition:
    """The smallest conjunction of ``outcome``'s atoms that no allowed state satisfies.

    Atoms are dropped greedily (final memory first, then registers from the last thread) while the
    model still forbids the conjunction; the result is ``exists (...)`` with verdict ``No``.
    """
    keys = [k for k in outcome if ":" not in k] + sorted(
        (k for k in outcome if ":" in k), key=lambda k: (-int(k[1:k.index(":")]), k))
    chosen = list(keys)

    def prop_of(ks):
        atoms = [_atom(k, outcome[k]) for k in sorted(ks, key=_key_order)]
        return atoms[0] if len(atoms) == 1 else And(tuple(atoms)) if atoms else Const(True)

    for k in keys:
        trial = [c for c in chosen if c != k]
        if trial and not count_satisfiable(prop_of(trial), states):
            chosen = trial
    return Condition("exists", prop_of(chosen))


def _key_order(k: str):
    if ":" in k:
        t, r = k.split(":")
        return (0, int(t[1:]), int(r[1:]) if r[1:].isdigit() else 1 << 30, r)
    return (1, 0, 0, k)


def _atom(key: str, value: int) -> Atom:
    if ":" in key:
        t, r = key.split(":")
        return Atom(int(t[1:]), r, "==", int(value))
    return Atom(None, key, "==", int(value))


# --- the search ---------------------------------------------------------------------------------

#: candidates handed to ``prepare`` at a time: the first window of a pass, and the largest (each
#: window of one pass doubles). On isa:gfx942 seed 3's six minimizations a pass accepted its 7th
#: to 10th variant (or, the last pass, tried 8 and accepted none): one window of 12 is one clang
#: call per pass
PREPARE_FIRST, PREPARE_MAX = 12, 48


def minimize(test: Test, still_fails: Callable[[Test], bool], max_tries: int = 400,
             max_seconds: float = 60.0,
             prepare: Callable[[list[Test]], None] | None = None) -> tuple[Test, MinimizeStats]:
    """Greedy fixed-point reduction: take the first variant that still fails, restart from it.

    ``still_fails(variant)`` must return True when some forbidden outcome shows on the variant
    (the caller runs the oracle and the backend). Returns the smallest failing test found.

    ``prepare(variants)``, when given, is called with the next few variants a pass will try
    before the first of them is tried (the isa backend compiles them in one clang-22 call
    instead of one call per variant); it changes nothing but the time taken: the same variants
    are tried in the same order.
    """
    stats = MinimizeStats(size_before=test.size)
    start = time.monotonic()
    current = test
    seen: set = set()
    progress = True

    def fresh(cand) -> bool:
        return bool(cand.threads) and cand.size != 0 and cand != current

    while progress:
        progress = False
        cands = list(variants(current)) if prepare is not None else variants(current)
        ahead, window = 0, PREPARE_FIRST
        for j, (why, cand) in enumerate(cands):
            if stats.tried >= max_tries or time.monotonic() - start > max_seconds:
                break
            if not fresh(cand):
                continue
            key = (cand.locations, cand.threads, cand.condition)
            if key in seen:
                continue
            if prepare is not None and j >= ahead:
                batch, keys, ahead = [], {key}, j
                room = min(window, max_tries - stats.tried)
                for why2, c2 in cands[j:]:
                    ahead += 1
                    k2 = (c2.locations, c2.threads, c2.condition)
                    if fresh(c2) and k2 not in seen and (k2 not in keys or c2 is cand):
                        keys.add(k2)
                        batch.append(c2)
                        if len(batch) >= room:
                            break
                window = min(2 * window, PREPARE_MAX)
                try:
                    prepare(batch)
                except Exception:   # best effort: each variant is then compiled when tried
                    pass
            seen.add(key)
            stats.tried += 1
            try:
                ok = still_fails(cand)
            except Exception:      # a variant the oracle or backend cannot take is not a reduction
                ok = False
            if ok:
                current = cand
                stats.accepted += 1
                stats.steps.append(why)
                progress = True
                break
    stats.size_after = current.size
    stats.seconds = time.monotonic() - start
    return current, stats

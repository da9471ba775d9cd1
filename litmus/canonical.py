"""Canonical form of a test: text that is the same for every test equal up to renaming and layout.

Two tests get the same canonical text when one is the other with threads permuted, locations and
registers renamed, placement ids renumbered (``wg 0``/``wg 1`` ≡ two left-out workgroups), another
column layout, name or documentation. It is the key of the oracle's outcome cache and of the
fuzzer's deduplication of findings.
"""

from __future__ import annotations

import hashlib
import itertools

from .ir import And, Atom, Const, Instr, Not, Or, Prop, Test

#: Beyond this many thread orders the search keeps the signature order within larger groups.
MAX_PERMUTATIONS = 5040


def _instr_text(ins: Instr, locs: dict[str, str], regs: dict[str, str]) -> str:
    fields = [ins.base, ins.access or "", ins.op or "", ins.order or "", ins.fail_order or "",
              ins.scope or "", "noav" if ins.noav else ""]
    opnds = []
    if ins.reg is not None:
        opnds.append(regs[ins.reg])
    if ins.lds is not None:
        opnds.append(locs[ins.lds])
    if ins.loc is not None:
        opnds.append(locs[ins.loc])
    opnds += [str(a) for a in ins.args]
    text = ".".join(fields) + " " + ",".join(opnds)
    # dialect attributes (PTX: proxy, red, cmov, aliases) tell instructions apart too
    return text + " #" + ",".join(sorted(ins.attrs)) if ins.attrs else text


def _signature(test: Test, tid: int) -> str:
    """A renaming-invariant description of one thread, used to group interchangeable threads."""
    th = test.threads[tid]
    kinds = []
    for ins in th.code:
        lds = "L" if (ins.loc and test.is_lds(ins.loc)) else "G"
        kinds.append(_instr_text(ins, {n: lds for n in ins.locations()},
                                 {r: "r" for r in ins.registers()}))
    return "|".join(kinds)


def _prop_text(prop: Prop, tmap: dict[int, int], locs, regs) -> str:
    if isinstance(prop, Atom):
        if prop.thread is None:
            who = locs[prop.name]
        else:
            t = tmap[prop.thread]
            who = f"P{t}:{regs[prop.thread][prop.name]}"
        return f"{who}{prop.op}{prop.value}"
    if isinstance(prop, Const):
        return "true" if prop.value else "false"
    if isinstance(prop, Not):
        return "~(" + _prop_text(prop.arg, tmap, locs, regs) + ")"
    if isinstance(prop, (And, Or)):
        op = "/\\" if isinstance(prop, And) else "\\/"
        parts = sorted({_prop_text(a, tmap, locs, regs) for a in _flatten(prop)})
        return "(" + op.join(parts) + ")"
    raise TypeError(prop)


def _flatten(prop: And | Or):
    for a in prop.args:
        if type(a) is type(prop):
            yield from _flatten(a)
        else:
            yield a


def _text_for_order(test: Test, order: tuple[int, ...], free_locs: tuple[str, ...],
                    free_regs: dict[int, tuple[str, ...]]) -> str:
    """The text of ``test`` with threads in ``order``; locations named by first use in the code,
    then ``free_locs`` (unused by the code) in the given order; registers by first write, then
    ``free_regs[thread]`` (initialized but never written) in the given order."""
    tmap = {old: new for new, old in enumerate(order)}
    locs: dict[str, str] = {}

    def see(name: str):
        if name not in locs:
            locs[name] = f"m{len(locs)}"

    for old in order:
        for ins in test.threads[old].code:
            for n in ins.locations():
                see(n)
    for n in free_locs:
        see(n)
    regs: dict[int, dict[str, str]] = {}
    for old in range(len(test.threads)):
        m: dict[str, str] = {}
        for r in test.threads[old].registers():
            m[r] = f"r{len(m)}"
        for r in free_regs.get(old, ()):
            m[r] = f"r{len(m)}"
        regs[old] = m
    # placements, renumbered by first appearance
    ids: dict[tuple, int] = {}

    def num(key: tuple) -> int:
        parent = key[:-1]
        if key not in ids:
            ids[key] = sum(1 for k in ids if k[:-1] == parent)
        return ids[key]

    lines = []
    for loc in sorted(test.locations, key=lambda l: locs[l.name]):
        lines.append(f"{'lds ' if loc.lds else ''}{locs[loc.name]}={loc.init}")
    inits = sorted(f"P{tmap[t]}:{regs[t][r]}={v}" for t, r, v in test.reg_init
                   if v != 0 or r not in test.threads[t].registers())
    lines.append(";".join(inits))
    for new, old in enumerate(order):
        inst = test.instance(old, "wave")
        a = num(("a", inst[0]))
        c = num(("a", inst[0], "c", inst[1]))
        g = num(("a", inst[0], "c", inst[1], "g", inst[2]))
        w = num(("a", inst[0], "c", inst[1], "g", inst[2], "w", inst[3]))
        code = ";".join(_instr_text(ins, locs, regs[old]) for ins in test.threads[old].code)
        lines.append(f"P{new}@{w},{g},{c},{a}:{code}")
    lines.append(test.condition.quantifier + " " +
                 _prop_text(test.condition.prop, tmap, locs, regs))
    return "\n".join(lines)


def _orders(test: Test):
    """Thread orders to try: sorted by signature, every permutation inside equal groups."""
    sigs = [_signature(test, t) for t in range(len(test.threads))]
    groups: dict[str, list[int]] = {}
    for t, s in enumerate(sigs):
        groups.setdefault(s, []).append(t)
    keyed = [groups[s] for s in sorted(groups)]
    total = 1
    for g in keyed:
        for k in range(2, len(g) + 1):
            total *= k
    if total > MAX_PERMUTATIONS:
        yield tuple(t for g in keyed for t in g)
        return
    for combo in itertools.product(*(itertools.permutations(g) for g in keyed)):
        yield tuple(t for g in combo for t in g)


def _tie_orders(items: list, key) -> list[tuple]:
    """Orders of ``items`` sorted by ``key``, every permutation inside groups of equal keys."""
    groups: dict = {}
    for it in items:
        groups.setdefault(key(it), []).append(it)
    keyed = [groups[k] for k in sorted(groups)]
    total = 1
    for g in keyed:
        for k in range(2, len(g) + 1):
            total *= k
    if total > MAX_PERMUTATIONS:
        return [tuple(it for g in keyed for it in g)]
    return [tuple(it for g in combo for it in g)
            for combo in itertools.product(*(itertools.permutations(g) for g in keyed))]


def _free_namings(test: Test):
    """Namings of the locations and registers that the code does not fix: locations used only by
    the condition (or not at all) and registers that are initialized but never written. Equal
    ones (same kind and initial value) are interchangeable, so every order among them is tried."""
    used = {n for th in test.threads for ins in th.code for n in ins.locations()}
    free = [l for l in test.locations if l.name not in used]
    loc_orders = _tie_orders(free, key=lambda l: (l.lds, l.init))
    reg_orders_per_thread = []
    for tid, th in enumerate(test.threads):
        written = set(th.registers())
        rest = [(v, r) for t, r, v in test.reg_init if t == tid and r not in written]
        reg_orders_per_thread.append(_tie_orders(rest, key=lambda vr: vr[0]))
    for lo in loc_orders:
        for regs in itertools.product(*reg_orders_per_thread):
            yield (tuple(l.name for l in lo),
                   {tid: tuple(r for _, r in ro) for tid, ro in enumerate(regs)})


def canonical_form(test: Test) -> str:
    """Renaming- and layout-independent text of ``test`` (excluding its name and docs)."""
    namings = list(_free_namings(test))
    return min(_text_for_order(test, order, fl, fr)
               for order in _orders(test) for fl, fr in namings)


def canonical_hash(test: Test, length: int = 16) -> str:
    """A short stable id derived from the canonical form."""
    return hashlib.sha256(canonical_form(test).encode()).hexdigest()[:length]

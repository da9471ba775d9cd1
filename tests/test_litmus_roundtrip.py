"""Print → parse gives back an equal test; the canonical form ignores renaming and layout."""

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import litmus
from litmus import Instr, Location, Test, Thread, canonical_form, format_test, parse
from litmus.ir import Atom, And, Condition, Not, Or
from litmus.scopes import Placement

from litmus_strategies import litmus_tests


@given(litmus_tests())
def test_print_parse_round_trip(t):
    text = format_test(t)
    back = parse(text, "gen.litmus")
    assert back == t
    # printing is a fixed point
    assert format_test(back) == text


def _rename(t: Test, perm: list[int], locmap: dict[str, str], regmaps: list[dict[str, str]]) -> Test:
    """Apply a thread permutation and location/register renaming by hand."""
    def ren_instr(ins: Instr, rm) -> Instr:
        return ins.replace(loc=locmap.get(ins.loc, ins.loc) if ins.loc else None,
                           lds=locmap.get(ins.lds) if ins.lds else None,
                           reg=rm[ins.reg] if ins.reg else None)

    inv = {old: new for new, old in enumerate(perm)}

    def ren_prop(p):
        if isinstance(p, Atom):
            if p.thread is None:
                return Atom(None, locmap[p.name], p.op, p.value)
            return Atom(inv[p.thread], regmaps[p.thread][p.name], p.op, p.value)
        if isinstance(p, Not):
            return Not(ren_prop(p.arg))
        if isinstance(p, (And, Or)):
            return type(p)(tuple(ren_prop(a) for a in reversed(p.args)))
        return p

    threads = tuple(Thread(t.threads[old].placement,
                           tuple(ren_instr(i, regmaps[old]) for i in t.threads[old].code))
                    for old in perm)
    locs = tuple(Location(locmap[l.name], l.init, l.lds) for l in reversed(t.locations))
    reg_init = tuple((inv[tid], regmaps[tid][r], v) for tid, r, v in t.reg_init)
    return Test(name="renamed", locations=locs, threads=threads,
                condition=Condition(t.condition.quantifier, ren_prop(t.condition.prop)),
                doc=("other doc",), reg_init=reg_init)


@given(litmus_tests(max_threads=4), st.randoms(use_true_random=False))
def test_canonical_form_stable_under_renaming(t, rnd):
    perm = list(range(len(t.threads)))
    rnd.shuffle(perm)
    names = [l.name for l in t.locations]
    fresh = [f"loc_{i}" for i in range(len(names))]
    rnd.shuffle(fresh)
    locmap = dict(zip(names, fresh))
    regmaps = []
    for tid in range(len(t.threads)):
        regs = t.registers(tid)
        new = [f"r{10 + i}" for i in range(len(regs))]
        rnd.shuffle(new)
        regmaps.append(dict(zip(regs, new)))
    renamed = _rename(t, perm, locmap, regmaps)
    assert canonical_form(renamed) == canonical_form(t)


def test_canonical_form_distinguishes_semantic_changes():
    base = parse(MP)
    variants = [
        MP.replace("fence.rel.agent", "fence.rel.wg"),
        MP.replace("P1@wg 1", "P1@wg 0"),
        MP.replace("st x, 1", "st x, 2"),
        MP.replace("P1:r1 == 0", "P1:r1 == 1"),
        MP.replace("ld r1, x", "ld.atom r1, x"),
    ]
    forms = {canonical_form(base)} | {canonical_form(parse(v)) for v in variants}
    assert len(forms) == 1 + len(variants)


def test_canonical_form_identifies_implicit_and_explicit_workgroups():
    explicit = parse(MP)
    implicit = parse(MP.replace("P0@wg 0", "P0").replace("P1@wg 1", "P1"))
    renumbered = parse(MP.replace("P0@wg 0", "P0@wg 5").replace("P1@wg 1", "P1@wg 2"))
    assert canonical_form(explicit) == canonical_form(implicit) == canonical_form(renumbered)


MP = """AMDGPU MP+fences.agent
"Message passing between two workgroups; release/acquire fences at agent scope."
{
  x = 0; y = 0;
  lds a = 0;
}
 P0@wg 0                  | P1@wg 1                  ;
 st x, 1                  | ld.atom.agent r0, y      ;
 fence.rel.agent          | fence.acq.agent          ;
 st.atom.agent y, 1       | ld r1, x                 ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""

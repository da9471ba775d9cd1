"""RC11 in Python, the tests' independent reference for ``rc11.model``: repaired C11 (Lahav, Vafeiadis, Kang, Hur, Dreyer, "Repairing Sequential Consistency in
C/C++11", PLDI 2017, section 3 / figure 4), for tests in the ``C`` dialect.

Written from the paper. Names: sb (po), rf, mo (co), fr = rf⁻¹; mo, eco = (rf ∪ mo ∪ fr)+,
rmw (an rmw's read -> its write). Initial writes are sb-before every other event (the paper's
initialization) and mo-first.

- release sequence  rs = [W]; sb|loc?; [W ⊒ rlx]; (rf; rmw)*
- synchronizes-with sw = [E ⊒ rel]; ([F]; sb)?; rs; rf; [R ⊒ rlx]; (sb; [F])?; [E ⊒ acq]
- happens-before    hb = (sb ∪ sw)+
- COHERENCE         hb; eco? irreflexive
- ATOMICITY         rmw ∩ (fr; mo) = ∅
- SC                psc = psc_base ∪ psc_F acyclic, where
                    scb = sb ∪ sb|≠loc; hb; sb|≠loc ∪ hb|loc ∪ mo ∪ fr
                    psc_base = ([E^sc] ∪ [F^sc]; hb?); scb; ([E^sc] ∪ hb?; [F^sc])
                    psc_F = [F^sc]; (hb ∪ hb; eco; hb); [F^sc]
- NO-THIN-AIR       sb ∪ rf acyclic

An rmw with order acq_rel gives an acquire read and a release write; rel gives a relaxed read,
acq a relaxed write (C11 7.17.3). A fence with ``memory_order_relaxed`` is no event.

Data races (section 3, "Undefined behavior"): two conflicting accesses (same location, at least
one a write, at least one non-atomic, different threads, not initial writes) unordered by hb in a
consistent execution. herd7 reports them as a flag and keeps the verdict; so does this model
(flag ``racy``), so verdicts compare with herd's.
"""

from __future__ import annotations

from litmus.ir import Test

from oracle.models.path_executions import (Execution, acyclic, cross, ident, inter, inverse,
                                           irreflexive, minus, opt, plus, restrict, seq, union)
from oracle.models.reference_paths import ConformanceResult, PythonModel, check_with

NAME = "rc11"

REL = ("rel", "acq_rel", "sc")
ACQ = ("acq", "acq_rel", "sc")


def mode_set(x: Execution, modes) -> int:
    s = 0
    for e in x.events:
        if e.order in modes and e.kind in ("R", "W", "F"):
            s |= 1 << e.eid
    return s


def base(x: Execution) -> dict:
    """sb, hb, eco and friends; cached on the execution (also used by the race check)."""
    if "hb" in x.cache:
        return x.cache
    n = x.n
    W, R, F, IW, A = (x.sets[k] for k in ("W", "R", "F", "IW", "A"))
    allm = (1 << n) - 1
    sb = union(x.po, cross(IW, allm & ~IW, n))
    sb_loc = inter(sb, x.loc)
    rf, co, rmw = x.rf, x.co, x.rmw
    # release sequence: [W]; sb|loc?; [W ⊒ rlx]; (rf; rmw)*
    rf_rmw_star = opt(plus(seq(rf, rmw)))
    rs = seq(restrict(opt(sb_loc), W, W & A), rf_rmw_star)
    rel = mode_set(x, REL)
    acq = mode_set(x, ACQ)
    head = union(ident(rel, n), restrict(sb, rel & F, allm))       # [E⊒rel]; ([F]; sb)?
    tail = union(ident(acq, n), restrict(sb, allm, acq & F))       # (sb; [F])?; [E⊒acq]
    sw = seq(seq(seq(restrict(head, allm, W), rs), restrict(rf, allm, R & A)), tail)
    sw = restrict(sw, rel, acq)
    hb = plus(union(sb, sw))
    fr = minus(seq(inverse(rf), co), ident(allm, n))
    eco = plus(union(rf, co, fr))
    x.cache.update(sb=sb, hb=hb, fr=fr, eco=eco, sw=sw)
    return x.cache


def consistent(x: Execution) -> bool:
    c = base(x)
    sb, hb, fr, eco = c["sb"], c["hb"], c["fr"], c["eco"]
    n = x.n
    allm = (1 << n) - 1
    # NO-THIN-AIR first: cheap and prunes most candidates of LB-shaped tests
    if not acyclic(union(sb, x.rf)):
        return False
    if not irreflexive(hb) or not irreflexive(seq(hb, eco)):
        return False
    if any(inter(x.rmw, seq(fr, x.co))):
        return False
    sc = 0
    for e in x.events:
        if e.order == "sc":
            sc |= 1 << e.eid
    if not sc:
        return True
    F = x.sets["F"]
    Esc = sc & ~F
    Fsc = sc & F
    sb_nloc = minus(sb, x.loc)
    hb_loc = inter(hb, x.loc)
    scb = union(sb, seq(seq(sb_nloc, hb), sb_nloc), hb_loc, x.co, fr)
    left = union(ident(Esc, n), restrict(opt(hb), Fsc, allm))
    right = union(ident(Esc, n), restrict(opt(hb), allm, Fsc))
    psc = seq(seq(left, scb), right)
    if Fsc:
        psc_f = restrict(union(hb, seq(seq(hb, eco), hb)), Fsc, Fsc)
        psc = union(psc, psc_f)
    return acyclic(psc)


def racy(x: Execution) -> bool:
    hb = base(x)["hb"]
    W, IW, A = x.sets["W"], x.sets["IW"], x.sets["A"]
    for e in x.events:
        if e.kind not in ("R", "W") or e.tid < 0:
            continue
        i = e.eid
        b = 1 << i
        others = x.loc[i] & x.ext[i] & ~IW & ~hb[i]
        if not (b & W):
            others &= W
        if b & A:
            others &= ~A
        for j in _bits(others):
            if not (hb[j] >> i) & 1:
                return True
    return False


def _bits(v: int):
    while v:
        low = v & -v
        yield low.bit_length() - 1
        v ^= low


#: value domains need not be seeded: RC11 has no (po | rf) cycles (litmus/cfg.py)
MODEL = PythonModel(consistent, racy, seed=False)


def check(test: Test, stop: str | None = None) -> ConformanceResult:
    """Verdict, allowed states and the ``racy`` flag of a C-dialect test under RC11."""
    return check_with(MODEL, test, NAME, stop=stop)

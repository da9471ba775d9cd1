"""The Vulkan memory model in Python, the tests' independent reference for ``vulkan.model``
(Vulkan specification, appendix "Memory Model", and its Alloy
formalization in KhronosGroup/Vulkan-MemoryModel), for tests in the ``Vulkan`` dialect.

Written from the specification's definitions; names follow it.

**Scopes and instances.** A thread's subgroup / workgroup / queue family instance is given by its
placement (``sg``, ``wg``, ``qf``); the device contains everything. An operation's scope set
"at least S" (SG ⊇ WG ⊇ QF ⊇ DV) holds the atomics, av/vis accesses, memory and control barriers
whose scope is S or wider. Two operations are *in scope* of each other when both are scoped and
in the same instance of the narrower of their two scopes.

**Location order and synchronization.** (Spec: "Scoped Modification Order", "Release Sequence",
"Synchronizes-With", "Happens-Before", "Availability and Visibility", "Location-Ordered".)

- mutually-ordered atomics: same reference (``vloc``), both atomic, in scope;
  asmo = co ∩ mutordatom (co enumerated as a total order per location);
- release sequence rs = [W ∩ ATOM]; (imm(asmo); [RMW])*;
- sw (restricted to in-scope endpoints): release atomic or release fence (po-before an atomic
  write in a storage class the fence's semantics include) -> rs -> rf between mutually-ordered
  atomics -> acquire atomic or acquire fence (po-after, same storage-class rule); and control
  barriers: a release fence/barrier po? before a barrier, in the same dynamic instance (syncbar)
  as a barrier po? before an acquire fence/barrier;
- inter-thread happens-before per set of storage classes SCs (with semantics for all of them):
  ithb = (ssw ∪ [SEMSC]; sw; [SEMSC] ∪ [SC ∪ SEMSC]; po; [REL ∩ SEMSC]
  ∪ [ACQ ∩ SEMSC]; po; [SC ∪ SEMSC])+, and hb = po ∪ every ithb;
- availability chains (avsg .. avdv) and visibility chains (vissg .. visdv) through hb within the
  subgroup, workgroup, queue family, connected by ``avvisinc`` (same reference for scoped
  operations; storage class ↔ matching semantics with semav/semvis);
- location order (locord): reads -ssw+-> accesses; writes hb AVDEVICE hb writes/ (VISDEVICE hb)
  reads; non-private reads hb non-private accesses; same-reference hb within a thread; a
  non-private write made available (at a scope) then hb another non-private write in that scope
  instance, or then made visible to a non-private read.

**Consistency.** fr = ((rf ∩ locord)⁻¹; ([W]; locord; [W])) ∪ rf⁻¹; asmo ∪ reads of an initial
write before every other write; atomicity (no external fr;asmo between an rmw's read and write);
acyclic(locord ∪ rf ∪ fr ∪ asmo); a non-atomic read never reads a write that another write
separates from it in locord. **Data race** (flag ``racy``): two accesses to one location, at least
one a write, neither an initial write, unordered by mutordatom or locord in either direction.

**Control barriers** (execution): ``cbar`` instances are grouped per workgroup by their instance
number. A group without quorum completes only when every thread of the workgroup that has one of
its barriers reaches it; then all of them synchronize with each other. A named barrier with a
quorum Q completes when at least Q of the reached barriers synchronize; each barrier that
synchronizes is related by syncbar to every reached barrier of the group (late arrivals pass
without releasing). An execution where a barrier never completes does not terminate and is not an
outcome (as in Dat3M, where the suite's expectations come from).
"""

from __future__ import annotations

import dataclasses
import itertools

from litmus.ir import Test

from oracle.lang import load_model
from oracle.models.path_executions import (Execution, acyclic, ident, inter, inverse, minus, opt,
                                           plus, restrict, seq, union)
from oracle.models.vulkan.reference_static import CLASSES, prepare, static
from oracle.models.reference_paths import ConformanceResult, PythonModel, check_with

NAME = "vulkan"


# --- the model ----------------------------------------------------------------------------------

def relations(x: Execution) -> dict:
    c = x.cache
    if "locord" in c:
        return c
    st = c.get("static") or static(x)
    c["static"] = st
    n = x.n
    s = st["s"]
    allm = st["allm"]
    po, rf, co = x.po, x.rf, x.co
    mutord, inscope = st["mutord"], st["inscope"]
    asmo = inter(co, mutord)
    asmo_plus = plus(asmo)
    imm_asmo = minus(asmo, seq(asmo, asmo_plus))
    rs = restrict(opt(plus(restrict(imm_asmo, allm, s["RMW"]))), s["W"] & s["ATOM"], allm)
    rf_mut = inter(rf, mutord)
    F = s["F"]
    rel_head = union(ident(s["REL"], n), restrict(st["po_sem2sc"], s["REL"] & F, allm))
    acq_tail = union(ident(s["ACQ"], n), restrict(st["po_sc2sem"], allm, s["ACQ"] & F))
    swra = seq(seq(seq(rel_head, rs), rf_mut), acq_tail)
    swra = restrict(swra, s["REL"], s["ACQ"])
    syncbar = c.get("syncbar", [0] * n)
    bar = minus(inter(syncbar, inscope), ident(allm, n))
    swbar = seq(seq(restrict(opt(po), s["REL"] & F, allm), bar),
                restrict(opt(po), allm, s["ACQ"] & F))
    sw = inter(inscope, union(swra, swbar))
    ssw = st["ssw"]
    hb = list(po)
    sc, semsc = st["sc"], st["semsc"]
    for k in range(1, CLASSES + 1):
        for S in itertools.combinations(range(CLASSES), k):
            SC = 0
            SEM = allm
            for i in S:
                SC |= sc[i]
                SEM &= semsc[i]
            if not SEM and not any(ssw):
                continue
            if not SC and not SEM and not any(ssw):
                continue
            parts = union(ssw, restrict(sw, SEM, SEM),
                          restrict(po, SC | SEM, s["REL"] & SEM),
                          restrict(po, s["ACQ"] & SEM, SC | SEM))
            hb = union(hb, plus(parts))
    avvisinc = st["avvisinc"]
    apo = inter(opt(po), avvisinc)
    ahb = inter(hb, avvisinc)
    SG, WG, QF, DV = st["scoped"]
    W, R = s["W"], s["R"]
    ssg, swg, sqf = st["ssg"], st["swg"], st["sqf"]
    ahb_sg, ahb_wg, ahb_qf = inter(ssg, ahb), inter(swg, ahb), inter(sqf, ahb)
    # availability chains
    avsg = ident(SG & (W | s["SEMAV"]), n)
    step_sg = opt(seq(avsg, ahb_sg))
    avwg = restrict(step_sg, allm, WG & (W | s["SEMAV"]))
    step_wg = opt(seq(avwg, ahb_wg))
    avqf = restrict(seq(step_sg, step_wg), allm, QF & (W | s["SEMAV"]))
    step_qf = opt(seq(avqf, ahb_qf))
    avdv = restrict(seq(seq(step_sg, step_wg), step_qf), allm, DV & (W | s["SEMAV"]))
    # visibility chains
    vissg = ident(SG & (R | s["SEMVIS"]), n)
    vstep_sg = opt(seq(ahb_sg, vissg))
    viswg = restrict(vstep_sg, WG & (R | s["SEMVIS"]), allm)
    vstep_wg = opt(seq(ahb_wg, viswg))
    visqf = restrict(seq(vstep_wg, vstep_sg), QF & (R | s["SEMVIS"]), allm)
    vstep_qf = opt(seq(ahb_qf, visqf))
    visdv = restrict(seq(seq(vstep_qf, vstep_wg), vstep_sg), DV & (R | s["SEMVIS"]), allm)
    NP = s["NONPRIV"]
    WNP, RNP = W & NP, R & NP
    hb_sg, hb_wg, hb_qf = inter(hb, ssg), inter(hb, swg), inter(hb, sqf)
    head = restrict(apo, WNP, allm)
    tail = restrict(apo, allm, RNP)
    per = union(
        inter(hb, st["intra"]),
        restrict(seq(seq(head, avsg), hb_sg), allm, WNP),
        restrict(seq(seq(head, avwg), hb_wg), allm, WNP),
        restrict(seq(seq(head, avqf), hb_qf), allm, WNP),
        restrict(seq(seq(head, avdv), hb), allm, WNP),
        seq(seq(seq(seq(head, avsg), hb_sg), vissg), tail),
        seq(seq(seq(seq(head, avwg), hb_wg), viswg), tail),
        seq(seq(seq(seq(head, avqf), hb_qf), visqf), tail),
        seq(seq(seq(seq(head, avdv), hb), visdv), tail),
    )
    lo = inter(st["vloc"], per)
    lo = union(lo, restrict(hb, RNP, (R | W) & NP))
    if any(ssw):
        lo = union(lo, restrict(plus(ssw), R, R | W))
    if s["AVDEVICE"]:
        w_av = seq(restrict(hb, W, s["AVDEVICE"]), hb)
        lo = union(lo, restrict(w_av, W, W))
        if s["VISDEVICE"]:
            lo = union(lo, restrict(seq(restrict(w_av, W, s["VISDEVICE"]), hb), W, R))
    locord = inter(x.loc, lo)
    IW = s["IW"]
    rf_inv = inverse(rf)
    fr = union(seq(inverse(inter(rf, locord)), restrict(locord, W, W)),
               seq(rf_inv, asmo),
               seq(inverse(restrict(rf, IW, allm)), minus(restrict(x.loc, allm, W),
                                                          ident(allm, n))))
    c.update(asmo=asmo, hb=hb, locord=locord, fr=fr, sw=sw)
    return c


def consistent(x: Execution) -> bool:
    c = relations(x)
    n = x.n
    asmo, locord, fr = c["asmo"], c["locord"], c["fr"]
    ext = x.ext
    if any(inter(x.rmw, seq(inter(fr, ext), inter(asmo, ext)))):
        return False
    if not acyclic(union(locord, x.rf, fr, asmo)):
        return False
    s = c["static"]["s"]
    W = s["W"]
    wlo = restrict(locord, W, n and (1 << n) - 1)
    shadow = seq(wlo, plus(wlo))
    rf_na = restrict(x.rf, (1 << n) - 1, s["R"] & ~s["ATOM"])
    if any(inter(rf_na, shadow)):
        return False
    return True


def racy(x: Execution) -> bool:
    c = relations(x)
    st = c["static"]
    s = st["s"]
    locord = c["locord"]
    ordered = union(st["mutord"], locord, inverse(locord))
    n = x.n
    acc = (s["R"] | s["W"]) & ~s["IW"]
    W = s["W"]
    for i in range(n):
        if not (acc >> i) & 1:
            continue
        cand = x.loc[i] & acc & ~ordered[i] & ~(1 << i)
        if not (W >> i) & 1:
            cand &= W
        if cand:
            return True
    return False


MODEL = PythonModel(consistent, racy, prepare)


def check(test: Test, stop: str | None = None) -> ConformanceResult:
    """Verdict, allowed states and the ``racy`` flag of a Vulkan-dialect test."""
    # the model file's declared properties: no no-thin-air axiom (``allow thin-air``), so reads
    # may take values out of thin air (litmus/cfg.py: value_domains), as in the engine
    model = dataclasses.replace(MODEL, thin_air="thin-air" in load_model(NAME).allow)
    return check_with(model, test, NAME, stop=stop)

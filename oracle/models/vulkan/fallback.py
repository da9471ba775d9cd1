"""The Vulkan memory model (Vulkan specification, appendix "Memory Model", and its Alloy
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

from litmus.cfg import attr
from litmus.ir import Test

from oracle.lang import load_model
from oracle.models.path_executions import (ConformanceResult, Execution, PythonModel, acyclic,
                                           check_with, ident, inter, inverse, minus, opt, plus,
                                           restrict, seq, union)

NAME = "vulkan"

SCOPE_RANK = {"sg": 0, "wg": 1, "qf": 2, "dv": 3}
CLASSES = 4          # storage classes sc0 .. sc3


def _instance(test: Test, tid: int, rank: int) -> tuple:
    p = test.threads[tid].placement
    full = (p.agent, p.wg, p.wave)
    return full[:3 - rank]


def _flags(e) -> tuple:
    ins = e.instr
    return ins.attrs if ins is not None else ()


def static(x: Execution) -> dict:
    """Event sets and the relations that depend only on the events (not on rf/co)."""
    test, ev, n = x.test, x.events, x.n
    allm = (1 << n) - 1
    s = {k: 0 for k in ("R", "W", "F", "IW", "ATOM", "RMW", "NONPRIV", "ACQ", "REL", "CBAR",
                        "AVDEVICE", "VISDEVICE", "SEMAV", "SEMVIS")}
    scoped = [0, 0, 0, 0]            # at least sg / wg / qf / dv
    sc = [0] * CLASSES
    semsc = [0] * CLASSES
    vloc_of = {}
    for e in ev:
        b = 1 << e.eid
        fl = _flags(e)
        if e.tid < 0:
            s["IW"] |= b
            s["W"] |= b
            vloc_of[e.eid] = e.loc
            continue
        ins = e.instr
        if e.kind in ("R", "W"):
            s[e.kind] |= b
            vloc_of[e.eid] = attr(ins, "vloc") or e.loc
            if ins.access == "atom" or ins.base == "rmw":
                s["ATOM"] |= b
            if e.is_rmw:
                s["RMW"] |= b
            if "nonpriv" in fl:
                s["NONPRIV"] |= b
            for i in range(CLASSES):
                if f"sc{i}" in fl:
                    sc[i] |= b
        elif e.kind == "F":
            s["F"] |= b
        elif e.kind == "B":
            s["CBAR"] |= b
            if ins.order:
                s["F"] |= b
        elif e.kind == "AV":
            s["AVDEVICE"] |= b
        elif e.kind == "VIS":
            s["VISDEVICE"] |= b
        order = e.order if e.kind != "B" else ins.order
        if e.kind == "B" and not ins.order:
            order = None
        if order in ("acq", "acq_rel"):
            s["ACQ"] |= b
        if order in ("rel", "acq_rel"):
            s["REL"] |= b
        if ins.scope in SCOPE_RANK:
            for r in range(SCOPE_RANK[ins.scope] + 1):
                scoped[r] |= b
        for i in range(CLASSES):
            if f"semsc{i}" in fl:
                semsc[i] |= b
        if "semav" in fl:
            s["SEMAV"] |= b
        if "semvis" in fl:
            s["SEMVIS"] |= b
    # same scope instance relations (initial writes belong to no thread)
    same = [[0] * n for _ in range(3)]            # ssg, swg, sqf
    of_thread: dict[int, int] = {}
    for e in ev:
        if e.tid >= 0:
            of_thread[e.tid] = of_thread.get(e.tid, 0) | (1 << e.eid)
    for r in range(3):
        group: dict[tuple, int] = {}
        for tid, mask in of_thread.items():
            key = _instance(test, tid, r)
            group[key] = group.get(key, 0) | mask
        row_of = {tid: group[_instance(test, tid, r)] for tid in of_thread}
        for e in ev:
            if e.tid >= 0:
                same[r][e.eid] = row_of[e.tid]
    ssg, swg, sqf = same
    inscope = [0] * n
    for a in ev:
        if a.tid < 0:
            continue
        row = 0
        for r, rel in enumerate((ssg, swg, sqf)):
            if (scoped[r] >> a.eid) & 1:
                row |= rel[a.eid] & scoped[r]
        if (scoped[3] >> a.eid) & 1:
            row |= scoped[3]
        inscope[a.eid] = row
    vloc = [0] * n
    for i, v in vloc_of.items():
        for j, w in vloc_of.items():
            if v == w:
                vloc[i] |= 1 << j
    vloc = inter(vloc, x.loc)
    intra = [0] * n
    for e in ev:
        if e.tid >= 0:
            intra[e.eid] = allm & ~x.ext[e.eid]
    ATOM = s["ATOM"]
    mutord = minus(restrict(inter(vloc, inscope), ATOM, ATOM), ident(allm, n))
    po = x.po
    sc2sem = [0] * n
    sem2sc = [0] * n
    for i in range(CLASSES):
        for a in range(n):
            if (sc[i] >> a) & 1:
                sc2sem[a] |= semsc[i]
            if (semsc[i] >> a) & 1:
                sem2sc[a] |= sc[i]
    po_sem2sc = inter(po, sem2sc)
    po_sc2sem = inter(po, sc2sem)
    ssw = [0] * n
    for a, b in dict(test.meta).get("ssw", ()):
        ta = sum(1 << e.eid for e in ev if e.tid == a)
        tb = sum(1 << e.eid for e in ev if e.tid == b)
        for i in range(n):
            if (ta >> i) & 1:
                ssw[i] |= tb
    # avvisinc: scoped op with same reference (either side), storage class <-> semantics
    SG = scoped[0]
    avvisinc = [0] * n
    for a in range(n):
        if (SG >> a) & 1:
            avvisinc[a] |= vloc[a]
        avvisinc[a] |= vloc[a] & SG
        avvisinc[a] |= sc2sem[a] & s["SEMAV"]
        if (s["SEMVIS"] >> a) & 1:
            avvisinc[a] |= sem2sc[a]
    return dict(s=s, scoped=scoped, sc=sc, semsc=semsc, ssg=ssg, swg=swg, sqf=sqf,
                inscope=inscope, vloc=vloc, intra=intra, mutord=mutord, po_sem2sc=po_sem2sc,
                po_sc2sem=po_sc2sem, ssw=ssw, avvisinc=avvisinc, allm=allm)


# --- control barriers ---------------------------------------------------------------------------

def prepare(x0: Execution) -> list[dict]:
    """Barrier completion and syncbar choices for one combination of paths (see module doc)."""
    test = x0.test
    groups: dict[tuple, list] = {}
    for e in x0.events:
        if e.kind == "B":
            ins = e.instr
            wg = _instance(test, e.tid, 1)
            key = (wg, attr(ins, "inst"), attr(ins, "id"))
            groups.setdefault(key, []).append(e)
    n = x0.n
    choices = []
    for (wg, inst, bid), evs in groups.items():
        quorum = attr(evs[0].instr, "quorum")
        if quorum is None:
            # every thread of the workgroup with such a barrier in its code must reach it
            need = {tid for tid, th in enumerate(test.threads) if _instance(test, tid, 1) == wg
                    and any(i.base == "cbar" and attr(i, "inst") == inst and attr(i, "id") == bid
                            for i in th.code)}
            if {e.tid for e in evs} != need:
                return []
            mask = sum(1 << e.eid for e in evs)
            choices.append([[(e.eid, mask) for e in evs]])
        else:
            q = int(quorum)
            if len(evs) < q:
                return []
            reached = sum(1 << e.eid for e in evs)
            opts = []
            for k in range(q, len(evs) + 1):
                for sub in itertools.combinations(evs, k):
                    opts.append([(e.eid, reached) for e in sub])
            choices.append(opts)
    st = static(x0)
    out = []
    for pick in itertools.product(*choices):
        syncbar = [0] * n
        for part in pick:
            for eid, mask in part:
                syncbar[eid] |= mask
        out.append({"syncbar": syncbar, "static": st})
    return out


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

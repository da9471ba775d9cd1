"""Static relations of the Vulkan model: event sets, scope instances and the barrier choices of
one combination of thread paths (what ``vulkan.model`` reads besides rf and co).

Part of the tests' Python reference of the model (``oracle/models/vulkan/reference.py`` computes the
dynamic relations on top of them); the event builder (:mod:`oracle.models.vulkan.builder`) derives
the same relations on bit rows per combination, independently of this module. The definitions follow the Vulkan specification, appendix
"Memory Model" (see the header of ``vulkan.model``).
"""

from __future__ import annotations

import itertools

from litmus.cfg import attr
from litmus.ir import Test

from oracle.models.path_executions import Execution, ident, inter, minus, restrict

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

"""Interpreter events -> simulator micro-operations, per target (what each cache bit means).

The tables here restate LLVM's AMDGPUUsage memory-model sections (notes llvm-amdgpu.md §4.1-
§4.5; docs/isa.md cites each row). The simulator has three access levels (0: may hit the CU's
L1/L0; 1: bypasses it; 2: system, which also bypasses a non-coherent L2 copy of NC memory), an L1
invalidate ``INV1``, an NC L2 invalidate ``INV2`` and an NC L2 writeback ``WB2``.

=========  ==========================  =============================  ========================
target     load level                  store / atomic level           cache instructions
=========  ==========================  =============================  ========================
gfx90a     glc -> 1, else 0            1                              buffer_wbinvl1_vol: INV1;
                                                                      buffer_invl2: INV2;
                                                                      buffer_wbl2: WB2
gfx942/950 sc0 sc1 -> 2; sc1 -> 1;     store: sc0 sc1 -> 2, else 1;   buffer_inv sc0 sc1: INV2
           sc0 -> 0 (1 in tgsplit)     atomic: sc1 -> 2, else 1       + INV1; other buffer_inv:
                                       (sc0 = return the old value)   INV1; buffer_wbl2 sc0 sc1:
                                                                      WB2; buffer_wbl2 sc1: --
gfx1100    glc -> 1, else 0            1                              buffer_gl0_inv: INV1;
                                                                      buffer_gl1_inv: --
gfx12xx    scope:SYS -> 2; DEV, SE     SCOPE_SYS -> 2, else 1         global_inv SYS: INV2 +
           -> 1; CU / none -> 0                                       INV1; DEV, SE: INV1; CU: --
                                                                      global_wb SYS: WB2; else --
=========  ==========================  =============================  ========================

``--``: the simulator has nothing that instruction acts on (one L2 per agent, no GL1); the
instruction is kept in the listing and the cross-check. Counters: GFX9 ``vmcnt`` (vector memory)
and ``lgkmcnt`` (LDS, scalar); GFX11 ``vmcnt`` (loads, returning atomics) / ``vscnt`` (stores,
other atomics) / ``lgkmcnt``; GFX12 ``loadcnt`` / ``storecnt`` / ``dscnt`` / ``kmcnt`` (scalar) /
``asynccnt``. ``expcnt``, ``xcnt`` and ALU waits order nothing the simulator has.
"""

from __future__ import annotations

from ..sim.uops import (BARRIVE, BARWAIT, CNT_ASYNC, CNT_KM, CNT_LGKM, CNT_LOAD, CNT_STORE,
                        CNT_VM, DMA, GCAS, GLD, GRMW, GST, GSTR, INV1, INV2, LCAS, LLD, LRMW, LST,
                        RMW_OPS, WAIT, WB2)
from .interp import Event, Sym, TranslateError
from .targets import Target

#: access counter names of interp events and wait names -> simulator counter, per family
COUNTERS = {
    "gfx9": {"load": CNT_VM, "store": CNT_VM, "vm": CNT_VM, "lgkm": CNT_LGKM, "km": CNT_LGKM},
    "gfx11": {"load": CNT_LOAD, "store": CNT_STORE, "lgkm": CNT_LGKM, "km": CNT_LGKM},
    "gfx12": {"load": CNT_LOAD, "store": CNT_STORE, "lgkm": CNT_LGKM, "km": CNT_KM,
              "async": CNT_ASYNC},
}
WAITS = {
    "gfx9": {"vmcnt": CNT_VM, "lgkmcnt": CNT_LGKM},
    "gfx11": {"vmcnt": CNT_LOAD, "vscnt": CNT_STORE, "lgkmcnt": CNT_LGKM},
    "gfx12": {"loadcnt": CNT_LOAD, "storecnt": CNT_STORE, "dscnt": CNT_LGKM, "kmcnt": CNT_KM,
              "asynccnt": CNT_ASYNC},
}
#: vector-memory wait names (what ``drop-vmcnt`` removes)
VMEM_WAITS = frozenset({"vmcnt", "vscnt", "loadcnt", "storecnt"})


def _scope(mods) -> str | None:
    for m in mods:
        if m.startswith("scope:"):
            return m.split(":", 1)[1]
    return None


def level(target: Target, ev: Event) -> int:
    """The simulator access level of a global access (see the module table)."""
    mods = set(ev.mods)
    kind = ev.kind
    fam = target.family
    if fam == "gfx12":
        sc = _scope(ev.mods)
        if sc == "SCOPE_SYS":
            return 2
        if kind in ("load", "dma"):
            return 1 if sc in ("SCOPE_DEV", "SCOPE_SE") else 0
        return 1
    if target.name in ("gfx942", "gfx950"):
        if kind in ("rmw", "cas"):
            return 2 if "sc1" in mods else 1
        if kind == "store":
            return 2 if {"sc0", "sc1"} <= mods else 1
        if {"sc0", "sc1"} <= mods:
            return 2
        if "sc1" in mods:
            return 1
        if "sc0" in mods:
            return 1 if target.tgsplit else 0
        return 0
    # gfx90a, gfx1100: glc bypasses the L1 / GL0 for loads; nothing reaches system level
    if kind in ("load", "dma"):
        return 1 if "glc" in mods else 0
    return 1


def top_level(target: Target) -> int:
    """The highest access level the target's cache bits can ask for: 2 (system) where an
    instruction can name system scope (gfx942/gfx950 ``sc0 sc1``, GFX12 ``scope:SCOPE_SYS``), 1
    on gfx90a and gfx1100, whose system-scope accesses carry the agent-scope bits (AMDGPUUsage
    GFX90A: "load atomic monotonic ... system: ``glc=1``"; stores and atomics have no bit) and get
    system coherence from the memory type and ``buffer_wbl2``/``buffer_invl2``. A compiled access
    at this level is what the target's table asks, even where the hand lowering goes further."""
    if target.family == "gfx12" or target.name in ("gfx942", "gfx950"):
        return 2
    return 1


def cache_uops(target: Target, ev: Event) -> list[tuple]:
    """Micro-ops of a cache-maintenance instruction (see the module table)."""
    op, mods = ev.op, set(ev.mods)
    sc = _scope(ev.mods)
    if op in ("buffer_wbinvl1_vol", "buffer_wbinvl1", "buffer_gl0_inv"):
        return [(INV1,)]
    if op == "buffer_gl1_inv":
        return []
    if op == "buffer_invl2":
        return [(INV2,)]
    if op == "buffer_inv":
        return [(INV2,), (INV1,)] if {"sc0", "sc1"} <= mods else [(INV1,)]
    # the L2 writeback is in flight on the store counter (vmcnt on GFX9, storecnt on GFX12)
    # until a wait covers it (AMDGPUUsage: the s_waitcnt after it "ensures that ... the L2
    # writeback have completed")
    wb = (WB2, 0, 0, 0, CNT_VM if target.family == "gfx9" else CNT_STORE)
    if op == "buffer_wbl2":
        if target.name == "gfx90a" or {"sc0", "sc1"} <= mods:
            return [wb]
        return []
    if op in ("global_inv", "global_wb", "global_wbinv"):
        out = []
        if op in ("global_wb", "global_wbinv") and sc == "SCOPE_SYS":
            out.append(wb)
        if op in ("global_inv", "global_wbinv"):
            if sc == "SCOPE_SYS":
                out += [(INV2,), (INV1,)]
            elif sc in ("SCOPE_DEV", "SCOPE_SE"):
                out.append((INV1,))
        return out
    raise TranslateError(f"no translation for cache instruction {op}")


class Locations:
    """Where a thread's addresses land: test globals, output slots, LDS locations."""

    def __init__(self, src, n_globals: int, stride_bytes: int, lds_stride_bytes: int):
        self.src = src
        self.G = n_globals
        self.stride = stride_bytes
        self.lstride = lds_stride_bytes

    def global_(self, addr: int, what: str) -> tuple[str, int]:
        """("loc", index in test.globals) or ("out", output slot)."""
        if addr >= self.src.out_base:
            j, r = divmod(addr - self.src.out_base, self.stride)
            if r == 0 and j < len(self.src.outputs):
                return "out", j
        else:
            k, r = divmod(addr, self.stride)
            if r == 0 and 0 <= k < self.G:
                return "loc", k
        raise TranslateError(f"{what}: byte offset {addr} of the test memory is no location")

    def lds(self, addr: int, what: str) -> int:
        k, r = divmod(addr, self.lstride)
        if r or not 0 <= k < len(self.src.lds):
            raise TranslateError(f"{what}: LDS address {addr} is no LDS location")
        return k


def rows(target: Target, events: list[Event], locs: Locations, nreg: int, kslot: int,
         name: str, pslot: int = -1) -> tuple[list[tuple[int, tuple]], dict[int, object], int]:
    """Micro-op rows ``(instruction index, row)`` of one thread, the value stored to each output
    slot (a Sym or an int), and the number of simulator registers used. ``nreg``: registers
    the interpreter handed out (Sym numbers); ``kslot``: the L1 slot of the thread's scalar
    cache; ``pslot``: the global location standing for the thread's private memory."""
    fam = target.family
    cnt = COUNTERS[fam]
    waits = WAITS[fam]
    out: list[tuple[int, tuple]] = []
    stored: dict[int, object] = {}

    def where(ev):
        return f"{name} instruction {ev.index}"

    def const(v, ev, what):
        if isinstance(v, int):
            return v - (1 << 32) if v >> 31 else v
        raise TranslateError(f"{where(ev)}: {what} is not a constant ({v!r})")

    def reg(ev):
        nonlocal nreg
        if ev.dst is not None:
            return ev.dst.k
        nreg += 1
        return nreg - 1

    for ev in events:
        i = ev.index
        k = ev.kind
        if k in ("pload", "pstore"):
            # private memory: the value is the interpreter's; the simulator sees an access to
            # the thread's own scratch location, tracked on the same counter as the hardware
            c = cnt[ev.counter]
            out.append((i, (GLD, reg(ev), pslot, 1, c) if k == "pload"
                        else (GST, 0, pslot, 1, c, 0, 0)))
            continue
        if k in ("load", "store", "rmw", "cas", "dma", "sload"):
            c = cnt.get(ev.counter)
            if c is None:
                raise TranslateError(f"{where(ev)}: no {ev.counter} counter on {target.name}")
            kind, g = locs.global_(ev.addr, where(ev))
            if kind == "out":
                if k != "store":
                    raise TranslateError(f"{where(ev)}: {k} of an output slot")
                if g in stored:
                    raise TranslateError(f"{where(ev)}: output slot {g} stored twice")
                stored[g] = ev.value
                gi = locs.G + g
                if isinstance(ev.value, Sym):
                    out.append((i, (GSTR, ev.value.k, gi, 1, c, 0, RMW_OPS["add"])))
                else:
                    out.append((i, (GST, 0, gi, 1, c, const(ev.value, ev, "stored value"), 0)))
                continue
            lv = level(target, ev)
            if k == "load":
                out.append((i, (GLD, ev.dst.k, g, lv, c)))
            elif k == "sload":
                out.append((i, (GLD, ev.dst.k, g, 0, c, kslot + 1)))
            elif k == "store":
                out.append((i, (GST, 0, g, lv, c, const(ev.value, ev, "stored value"), 0)))
            elif k == "rmw":
                out.append((i, (GRMW, reg(ev), g, lv, c, const(ev.value, ev, "rmw operand"),
                                RMW_OPS[ev.op])))
            elif k == "cas":
                out.append((i, (GCAS, reg(ev), g, lv, c, const(ev.expected, ev, "cas compare"),
                                const(ev.value, ev, "cas value"), 0)))
            else:
                a = locs.lds(ev.lds, where(ev))
                out.append((i, (DMA, a, g, lv, c)))
        elif k in ("lload", "lstore", "lrmw", "lcas"):
            a = locs.lds(ev.addr, where(ev))
            if k == "lload":
                out.append((i, (LLD, ev.dst.k, a)))
            elif k == "lstore":
                out.append((i, (LST, 0, a, 0, 0, const(ev.value, ev, "stored value"))))
            elif k == "lrmw":
                out.append((i, (LRMW, reg(ev), a, 0, 0, const(ev.value, ev, "rmw operand"),
                                RMW_OPS[ev.op])))
            else:
                out.append((i, (LCAS, reg(ev), a, 0, 0, const(ev.expected, ev, "cas compare"),
                                const(ev.value, ev, "cas value"))))
        elif k == "wait":
            by_k: dict[int, int] = {}
            for wname, n in ev.waits:
                if wname not in waits:
                    raise TranslateError(f"{where(ev)}: no {wname} counter on {target.name}")
                by_k[n] = by_k.get(n, 0) | (1 << waits[wname])
            for n, mask in sorted(by_k.items()):
                out.append((i, (WAIT, mask, n)))
        elif k == "cache":
            out += [(i, u) for u in cache_uops(target, ev)]
        elif k == "barrier":
            out.append((i, (BARRIVE, ev.bar, 0) if ev.op == "arrive" else (BARWAIT, ev.bar, 0)))
        else:
            raise TranslateError(f"{where(ev)}: no translation for {k}")
    return out, stored, nreg

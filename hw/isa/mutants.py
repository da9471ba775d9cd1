"""ISA mutants: edits of the compiled code, to prove the loop can see a lowering bug.

Each mutant edits the machine code of every thread the way a broken memory legalizer or waitcnt
pass would (removing an instruction, dropping a counter from an ``s_waitcnt``, lowering the
scope bits of an access); the edit is applied to the interpreter's events, which are in
one-to-one correspondence with instructions, and every edit is listed with the instruction it
changed (``Edit``), so a finding shows the mutated code. ``isa:TARGET:MUTANT`` runs with the
mutant's default options (``options``) unless the name overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .interp import Event
from .targets import Target
from .translate import VMEM_WAITS


@dataclass(frozen=True)
class IsaMutant:
    name: str
    summary: str
    mechanism: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edit:
    index: int          # instruction index in the kernel
    what: str           # e.g. "removed", "vmcnt dropped", "sc1 -> sc0"


INVALIDATES = frozenset({"buffer_wbinvl1_vol", "buffer_wbinvl1", "buffer_inv", "buffer_gl0_inv",
                         "buffer_gl1_inv", "global_inv"})
WRITEBACKS = frozenset({"buffer_wbl2", "global_wb", "global_wbinv"})
MEMORY = frozenset({"load", "store", "rmw", "cas", "sload", "lload", "lstore", "lrmw", "lcas",
                    "dma"})

MUTANTS: dict[str, IsaMutant] = {m.name: m for m in [
    IsaMutant("drop-inv",
              "every L1/L0 invalidate removed (buffer_wbinvl1_vol, buffer_inv, buffer_gl0/gl1_inv, "
              "global_inv)",
              "the cache invalidate of an acquire is what makes later loads miss the non-coherent "
              "L1/L0; without it they read stale lines", ("noscalar",)),
    IsaMutant("drop-wbl2",
              "every L2 writeback removed (buffer_wbl2, global_wb)",
              "a system-scope release must write dirty L2 lines of non-coherent (NC) memory back "
              "before the releasing store; without it another agent reads stale memory",
              ("noscalar", "mtype=NC")),
    IsaMutant("drop-vmcnt",
              "vector-memory waits (vmcnt/vscnt/loadcnt/storecnt) before each store or atomic "
              "removed",
              "the s_waitcnt a release puts before its store orders earlier loads and stores "
              "before it; without it the flag store overtakes them", ("noscalar",)),
    IsaMutant("weaken-scope-bits",
              "cache-policy scope bits of every global access lowered one level (sc0 sc1 -> sc1 "
              "-> sc0 -> none; glc -> none; SCOPE_SYS -> DEV -> SE -> CU)",
              "an atomic whose bits name a narrower scope than its syncscope is served by a cache "
              "that is not coherent at that scope (a stale L1 line, a stale NC L2 copy)",
              ("noscalar", "tgsplit")),
    IsaMutant("drop-barrier-waits",
              "the waits right before each s_barrier / s_barrier_signal removed",
              "a workgroup release fence before a barrier becomes waits before s_barrier; without "
              "them stores (and LDS writes, which other waves' LDS reads overtake) are still in "
              "flight when the other waves pass the barrier", ("noscalar", "tgsplit")),
]}


def _weaken(target: Target, ev: Event) -> tuple[Event, str | None]:
    mods = list(ev.mods)
    fam = target.family
    if fam == "gfx12":
        order = ["SCOPE_SYS", "SCOPE_DEV", "SCOPE_SE", "SCOPE_CU"]
        for j, m in enumerate(mods):
            if m.startswith("scope:") and m[6:] in order[:3]:
                new = order[order.index(m[6:]) + 1]
                mods[j] = f"scope:{new}"
                return replace(ev, mods=tuple(mods)), f"{m} -> scope:{new}"
        return ev, None
    if target.name in ("gfx942", "gfx950"):
        have = {m for m in mods if m in ("sc0", "sc1")}
        if ev.kind in ("rmw", "cas"):         # sc0 means "return", sc1 the scope
            if "sc1" in have:
                mods.remove("sc1")
                return replace(ev, mods=tuple(mods)), "sc1 removed"
            return ev, None
        rest = [m for m in mods if m not in ("sc0", "sc1")]
        if have == {"sc0", "sc1"}:
            return replace(ev, mods=tuple(rest + ["sc1"])), "sc0 sc1 -> sc1"
        if have == {"sc1"}:
            return replace(ev, mods=tuple(rest + ["sc0"])), "sc1 -> sc0"
        if have == {"sc0"}:
            return replace(ev, mods=tuple(rest)), "sc0 removed"
        return ev, None
    if ev.kind in ("load", "dma") and "glc" in mods:    # gfx90a, gfx1100 loads
        mods.remove("glc")
        return replace(ev, mods=tuple(mods)), "glc removed"
    return ev, None


def apply(name: str, target: Target, events: list[Event],
          is_location=lambda ev: True) -> tuple[list[Event], list[Edit]]:
    """``events`` with mutant ``name`` applied, and the edits made. ``is_location(ev)`` says
    whether a global access touches a test location (not an output slot)."""
    out: list[Event] = []
    edits: list[Edit] = []
    if name == "drop-inv" or name == "drop-wbl2":
        drop = INVALIDATES if name == "drop-inv" else WRITEBACKS
        for ev in events:
            if ev.kind == "cache" and ev.op in drop:
                edits.append(Edit(ev.index, "removed"))
            else:
                out.append(ev)
        return out, edits
    if name == "weaken-scope-bits":
        for ev in events:
            if ev.kind in ("load", "store", "rmw", "cas", "dma") and is_location(ev):
                ev, what = _weaken(target, ev)
                if what:
                    edits.append(Edit(ev.index, what))
            out.append(ev)
        return out, edits
    if name in ("drop-vmcnt", "drop-barrier-waits"):
        block: list[int] = []           # positions in ``out`` of waits since the last access
        for ev in events:
            trigger = False
            if name == "drop-vmcnt":
                trigger = ev.kind in ("store", "rmw", "cas") and is_location(ev)
            else:
                trigger = ev.kind == "barrier" and ev.op == "arrive"
            if trigger:
                for pos in block:
                    w = out[pos]
                    keep = tuple((n, k) for n, k in w.waits
                                 if name == "drop-vmcnt" and n not in VMEM_WAITS)
                    if keep != w.waits:
                        gone = " ".join(n for n, _ in w.waits if (n, _) not in keep)
                        edits.append(Edit(w.index, f"{gone} removed"))
                        out[pos] = replace(w, waits=keep)
                block = []
            if ev.kind == "wait":
                block.append(len(out))
            elif ev.kind in MEMORY or ev.kind == "barrier":
                block = []
            out.append(ev)
        return [e for e in out if e.kind != "wait" or e.waits], edits
    raise KeyError(name)

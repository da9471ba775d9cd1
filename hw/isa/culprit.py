"""The machine instruction at fault in a finding: the ``isa`` backend's bucket signature.

The oracle names the culprit *litmus* reads of a forbidden outcome (the stale read of a failed
``may-see``, the accesses of a failed cycle). Here they become machine instructions: the
cross-check (:mod:`hw.isa.crosscheck`) cuts each thread's compiled code at its memory accesses
and names every way it is weaker than the simulator's hand lowering (which is sound for the
model). The weakenings in the reading thread's window — from its nearest earlier acquire to the
culprit read — are the cause: a read compiled to ``s_load`` (scalar cache), a wait or cache
invalidate that is missing, an access at a level closer to the wave than the lowering asks
(unless the compiled level is already the highest the target's cache bits can name: then it is
the target's table, and the hand lowering is the stronger side).
The signature is the weakening kind, the compiled instruction's opcode and its cache bits, and
the target family (GFX9 / GFX10-11 / GFX12), so every form of one compiler bug is one bucket.

When the compiled code is nowhere weaker than the hand lowering, the cause may be a code sequence
both follow (LLVM's table itself): :func:`_uncumulative_release` names a narrow-scope release
that waits for no vector-memory store of its wave although the stale location was written by
that wave before it (docs/isa.md finding 2), so that bug is one bucket too.
"""

from __future__ import annotations

import re

from litmus import format_instr

from . import crosscheck
from .machine import Build
from .translate import top_level

#: crosscheck kinds that make the compiled code weaker than the hand lowering (a possible cause)
WEAKER = ("scalar-load", "missing-wait:", "missing-wait-after-wb:", "weaker-wait:", "missing-cache:", "level:", "op:",
          "order", "unmatched")

#: cache-policy bits of AMDGPU memory instructions (GFX9: sc0 sc1 nt; GFX10/11: glc slc dlc;
#: GFX12: th:... scope:...)
_BITS = re.compile(r"^(sc0|sc1|nt|glc|slc|dlc|th:\S+|scope:\S+)$")

FAMILY = {"gfx9": "GFX9", "gfx11": "GFX10-11", "gfx12": "GFX12"}


def opcode(text: str) -> str:
    """``global_load_dword v1, v0, s[0:1] sc0 sc1`` -> ``global_load_dword sc0 sc1``."""
    toks = text.replace(",", " ").split()
    if not toks:
        return ""
    bits = [t for t in toks[1:] if _BITS.match(t)]
    return " ".join([toks[0], *bits])


def _weaker(kind: str, target=None) -> bool:
    """Whether a cross-check difference makes the compiled code weaker than the model needs: a
    ``level:`` difference whose compiled level is the highest the target's bits can ask for
    (:func:`hw.isa.translate.top_level`) is the target's table, not a weakening — on gfx90a and
    gfx1100 a system-scope access is compiled as the table says (``glc``), and the hand
    lowering's system level is stronger than anything the ISA can name (docs/isa.md, gfx90a
    triage)."""
    if not any(kind == w or kind.startswith(w) for w in WEAKER):
        return False
    if kind.startswith("level:") and target is not None and _table_level(kind, target):
        return False
    return True


_LEVEL_OF = {name: lv for lv, name in crosscheck.LEVELS.items()}


def _table_level(kind: str, target) -> bool:
    """``level:OP:HAND->COMPILED`` where COMPILED is the target's top level and HAND above it."""
    try:
        hand, comp = (_LEVEL_OF[x] for x in kind.split(":")[2].split("->"))
    except (IndexError, KeyError, ValueError):
        return False
    return comp == top_level(target) and hand > comp


def _is_acquire(ins) -> bool:
    return ins.order in ("acq", "acq_rel", "sc") or ins.base in ("bar.wait", "barrier")


def culprit(b: Build, reads: list[tuple[int, int]]) -> dict | None:
    """The bucket of compiled code ``b`` whose forbidden outcome the oracle blames on ``reads``
    (``(thread, litmus instruction)``): ``{"kind": "isa", "signature", "instruction",
    "family"}``; None when the cross-check finds no weakening anywhere (then the model-level
    bucket stands: the cause is not in the compiled code's shape)."""
    _, checks = crosscheck.check(b.test, b.target, b)
    by_tid = {tc.tid: tc for tc in checks}
    family = FAMILY.get(b.target.family, b.target.family)
    found: list[tuple[str, str]] = []          # (kind, compiled instruction)
    for tid, k in reads:
        tc = by_tid.get(tid)
        if tc is None:
            continue
        code = b.test.threads[tid].code
        lo = next((j for j in range(k - 1, -1, -1) if _is_acquire(code[j])), 0)
        window = {format_instr(code[j]) for j in range(lo, k + 1)}
        for kind, _ in tc.problems:
            if _weaker(kind, b.target):
                found.append((kind, ""))
        for seg in tc.segments:
            if seg.label not in window:
                continue
            for kind, _ in seg.differences:
                if not _weaker(kind, b.target):
                    continue
                if kind == "scalar-load" or kind.startswith(("level:", "op:")):
                    found.append((kind, opcode(seg.compiled_anchor)))
                else:            # a wait / cache operation missing before this access
                    found.append((kind, f"before {opcode(seg.compiled_anchor)}"))
    # a release both sides compile alike that is not cumulative (finding 2) is a sufficient
    # cause: it names the bucket unless the window holds a stronger one (a scalar load, a missing
    # wait or invalidate, a level); an idempotent rmw compiled to a load ("op:") or an access
    # left out ("unmatched") in the window is a legal transformation, weaker evidence
    if all(kind.startswith(("op:", "unmatched")) for kind, _ in found):
        rel = _uncumulative_release(b, checks, reads)
        if rel:       # one bucket whatever instruction carries the release (ds_write, ds_wrxchg,
            # global_store ...): the instruction is kept apart from the signature
            return {"kind": "isa", "family": family, "instruction": rel[0][1],
                    "signature": f"{family}: {rel[0][0]} (workgroup release)"}
    if not found:         # not in the culprit's window: any weakening of the whole test
        for tc in checks:
            for seg in tc.segments:
                for kind, _ in seg.differences:
                    if _weaker(kind, b.target):
                        found.append((kind, opcode(seg.compiled_anchor) or "(end)"))
    if not found:
        return None
    found = sorted(set(found))
    text = "; ".join(f"{kind} {ins}".rstrip() for kind, ins in found)
    return {"kind": "isa", "family": family, "instruction": found[0][1],
            "signature": f"{family}: {text}"}


#: the store counter's wait, per family (what a release must wait for to cover earlier stores)
STORE_WAIT = {"gfx9": "vmcnt", "gfx11": "vscnt", "gfx12": "storecnt"}
_VECTOR_WAITS = ("vmcnt", "vscnt", "storecnt", "s_wait_loadcnt", "s_wait_idle")


def _narrow(ins, test) -> bool:
    """A workgroup (or narrower) scope: LDS accesses are workgroup scope whatever they say."""
    sc = ins.scope or "sys"
    if ins.loc is not None and test.is_lds(ins.loc):
        return sc in ("thread", "wave", "wg", "cluster", "agent", "sys")
    return sc in ("thread", "wave", "wg")


def _uncumulative_release(b: Build, checks, reads) -> list[tuple[str, str]]:
    """``[(uncumulative-release:no-C, before OPCODE)]`` for a release at workgroup scope (a release write,
    or a release fence then a write) whose compiled code has no wait on the store counter C
    before the write, in a thread that wrote a location of a culprit read (any global location
    when the oracle names no read, as for a final value) earlier with no such
    wait since: the release is not cumulative for that store once another wave's wider release
    waits only for its own counters (finding 2). ``[]`` when there is none."""
    test = b.test
    stale = _stale_locations(test, reads)
    counter = STORE_WAIT.get(b.target.family, "vmcnt")
    out = []
    for tc in checks:
        if tc.problems:
            continue
        code = [c for c in test.threads[tc.tid].code if c is not None]
        segs = list(tc.segments)
        pos = 0
        wrote = False
        fence_rel = False
        for ins in code:
            if ins.base == "fence":
                if ins.order in ("rel", "acq_rel", "sc"):
                    fence_rel = (ins.scope or "sys") in ("thread", "wave", "wg")
                continue
            if ins.base not in ("ld", "st", "rmw", "cas"):
                continue
            label = format_instr(ins)
            j = next((i for i in range(pos, len(segs)) if segs[i].label == label), None)
            if j is None:
                break
            seg = segs[j]
            pos = j + 1
            waits = any(w in text for text in seg.compiled for w in _VECTOR_WAITS)
            if waits:
                wrote = False
            writes = ins.base in ("st", "rmw", "cas")
            release = ins.access == "atom" and ins.order in ("rel", "acq_rel", "sc") \
                and _narrow(ins, test)
            if writes and wrote and not waits and (release or fence_rel):
                out.append((f"uncumulative-release:no-{counter}",
                            f"before {opcode(seg.compiled_anchor)}"))
            if writes and ins.loc in stale and not test.is_lds(ins.loc):
                wrote = True
            fence_rel = False
    return out


def _stale_locations(test, reads) -> set:
    """The locations whose stale value the oracle's culprit ``reads`` point at: their locations;
    every global location when no read is named (a final-value check) or when every named read is
    a read-modify-write (an ``atomicity`` check: two updates that read the same write). An
    atomicity culprit is not the stale read of the causal chain: the forbidden outcome's other
    candidate executions, those where the second update reads the first, fail on a stale read of
    another location (docs/isa.md, "atomicity: atomic.agent via atomicity" triage)."""
    named = [test.threads[t].code[k] for t, k in reads
             if 0 <= k < len(test.threads[t].code) and test.threads[t].code[k] is not None]
    stale = {ins.loc for ins in named} - {None}
    if not stale or all(ins.base in ("rmw", "cas") for ins in named):
        stale = {loc.name for loc in test.globals}
    return stale

"""The machine instruction at fault in a finding: the ``isa`` backend's bucket signature.

The oracle names the culprit *litmus* reads of a forbidden outcome (the stale read of a failed
``may-see``, the accesses of a failed cycle). Here they become machine instructions: the
cross-check (:mod:`hw.isa.crosscheck`) cuts each thread's compiled code at its memory accesses
and names every way it is weaker than the simulator's hand lowering (which is sound for the
model). The weakenings in the reading thread's window — from its nearest earlier acquire to the
culprit read — are the cause: a read compiled to ``s_load`` (scalar cache), a wait or cache
invalidate that is missing, an access at a level closer to the wave than the lowering asks.
The signature is the weakening kind, the compiled instruction's opcode and its cache bits, and
the target family (GFX9 / GFX10-11 / GFX12), so every form of one compiler bug is one bucket.
"""

from __future__ import annotations

import re

from . import crosscheck
from .machine import Build

#: crosscheck kinds that make the compiled code weaker than the hand lowering (a possible cause)
WEAKER = ("scalar-load", "missing-wait:", "weaker-wait:", "missing-cache:", "level:", "op:",
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


def _weaker(kind: str) -> bool:
    return any(kind == w or kind.startswith(w) for w in WEAKER)


def _is_acquire(ins) -> bool:
    return ins.order in ("acq", "acq_rel", "sc") or ins.base in ("bar.wait", "barrier")


def culprit(b: Build, reads: list[tuple[int, int]]) -> dict | None:
    """The bucket of compiled code ``b`` whose forbidden outcome the oracle blames on ``reads``
    (``(thread, litmus instruction)``): ``{"kind": "isa", "signature", "instruction",
    "family"}``; None when the cross-check finds no weakening anywhere (then the model-level
    bucket stands: the cause is not in the compiled code's shape)."""
    from litmus import format_instr
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
            if _weaker(kind):
                found.append((kind, ""))
        for seg in tc.segments:
            if seg.label not in window:
                continue
            for kind, _ in seg.differences:
                if not _weaker(kind):
                    continue
                if kind == "scalar-load" or kind.startswith(("level:", "op:")):
                    found.append((kind, opcode(seg.compiled_anchor)))
                else:            # a wait / cache operation missing before this access
                    found.append((kind, f"before {opcode(seg.compiled_anchor)}"))
    if not found:         # not in the culprit's window: any weakening of the whole test
        for tc in checks:
            for seg in tc.segments:
                for kind, _ in seg.differences:
                    if _weaker(kind):
                        found.append((kind, opcode(seg.compiled_anchor) or "(end)"))
    if not found:
        return None
    found = sorted(set(found))
    text = "; ".join(f"{kind} {ins}".rstrip() for kind, ins in found)
    return {"kind": "isa", "family": family, "instruction": found[0][1],
            "signature": f"{family}: {text}"}

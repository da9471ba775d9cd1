"""Cross-check: clang-22's code for a test next to the simulator's hand lowering (hw/sim/lower.py).

Both sides are cut at the same anchors — the thread's memory accesses and barrier operations,
matched by :mod:`hw.isa.align` — into segments: a gap (waits, cache maintenance, whatever a
fence became) then an anchor. Each segment is compared in the simulator's terms: which counters
are waited for (and down to what), which cache operations happen, the level and counter of the
access. Every difference is reported with a stable *kind* (``extra-wait:vmcnt``,
``missing-cache:inv.l1``, ``level:load:0->1`` ...) and the machine instructions involved;
docs/isa.md answers each kind (a difference is a question, not an error).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from litmus import format_instr

from ..sim.lower import lower
from ..sim.profiles import PROFILES, with_options
from ..sim.uops import (BARRIVE, BARWAIT, CNT_LGKM, COUNTER_NAMES, DMA, GCAS, GLD, GRMW, GST,
                        GSTR, INV1, INV2, LCAS, LLD, LRMW, LST, NAMES, WAIT, WB2)
from . import align, translate
from .machine import Build, build, machine
from .targets import Target

ANCHOR_UOPS = (GLD, GST, GRMW, GCAS, GSTR, DMA, LLD, LST, LRMW, LCAS, BARRIVE, BARWAIT)
LEVELS = {0: "L1", 1: "L2", 2: "sys"}


@dataclass
class Segment:
    """The gap before one anchor (or the tail after the last), and the anchor itself."""

    label: str                          # the litmus instruction of the anchor, or "(end)"
    hand: list[str] = field(default_factory=list)          # gap micro-ops
    compiled: list[str] = field(default_factory=list)      # gap machine instructions
    hand_anchor: str = ""
    compiled_anchor: str = ""
    differences: list[tuple[str, str]] = field(default_factory=list)   # (kind, detail)


@dataclass
class ThreadCheck:
    tid: int
    segments: list[Segment]
    problems: list[tuple[str, str]]     # (kind, detail) not tied to a segment


def _uop_text(u) -> str:
    op = u[0]
    if op == WAIT:
        return f"wait {COUNTER_NAMES[u[1]]}({u[2]})"
    if op in (GLD, GST, GRMW, GCAS, GSTR, DMA):
        return f"{NAMES[op]} g{u[2]} {LEVELS.get(u[3], u[3])} {COUNTER_NAMES[u[4]]}"
    if op in (LLD, LST, LRMW, LCAS):
        return f"{NAMES[op]} lds{u[2]}"
    if op in (BARRIVE, BARWAIT):
        return f"{NAMES[op]} {u[1]}"
    return NAMES.get(op, str(op))


def _effective(tagged, from_mask: bool) -> list:
    """``uops`` with every wait split per counter and the vacuous ones dropped: a wait for
    counter C down to k while at most k operations on C are outstanding does nothing (the
    compiler's waitcnt pass omits them; the hand lowering writes the memory legalizer's
    conservative sequence)."""
    out = []
    pending: dict[int, int] = {}
    for tag, u in tagged:
        if u[0] == WAIT:
            cs = [c for c in COUNTER_NAMES if u[1] >> c & 1] if from_mask else [u[1]]
            for c in cs:
                if pending.get(c, 0) > u[2]:
                    out.append((tag, (WAIT, c, u[2])))
                    pending[c] = u[2]
            continue
        if u[0] in (GLD, GST, GRMW, GCAS, GSTR, DMA) or (u[0] == WB2 and len(u) > 4):
            # (an L2 writeback is in flight on its counter too: the wait after it is not vacuous)
            pending[u[4]] = pending.get(u[4], 0) + 1
        elif u[0] in (LLD, LST, LRMW, LCAS):
            pending[CNT_LGKM] = pending.get(CNT_LGKM, 0) + 1
        out.append((tag, u))
    return out


def _summary(uops):
    """(waits {counter name: smallest k}, cache ops sorted) of a gap's effective micro-ops."""
    waits: dict[str, int] = {}
    cache: list[str] = []
    for u in uops:
        if u[0] == WAIT:
            n = COUNTER_NAMES[u[1]]
            waits[n] = min(waits.get(n, u[2]), u[2])
        elif u[0] in (INV1, INV2, WB2):
            cache.append(NAMES[u[0]])
    return waits, sorted(cache)


def _after_writeback(uops) -> set[str] | None:
    """The counters waited for after the gap's last L2 writeback (None: no writeback)."""
    idx = [j for j, u in enumerate(uops) if u[0] == WB2]
    if not idx:
        return None
    return {COUNTER_NAMES[u[1]] for u in uops[idx[-1] + 1:] if u[0] == WAIT}


def _compare_gap(seg: Segment, hand, comp, comp_events, target: Target, tail: bool) -> None:
    hw_, hc = _summary(hand)
    cw, cc = _summary(comp)
    # the writeback is in flight until a wait on its counter: a wait before it does not cover it
    ha, ca = _after_writeback(hand), _after_writeback(comp)
    if ha is not None and ca is not None:
        for n in sorted(ha - ca):
            seg.differences.append((f"missing-wait-after-wb:{n}",
                                    f"hand waits {n} after the L2 writeback, compiled code does "
                                    "not"))
    for n in sorted(set(hw_) | set(cw)):
        if n not in cw:
            seg.differences.append((f"missing-wait:{n}", f"hand waits {n}({hw_[n]}), "
                                                         "compiled code does not"))
        elif n not in hw_:
            if not tail:         # the tail's waits are the output stores' data dependences
                seg.differences.append((f"extra-wait:{n}", f"compiled code waits {n}({cw[n]})"))
        elif hw_[n] != cw[n]:
            kind = "weaker-wait" if cw[n] > hw_[n] else "stronger-wait"
            seg.differences.append((f"{kind}:{n}", f"hand {n}({hw_[n]}), compiled {n}({cw[n]})"))
    for op in sorted(set(hc) | set(cc)):
        a, b = hc.count(op), cc.count(op)
        if a > b:
            seg.differences.append((f"missing-cache:{op}", f"hand {op} x{a}, compiled x{b}"))
        elif b > a:
            seg.differences.append((f"extra-cache:{op}", f"compiled {op} x{b}, hand x{a}"))
    for ev in comp_events:
        if ev.kind == "cache" and not translate.cache_uops(target, ev):
            name = " ".join([ev.op, *ev.mods])
            seg.differences.append((f"inert-cache:{name}",
                                    f"{name}: nothing the simulator models"))


def _compare_anchor(seg: Segment, hu, cu, ev) -> None:
    if hu[0] != cu[0] and not (hu[0] == GLD and ev is not None and ev.kind == "sload"):
        seg.differences.append((f"op:{NAMES[hu[0]]}->{NAMES[cu[0]]}",
                                f"hand {_uop_text(hu)}, compiled {_uop_text(cu)}"))
        return
    if ev is not None and ev.kind == "sload":
        seg.differences.append(("scalar-load", "a plain load compiled to s_load (scalar cache)"))
        return
    if hu[0] not in (GLD, GST, GRMW, GCAS, DMA):
        return
    same = hu[3] == cu[3] if hu[0] != GST else (hu[3] == 2) == (cu[3] == 2)   # store: sys?
    if not same:
        seg.differences.append((f"level:{NAMES[hu[0]]}:{LEVELS[hu[3]]}->{LEVELS[cu[3]]}",
                                f"hand {_uop_text(hu)}, compiled {_uop_text(cu)}"))


def check(test, target: Target, b: Build | None = None) -> tuple[Build, list[ThreadCheck]]:
    """Compare ``test``'s compiled code for ``target`` with the hand lowering."""
    if b is None:
        b = build(test, target)
        machine(b)
    profile = with_options(PROFILES[target.profile],
                           (["tgsplit"] if target.tgsplit else []) + [f"mtype={target.mtype}"])
    hand = lower(test, profile)
    out = []
    for th in b.threads:
        code = test.threads[th.tid].code
        # hand side: effective micro-ops, each with its litmus instruction
        hl = _effective(hand.listing[th.tid], False)
        h_anchor = [(i, p) for p, (i, u) in enumerate(hl) if u[0] in ANCHOR_UOPS]
        # compiled side: effective rows per event position
        flat = []
        for p, ev in enumerate(th.events):
            for r in _event_rows(ev, th.rows):
                flat.append((p, r))
        rows_of: dict[int, list] = {}
        for p, r in _effective(flat, True):
            rows_of.setdefault(p, []).append(r)
        matched, problems = align.match(test, th.tid, th.events, b.source)
        c_anchor = sorted((p, i) for p, i in matched.items())
        probs = [("unmatched", x) for x in problems]
        if [i for _, i in c_anchor] != sorted(i for _, i in c_anchor):
            probs.append(("order", "the compiled code performs the accesses in another order: "
                          + ", ".join(format_instr(code[i]) for _, i in c_anchor)))
        if probs or len(c_anchor) != len(h_anchor):
            out.append(ThreadCheck(th.tid, [Segment("(whole thread)",
                                                    [_uop_text(u) for _, u in hl],
                                                    [th.kernel.code[e.index].text
                                                     for e in th.events])], probs))
            continue
        segs = []
        hp, cp = 0, 0
        for k in range(len(h_anchor) + 1):
            last = k == len(h_anchor)
            h_end = len(hl) if last else h_anchor[k][1]
            c_end = len(th.events) if last else c_anchor[k][0]
            gap_h = [u for _, u in hl[hp:h_end]]
            gap_ev = [e for e in th.events[cp:c_end]
                      if not (e.addr is not None and e.addr >= b.source.out_base)]
            gap_c = [r for p in range(cp, c_end) for r in rows_of.get(p, [])
                     if r[0] not in ANCHOR_UOPS]
            label = "(end)" if last else format_instr(code[h_anchor[k][0]])
            seg = Segment(label, [_uop_text(u) for u in gap_h],
                          [th.kernel.code[e.index].text for e in gap_ev])
            _compare_gap(seg, gap_h, gap_c, gap_ev, target, last)
            if not last:
                hu = hl[h_anchor[k][1]][1]
                ev = th.events[c_anchor[k][0]]
                cu = [r for r in rows_of.get(c_anchor[k][0], []) if r[0] in ANCHOR_UOPS][0]
                seg.hand_anchor = _uop_text(hu)
                seg.compiled_anchor = th.kernel.code[ev.index].text
                _compare_anchor(seg, hu, cu, ev)
                hp, cp = h_end + 1, c_end + 1
            segs.append(seg)
        out.append(ThreadCheck(th.tid, segs, []))
    return b, out


def _event_rows(ev, rows: list) -> list:
    """The micro-op rows an event produced (rows are keyed by instruction index; ``s_barrier``
    gives two events, arrive then wait, and two rows)."""
    mine = [r for i, r in rows if i == ev.index]
    if ev.kind == "barrier" and len(mine) == 2:
        return [mine[0]] if ev.op == "arrive" else [mine[1]]
    return mine


def differences(checks: list[ThreadCheck]) -> list[tuple[int, str, str, str]]:
    """(thread, segment label, kind, detail) of every difference."""
    out = []
    for tc in checks:
        for kind, detail in tc.problems:
            out.append((tc.tid, "(whole thread)", kind, detail))
        for s in tc.segments:
            for kind, detail in s.differences:
                out.append((tc.tid, s.label, kind, detail))
    return out


def side_by_side(b: Build, checks: list[ThreadCheck]) -> str:
    """Text: per thread, each segment's litmus instruction, hand micro-ops and compiled code."""
    t = b.target
    lines = [f"// {b.test.name}: clang-22 ({b.compiled.version}) for {t.label()} next to the hand "
             f"lowering of hw/sim/lower.py (profile {t.profile})",
             f"// {b.compiled.clang_cmd}", ""]
    for tc in checks:
        lines.append(f"P{tc.tid}")
        w1 = max([len(s.label) for s in tc.segments] + [6])
        w2 = max([len(x) for s in tc.segments for x in s.hand + [s.hand_anchor]] + [14])
        lines.append(f"  {'litmus':<{w1}} | {'hand lowering':<{w2}} | compiled")
        for s in tc.segments:
            n = max(len(s.hand), len(s.compiled))
            for j in range(n):
                h = s.hand[j] if j < len(s.hand) else ""
                c = s.compiled[j] if j < len(s.compiled) else ""
                lines.append(f"  {'':<{w1}} | {h:<{w2}} | {c}".rstrip())
            if s.hand_anchor or s.compiled_anchor:
                lines.append(f"  {s.label:<{w1}} | {s.hand_anchor:<{w2}} | {s.compiled_anchor}")
            for kind, detail in s.differences:
                lines.append(f"  {'':<{w1}}   ^ {kind}: {detail}")
        for kind, detail in tc.problems:
            lines.append(f"  ! {kind}: {detail}")
        lines.append("")
    return "\n".join(lines)

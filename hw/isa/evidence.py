"""Compiled code as evidence: annotated per-thread listings and a finding's Markdown section.

For each thread: the instructions it executed (its path through its workgroup's kernel), the
ones that act on memory marked ``>>`` with what they do in the simulator and the litmus
instruction they carry, mutant edits marked ``!!``. A finding gets the OpenCL source, the clang
and objdump command lines, clang's version and these listings, so that it can be pasted into an
LLVM bug report.
"""

from __future__ import annotations

from litmus import format_instr

from ..sim.uops import INV1, INV2, WB2
from . import align, translate
from .machine import Build, ThreadCode
from .source import GLOBAL_STRIDE, LDS_STRIDE

LEVEL = {0: "may hit L1/L0", 1: "bypasses L1/L0", 2: "system level"}


def _loc(b: Build, ev) -> str:
    src = b.source
    if ev.kind in ("lload", "lstore", "lrmw", "lcas"):
        k, r = divmod(ev.addr, 4 * LDS_STRIDE)
        return src.lds[k] if not r and k < len(src.lds) else f"LDS+{ev.addr}"
    if ev.addr is not None and ev.addr >= src.out_base:
        j = (ev.addr - src.out_base) // (4 * GLOBAL_STRIDE)
        if j < len(src.outputs):
            t, r = src.outputs[j]
            return f"output of P{t}:{r}"
    k, r = divmod(ev.addr, 4 * GLOBAL_STRIDE)
    return src.globals[k] if not r and k < len(src.globals) else f"m+{ev.addr}"


def describe(b: Build, ev) -> str:
    """What an event does, in the simulator's terms."""
    k = ev.kind
    t = b.target
    if k in ("load", "store", "rmw", "cas", "dma"):
        where = _loc(b, ev)
        lv = LEVEL[translate.level(t, ev)]
        if where.startswith("output"):
            return f"store {where}"
        if k == "load":
            return f"load {where} ({lv})"
        if k == "store":
            return f"store {where} = {ev.value} ({lv})"
        if k == "rmw":
            return f"atomic {ev.op} {where}, {ev.value} ({lv})"
        if k == "cas":
            return f"atomic cmpswap {where}: {ev.expected} -> {ev.value} ({lv})"
        return f"DMA {where} -> LDS ({lv})"
    if k in ("pload", "pstore"):
        return f"private memory {'load' if k == 'pload' else 'store'} (stack, -O0)"
    if k == "sload":
        return f"scalar load {_loc(b, ev)} (scalar cache)"
    if k == "lload":
        return f"LDS load {_loc(b, ev)}"
    if k == "lstore":
        return f"LDS store {_loc(b, ev)} = {ev.value}"
    if k == "lrmw":
        return f"LDS atomic {ev.op} {_loc(b, ev)}, {ev.value}"
    if k == "lcas":
        return f"LDS cmpswap {_loc(b, ev)}: {ev.expected} -> {ev.value}"
    if k == "wait":
        return "wait " + " ".join(f"{n}({c})" for n, c in ev.waits)
    if k == "cache":
        us = translate.cache_uops(t, ev)
        names = {INV1: "invalidate L1/L0", INV2: "write back + invalidate NC L2",
                 WB2: "write back NC L2"}
        return "; ".join(names[u[0]] for u in us) or "no effect in the simulator (see docs/isa.md)"
    if k == "barrier":
        return f"barrier {ev.op} {ev.bar}"
    return k


def listing(b: Build, th: ThreadCode) -> list[str]:
    """The annotated listing of one thread: the instructions it executed, in kernel order."""
    test = b.test
    by_index: dict[int, list] = {}
    for ev in th.events:
        by_index.setdefault(ev.index, []).append(ev)
    matched, _ = align.match(test, th.tid, th.events, b.source)
    litmus_of = {th.events[pos].index: i for pos, i in matched.items()}
    edits = {}
    for e in th.edits:
        edits.setdefault(e.index, []).append(e.what)
    code = th.kernel.code
    rows = [ins for ins in code if ins.index in th.executed]
    width = max([len(ins.text) for ins in rows] + [20])
    out = [f"P{th.tid} (kernel {th.kernel.name}, work-item {th.lid}; {len(th.executed)} of "
           f"{len(code)} instructions executed)"]
    for ins in rows:
        evs = by_index.get(ins.index, [])
        note = "; ".join(describe(b, ev) for ev in evs)
        mark = ">>" if evs else "  "
        if ins.index in edits:
            mark = "!!"
            note = (note + "; " if note else "") + f"[{b.mutant}: {', '.join(edits[ins.index])}]"
        if ins.index in litmus_of:
            note += f"  <- {format_instr(test.threads[th.tid].code[litmus_of[ins.index]])}"
        out.append(f"  {mark} {ins.text:<{width}}  {note}".rstrip())
    return out


def markdown(b: Build) -> str:
    """The finding section: source, commands, version, annotated disassembly per thread."""
    c = b.compiled
    lines = [f"## Compiled code (`isa:{b.target.label()}`"
             + (f", mutant `{b.mutant}`" if b.mutant else "") + ")", "",
             f"- compiler: {c.version}",
             f"- compile: `{c.clang_cmd}`",
             f"- disassemble: `{c.objdump_cmd}`",
             "- `>>` marks the instructions that act on memory (what they do in the simulator, "
             "and the litmus instruction they carry)"
             + ("; `!!` the instructions the mutant edited" if b.mutant else ""),
             "", "### OpenCL source (`test.cl`)", "", "```c", c.source.rstrip("\n"), "```", ""]
    for th in b.threads:
        lines += [f"### P{th.tid}", "", "```"]
        lines += listing(b, th)
        lines += ["```", ""]
    return "\n".join(lines) + "\n"

"""Printer for the AMDGPU dialect: the canonical layout `scopefuzz fmt` shows.

Defaults are left out (``ld.atom`` for ``ld.atom.rlx.sys``), modifiers come in a fixed order
(access, rmw op, order(s), scope, noav) and the thread table's columns are aligned. Parsing the
printed text gives back an equal :class:`~litmus.ir.Test`.
"""

from __future__ import annotations

from ...dialect import PrintError
from ...ir import BASES, Instr, Test, cas_default_fail
from ...printing import format_condition, format_table
from ...scopes import Placement


def format_instr(ins: Instr) -> str:
    """One instruction in its shortest canonical spelling."""
    b = ins.base
    if b in ("ld", "st"):
        mods = []
        if ins.access != "plain":
            mods.append(ins.access)
        if ins.access == "atom" and ins.order != "rlx":
            mods.append(ins.order)
        if ins.access in ("atom", "vis", "av") and ins.scope != "sys":
            mods.append(ins.scope)
        if ins.noav:
            mods.append("noav")
        mn = ".".join([b] + mods)
        if b == "ld":
            return f"{mn} {ins.reg}, {ins.loc}"
        return f"{mn} {ins.loc}, {ins.args[0]}"
    if b == "rmw":
        mods = [ins.op]
        if ins.order != "rlx":
            mods.append(ins.order)
        if ins.scope != "sys":
            mods.append(ins.scope)
        if ins.noav:
            mods.append("noav")
        return f"{'.'.join([b] + mods)} {ins.reg}, {ins.loc}, {ins.args[0]}"
    if b == "cas":
        mods = []
        if ins.fail_order != cas_default_fail(ins.order):
            mods += [ins.order, ins.fail_order]
        elif ins.order != "rlx":
            mods.append(ins.order)
        if ins.scope != "sys":
            mods.append(ins.scope)
        if ins.noav:
            mods.append("noav")
        return f"{'.'.join([b] + mods)} {ins.reg}, {ins.loc}, {ins.args[0]}, {ins.args[1]}"
    if b == "fence":
        mods = [ins.order]
        if ins.scope != "sys":
            mods.append(ins.scope)
        if ins.noav:
            mods.append("noav")
        return ".".join([b] + mods)
    if b == "async.ld":
        return f"async.ld {ins.lds}, {ins.loc}"
    if b in ("async.mark", "barrier", "bar.leave"):
        return b
    return f"{b} {', '.join(str(a) for a in ins.args)}"


def format_placement(tid: int, p: Placement) -> str:
    parts = []
    if p.wave is not None:
        parts.append(f"wave {p.wave}")
    if p.wg is not None:
        parts.append(f"wg {p.wg}")
    if p.cluster != 0:
        parts.append(f"cluster {p.cluster}")
    if p.agent != 0:
        parts.append(f"agent {p.agent}")
    return f"P{tid}" + (f"@{', '.join(parts)}" if parts else "")


def format_amdgpu(test: Test) -> str:
    """The whole test in canonical layout (header, docs, init block, aligned table, condition).

    Only what the AMDGPU front end reads is printed: an instruction of another dialect's program
    model (a C/Vulkan control-flow row, dialect attrs) is refused with :class:`PrintError`
    naming it, rather than printed as something that reads back as another test."""
    for tid, i, ins in test.instructions():
        if ins.base not in BASES or ins.attrs:
            what = ins.base + (f" [{' '.join(ins.attrs)}]" if ins.attrs else "")
            raise PrintError(f"P{tid} row {i}: {what} has no AMDGPU spelling")
    lines = [f"AMDGPU {test.name}"]
    for d in test.doc:
        lines.append(f'"{d}"')
    init = []
    glob = " ".join(f"{loc.name} = {loc.init};" for loc in test.globals)
    if glob:
        init.append("  " + glob)
    lds = " ".join(f"lds {loc.name} = {loc.init};" for loc in test.lds_locations)
    if lds:
        init.append("  " + lds)
    regs = " ".join(f"P{t}:{r} = {v};" for t, r, v in test.reg_init)
    if regs:
        init.append("  " + regs)
    lines.append("{")
    lines.extend(init)
    lines.append("}")
    n = len(test.threads)
    rows = max((len(th.code) for th in test.threads), default=0)
    table = [[format_placement(t, th.placement) for t, th in enumerate(test.threads)]]
    for i in range(rows):
        table.append([format_instr(th.code[i]) if i < len(th.code) else ""
                      for th in test.threads])
    lines.extend(format_table(table))
    lines.append(format_condition(test.condition))
    return "\n".join(lines) + "\n"



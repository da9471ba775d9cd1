"""Printer for the AMDGPU dialect: the canonical layout `scopefuzz fmt` shows.

Defaults are left out (``ld.atom`` for ``ld.atom.rlx.sys``), modifiers come in a fixed order
(access, rmw op, order(s), scope, noav) and the thread table's columns are aligned. Parsing the
printed text gives back an equal :class:`~litmus.ir.Test`.
"""

from __future__ import annotations

from .ir import And, Atom, Condition, Const, Instr, Not, Or, Prop, Test, cas_default_fail
from .scopes import Placement


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


def format_prop(prop: Prop, parent: str = "", atom=None) -> str:
    """A proposition as text; ``atom(a)``, when given, may spell an atom its own way (None:
    the usual ``P1:r0 == 1``)."""
    if isinstance(prop, Atom):
        own = atom(prop) if atom is not None else None
        if own is not None:
            return own
        who = prop.name if prop.thread is None else f"P{prop.thread}:{prop.name}"
        return f"{who} {prop.op} {prop.value}"
    if isinstance(prop, Const):
        return "true" if prop.value else "false"
    if isinstance(prop, Not):
        inner = format_prop(prop.arg, "not", atom)
        return f"~{inner}" if isinstance(prop.arg, (Not, Const)) else f"~({inner})"
    if isinstance(prop, And):
        text = " /\\ ".join(format_prop(a, "and", atom) for a in prop.args)
        return f"({text})" if parent in ("and", "or", "not") else text
    if isinstance(prop, Or):
        text = " \\/ ".join(format_prop(a, "or", atom) for a in prop.args)
        return f"({text})" if parent in ("and", "or", "not") else text
    raise TypeError(prop)


def format_condition(cond: Condition) -> str:
    return f"{cond.quantifier} ({format_prop(cond.prop, 'top')})"


def format_test(test: Test) -> str:
    """The whole test in canonical layout (header, docs, init block, aligned table, condition);
    a PTX- or TILEIR-dialect test in its own dialect (:mod:`litmus.print_ptx`,
    :mod:`litmus.print_tileir`)."""
    if test.dialect == "PTX":
        from .print_ptx import format_ptx
        return format_ptx(test)
    if test.dialect == "TILEIR":
        from .print_tileir import format_tileir
        return format_tileir(test)
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


def format_table(table: list[list[str]]) -> list[str]:
    """The thread table's rows (cells per row, the placements first) with aligned columns."""
    n = len(table[0])
    widths = [max(len(row[c]) for row in table) for c in range(n)]
    return [" " + " | ".join(row[c].ljust(widths[c]) for c in range(n)) + " ;" for row in table]

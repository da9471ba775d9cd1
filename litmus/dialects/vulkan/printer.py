"""Printer for the Vulkan dialect: a :class:`~litmus.ir.Test` of :mod:`.parse` back as text.

The layout of Dat3M's VULKAN suite (``P0@sg 0, wg 0, qf 0`` header row, aligned columns) with
every instruction in the spelling the front end reads, so that parsing the printed text gives
back an equal test: the storage class and semantics flags come back from ``attrs``, aliases are
declared again from the accesses that use them (``vloc=``), the ``ssw`` pairs and the ``filter``
from ``Test.meta``, and a comparison of two registers in the condition is printed as written
(the front end's ``_cN`` register and its ``assign`` row are dropped).
"""

from __future__ import annotations

from ...cfg import parse_expr_text
from ...dat3m_table import BRANCHES
from ...dialect import PrintError
from ...ir import Atom, Instr, Test
from ...printing import format_prop, format_table
from .parse import LOCAL_OPS

_LOCAL = {v: k for k, v in LOCAL_OPS.items()}
_BRANCH = {v: k for k, v in BRANCHES.items()}


def _flags(ins: Instr) -> list[str]:
    """Storage class, then semantics flags, as ``attrs`` hold them."""
    f = ins.fields
    return ([f.storage] if f.storage else []) + list(f.sems)


def _where(ins: Instr) -> str:
    """The location as the file named it: the alias when the access went through one."""
    return ins.fields.vloc or ins.loc


def _operand(ins: Instr, k: int) -> str:
    val = ins.fields.val
    return val if val is not None else str(ins.args[k])


def _access(ins: Instr) -> str:
    mods = [ins.base]
    if ins.access != "plain":
        mods.append(ins.access)
    elif ins.fields.has("nonpriv"):
        mods.append("nonpriv")          # implied by atom/av/vis, written only on plain accesses
    if ins.base == "rmw" and ins.order != "rlx":
        mods.append(ins.order)
    elif ins.base != "rmw" and ins.order is not None:
        mods.append(ins.order)
    if ins.scope is not None:
        mods.append(ins.scope)
    if ins.base == "rmw" and ins.op != "xchg":
        mods.append(ins.op)
    return ".".join(mods + _flags(ins))


def format_vulkan_instr(ins: Instr) -> str | None:
    """One instruction in the Vulkan dialect (None: not printed, e.g. the condition's ``_cN``
    and the ``_meta`` label); PrintError for a row the dialect cannot spell."""
    b, f = ins.base, ins.fields
    if b == "ld":
        return f"{_access(ins)} {ins.reg}, {_where(ins)}"
    if b == "st":
        return f"{_access(ins)} {_where(ins)}, {_operand(ins, 0)}"
    if b == "rmw":
        return f"{_access(ins)} {ins.reg}, {_where(ins)}, {_operand(ins, 0)}"
    if b == "fence":
        return ".".join(["membar", ins.order, ins.scope] + _flags(ins))
    if b == "cbar":
        head = ".".join(["cbar"] + ([ins.order] if ins.order else []) + [ins.scope] + _flags(ins))
        ops = [str(v) for v in (f.inst, f.barrier, f.quorum) if v is not None]
        return f"{head} {', '.join(ops)}"
    if b in ("avdevice", "visdevice"):
        return b
    if b == "label":
        lab = f.label
        return None if lab == "_meta" else f"{lab}:"
    if b == "goto":
        return f"goto {f.target}"
    if b == "branch":
        op, x, y = parse_expr_text(f.cond)
        return f"{_BRANCH[op]} {x}, {y}, {f.target}"
    if b == "assign":
        if ins.reg.startswith("_c"):
            return None
        e = parse_expr_text(f.val)
        if isinstance(e, tuple) and len(e) == 3 and e[0] in _LOCAL:
            return f"{_LOCAL[e[0]]} {ins.reg}, {e[1]}, {e[2]}"
    raise PrintError(f"{b} {' '.join(ins.attrs)} has no Vulkan spelling".replace("  ", " "))


def _aliases(test: Test) -> list[str]:
    """``alias aliases location;`` for every alias an access used, in order of first use."""
    out: dict[str, str] = {}
    for _, _, ins in test.instructions():
        v = ins.fields.vloc
        if v is not None:
            out.setdefault(v, ins.loc)
    return [f"{a} aliases {loc};" for a, loc in out.items()]


def format_vulkan(test: Test) -> str:
    """The whole test in the Vulkan dialect (module doc), under the header word it was read
    with (``Vulkan`` or ``VULKAN``)."""
    lines = [f"{test.dialect} {test.name}"]
    lines += ['"' + d.replace('"', "'") + '"' for d in test.doc]
    init = [f"P{t}:{r}={v};" for t, r, v in test.reg_init] + \
        [f"{loc.name}={loc.init};" for loc in test.locations] + _aliases(test)
    lines.append("{ " + " ".join(init) + " }")
    meta = dict(test.meta)
    if meta.get("ssw"):
        lines.append("{ " + " ".join(f"ssw {a} {b};" for a, b in meta["ssw"]) + " }")
    cmp = {}                            # (thread, _cN) -> the comparison it stands for
    cols = []
    for tid, th in enumerate(test.threads):
        col = []
        for i, ins in enumerate(th.code):
            if ins.base == "assign" and ins.reg.startswith("_c"):
                op, a, b = parse_expr_text(ins.fields.val)
                cmp[(tid, ins.reg)] = f"P{tid}:{a} {op} P{tid}:{b}"
            try:
                text = format_vulkan_instr(ins)
            except PrintError as e:
                raise PrintError(f"test {test.name!r}: P{tid} row {i}: {e}") from None
            if text is not None:
                col.append(text)
        cols.append(col)
    table = [[f"P{t}@sg {th.placement.wave}, wg {th.placement.wg}, qf {th.placement.agent}"
              for t, th in enumerate(test.threads)]]
    for i in range(max((len(c) for c in cols), default=0)):
        table.append([c[i] if i < len(c) else "" for c in cols])
    lines += format_table(table)

    def atom(a: Atom) -> str | None:
        return cmp.get((a.thread, a.name)) if a.value == 1 and a.op == "==" else None

    if meta.get("filter") is not None:
        lines.append(f"filter ({format_prop(meta['filter'], 'top', atom)})")
    lines.append(f"{test.condition.quantifier} ({format_prop(test.condition.prop, 'top', atom)})")
    return "\n".join(lines) + "\n"

"""Printer for the PTX dialect: a :class:`~litmus.ir.Test` of :mod:`litmus.parse_ptx` back as text.

The layout of Dat3M's PTX suite (``P0@cta 0,gpu 0`` header row, aligned columns, ``exists (...)``)
with the instructions in the spellings the front end reads: parsing the printed text gives back
an equal test. Alias declarations are rebuilt from the accesses that use them (``via=``); a
thread whose CTA the file left out gets a CTA id no other thread has; a comparison of two
registers in the condition is printed as written (the front end's ``_cN`` register is dropped).
"""

from __future__ import annotations

from ...cfg import parse_expr_text
from ...dat3m_table import BRANCHES
from ...ir import Atom, Instr, Test
from .parse import LOCAL_OPS, MEMBAR, PTX_SCOPE, RMW_OPS, SEMS
from ...printing import format_prop

_SEM = {v: k for k, v in SEMS.items() if v}
_OP = {v: k for k, v in RMW_OPS.items()}
_LOCAL = {v: k for k, v in LOCAL_OPS.items()}
_BRANCH = {v: k for k, v in BRANCHES.items()}
_MEMBAR = {v: k for k, v in MEMBAR.items()}
_LOAD = {"generic": "ld", "texture": "tld", "surface": "suld", "constant": "cold"}
_STORE = {"generic": "st", "surface": "sust"}


def _name(ins: Instr) -> str:
    via = ins.fields.via
    return via[0] if via else ins.loc


def _value(ins: Instr, key: str, k: int) -> str:
    text = getattr(ins.fields, key)
    return text if text is not None else str(ins.args[k])


def _sem_scope(ins: Instr) -> str:
    return f".{_SEM[ins.order]}.{PTX_SCOPE[ins.scope]}"


def format_ptx_instr(ins: Instr) -> str | None:
    """One instruction in the PTX dialect (None: not printed, e.g. the condition's ``_cN``)."""
    b = ins.base
    f = ins.fields
    proxy = f.proxy or "generic"
    if b in ("ld", "st"):
        head = (_LOAD if b == "ld" else _STORE)[proxy]
        if f.has("volatile"):
            head += ".volatile"
        elif ins.access == "plain":
            head += ".weak"
        else:
            head += _sem_scope(ins)
        if b == "ld":
            return f"{head} {ins.reg}, {_name(ins)}"
        return f"{head} {_name(ins)}, {_value(ins, 'val', 0)}"
    if b == "rmw":
        red = f.has("red")
        head = ("sured" if red else "suatom") if proxy == "surface" else ("red" if red else "atom")
        head += f"{_sem_scope(ins)}.{_OP[ins.op]}"
        if red:
            return f"{head} {_name(ins)}, {_value(ins, 'val', 0)}"
        return f"{head} {ins.reg}, {_name(ins)}, {_value(ins, 'val', 0)}"
    if b == "cas":
        head = ("suatom" if proxy == "surface" else "atom") + _sem_scope(ins) + ".cas"
        return f"{head} {ins.reg}, {_name(ins)}, {_value(ins, 'exp', 0)}, {_value(ins, 'val', 1)}"
    if b == "fence":
        kind = f.proxy
        if kind is not None:
            return f"fence.proxy.{kind}"
        if f.has("membar"):
            return f"membar.{_MEMBAR[ins.scope]}"
        return f"fence{_sem_scope(ins)}"
    if b == "cbar":
        ops = [str(v) for v in (f.inst, f.barrier, f.quorum) if v is not None]
        mode = "arrive" if f.has("arrive") else "sync"
        return f"bar.cta.{mode} {', '.join(ops)}"
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
        if isinstance(e, tuple):
            return f"{_LOCAL[e[0]]} {ins.reg}, {e[1]}, {e[2]}"
        return f"ld {ins.reg}, {e}"
    raise ValueError(f"instruction base {b!r} has no PTX spelling")


def _aliases(test: Test) -> list[str]:
    """Declarations of the aliases the accesses use (generic ones first)."""
    generic: dict[str, str] = {}
    views: dict[str, tuple[str, str]] = {}
    for _, _, ins in test.instructions():
        via = ins.fields.via
        if via is None:
            continue
        name, kind = via
        address = ins.fields.vloc or ins.loc
        if kind == "generic":
            generic[name] = ins.loc
        else:
            views[name] = (kind, address)
            if address != ins.loc:
                generic[address] = ins.loc
    return ([f"{n} @ generic aliases {loc};" for n, loc in generic.items()] +
            [f"{n} @ {kind} aliases {a};" for n, (kind, a) in views.items()])


def _placements(test: Test) -> list[str]:
    """``P0@cta C,gpu G`` cells; a left-out CTA gets an id of its own."""
    used = {(p.agent, p.cluster, p.wg) for p in (th.placement for th in test.threads)}
    out = []
    for tid, th in enumerate(test.threads):
        p = th.placement
        cta = p.wg
        if cta is None:
            cta = 0
            while (p.agent, p.cluster, cta) in used:
                cta += 1
            used.add((p.agent, p.cluster, cta))
        cluster = f"cluster {p.cluster}," if p.cluster else ""
        out.append(f"P{tid}@cta {cta},{cluster}gpu {p.agent}")
    return out


def format_ptx(test: Test) -> str:
    """The whole test in the PTX dialect (module doc)."""
    lines = [f"PTX {test.name}"]
    lines += ['"' + d.replace('"', "'") + '"' for d in test.doc]   # a quote would end it
    init = [f"{loc.name}={loc.init};" for loc in test.locations] + _aliases(test) + \
        [f"P{t}:{r}={v};" for t, r, v in test.reg_init]
    lines += ["{", *init, "}"]
    cmp = {}                            # (thread, _cN) -> the comparison it stands for
    cols = []
    for tid, th in enumerate(test.threads):
        col = []
        for ins in th.code:
            if ins.base == "assign" and ins.reg.startswith("_c"):
                op, a, b = parse_expr_text(ins.fields.val)
                cmp[(tid, ins.reg)] = f"P{tid}:{a} {op} P{tid}:{b}"
            text = format_ptx_instr(ins)
            if text is not None:
                col.append(text)
        cols.append(col)
    table = [_placements(test)]
    for i in range(max((len(c) for c in cols), default=0)):
        table.append([c[i] if i < len(c) else "" for c in cols])
    widths = [max(len(row[c]) for row in table) for c in range(len(cols))]
    for row in table:
        lines.append(" " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " ;")

    def atom(a: Atom) -> str | None:
        return cmp.get((a.thread, a.name)) if a.value == 1 and a.op == "==" else None

    filt = dict(test.meta).get("filter")
    if filt is not None:
        lines.append(f"filter ({format_prop(filt, 'top', atom)})")
    lines.append(f"{test.condition.quantifier} ({format_prop(test.condition.prop, 'top', atom)})")
    return "\n".join(lines) + "\n"

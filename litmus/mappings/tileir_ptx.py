"""Tile IR -> PTX: the PTX litmus program a compiler could emit for a TILEIR test.

The mapping (docs/tileir.md "Lowering to PTX"; ../shared/notes/tileir-ptx.md 2.1):

- one PTX thread per tile block, placed ``P<n>@cta B,gpu D`` for ``block B, device D`` (a block
  left unplaced gets a CTA of its own);
- each block's ops in source order and, inside a tile op, its active lanes in lane order: one PTX
  instruction per element. Token order is inside program order (tokens flow forward in SSA), so
  the PTX program orders everything the Tile IR program orders by tokens, and more: every pair
  of a block's accesses, lanes of one op included, is in PTX program order (stronger);
- ``make_token`` / ``join_tokens`` emit nothing;
- orderings map to the PTX ``.sem`` of the same name (``weak`` -> ``.weak``), scopes
  ``tile_block`` -> ``.cta``, ``device`` -> ``.gpu``, ``sys`` -> ``.sys`` (an assumption: NVIDIA
  documents no scope mapping, docs/tileir.md);
- ``load`` -> ``ld``, ``store`` -> ``st``, ``atomic_rmw MODE`` -> ``atom.MODE`` (``xchg`` ->
  ``exch``), ``atomic_cas`` -> ``atom.cas`` (a failed PTX cas writes back what it read);
- element ``x[i]`` becomes the PTX location ``x_i``; registers keep their names; masked-out lanes
  emit nothing (their register keeps its initial value in both programs).

Outcomes correspond one to one: the same registers, and each location's final value under its
PTX name (:func:`ptx_outcome`).
"""

from __future__ import annotations

import re

from ..dialect import find
from ..dialects.tileir import DIALECT as TILEIR
from ..dialects.tileir.ops import TileOp
from ..ir import And, Atom, Condition, Const, Not, Or, Prop, Test
from ..printing import format_condition, format_table

SCOPE = {"tile_block": "cta", "device": "gpu", "sys": "sys"}
RMW = {"add": "add", "and": "and", "or": "or", "xor": "xor", "max": "max", "min": "min",
       "xchg": "exch"}
_ELEMENT = re.compile(r"(.+)\[([0-9]+)\]\Z")


class LoweringError(ValueError):
    """A Tile IR program the mapping cannot express (one line)."""


def location_names(test: Test) -> dict[str, str]:
    """Tile IR location name -> PTX location name (``x[2]`` -> ``x_2``)."""
    out = {}
    for loc in test.locations:
        m = _ELEMENT.match(loc.name)
        out[loc.name] = f"{m.group(1)}_{m.group(2)}" if m else loc.name
    taken: dict[str, str] = {}
    for src, dst in out.items():
        if dst in taken:
            raise LoweringError(f"{test.name}: locations {taken[dst]} and {src} both map to the "
                                f"PTX name {dst}")
        taken[dst] = src
    return out


def lower_op(op: TileOp, names: dict[str, str]) -> list[str]:
    """The PTX instructions of one Tile IR op, one per active lane, in lane order."""
    if not op.is_memory_access:
        return []
    mods = [op.sem] + ([SCOPE[op.scope]] if op.scope else [])
    out = []
    for lane in op.lanes():
        if not op.active(lane):
            continue
        x = names[op.addrs[lane]]
        if op.opname == "load":
            out.append(f"ld.{'.'.join(mods)} {op.regs[lane]}, {x}")
        elif op.opname == "store":
            out.append(f"st.{'.'.join(mods)} {x}, {op.vals[lane]}")
        elif op.opname == "atomic_rmw":
            out.append(f"atom.{'.'.join(mods)}.{RMW[op.op]} {op.regs[lane]}, {x}, {op.vals[lane]}")
        else:
            out.append(f"atom.{'.'.join(mods)}.cas {op.regs[lane]}, {x}, {op.cmps[lane]}, "
                       f"{op.vals[lane]}")
    return out


def _rename(prop: Prop, names: dict[str, str]) -> Prop:
    if isinstance(prop, Atom):
        return prop if prop.thread is not None else Atom(None, names[prop.name], prop.op, prop.value)
    if isinstance(prop, Not):
        return Not(_rename(prop.arg, names))
    if isinstance(prop, (And, Or)):
        return type(prop)(tuple(_rename(a, names) for a in prop.args))
    assert isinstance(prop, Const)
    return prop


def lower(test: Test) -> str:
    """The PTX litmus test (Dat3M's PTX dialect) of a TILEIR test, as text."""
    if find(test.dialect) is not TILEIR:
        raise LoweringError(f"{test.name}: the Tile IR -> PTX mapping reads TILEIR tests, not "
                            f"{test.dialect}")
    names = location_names(test)
    lines = [f"PTX {test.name}",
             f'"The PTX program a compiler could emit for the Tile IR test {test.name} '
             f'(litmus/mappings/tileir_ptx.py)."']
    init = [f"{names[loc.name]}={loc.init};" for loc in test.locations]
    init += [f"P{t}:{r}={v};" for t, r, v in test.reg_init]
    lines.append("{ " + " ".join(init) + " }")
    code = [[ins for op in th.code for ins in lower_op(op, names)] for th in test.threads]
    heads = []
    for tid, th in enumerate(test.threads):
        p = th.placement
        heads.append(f"P{tid}@" + (f"cta {p.wg},gpu {p.agent}" if p.wg is not None
                                   else f"gpu {p.agent}"))
    rows = max((len(c) for c in code), default=0)
    table = [heads] + [[c[i] if i < len(c) else "" for c in code] for i in range(rows)]
    lines += format_table(table)
    cond = test.condition
    lines.append(format_condition(Condition(cond.quantifier, _rename(cond.prop, names))))
    return "\n".join(lines) + "\n"


def ptx_outcome(test: Test, outcome: dict) -> dict:
    """A Tile IR outcome with its locations under their PTX names."""
    names = location_names(test)
    return {names.get(k, k): v for k, v in outcome.items()}

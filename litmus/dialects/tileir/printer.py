"""Printer for the ``TILEIR`` dialect (litmus/dialects/tileir/parse.py): parsing the text gives back an
equal :class:`~litmus.ir.Test`. Campaigns and reports print generated and minimized Tile IR
programs with it."""

from __future__ import annotations

import re

from ...ir import Test
from ...printing import format_condition, format_table
from .ops import HEADER, TileOp

_ELEMENT = re.compile(r"(.+)\[([0-9]+)\]\Z")


def _tile(items) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def format_op(op: TileOp) -> str:
    """One op in the dialect's spelling."""
    if op.opname == "make_token":
        return f"{op.token} = make_token"
    if op.opname == "join_tokens":
        return f"{op.token} = join_tokens {', '.join(op.token_in)}"
    head = f"{_tile(op.regs)}, {op.token}" if op.regs else op.token
    words = [op.opname] + ([op.op] if op.op else []) + [op.sem] + ([op.scope] if op.scope else [])
    tiles = [_tile(op.addrs)]
    if op.opname == "atomic_cas":
        tiles.append(_tile(op.cmps))
    if op.vals:
        tiles.append(_tile(op.vals))
    text = f"{head} = {' '.join(words)} {', '.join(tiles)}"
    if op.mask:
        text += f" mask {_tile(int(b) for b in op.mask)}"
    if op.token_in:
        text += f" token={op.token_in[0]}"
    return text


def _placement(tid: int, test: Test) -> str:
    p = test.threads[tid].placement
    parts = ([f"block {p.wg}"] if p.wg is not None else []) + [f"device {p.agent}"]
    return f"P{tid}@{', '.join(parts)}"


def _init(test: Test) -> str:
    """Declarations: runs of consecutive elements of one tile with one value as ``x[A..B] = v``."""
    out, k, locs = [], 0, test.locations
    while k < len(locs):
        m = _ELEMENT.match(locs[k].name)
        if not m:
            out.append(f"{locs[k].name} = {locs[k].init};")
            k += 1
            continue
        tile, lo, j = m.group(1), int(m.group(2)), k + 1
        while j < len(locs):
            mj = _ELEMENT.match(locs[j].name)
            if not (mj and mj.group(1) == tile and int(mj.group(2)) == lo + (j - k)
                    and locs[j].init == locs[k].init):
                break
            j += 1
        rng = f"{lo}" if j == k + 1 else f"{lo}..{lo + j - k - 1}"
        out.append(f"{tile}[{rng}] = {locs[k].init};")
        k = j
    out += [f"P{t}:{r} = {v};" for t, r, v in test.reg_init]
    return "{ " + " ".join(out) + " }"


def format_tileir(test: Test) -> str:
    """The whole test: header, docs, init block, aligned table, condition."""
    lines = [f"{HEADER} {test.name}"] + [f'"{d}"' for d in test.doc] + [_init(test)]
    rows = max((len(th.code) for th in test.threads), default=0)
    table = [[_placement(t, test) for t in range(len(test.threads))]]
    for i in range(rows):
        table.append([format_op(th.code[i]) if i < len(th.code) else "" for th in test.threads])
    lines += format_table(table)
    lines.append(format_condition(test.condition))
    return "\n".join(lines) + "\n"

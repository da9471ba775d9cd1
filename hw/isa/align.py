"""Which machine instruction carries which litmus instruction of a thread.

Memory accesses are matched per location in program order (the k-th access of the compiled
thread to location x is the k-th access of the litmus thread to x; a compiler that merged or
removed accesses leaves the location unmatched), barriers in order. Fences, waits and cache
maintenance have no location: they sit in the *gaps* between matched accesses, where the
cross-check compares them with the hand lowering.
"""

from __future__ import annotations

from .interp import Event
from .source import GLOBAL_STRIDE, LDS_STRIDE

ACCESS = ("load", "store", "rmw", "cas", "sload", "lload", "lstore", "lrmw", "lcas", "dma")


def litmus_keys(test, tid: int) -> list[tuple[int, tuple]]:
    """(litmus instruction index, key) of each access/barrier of thread ``tid``; key =
    ("mem", location) or ("bar", arrive|wait)."""
    out = []
    for i, ins in enumerate(test.threads[tid].code):
        if ins is None:
            continue
        if ins.base in ("ld", "st", "rmw", "cas"):
            out.append((i, ("mem", ins.loc)))
        elif ins.base == "async.ld":
            out.append((i, ("mem", ins.loc)))
        elif ins.base == "barrier":
            out += [(i, ("bar", "arrive")), (i, ("bar", "wait"))]
        elif ins.base == "bar.signal":
            out.append((i, ("bar", "arrive")))
        elif ins.base == "bar.wait":
            out.append((i, ("bar", "wait")))
    return out


def event_key(ev: Event, src) -> tuple | None:
    """The key of a compiled event (None for waits, cache ops and output stores)."""
    if ev.kind == "barrier":
        return ("bar", ev.op)
    if ev.kind in ("lload", "lstore", "lrmw", "lcas"):
        k, r = divmod(ev.addr, 4 * LDS_STRIDE)
        return ("mem", src.lds[k]) if not r and k < len(src.lds) else None
    if ev.kind in ACCESS:
        if ev.addr >= src.out_base:
            return None
        k, r = divmod(ev.addr, 4 * GLOBAL_STRIDE)
        return ("mem", src.globals[k]) if not r and k < len(src.globals) else None
    return None


def match(test, tid: int, events: list[Event], src) -> tuple[dict[int, int], list[str]]:
    """{event position: litmus instruction index} and the unmatched keys (described)."""
    want: dict[tuple, list[int]] = {}
    for i, key in litmus_keys(test, tid):
        want.setdefault(key, []).append(i)
    have: dict[tuple, list[int]] = {}
    for pos, ev in enumerate(events):
        key = event_key(ev, src)
        if key is not None:
            have.setdefault(key, []).append(pos)
    out, problems = {}, []
    for key in sorted(set(want) | set(have), key=str):
        a, b = want.get(key, []), have.get(key, [])
        what = key[1] if key[0] == "mem" else f"barrier {key[1]}"
        if len(a) != len(b):
            problems.append(f"{what}: {len(a)} in the test, {len(b)} in the compiled code")
            continue
        for i, pos in zip(a, b):
            out[pos] = i
    return out, problems

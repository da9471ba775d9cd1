"""Where each thread of a source test sits in the compiled kernel(s), and what the reader needs back.

One layout serves every front end, so the PTX reader (:mod:`hw.ptxc.read`) can undo it whatever
compiler produced the PTX:

- **Locations** are ``int`` words at distinct global addresses, one pointer parameter each, in
  the order the test declares them; the last parameter is ``out``, the output array.
- **Roles.** Thread ``Pk`` is role ``k``. In the *switch* layout one kernel ``litmus`` computes
  ``gid = tid.x + ctaid.x * ntid.x`` and switches on it; threads that the source places in one
  work-group / block share a CTA (consecutive ``tid.x``), every other thread has a CTA of its own.
  In the *per-role* layout kernel ``P<k>`` holds role k's code only.
- **Observed registers**: role k stores its j-th observed register to ``out[k * R + j]`` at the
  end (R = the most observed registers of any role), so the reader names ``out``'s words back.

A register is *observed* when its name is a PTX-dialect register (``r<N>``): the condition can
only name those (compiler temporaries of the C front end, ``_t<N>``, are locals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from litmus import Test

OBSERVABLE = re.compile(r"r[0-9]+\Z")
C_WORDS = {"int", "char", "long", "short", "void", "if", "else", "goto", "switch", "case", "for",
           "while", "do", "return", "break", "continue", "default", "out", "gid", "static",
           "const", "volatile", "unsigned", "signed", "float", "double", "struct", "union",
           "enum", "auto", "register", "extern", "sizeof", "typedef", "inline", "bool"}


@dataclass(frozen=True)
class Role:
    """One thread's slot: its CTA index, its ``tid.x`` inside it and its switch case (gid)."""

    tid: int
    cta: int
    pos: int
    gid: int
    observed: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    """Parameters, roles and the output stride of one source test."""

    params: tuple[tuple[str, str], ...]     # (location name, C parameter name), out excluded
    roles: tuple[Role, ...]
    ntid: int                                # threads per CTA in the switch layout
    nctas: int
    stride: int                              # R: out words per role

    def param_of(self, loc: str) -> str:
        for name, p in self.params:
            if name == loc:
                return p
        raise KeyError(loc)

    def specials(self, role: int) -> dict[str, int]:
        """The PTX special registers a role sees (switch layout)."""
        r = self.roles[role]
        out = {"%tid.x": r.pos, "%tid.y": 0, "%tid.z": 0, "%ntid.x": self.ntid, "%ntid.y": 1,
               "%ntid.z": 1, "%ctaid.x": r.cta, "%ctaid.y": 0, "%ctaid.z": 0,
               "%nctaid.x": self.nctas, "%nctaid.y": 1, "%nctaid.z": 1, "%laneid": r.pos % 32}
        return out


def c_name(name: str, k: int, taken: set[str]) -> str:
    """A C identifier for a location or register name (the name itself when it is one)."""
    base = name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name not in C_WORDS \
        else f"loc{k}"
    while base in taken:
        base += "_"
    taken.add(base)
    return base


def make_layout(test: Test) -> Layout:
    taken: set[str] = set()
    params = tuple((loc.name, "p_" + c_name(loc.name, k, taken))
                   for k, loc in enumerate(test.locations))
    groups: dict[object, list[int]] = {}
    for tid, th in enumerate(test.threads):
        pl = th.placement
        key = ("own", tid) if pl.wg is None else ("wg", pl.agent, pl.cluster, pl.wg)
        groups.setdefault(key, []).append(tid)
    ntid = max(len(g) for g in groups.values())
    slots: dict[int, tuple[int, int]] = {}
    for cta, key in enumerate(groups):
        for pos, tid in enumerate(groups[key]):
            slots[tid] = (cta, pos)
    observed = [tuple(r for r in test.registers(tid) if OBSERVABLE.match(r))
                for tid in range(len(test.threads))]
    stride = max([len(o) for o in observed] + [1])
    roles = tuple(Role(tid, slots[tid][0], slots[tid][1], slots[tid][0] * ntid + slots[tid][1],
                       observed[tid]) for tid in range(len(test.threads)))
    return Layout(params, roles, ntid, len(groups), stride)

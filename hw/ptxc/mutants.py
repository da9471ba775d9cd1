"""PTX mutants: planted compiler bugs, as text edits on the PTX a compiler emitted (issue 29).

Each mutant is a function ``ptx -> ptx`` given to :func:`hw.ptxc.compile_test` as ``mutate``
(applied before the read-back; the compile cache keeps the real PTX). A mutant edits every
instruction it matches, on instruction lines only (``.loc``/``.file`` directives and comments
are left alone), so one mutant models a compiler that makes one mistake everywhere. The check
(fuzz/compilers.py) must find each: a compiled program whose PTX outcomes escape the source
model. :data:`MUTANTS` names them; :func:`get` looks one up (``BackendError`` naming the known
ones on a bad name).
"""

from __future__ import annotations

import re
from typing import Callable

from hw import BackendError

#: an instruction line (after optional predicate), not a directive or a label
_INSN = re.compile(r"^(\s*(?:@!?%p\d+\s+)?)([a-z][\w.]*)(.*)$")


def _on_insns(ptx: str, edit: Callable[[str], str | None]) -> str:
    """Apply ``edit(opcode) -> new opcode | None (drop the line)`` to every instruction line."""
    out = []
    for line in ptx.splitlines(keepends=True):
        m = _INSN.match(line)
        if not m or line.lstrip().startswith("."):
            out.append(line)
            continue
        new = edit(m.group(2))
        nl = "\n" if line.endswith("\n") else ""
        if new is None:
            out.append(f"{m.group(1)}// mutant dropped: {m.group(2)}{m.group(3)}{nl}")
        else:
            out.append(f"{m.group(1)}{new}{m.group(3)}{nl}")
    return "".join(out)


def _memory(op: str) -> bool:
    return op.split(".")[0] in ("ld", "st", "atom", "red")


def _sub_sem(sem_from: tuple[str, ...], to: str, ops=("ld", "st", "atom", "red")):
    def edit(op: str) -> str:
        parts = op.split(".")
        if parts[0] in ops:
            parts = [to if p in sem_from else p for p in parts]
        return ".".join(parts)
    return edit


def _sub_scope(a: str, b: str):
    def edit(op: str) -> str:
        parts = op.split(".")
        if _memory(op) or parts[0] == "fence":
            parts = [b if p == a else p for p in parts]
        return ".".join(parts)
    return edit


def _drop(first: str, second: str | None = None):
    def edit(op: str) -> str | None:
        parts = op.split(".")
        if parts[0] == first and (second is None or second in parts[1:]):
            return None
        return op
    return edit


def _fence_sc_to_acq_rel(op: str) -> str:
    parts = op.split(".")
    if parts[0] == "fence" and "sc" in parts:
        parts = ["acq_rel" if p == "sc" else p for p in parts]
    return ".".join(parts)


def _relaxed_to_weak(op: str) -> str:
    parts = op.split(".")
    if parts[0] in ("ld", "st") and "relaxed" in parts:
        # a weak access has no scope either (PTX ISA 8.4: .weak takes no .scope)
        parts = [p for p in parts if p not in ("relaxed", "cta", "cluster", "gpu", "sys")]
    return ".".join(parts)


#: mutant name -> (what it models, the edit of one opcode)
CATALOGUE: dict[str, tuple[str, Callable[[str], str | None]]] = {
    "drop-acquire": ("ld/atom .acquire -> .relaxed", _sub_sem(("acquire",), "relaxed",
                                                               ("ld", "atom"))),
    "drop-release": ("st/atom/red .release -> .relaxed", _sub_sem(("release",), "relaxed",
                                                                   ("st", "atom", "red"))),
    "acq-rel-to-relaxed": ("atom .acq_rel -> .relaxed", _sub_sem(("acq_rel",), "relaxed",
                                                                  ("atom", "red"))),
    "drop-fence": ("every fence.sc / fence.acq_rel removed", _drop("fence")),
    "drop-fence-sc": ("every fence.sc removed", _drop("fence", "sc")),
    "fence-sc-to-acq-rel": ("fence.sc -> fence.acq_rel", _fence_sc_to_acq_rel),
    "scope-gpu-to-cta": (".gpu -> .cta on accesses and fences", _sub_scope("gpu", "cta")),
    "scope-sys-to-gpu": (".sys -> .gpu on accesses and fences", _sub_scope("sys", "gpu")),
    "scope-sys-to-cta": (".sys -> .cta on accesses and fences", _sub_scope("sys", "cta")),
    "relaxed-to-weak": ("ld/st .relaxed.SCOPE -> weak", _relaxed_to_weak),
}
MUTANTS = tuple(CATALOGUE)


def get(name: str) -> Callable[[str], str]:
    """The PTX edit of mutant ``name`` (BackendError: one line naming the known mutants)."""
    if name not in CATALOGUE:
        raise BackendError(f"unknown PTX mutant {name!r} (known: {', '.join(MUTANTS)})")
    edit = CATALOGUE[name][1]
    return lambda ptx: _on_insns(ptx, edit)


__all__ = ["CATALOGUE", "MUTANTS", "get"]

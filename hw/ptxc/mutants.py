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

from ..backend import BackendError

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


_SCOPES = ("cta", "cluster", "gpu", "sys")
_STRONG_SEMS = ("relaxed", "acquire", "release", "acq_rel")
#: membar level -> the scope of the fence.sc it is (PTX ISA 9.7.13.4: membar.cta/gl/sys are
#: fence.sc.cta/gpu/sys)
_MEMBAR = {"cta": "cta", "gl": "gpu", "sys": "sys"}
_MEMBAR_OF = {v: k for k, v in _MEMBAR.items()}


def _implicit_gpu(parts: list[str]) -> bool:
    """A memory instruction whose scope is ``.gpu`` by the PTX ISA default (no scope written):
    an ``atom``/``red`` (9.7.13.5/6: "the default scope is .gpu"), or a strong ``ld``/``st``
    (with a ``.relaxed``/``.acquire``/``.release`` and no scope, 9.7.9.8/9)."""
    if any(p in _SCOPES for p in parts[1:]) or "volatile" in parts or "mmio" in parts:
        return False
    if parts[0] in ("atom", "red"):
        return True
    return parts[0] in ("ld", "st") and any(p in _STRONG_SEMS for p in parts[1:])


def _sub_scope(a: str, b: str):
    """``.a`` -> ``.b`` on accesses and fences, ``membar`` levels included; narrowing ``gpu``
    also narrows the *implicit* ``.gpu`` of an unscoped strong access (a compiler that relies
    on the PTX default for device scope, as clang-22 does for every ``atom``, makes the same
    mistake by writing the narrower scope: docs/ptxc.md, "Mutants")."""
    def edit(op: str) -> str:
        parts = op.split(".")
        if parts[0] == "membar" and len(parts) > 1 and _MEMBAR.get(parts[1]) == a:
            return ".".join([parts[0], _MEMBAR_OF[b]] + parts[2:])
        if not (_memory(op) or parts[0] == "fence"):
            return op
        if a == "gpu" and _memory(op) and _implicit_gpu(parts):
            # the scope follows the semantics (an atom without one is .relaxed: 9.7.13.5)
            at = next((i + 1 for i, p in enumerate(parts) if p in _STRONG_SEMS), None)
            if at is None:
                parts = parts[:1] + ["relaxed", b] + parts[1:]
            else:
                parts = parts[:at] + [b] + parts[at:]
            return ".".join(parts)
        return ".".join(b if p == a else p for p in parts)
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
    "scope-gpu-to-cta": (".gpu (written or the PTX default of an unscoped atom/red/strong "
                         "ld/st) -> .cta on accesses and fences, membar.gl -> membar.cta",
                         _sub_scope("gpu", "cta")),
    "scope-sys-to-gpu": (".sys -> .gpu on accesses and fences, membar.sys -> membar.gl",
                         _sub_scope("sys", "gpu")),
    "scope-sys-to-cta": (".sys -> .cta on accesses and fences, membar.sys -> membar.cta",
                         _sub_scope("sys", "cta")),
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

"""Source programs of the compiler campaign in the C and OPENCL dialects (issue 29).

The CUDA draw (:mod:`fuzz.cuda_strategies`) builds a :class:`~fuzz.cuda_strategies.Prog` of
abstract operations (load, store, the RMW kinds, strong/weak CAS, fences) in the classic shapes
and random mixes; nothing in it is CUDA but the spelling. This module spells the same programs

- in Dat3M's **C** dialect (litmus/parse_c.py): C11 atomics without scopes and without thread
  placement (every atomic is system scope, :func:`for_source` sets it so, and the emitters place
  each thread in its own block); fences ``atomic_thread_fence(ORDER)``. Source model ``c11``;
- in Dat3M's **OPENCL** dialect (litmus/parse_opencl.py): placement ``Pn@wg W, dev D``,
  ``global atomic_int*`` parameters, scopes ``memory_scope_work_group`` / ``_device`` /
  ``_all_svm_devices`` (block / device / system), fences
  ``atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, ORDER, SCOPE)`` (OpenCL C has no
  ``atomic_thread_fence``). Source model ``opencl``.

Every location is atomic (race-free shapes only: a racy source is undefined and says nothing of
the compiler). The CUDA draw keeps one access scope per program for the opencl model's
same-scope race rule, which OPENCL programs inherit.
"""

from __future__ import annotations

from dataclasses import replace

from .cuda_strategies import Op, Prog, draw, render

#: source dialects of the compiler campaign (``fuzz --compile --source``)
SOURCES = ("cuda", "c", "opencl")
#: each front end's natural dialect (the default ``--source``)
NATURAL = {"clang-cuda": "cuda", "clang-ocl": "opencl", "nvcc-libcu": "cuda",
           "nvcc-builtins": "cuda"}
_OCL_SCOPE = {"block": "memory_scope_work_group", "device": "memory_scope_device",
              "system": "memory_scope_all_svm_devices"}


def for_source(p: Prog, source: str) -> Prog:
    """``p`` as the dialect can say it: C has no scopes (every op system scope) and no
    placement (every thread on GPU 0, its own block, as the emitters place an unplaced thread)."""
    if source != "c":
        return p
    threads = tuple(replace(t, ops=tuple(replace(op, scope="system") for op in t.ops),
                            cta=k, gpu=0) for k, t in enumerate(p.threads))
    return replace(p, threads=threads)


def draw_source(seed: int, index: int, source: str = "cuda") -> Prog:
    """Program ``index`` of ``seed`` for the source dialect (the CUDA draw, adapted)."""
    return for_source(draw(seed, index), source)


def _order(o: str) -> str:
    return f"memory_order_{o}"


def _op_text(op: Op, source: str) -> list[str]:
    sc = f", {_OCL_SCOPE[op.scope]}" if source == "opencl" else ""
    o = _order(op.order)
    if op.kind == "ld":
        return [f"int {op.reg} = atomic_load_explicit({op.loc}, {o}{sc});"]
    if op.kind == "st":
        return [f"atomic_store_explicit({op.loc}, {op.value}, {o}{sc});"]
    if op.kind == "rmw":
        return [f"int {op.reg} = atomic_{op.rmw}_explicit({op.loc}, {op.value}, {o}{sc});"]
    if op.kind == "cas":
        return [f"int {op.reg} = {op.expected};",
                f"atomic_compare_exchange_{op.rmw}_explicit({op.loc}, &{op.reg}, {op.value}, {o}, "
                f"{_order(op.fail)}{sc});"]
    if source == "opencl":
        return [f"atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, {o}{sc});"]
    return [f"atomic_thread_fence({o});"]


def render_source(p: Prog, source: str = "cuda") -> str:
    """The program as a litmus test of the source dialect (``cuda``, ``c`` or ``opencl``)."""
    if source == "cuda":
        return render(p)
    if source not in SOURCES:
        raise ValueError(f"unknown source dialect {source!r} (known: {', '.join(SOURCES)})")
    head = "OPENCL" if source == "opencl" else "C"
    ptype = "global atomic_int*" if source == "opencl" else "atomic_int*"
    params = ", ".join(f"{ptype} {loc}" for loc in p.locs)
    out = [f"{head} {p.name}", "{ " + " ".join(f"[{loc}] = 0;" for loc in p.locs) + " }"]
    for tid, t in enumerate(p.threads):
        place = f"@wg {t.cta}, dev {t.gpu}" if source == "opencl" else ""
        out.append(f"P{tid}{place} ({params}) {{")
        for op in t.ops:
            out += ["  " + line for line in _op_text(op, source)]
        out.append("}")
    out.append(f"exists ({p.locs[0]}=0)" if p.locs else "exists (0=0)")
    return "\n".join(out) + "\n"


__all__ = ["SOURCES", "NATURAL", "draw_source", "for_source", "render_source"]

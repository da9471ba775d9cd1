"""Front end for CUDA C++ litmus tests in the ``CUDA`` dialect (issue 29: the source side of the
compilers-in-the-loop check, docs/compilers.md).

The dialect is the OPENCL dialect (litmus/dialects/opencl/parse.py, itself the C dialect of Dat3M) with
CUDA's placement and scope words::

    CUDA MP
    { [x] = 0; [y] = 0; }
    P0@cta 0,gpu 0 (int* x, atomic_int* y) {
      *x = 1;
      atomic_store_explicit(y, 1, memory_order_release, cuda::thread_scope_device);
    }
    P1@cta 1,gpu 0 (int* x, atomic_int* y) {
      r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_device);
      if (r0 == 1) { r1 = *x; }
    }
    exists (P1:r0=1 /\\ P1:r1=0)

- **Placement** ``Pn@cta C,gpu G`` (required; the PTX dialect's spelling): the thread's block
  (CTA) and GPU, :class:`~litmus.scopes.Placement` ``wg=C, agent=G``.
- **Scopes**: the ``_explicit`` calls take an optional last argument, one spelling only:
  ``cuda::thread_scope_thread`` / ``cuda::thread_scope_block`` / ``cuda::thread_scope_device`` /
  ``cuda::thread_scope_system`` (libcu++'s names). In the IR they are the program model's scope
  keywords ``thread`` / ``wg`` / ``agent`` / ``sys`` (block = CTA = work-group, device = GPU =
  agent), so the OpenCL model's builder reads CUDA tests unchanged and the ptxc emitters print
  them as ``__MEMORY_SCOPE_WRKGRP`` / ``thread_scope_block`` etc. Without a scope argument, and
  for the calls without ``_explicit`` (order ``seq_cst``), the scope is ``system``: a plain
  ``cuda::atomic<int>`` / ``std::atomic`` is system-scoped (libcu++, ``cuda::std::atomic``).
- **Fences** ``atomic_thread_fence(ORDER[, SCOPE])`` (``cuda::atomic_thread_fence``): a fence
  on all of memory (row ``fence`` with ``flags=global``); a relaxed fence is dropped.
- **Memory**: every location is in global memory (``Test.meta`` ``regions``: ``global`` for all);
  a location is *non-atomic* when some thread declares it ``int*`` rather than ``atomic_int*``
  (``cuda::atomic<int>*`` is accepted too). ``__shared__`` memory, barriers
  (``__syncthreads``) and ``atomic_work_item_fence`` are refused with file:line:col.
"""

from __future__ import annotations

from ...ir import Instr, Test
from ...lexer import Token
from ..opencl.parse import ATOMIC_TYPES, OpenCLParser
from ..c.parse import TYPE_WORDS
from ...scopes import Placement

#: CUDA (libcu++) thread scopes -> the scope keywords of the program model
SCOPES = {"cuda::thread_scope_thread": "thread", "cuda::thread_scope_block": "wg",
          "cuda::thread_scope_device": "agent", "cuda::thread_scope_system": "sys"}
#: the IR scope keyword -> its CUDA spelling (printers, reports)
SCOPE_NAMES = {v: k for k, v in SCOPES.items()}


class _CUDAParser(OpenCLParser):
    DIALECT = "CUDA"
    DEFAULT_SCOPE = "sys"

    def placement(self, t: Token) -> Placement:
        if self.peek().text != "@":
            raise self.err(self.peek().pos, f"a CUDA thread needs a placement: "
                                            f"{t.text}@cta N,gpu M")
        self.next()
        ids = {}
        for word in ("cta", "gpu"):
            w = self.next()
            if w.text != word:
                raise self.err(w.pos, f"expected '{word}' in the placement of {t.text} "
                                      f"({t.text}@cta N,gpu M), got {w.text!r}")
            n = self.next()
            if n.kind != "int" or int(n.text) < 0:
                raise self.err(n.pos, f"expected a {word} number, got {n.text!r}")
            ids[word] = int(n.text)
            if word == "cta":
                self.expect(",", " between 'cta N' and 'gpu M'")
        return Placement(wg=ids["cta"], agent=ids["gpu"])

    def param_type(self) -> list[Token]:
        words = []
        while True:
            t = self.peek()
            if t.text in ("__shared__", "local", "__local", "global", "__global"):
                raise self.err(t.pos, f"{t.text!r}: CUDA tests put every location in global "
                                      f"memory (no address-space qualifiers)")
            if t.text in TYPE_WORDS or t.text in ("*", "cuda", ":", "::", "atomic", "<", ">", "int"):
                words.append(self.next())
                continue
            return words

    def declare_param(self, name: Token, words: list[Token]) -> None:
        texts = [w.text for w in words]
        if "*" not in texts:
            raise self.err(name.pos, f"parameter {name.text!r} is not a pointer")
        atomic = bool(ATOMIC_TYPES & set(texts)) or "atomic" in texts
        locs = ([f"{name.text}[{k}]" for k in range(self.arrays[name.text])]
                if name.text in self.arrays else [name.text])
        for loc in locs:
            self.regions.setdefault(loc, set()).add("global")
            if not atomic:
                self.nonatomic.add(loc)

    def scope_of(self, span) -> str:
        a, b = span
        text = "".join(t.text for t in self.toks[a:b])
        if text not in SCOPES:
            raise self.err(self.toks[a].pos, f"expected a CUDA thread scope "
                                             f"({', '.join(SCOPES)}), got {text!r}")
        return SCOPES[text]

    def extra_call(self, fn: Token, spans: list, code: list[Instr], statement: bool):
        name = fn.text
        if name in ("atomic_work_item_fence", "barrier", "work_group_barrier",
                    "__syncthreads"):
            raise self.err(fn.pos, f"{name} is not in the CUDA dialect (fences: "
                                   f"atomic_thread_fence(ORDER, SCOPE); no barriers)")
        if name != "atomic_thread_fence":
            return None
        if not 1 <= len(spans) <= 2:
            raise self.err(fn.pos, f"atomic_thread_fence takes 1 or 2 arguments (order[, "
                                   f"scope]), got {len(spans)}")
        if not statement:
            raise self.err(fn.pos, "atomic_thread_fence has no value")
        order = self.arg_order(spans[0])
        scope = self.scope_of(spans[1]) if len(spans) == 2 else self.DEFAULT_SCOPE
        if order != "rlx":
            code.append(Instr("fence", order=order, scope=scope, attrs=("flags=global",)))
        return 0

    def extra_statement(self, code: list[Instr]) -> bool:
        return False


def parse_cuda(text: str, path: str = "<string>") -> Test:
    """Parse a test in the CUDA dialect; raises :class:`ParseError` (``path:line:col``)."""
    return _CUDAParser(text, path).parse()


__all__ = ["parse_cuda", "SCOPES", "SCOPE_NAMES"]

"""Front end for OpenCL C litmus tests in the Dat3M ``OPENCL`` dialect (the OPENCL suite's format).

The dialect is the C dialect (litmus/dialects/c/parse.py: expressions, ``if``/``while``, arrays, the
``atomic_*`` calls) with what OpenCL C 2.0 adds::

    OPENCL name
    { [x] = 0; [y] = 0; }
    P0@wg 0, dev 0 (global int* x, local atomic_int* y) {     (placement: work-group, device)
      *x = 1;
      atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group);
      atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE,
                             memory_order_seq_cst, memory_scope_device);
      B1: barrier(CLK_GLOBAL_MEM_FENCE);                        (a work-group barrier, id 1)
    }
    exists (1:r0=1 /\\ x=1)

- **Placement** ``Pn@wg W, dev D`` (required): the thread's work-group and device
  (:class:`~litmus.scopes.Placement` ``wg=W, agent=D``; each thread is its own sub-group).
- **Memory scopes**: the ``_explicit`` calls take an optional last argument
  ``memory_scope_work_item`` / ``_work_group`` / ``_device`` / ``_all_svm_devices`` (scope
  keywords ``thread``, ``wg``, ``agent``, ``sys``); without it, and for the calls without
  ``_explicit`` (order ``seq_cst``), the scope is ``memory_scope_device`` (OpenCL C 2.0,
  6.13.11). ``memory_scope_sub_group`` is refused: the model (Batty, Donaldson, Wickerson,
  POPL 2016) has no sub-groups.
- **Memory regions**: a parameter ``global T* x`` (``__global``) puts ``x`` in global memory,
  ``local T* x`` (``__local``) in local memory; one with neither is in the generic address
  space, i.e. in no region of the model. A location is in every region some thread declares it
  in, and it is *non-atomic* when some thread declares it with a non-atomic type (``int*``
  rather than ``atomic_int*``), as Dat3M reads the suite. Recorded in ``Test.meta``:
  ``regions`` (location -> regions) and ``nonatomic`` (locations). Local locations are single
  locations like global ones (the model's reading: a local location is shared by the threads
  that name it, whatever their work-group), so they are observable in the condition.
- **Fences** ``atomic_work_item_fence(FLAGS, ORDER, SCOPE)``: FLAGS is ``CLK_GLOBAL_MEM_FENCE``,
  ``CLK_LOCAL_MEM_FENCE``, both joined by ``|``, or ``0``; a ``fence`` with ``flags=...``. A
  relaxed fence has no effect (OpenCL C 2.0) and is dropped, like C's.
- **Barriers** ``Bn: barrier(FLAGS)`` or ``Bn: work_group_barrier(FLAGS[, SCOPE])``: the label is
  the barrier's id (barriers with one id in threads of one work-group meet). As in the model, a
  barrier is an *entry fence* (release) followed by an *exit fence* (acquire), both with the
  barrier's flags and its scope (``memory_scope_work_group`` unless given): two ``cbar`` rows with
  ``fence=entry`` / ``fence=exit``, ``id=n`` and ``flags=...``.

Everything else is refused with file:line:col (``atomic_thread_fence``, which OpenCL C does
not have; image fences; barriers without an id label).
"""

from __future__ import annotations

from ...ir import Instr, Test
from ...lexer import ParseError, Token
from ..c.parse import ORDERS, TYPE_WORDS, CParser
from ...scopes import Placement

#: OpenCL memory scope names -> the scope keywords of the program model
SCOPES = {"memory_scope_work_item": "thread", "memory_scope_work_group": "wg",
          "memory_scope_device": "agent", "memory_scope_all_svm_devices": "sys"}
#: address-space qualifiers of a parameter -> the region it names
SPACES = {"global": "global", "__global": "global", "local": "local", "__local": "local"}
FLAGS = {"CLK_GLOBAL_MEM_FENCE": "global", "CLK_LOCAL_MEM_FENCE": "local"}
ATOMIC_TYPES = {"atomic_int", "_Atomic", "atomic_uint", "atomic_bool", "atomic_long"}


class OpenCLParser(CParser):
    DIALECT = "OPENCL"
    DEFAULT_SCOPE = "agent"

    def __init__(self, text: str, path: str):
        super().__init__(text, path)
        self.regions: dict[str, set[str]] = {}
        self.nonatomic: set[str] = set()

    # -- placement and parameters ----------------------------------------------------------------
    def placement(self, t: Token) -> Placement:
        at = self.peek()
        if at.text != "@":
            raise self.err(at.pos, f"an OPENCL thread needs a placement: {t.text}@wg N, dev M")
        self.next()
        ids = {}
        for word in ("wg", "dev"):
            w = self.next()
            if w.text != word:
                raise self.err(w.pos, f"expected '{word}' in the placement of {t.text} "
                                      f"({t.text}@wg N, dev M), got {w.text!r}")
            n = self.next()
            if n.kind != "int" or int(n.text) < 0:
                raise self.err(n.pos, f"expected a {word} number, got {n.text!r}")
            ids[word] = int(n.text)
            if word == "wg":
                self.expect(",", " between 'wg N' and 'dev M'")
        return Placement(wg=ids["wg"], agent=ids["dev"])

    def param_type(self) -> list[Token]:
        words = []
        while self.peek().text in TYPE_WORDS or self.peek().text in SPACES \
                or self.peek().text == "*":
            words.append(self.next())
        return words

    def declare_param(self, name: Token, words: list[Token]) -> None:
        texts = [w.text for w in words]
        spaces = {SPACES[w] for w in texts if w in SPACES}
        if len(spaces) > 1:
            raise self.err(name.pos, f"parameter {name.text!r} names two address spaces")
        if "*" not in texts:
            raise self.err(name.pos, f"parameter {name.text!r} is not a pointer")
        locs = ([f"{name.text}[{k}]" for k in range(self.arrays[name.text])]
                if name.text in self.arrays else [name.text])
        for loc in locs:
            self.regions.setdefault(loc, set()).update(spaces)
            if not ATOMIC_TYPES & set(texts):
                self.nonatomic.add(loc)

    def meta(self) -> tuple:
        regions = tuple(sorted((loc, tuple(sorted(r))) for loc, r in self.regions.items()))
        return (("regions", regions), ("nonatomic", tuple(sorted(self.nonatomic))))

    # -- scopes, fences, barriers ----------------------------------------------------------------
    def scope_of(self, span) -> str:
        a, b = span
        t = self.toks[a]
        if t.text == "memory_scope_sub_group":
            raise self.err(t.pos, "memory_scope_sub_group is not in the OpenCL model (Batty, "
                                  "Donaldson, Wickerson, POPL 2016: work-item, work-group, "
                                  "device, all_svm_devices)")
        if b - a != 1 or t.text not in SCOPES:
            raise self.err(t.pos, f"expected a memory scope ({', '.join(SCOPES)}), got "
                                  f"{t.text!r}")
        return SCOPES[t.text]

    def scoped(self, fn: Token, spans: list, n: int, explicit: bool) -> tuple[list, str]:
        if explicit and len(spans) == n + 1:
            return spans[:n], self.scope_of(spans[n])
        if len(spans) != n:
            more = f" (or {n + 1} with a memory scope)" if explicit else ""
            raise self.err(fn.pos, f"{fn.text} takes {n} argument(s){more}, got {len(spans)}")
        return spans, self.DEFAULT_SCOPE

    def flags_of(self, span) -> tuple[str, ...]:
        """``CLK_GLOBAL_MEM_FENCE``, ``CLK_LOCAL_MEM_FENCE``, both joined by ``|``, or ``0``."""
        a, b = span
        toks = self.toks[a:b]
        if len(toks) == 1 and toks[0].text == "0":
            return ()
        out = []
        for i, t in enumerate(toks):
            if i % 2:
                if t.text != "|":
                    raise self.err(t.pos, f"expected '|' between fence flags, got {t.text!r}")
                continue
            if t.text == "CLK_IMAGE_MEM_FENCE":
                raise self.err(t.pos, "image fences are not supported (no images in the model)")
            if t.text not in FLAGS:
                raise self.err(t.pos, f"expected fence flags (CLK_GLOBAL_MEM_FENCE, "
                                      f"CLK_LOCAL_MEM_FENCE, joined by '|', or 0), got "
                                      f"{t.text!r}")
            out.append(FLAGS[t.text])
        if not toks or len(toks) % 2 == 0:
            raise self.err(toks[-1].pos if toks else self.toks[a].pos, "incomplete fence flags")
        return tuple(sorted(set(out)))

    def extra_call(self, fn: Token, spans: list, code: list[Instr], statement: bool):
        name = fn.text
        if name == "atomic_thread_fence":
            raise self.err(fn.pos, "OpenCL C has no atomic_thread_fence: write "
                                   "atomic_work_item_fence(FLAGS, ORDER, SCOPE)")
        if name in ("barrier", "work_group_barrier"):
            raise self.err(fn.pos, f"a barrier needs its id as a label: B1: {name}(...)")
        if name != "atomic_work_item_fence":
            return None
        if len(spans) != 3:
            raise self.err(fn.pos, f"atomic_work_item_fence takes 3 arguments (flags, order, "
                                   f"scope), got {len(spans)}")
        if not statement:
            raise self.err(fn.pos, "atomic_work_item_fence has no value")
        flags = self.flags_of(spans[0])
        order = self.arg_order(spans[1])
        scope = self.scope_of(spans[2])
        if order != "rlx":
            code.append(Instr("fence", order=order, scope=scope,
                              attrs=(f"flags={','.join(flags)}",)))
        return 0

    def extra_statement(self, code: list[Instr]) -> bool:
        t = self.peek()
        if not (t.kind == "id" and self.peek(1).text == ":" and t.text[:1] == "B"
                and t.text[1:].isdigit()):
            return False
        self.k += 2
        fn = self.next()
        if fn.text not in ("barrier", "work_group_barrier"):
            raise self.err(fn.pos, f"a barrier label {t.text}: must be followed by barrier(...) "
                                   f"or work_group_barrier(...), got {fn.text!r}")
        if self.peek().text != "(":
            raise self.err(self.peek().pos, f"expected '(' after {fn.text}")
        spans = self.args()
        if fn.text == "barrier" and len(spans) != 1 or not 1 <= len(spans) <= 2:
            raise self.err(fn.pos, f"{fn.text} takes {'1' if fn.text == 'barrier' else '1 or 2'}"
                                   f" argument(s), got {len(spans)}")
        flags = self.flags_of(spans[0])
        scope = self.scope_of(spans[1]) if len(spans) == 2 else "wg"
        if scope == "thread":
            raise self.err(self.toks[spans[1][0]].pos, "a barrier's scope cannot be "
                                                       "memory_scope_work_item")
        self.expect(";", " after the barrier")
        attrs = (f"id={int(t.text[1:])}", f"flags={','.join(flags)}")
        code.append(Instr("cbar", order="rel", scope=scope, attrs=("fence=entry",) + attrs))
        code.append(Instr("cbar", order="acq", scope=scope, attrs=("fence=exit",) + attrs))
        return True


def parse_opencl(text: str, path: str = "<string>") -> Test:
    """Parse a test in the OPENCL dialect; raises :class:`ParseError` (``path:line:col``)."""
    return OpenCLParser(text, path).parse()


__all__ = ["parse_opencl", "ParseError", "ORDERS", "SCOPES"]

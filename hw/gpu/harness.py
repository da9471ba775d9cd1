"""The GPU harness of a compiled program: the compiler's own PTX, rewritten to run many instances.

``make gpu-check`` (fuzz/gpu_check.py, docs/compilers.md "On a GPU") runs what the compiler
emitted, not a re-spelling of the test: the switch-layout kernel ``litmus`` of :mod:`hw.ptxc`
(one role per ``gid = tid.x + ctaid.x * ntid.x``) is kept instruction for instruction, and only
three things are changed, all outside the code that carries the memory order:

- **The entry.** ``.entry litmus(...)`` becomes ``.entry scopefuzz_harness(...)`` with two more
  parameters: ``scopefuzz_map`` (one record of :data:`FIELDS` + one word per location for every
  launched thread, written by :mod:`hw.gpu.place`) and ``scopefuzz_scratch`` (the stress
  threads' buffer).
- **The special registers the role switch reads.** Every ``%tid.x``, ``%ctaid.x``, ``%ntid.x``
  and ``%nctaid.x`` operand of the compiled body is replaced by the value of the thread's record:
  the role's position, CTA and CTA size *in the source layout*. The compiled switch therefore picks
  the role the placement gave this thread, whatever real thread it is (the shuffle of threads to
  roles); a thread with no role gets a ``gid`` no case matches.
- **The parameters' addresses.** Each ``ld.param`` of a location or of ``out`` is followed by an
  ``add`` of the thread's byte offset for that parameter (all location parameters receive the
  base of one location buffer, ``out`` the base of the output buffer): each instance has its own
  words, at places the placement shuffles (memory-location shuffling).

A prologue, inserted before the compiled body, reads the record; a thread whose record says
*stress* (role position -1) runs the stress loop on the scratch buffer (stores then loads of one
line, ``iters`` times, as MC Mutants' memory-stress workgroups) and returns without entering the
compiled body. Nothing here needs a GPU: the output is PTX text that ``ptxas -arch=sm_XX``
accepts (tests/test_gpu_check.py) and that CUDA's driver loads (``cuModuleLoad``).
"""

from __future__ import annotations

import re

from ..backend import BackendRefused

#: the record words before the per-location offsets (int32 each)
FIELDS = ("tid", "cta", "ntid", "out")
ENTRY = "scopefuzz_harness"
#: the special registers the role switch may read, and the record word that replaces each
SPECIALS = {"%tid.x": 0, "%ctaid.x": 1, "%ntid.x": 2}

_ENTRY_RE = re.compile(r"\.entry\s+(?P<name>[A-Za-z_$][\w$]*)\s*\(")
_LD_PARAM = re.compile(r"^(?P<ind>\s*)ld\.param\.(?:u64|b64|s64)\s+(?P<dst>%\w+)\s*,\s*"
                       r"\[(?P<param>[\w$]+)(?:\s*\+\s*0)?\]\s*;")
_SREG_RE = re.compile(r"%(?:n?tid|n?ctaid)\.[xyz]\b")


def _find_entry(ptx: str, kernel: str) -> tuple[int, int, int, list[str]]:
    """(start of ``.entry``, end of its parameter list, the body's ``{`` offset, param names)."""
    for m in _ENTRY_RE.finditer(ptx):
        if m.group("name") != kernel:
            continue
        close = ptx.index(")", m.end())
        params = re.findall(r"\.param\s+[^,)]*?([A-Za-z_$][\w$]*)\s*(?:,|$)",
                            ptx[m.end():close].replace("\n", " ") + ",")
        brace = ptx.index("{", close)
        return m.start(), close, brace, params
    raise BackendRefused(f"no kernel {kernel!r} in the PTX (the GPU harness needs the switch "
                         f"layout's one kernel; per-role programs are not run on the GPU)")


def _body_end(ptx: str, brace: int) -> int:
    depth = 0
    for i in range(brace, len(ptx)):
        c = ptx[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    raise BackendRefused("unbalanced braces in the kernel body")


def prologue(nparams: int, width: int) -> list[str]:
    """The PTX that reads this thread's record, branches stress threads to the stress loop and
    leaves the record's words in ``%sfz<k>`` (32-bit) and the parameter offsets in ``%sfzo<i>``."""
    out = [f"\t.reg .b32 \t%sfz<{width + 4}>;", f"\t.reg .b64 \t%sfzd<8>;",
           f"\t.reg .b64 \t%sfzo<{nparams}>;", "\t.reg .pred \t%sfzp<2>;",
           "\tmov.u32 \t%sfz0, %tid.x;",
           "\tmov.u32 \t%sfz1, %ctaid.x;", "\tmov.u32 \t%sfz2, %ntid.x;",
           "\tmad.lo.s32 \t%sfz3, %sfz1, %sfz2, %sfz0;",
           "\tld.param.u64 \t%sfzd0, [scopefuzz_map];",
           "\tcvta.to.global.u64 \t%sfzd0, %sfzd0;",
           f"\tmul.wide.u32 \t%sfzd1, %sfz3, {4 * width};",
           "\tst.global.u64 \t[scopefuzz_map_addr], %sfzd0;",
           "\tadd.s64 \t%sfzd0, %sfzd0, %sfzd1;"]
    # record word k -> %sfz(4+k)
    for k in range(width):
        out.append(f"\tld.global.s32 \t%sfz{4 + k}, [%sfzd0+{4 * k}];")
    # offsets: locations are parameters 0..n-2 (record words 4..), out is the last (word 3)
    for i in range(nparams):
        word = 3 if i == nparams - 1 else len(FIELDS) + i
        out.append(f"\tcvt.s64.s32 \t%sfzo{i}, %sfz{4 + word};")
    out += ["\tsetp.ge.s32 \t%sfzp0, %sfz4, 0;",
            "\t@%sfzp0 bra \t$SFZ_BODY;",
            # stress: word 3 = iterations, word 4 = byte offset of the line in the scratch buffer
            "\tld.param.u64 \t%sfzd2, [scopefuzz_scratch];",
            "\tcvta.to.global.u64 \t%sfzd2, %sfzd2;",
            f"\tcvt.s64.s32 \t%sfzd3, %sfz{4 + len(FIELDS)};",
            "\tadd.s64 \t%sfzd2, %sfzd2, %sfzd3;",
            "\tmov.u32 \t%sfz0, 0;",
            "$SFZ_STRESS:",
            "\tsetp.ge.s32 \t%sfzp1, %sfz0, %sfz7;",
            "\t@%sfzp1 bra \t$SFZ_DONE;",
            "\tst.global.u32 \t[%sfzd2], %sfz0;",
            "\tld.volatile.global.u32 \t%sfz1, [%sfzd2+4];",
            "\tst.global.u32 \t[%sfzd2+4], %sfz1;",
            "\tadd.s32 \t%sfz0, %sfz0, 1;",
            "\tbra.uni \t$SFZ_STRESS;",
            "$SFZ_DONE:",
            "\tret;",
            "$SFZ_BODY:"]
    return out


def only_entry(ptx: str, kernel: str) -> str:
    """``ptx`` without the kernels other than ``kernel`` (a campaign batch holds every program's
    kernels; the driver then assembles one). Functions (``.func``) and globals are kept."""
    spans = []
    for m in _ENTRY_RE.finditer(ptx):
        if m.group("name") == kernel:
            continue
        line_start = ptx.rfind("\n", 0, m.start()) + 1
        close = ptx.index(")", m.end())
        brace = ptx.index("{", close)
        spans.append((line_start, _body_end(ptx, brace) + 1))
    for a, b in reversed(spans):
        ptx = ptx[:a] + ptx[b:]
    return ptx


_FUNC_RE = re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern)\s+)*\.func\s+(?:\([^)]*\)\s*)?"
                      r"(?P<name>[A-Za-z_$][\w$]*)\s*\(", re.M)
_LOC_ATTRS = re.compile(r"(\.loc\s+\d+\s+\d+\s+\d+)\s*,\s*function_name\b[^\n]*")
_SECTION_RE = re.compile(r"^[ \t]*\.section\s+\.debug_\w+\s*\{", re.M)


def prune(ptx: str, kernel: str) -> str:
    """``ptx`` with the kernel ``kernel`` only, the functions it reaches and no ``.debug_*``
    sections (``.file``/``.loc`` line information is kept): a campaign batch holds every
    program's kernels and helpers (clang-ocl: a ``.func`` per kernel), and nvcc's debug strings
    are most of its PTX; the driver then assembles a fraction of the text."""
    ptx = only_entry(ptx, kernel)
    spans: dict[str, list[tuple[int, int]]] = {}
    for m in _FUNC_RE.finditer(ptx):
        close = ptx.index(")", m.end())
        rest = ptx[close + 1:]
        k = close + 1 + (len(rest) - len(rest.lstrip()))
        # a return-less prototype ends at ';', a definition has a body
        j = k
        while j < len(ptx) and ptx[j] not in "{;":
            j += 1
        end = _body_end(ptx, j) + 1 if ptx[j] == "{" else j + 1
        spans.setdefault(m.group("name"), []).append((m.start(), end))
    if spans:
        names = re.compile(r"(?<![\w$.%])(" + "|".join(re.escape(n) for n in spans) +
                           r")(?![\w$])")
        start, close, brace, _ = _find_entry(ptx, kernel)
        todo = [ptx[brace:_body_end(ptx, brace) + 1]]
        seen: set[str] = set()
        while todo:
            for n in names.findall(todo.pop()):
                if n not in seen:
                    seen.add(n)
                    todo += [ptx[a:b] for a, b in spans[n]]
        cut = sorted(sp for n, sps in spans.items() if n not in seen for sp in sps)
        for a, b in reversed(cut):
            ptx = ptx[:a] + ptx[b:]
    while True:
        m = _SECTION_RE.search(ptx)
        if m is None:
            break
        ptx = ptx[:m.start()] + ptx[_body_end(ptx, m.end() - 1) + 1:]
    # nvcc's `.loc F L C, function_name $L__info_stringN, inlined_at ...` names a .debug_str
    # label: the line and column stay, the inlining attributes go with the section
    ptx = _LOC_ATTRS.sub(r"\1", ptx)
    # clang -O0 writes `.target sm_90, debug`, which makes ptxas require the debug sections
    return re.sub(r"^([ \t]*\.target[^\n,]*(?:,\s*(?!debug)[\w.]+)*)\s*,\s*debug\b", r"\1", ptx,
                  flags=re.M)


def harness(ptx: str, nlocs: int, kernel: str = "litmus") -> str:
    """The harness PTX of compiled ``ptx`` whose kernel ``kernel`` takes ``nlocs`` location
    pointers and ``out``; BackendRefused (one line) when the PTX does not have that shape.
    Other kernels, functions it does not reach and debug sections are left out
    (:func:`prune`)."""
    ptx = prune(ptx, kernel)
    start, close, brace, params = _find_entry(ptx, kernel)
    if len(params) != nlocs + 1:
        raise BackendRefused(f"kernel {kernel} has {len(params)} parameters, expected "
                             f"{nlocs + 1} (the locations and out)")
    end = _body_end(ptx, brace)
    width = len(FIELDS) + max(nlocs, 1)      # a stress record needs word 4
    index = {p: i for i, p in enumerate(params)}
    body = []
    for line in ptx[brace + 1:end].split("\n"):
        m = _LD_PARAM.match(line)
        if m and m.group("param") in index:
            body.append(line)
            body.append(f"{m.group('ind')}add.s64 \t{m.group('dst')}, {m.group('dst')}, "
                        f"%sfzo{index[m.group('param')]};")
            continue
        if "ld.param" in line and any(p in line for p in params):
            raise BackendRefused(f"the GPU harness does not follow this parameter load: "
                                 f"{line.strip()}")
        if not line.lstrip().startswith("//") and not line.lstrip().startswith(".loc"):
            for sreg in set(_SREG_RE.findall(line)):
                if sreg in SPECIALS:
                    line = re.sub(re.escape(sreg) + r"\b", f"%sfz{4 + SPECIALS[sreg]}", line)
                elif sreg == "%nctaid.x":
                    raise BackendRefused("the compiled kernel reads %nctaid.x")
                # .y/.z: the harness launches one-dimensional grids, as the layout does
        body.append(line)
    head = _functions(ptx[:start], width) + f".entry {ENTRY}(" + \
        ptx[start + ptx[start:].index("(") + 1:close] + \
        ",\n\t.param .u64 scopefuzz_map,\n\t.param .u64 scopefuzz_scratch\n)"
    middle = ptx[close + 1:brace + 1]
    text = head + middle + "\n" + "\n".join(prologue(len(params), width)) + "\n" + \
        "\n".join(body) + _functions(ptx[end:], width)
    m = re.search(r"^\s*\.address_size\s+64\s*$", text, re.M)
    if m is None:
        raise BackendRefused("the PTX has no .address_size 64 directive")
    return text[:m.end()] + "\n\n.global .align 8 .u64 scopefuzz_map_addr;" + text[m.end():]


_SREG_MOV = re.compile(r"^(?P<ind>\s*)mov\.[bus]32\s+(?P<dst>%\w+)\s*,\s*"
                       r"(?P<sreg>%(?:tid|ctaid|ntid)\.x)\s*;\s*$")


def _functions(text: str, width: int) -> str:
    """Functions outside the kernel body (clang-ocl -O0 calls the kernel's implementation,
    ``__clang_ocl_kern_imp_litmus``): each ``mov`` of a special register the role switch reads
    becomes a load of the thread's record through ``scopefuzz_map_addr`` (the prologue stores
    the map's address there); any other use of those registers is refused."""
    out = []
    for line in text.split("\n"):
        m = _SREG_MOV.match(line)
        if m:
            ind, k = m.group("ind"), SPECIALS[m.group("sreg")]
            out += [f"{ind}{{",
                    f"{ind}.reg .b32 \t%sfzt<4>;", f"{ind}.reg .b64 \t%sfza<2>;",
                    f"{ind}mov.u32 \t%sfzt0, %tid.x;", f"{ind}mov.u32 \t%sfzt1, %ctaid.x;",
                    f"{ind}mov.u32 \t%sfzt2, %ntid.x;",
                    f"{ind}mad.lo.s32 \t%sfzt3, %sfzt1, %sfzt2, %sfzt0;",
                    f"{ind}ld.global.u64 \t%sfza0, [scopefuzz_map_addr];",
                    f"{ind}mul.wide.u32 \t%sfza1, %sfzt3, {4 * width};",
                    f"{ind}add.s64 \t%sfza0, %sfza0, %sfza1;",
                    f"{ind}ld.global.s32 \t{m.group('dst')}, [%sfza0+{4 * k}];",
                    f"{ind}}}"]
            continue
        if not line.lstrip().startswith("//") and any(
                r in SPECIALS or r == "%nctaid.x" for r in _SREG_RE.findall(line)):
            raise BackendRefused(f"the harness does not follow this special-register read "
                                 f"outside the kernel: {line.strip()}")
        out.append(line)
    return "\n".join(out)


__all__ = ["ENTRY", "FIELDS", "harness", "only_entry", "prologue", "prune"]

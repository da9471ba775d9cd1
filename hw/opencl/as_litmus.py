"""A ``cl3`` kernel read back as an OpenCL litmus test: the program one test instance runs.

The ``cl3`` code generator (:mod:`hw.opencl.codegen`) emits OpenCL C for every instance of a test
at once. This module reads the emitted *source text* back (not the generator's data structures,
so that a wrong lowering, a wrong pointer or a misplaced phase barrier shows) and writes the
program of one instance in the OPENCL litmus dialect (litmus/parse_opencl.py), so that the
``opencl`` memory model can say what the kernel may do; ``tests/test_cl3_translation.py`` checks
that it allows nothing the AMDGPU model forbids for the source test (docs/opencl.md, "The cl3
kernels against the OpenCL model").

How the kernel text is read:

- the preprocessor lines of the prelude: ``#define`` (the scope macros ``SF_SCOPE_*`` and
  ``SF_PHASE_BARRIER``) under ``#if defined(F)`` / ``#else`` / ``#endif``, with the device features
  given (``all_devices``: whether ``__opencl_c_atomic_scope_all_devices`` is defined);
- the pointer of each role: ``__global int *pT_L = mem + (K ul * ...)`` points at global location
  ``K`` (the kernel's order of the test's global locations) and ``__local int *pT_L = lds + (C u *
  ...)`` at LDS copy ``C`` of the work-item's workgroup, whose initial value the LDS loops give;
- ``int PT_R = V;``: register ``R`` of thread ``T`` and its initial value;
- the body from ``/* phase 0 */`` to the outputs: ``/* PT */`` starts thread ``T``'s part of the
  current phase; every ``SF_PHASE_BARRIER()`` is executed by every work-item, so each thread gets
  it (as a labelled barrier ``Bn:``, n = the phase it opens; ``SF_PHASE_BARRIER_MEM()`` carries
  both memory flags); other comment lines are dropped.

The statements keep their text; only names change: ``pT_L`` becomes the location it points at,
``PT_R`` the register ``R``, and the casts to ``__global`` / ``__local atomic_int *`` go (the
dialect has no casts). A location is declared ``atomic_int`` when some statement accesses it
through such a cast, ``int`` otherwise: the reading this module gives the casts, since the kernel's
buffers are ``int`` arrays. An LDS copy is a ``local`` location named ``L_wgG`` (G: the
workgroup role of the threads that share it); global locations keep their names. Placements:
``Pn@wg G, dev 0`` with G the thread's workgroup role of the layout (every instance runs on one
device). The condition is the source test's.
"""

from __future__ import annotations

import re

from litmus.ir import And, Atom, Const, Not, Or, Test

from ..backend import BackendError
from .codegen import Kernel, generate


class KernelReadError(BackendError):
    """A kernel line this reader does not understand (one line, with the line number)."""


_GLOBAL_PTR = re.compile(r"__global int \*p(\d+)_(\w+) = mem \+ \((\d+)ul \* n_instances")
_LOCAL_PTR = re.compile(r"__local int \*p(\d+)_(\w+) = lds \+ \((\d+)u \* wg_size")
_LDS_INIT = re.compile(r"for \(uint j = lid; j < (\d+)u \* wg_size; j \+= wg_size\) "
                       r"lds\[(\d+)u \* wg_size \+ j\] = (-?\d+);")
_REG = re.compile(r"int P(\d+)_(\w+) = (-?\d+);")
_THREAD = re.compile(r"/\* P(\d+) \*/")
_DEFINE = re.compile(r"#define (\w+)(\(\))? (.*)")
_COMMENT = re.compile(r"/\*.*?\*/")
_CAST = re.compile(r"\(__(global|local) atomic_int \*\)(p\d+_\w+)")


def _defines(lines: list[str], features: set[str]) -> dict[str, str]:
    """``#define NAME VALUE`` of the prelude, under ``#if defined(F)`` / ``#else`` / ``#endif``."""
    out: dict[str, str] = {}
    live = [True]
    for ln in lines:
        s = ln.strip()
        if s.startswith("#if "):
            m = re.fullmatch(r"#if defined\((\w+)\)", s)
            live.append(live[-1] and bool(m) and m.group(1) in features)
        elif s == "#else":
            live[-1] = not live[-1] and all(live[:-1])
        elif s == "#endif":
            live.pop()
        elif s.startswith("#define") and live[-1]:
            m = _DEFINE.match(s)
            value = _COMMENT.sub("", m.group(3)).strip()
            out[m.group(1) + (m.group(2) or "")] = value
    return out


def _prop(p) -> str:
    if isinstance(p, Atom):
        key = p.name if p.thread is None else f"{p.thread}:{p.name}"
        return f"{key} {p.op} {p.value}"
    if isinstance(p, Not):
        return f"~({_prop(p.arg)})"
    if isinstance(p, And):
        return "(" + " /\\ ".join(_prop(a) for a in p.args) + ")"
    if isinstance(p, Or):
        return "(" + " \\/ ".join(_prop(a) for a in p.args) + ")"
    if isinstance(p, Const):
        return "true" if p.value else "false"
    raise TypeError(p)


def kernel_litmus(test: Test, kernel: Kernel | None = None, all_devices: bool = True) -> str:
    """The OPENCL litmus text of one instance of ``test``'s ``cl3`` kernel (the module doc says
    how the kernel is read). ``all_devices``: the device defines
    ``__opencl_c_atomic_scope_all_devices`` (``sys`` scope is then ``all_svm_devices``)."""
    kernel = kernel or generate(test, "cl3")
    if kernel.kernel_language != "cl3":
        raise KernelReadError(f"only cl3 kernels are read back, not {kernel.kernel_language}")
    lines = kernel.source.splitlines()
    features = {"__opencl_c_atomic_scope_all_devices"} if all_devices else set()
    defs = _defines(lines, features)
    G = kernel.layout.n_wg_roles
    wg_of = [r.wg for r in kernel.layout.roles]
    nthreads = len(test.threads)
    where: dict[str, tuple[str, str]] = {}        # pointer variable -> (location, region)
    inits: dict[str, int] = {loc.name: loc.init for loc in test.globals}
    lds_init: dict[int, int] = {}
    copy_of: dict[str, int] = {}                  # LDS location name -> its copy index
    regs: list[list[tuple[str, int]]] = [[] for _ in range(nthreads)]
    start = None
    for n, ln in enumerate(lines):
        s = ln.strip()
        if m := _GLOBAL_PTR.match(s):
            where[f"p{m.group(1)}_{m.group(2)}"] = (kernel.globals[int(m.group(3))], "global")
        elif m := _LOCAL_PTR.match(s):
            tid, c = int(m.group(1)), int(m.group(3))
            name = f"{kernel.lds[c // G]}_wg{wg_of[tid]}"
            if c % G != wg_of[tid]:
                name += f"_copy{c}"            # a copy of another role: still this workgroup's
            where[f"p{tid}_{m.group(2)}"] = (name, "local")
            copy_of[name] = c
        elif m := _LDS_INIT.match(s):
            for c in range(int(m.group(2)), int(m.group(2)) + int(m.group(1))):
                lds_init[c] = int(m.group(3))
        elif m := _REG.fullmatch(s):
            regs[int(m.group(1))].append((m.group(2), int(m.group(3))))
        elif s == "/* phase 0 */":
            start = n
            break
    if start is None:
        raise KernelReadError(f"{test.name}: no '/* phase 0 */' in the kernel")
    for name, c in copy_of.items():
        if c not in lds_init:
            raise KernelReadError(f"{test.name}: LDS copy {c} is never initialised")
        inits[name] = lds_init[c]
    code: list[list[str]] = [[] for _ in range(nthreads)]
    atomic: set[str] = set()
    tid, phase = None, 0
    for n, ln in enumerate(lines[start + 1:], start + 2):
        s = ln.strip()
        if s.startswith("out[") or s == "(void)out;":
            break
        if m := re.match(r"(SF_PHASE_BARRIER\w*\(\));", s):
            if m.group(1) not in defs:
                raise KernelReadError(f"{test.name}: kernel line {n}: {m.group(1)} is not defined")
            phase += 1
            for t in range(nthreads):
                code[t].append(f"B{phase}: {defs[m.group(1)]};")
            tid = None
            continue
        if m := _THREAD.fullmatch(s):
            tid = int(m.group(1))
            continue
        body = _COMMENT.sub("", s).strip()
        if not body or re.fullmatch(r"/\* phase \d+ \*/", s):
            continue
        if tid is None or body.startswith("#"):
            raise KernelReadError(f"{test.name}: kernel line {n}: cannot read {s!r} "
                                  f"(outside a thread's part, or a preprocessor line)")
        for m in _CAST.finditer(body):
            atomic.add(where[m.group(2)][0])
        body = _CAST.sub(lambda m: m.group(2), body)
        for macro, value in defs.items():
            if not macro.endswith("()"):
                body = re.sub(rf"\b{macro}\b", value, body)

        def rename(m):
            kind, t, name = m.group(1), int(m.group(2)), m.group(3)
            if kind == "p":
                if m.group(0) not in where:
                    raise KernelReadError(f"{test.name}: kernel line {n}: pointer {m.group(0)} "
                                          "is never set")
                return where[m.group(0)][0]
            if t != tid:
                raise KernelReadError(f"{test.name}: kernel line {n}: P{tid} uses P{t}'s "
                                      f"register {m.group(0)}")
            return name
        code[tid].append(re.sub(r"\b([pP])(\d+)_(\w+)", rename, body))
    locs = {}
    for name, region in where.values():
        locs[name] = region
    out = [f"OPENCL {test.name}", f'"cl3 kernel of {test.name}, one instance (hw/opencl/as_litmus.py)"',
           "{ " + " ".join(f"[{name}] = {inits[name]};" for name in locs) + " }", ""]
    for t in range(nthreads):
        mine = sorted({where[p][0] for p in where if p.partition("_")[0] == f"p{t}"})
        params = ", ".join(f"{locs[name]} {'atomic_int' if name in atomic else 'int'}* {name}"
                           for name in mine)
        out.append(f"P{t}@wg {wg_of[t]}, dev 0 ({params}) {{")
        out += [f"  int {r} = {v};" for r, v in regs[t]]
        out += [f"  {c}" for c in code[t]]
        out += ["}", ""]
    out.append(f"{test.condition.quantifier} ({_prop(test.condition.prop)})")
    return "\n".join(out) + "\n"

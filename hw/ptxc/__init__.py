"""hw.ptxc — compilers in the loop for NVIDIA: a C/OpenCL/CUDA litmus test compiled to PTX by
clang-22 or nvcc 13, and the PTX read back as a PTX-dialect litmus test (issue 29).

:func:`compile_test` emits the source test as a kernel for one front end (:mod:`.emit_common`
and one ``emit_*`` module per front end), compiles it to PTX (:mod:`.toolchain`: exact command,
version, compile cache) and reads the PTX of each role back (:mod:`.read`) into a
:class:`litmus.Test` of dialect ``PTX`` with the source's locations, thread names, observed
register names and condition. Comparing the two tests' outcomes is the harness's job (fuzz).

Compiler specs: ``NAME[:sm_XX][,OPT][,per-role]``, e.g. ``clang-cuda``, ``clang-ocl:sm_70,O0``,
``nvcc-libcu:sm_90,O2,per-role`` (defaults sm_90, O2, one kernel with a role switch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from litmus import Test

from ..backend import BackendError, BackendRefused
from . import toolchain
from .emit_clang_cuda import ClangCuda
from .emit_clang_ocl import ClangOcl
from .emit_common import Spelling, emit, emit_batch, refusal_of
from .emit_nvcc_builtins import NvccBuiltins
from .emit_nvcc_libcu import NvccLibcu
from .layout import make_layout
from .read import litmus_text, read_back, read_roles

COMPILERS = ("clang-cuda", "clang-ocl", "nvcc-libcu", "nvcc-builtins")
SMS = (70, 75, 80, 86, 89, 90)
OPTS = ("O0", "O1", "O2", "O3")
SPELLINGS: dict[str, type[Spelling]] = {"clang-cuda": ClangCuda, "clang-ocl": ClangOcl,
                                        "nvcc-libcu": NvccLibcu, "nvcc-builtins": NvccBuiltins}
#: source dialects each front end accepts
DIALECTS = {"clang-cuda": ("C", "OPENCL", "CUDA"), "clang-ocl": ("C", "OPENCL", "CUDA"),
            "nvcc-libcu": ("C", "OPENCL", "CUDA"), "nvcc-builtins": ("C", "OPENCL", "CUDA")}


@dataclass(frozen=True)
class Compiler:
    name: str
    sm: int = 90
    opt: str = "O2"
    per_role: bool = False

    def spec(self) -> str:
        return f"{self.name}:sm_{self.sm},{self.opt}" + (",per-role" if self.per_role else "")


def parse_spec(spec: str) -> Compiler:
    """``NAME[:sm_XX][,OPT][,per-role]`` (options in any order after the colon)."""
    name, _, rest = spec.strip().partition(":")
    if name not in COMPILERS:
        raise BackendError(f"unknown compiler {name!r} in {spec!r} "
                           f"(known: {', '.join(COMPILERS)})")
    sm, opt, per_role = 90, "O2", False
    for part in [p.strip() for p in rest.split(",")] if rest else []:
        m = re.fullmatch(r"sm_?(\d+)", part)
        if m:
            sm = int(m.group(1))
            if sm not in SMS:
                raise BackendError(f"unsupported target {part!r} in {spec!r} "
                                   f"(known: {', '.join(f'sm_{s}' for s in SMS)})")
        elif part in OPTS:
            opt = part
        elif part in ("per-role", "switch"):
            per_role = part == "per-role"
        else:
            raise BackendError(f"bad compiler option {part!r} in {spec!r} "
                               f"(expected sm_XX, O0..O3, per-role or switch)")
    return Compiler(name, sm, opt, per_role)


def available(c: Compiler) -> str | None:
    """None when ``c`` can run here, else why not (tests skip with it)."""
    return toolchain.unavailable(c.name, c.sm)


def refusal(test: Test, c: Compiler) -> str | None:
    """Why this front end cannot compile this source (None when it can)."""
    if test.dialect not in DIALECTS[c.name]:
        return f"{c.name} compiles C, OPENCL and CUDA sources, not {test.dialect}"
    for loc in test.locations:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", loc.name):
            return f"location {loc.name!r} (an array element) has no PTX-dialect name"
    if len(test.threads) == 0:
        return "a test without threads"
    return refusal_of(test, SPELLINGS[c.name]())


@dataclass
class Compiled:
    compiler: Compiler
    source: str
    ptx: str
    command: list[str]
    version: str
    test: Test
    origin: list
    cached: bool


def _register_base(test: Test) -> int:
    top = 0
    for tid in range(len(test.threads)):
        for r in test.registers(tid):
            if re.fullmatch(r"r\d+", r):
                top = max(top, int(r[1:]))
    return 10 * (top // 10 + 1)


def compile_test(test: Test, c: Compiler,
                 mutate: Callable[[str], str] | None = None) -> Compiled:
    """Emit, compile (cached) and read back ``test`` with compiler ``c``."""
    why = refusal(test, c)
    if why is not None:
        raise BackendRefused(f"{c.name}: {why}")
    sp = SPELLINGS[c.name]()
    em = emit(test, sp, c.per_role)
    ptx, cached = toolchain.compile_ptx(c.name, c.sm, c.opt, sp.SUFFIX, em.text)
    text = mutate(ptx) if mutate is not None else ptx
    back, origin = read_ptx(test, text, c.per_role, "test" + sp.SUFFIX, em.layout)
    cmd = toolchain.command(c.name, c.sm, c.opt, sp.SUFFIX)
    return Compiled(c, em.text, text, [cmd], toolchain.version(c.name), back, origin, cached)


def compile_many(tests: list[Test], c: Compiler,
                 mutate: Callable[[str], str] | None = None) -> list:
    """Compile several tests in ONE compiler run (their kernels side by side in one source) and
    read each back: a :class:`Compiled` per test, or the BackendError (BackendRefused) it met.

    nvcc spends seconds per run in its front end whatever the source size, so a campaign that
    batches its programs gets many times the throughput of :func:`compile_test` with an empty
    cache. Each Compiled's ``source``/``ptx`` are the whole batch's (what the compiler saw); its
    kernels are ``t<i>_litmus`` / ``t<i>_P<k>``. If the batch does not compile, each test is
    compiled alone (so one bad program costs only itself)."""
    out: list = [None] * len(tests)
    ok = []
    for i, t in enumerate(tests):
        why = refusal(t, c)
        if why is not None:
            out[i] = BackendRefused(f"{c.name}: {why}")
        else:
            ok.append(i)
    if not ok:
        return out
    sp = SPELLINGS[c.name]()
    try:
        text, ems = emit_batch([tests[i] for i in ok], sp, c.per_role)
        ptx, cached = toolchain.compile_ptx(c.name, c.sm, c.opt, sp.SUFFIX, text)
    except BackendError:
        for i in ok:
            try:
                out[i] = compile_test(tests[i], c, mutate)
            except BackendError as e:
                out[i] = e
        return out
    read_text = mutate(ptx) if mutate is not None else ptx
    cmd = toolchain.command(c.name, c.sm, c.opt, sp.SUFFIX)
    for j, i in enumerate(ok):
        try:
            back, origin = read_ptx(tests[i], read_text, c.per_role, "test" + sp.SUFFIX,
                                    ems[j].layout, prefix=f"t{j}_")
            out[i] = Compiled(c, text, read_text, [cmd], toolchain.version(c.name), back,
                              origin, cached)
        except BackendError as e:
            out[i] = e
    return out


def read_ptx(test: Test, ptx: str, per_role: bool = False, source_name: str = "test.cu",
             layout=None, prefix: str = "") -> tuple[Test, list]:
    """Read PTX compiled from ``test``'s kernel (the layout of :mod:`hw.ptxc.layout`: kernel
    ``litmus`` with a role switch, or ``P<k>`` per role) back into a PTX-dialect test, and the
    per-row origins; BackendError naming the PTX line on anything the reader does not follow."""
    lay = layout if layout is not None else make_layout(test)
    kernels = {k: prefix + (f"P{k}" if per_role else "litmus") for k in range(len(test.threads))}
    reads = read_roles(ptx, source_name, kernels, lay, [name for name, _ in lay.params],
                       _register_base(test))
    back = read_back(test, litmus_text(test, lay, reads))
    origin = []
    for tid, r in enumerate(reads):
        if len(back.threads[tid].code) != len(r.origin):
            raise BackendError(f"P{tid}: read-back rows ({len(back.threads[tid].code)}) and "
                               f"PTX origins ({len(r.origin)}) differ")
        origin.append(list(r.origin))
    return back, origin


def ptxas_check(ptx: str, sm: int) -> str | None:
    """Validate PTX with ptxas when present: None ok (or ptxas absent), else the error text."""
    return toolchain.ptxas_check(ptx, sm)


__all__ = ["COMPILERS", "Compiler", "Compiled", "available", "compile_many", "compile_test",
           "parse_spec",
           "ptxas_check", "read_ptx", "refusal"]

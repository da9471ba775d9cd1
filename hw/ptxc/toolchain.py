"""The compilers: command lines, versions, the PTX compile cache, and ptxas validation.

Commands (recorded verbatim in :class:`hw.ptxc.Compiled`, with ``test.cu``/``test.cl`` and
``test.ptx`` as the file names):

- ``clang-cuda``: ``clang-22 -x cuda --cuda-device-only -nocudainc -nocudalib
  --cuda-gpu-arch=sm_XX -OX -gline-tables-only -Wno-unknown-cuda-version -S -o test.ptx test.cu``
- ``clang-ocl``: ``clang-22 -x cl -cl-std=CL2.0 -target nvptx64-nvidia-nvcl -march=sm_XX -OX
  -S -o test.ptx test.cl`` (no line tables: for the ``nvcl`` target clang then emits a ``.file``
  directive and debug sections that ptxas rejects, so clang-ocl origins have no source line)
- ``nvcc-libcu`` / ``nvcc-builtins``: ``nvcc -arch=sm_XX -ptx -Xcicc -OX -lineinfo -o test.ptx
  test.cu``. nvcc's own ``-O`` is the host optimisation level; device code is optimised by
  cicc (NVVM), whose level ``-Xcicc -O0..-O3`` is what the option level means here (nvcc's
  default is cicc -O3; ``-G`` would also turn off ptxas optimisation and add debug code).
  nvcc 13.0 supports sm_75 and newer only: sm_70 is unavailable (:func:`unavailable`).

Line tables (``-gline-tables-only`` / ``-lineinfo``) only add ``.loc`` directives: the reader
uses them to name the source line of each PTX instruction. The cache key is the compiler's
identity (its ``--version`` text, path, size and mtime), the full command and the source text;
entries are JSON files under hw/isa's cache folder, subfolder ``ptxc/``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile

from ..backend import BackendError
from ..isa import toolchain as isa_toolchain

CLANG = os.environ.get("SCOPEFUZZ_CLANG", "clang-22")
NVCC = os.environ.get("SCOPEFUZZ_NVCC", "nvcc")
PTXAS = os.environ.get("SCOPEFUZZ_PTXAS", "ptxas")
TIMEOUT_S = 120
NVCC_MIN_SM = 75


def tool_of(name: str) -> str:
    return CLANG if name.startswith("clang") else NVCC


def args(name: str, sm: int, opt: str, src: str, out: str) -> list[str]:
    if name == "clang-cuda":
        return [CLANG, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
                f"--cuda-gpu-arch=sm_{sm}", f"-{opt}", "-gline-tables-only",
                "-Wno-unknown-cuda-version", "-S", "-o", out, src]
    if name == "clang-ocl":
        return [CLANG, "-x", "cl", "-cl-std=CL2.0", "-target", "nvptx64-nvidia-nvcl",
                f"-march=sm_{sm}", f"-{opt}", "-S", "-o", out, src]
    return [NVCC, f"-arch=sm_{sm}", "-ptx", "-Xcicc", f"-{opt}", "-lineinfo", "-o", out, src]


def command(name: str, sm: int, opt: str, suffix: str) -> str:
    return shlex.join(args(name, sm, opt, "test" + suffix, "test.ptx"))


def unavailable(name: str, sm: int) -> str | None:
    tool = tool_of(name)
    if shutil.which(tool) is None:
        return f"{tool} not found on PATH"
    if tool == NVCC and sm < NVCC_MIN_SM:
        return f"nvcc 13 does not support sm_{sm} (lowest sm_{NVCC_MIN_SM})"
    return None


@functools.lru_cache(maxsize=None)
def identity(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise BackendError(f"{tool} not found on PATH")
    real = os.path.realpath(path)
    st = os.stat(real)
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise BackendError(f"{tool} --version failed: {e}") from None
    return f"{out.strip()}\n{real} {st.st_size} {int(st.st_mtime)}"


def version(name: str) -> str:
    """The version line(s) a bug report names (clang's first line; nvcc's release lines)."""
    text = identity(tool_of(name)).splitlines()[:-1]
    if tool_of(name) == CLANG:
        return text[0]
    return " / ".join(ln for ln in text if "release" in ln or ln.startswith("Build")) or text[-1]


@functools.lru_cache(maxsize=None)
def cache_dir() -> str | None:
    """hw/isa's cache folder with a ``ptxc/`` subfolder (None when nothing can be written)."""
    root = isa_toolchain.cache_dir()
    if root is None:
        return None
    d = os.path.join(root, "ptxc")
    return d if isa_toolchain._dir_ok(d) else None


_MEMO: dict[str, tuple[str, bool]] = {}
_MEMO_MAX = 4096


def _key(name: str, sm: int, opt: str, suffix: str, source: str) -> str:
    h = hashlib.sha256()
    for part in (identity(tool_of(name)), command(name, sm, opt, suffix), source):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def compile_ptx(name: str, sm: int, opt: str, suffix: str, source: str) -> tuple[str, bool]:
    """(PTX text, whether it came from the cache); BackendError naming the command and the
    compiler's first error line on failure."""
    why = unavailable(name, sm)
    if why is not None:
        raise BackendError(f"{name}: {why}")
    key = _key(name, sm, opt, suffix, source)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit[0], True
    d = cache_dir()
    path = os.path.join(d, key + ".json") if d else None
    if path and os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                rec = json.load(f)
            if rec.get("source") == source:
                _remember(key, rec["ptx"])
                return rec["ptx"], True
        except (OSError, ValueError, KeyError):
            pass                                  # a damaged entry: compile again
    cmd = command(name, sm, opt, suffix)
    with tempfile.TemporaryDirectory(prefix="scopefuzz-ptxc-") as tmp:
        src, out = os.path.join(tmp, "test" + suffix), os.path.join(tmp, "test.ptx")
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        try:
            r = subprocess.run(args(name, sm, opt, src, out), capture_output=True, text=True,
                               timeout=TIMEOUT_S, cwd=tmp)
        except FileNotFoundError:
            raise BackendError(f"{tool_of(name)} not found on PATH") from None
        except subprocess.TimeoutExpired:
            raise BackendError(f"{cmd}: timed out after {TIMEOUT_S} s") from None
        if r.returncode != 0:
            err = [ln for ln in r.stderr.splitlines() if "error" in ln] or \
                r.stderr.splitlines() or [f"exit status {r.returncode}"]
            first = err[0].replace(src, "test" + suffix).replace(tmp + "/", "").strip()
            raise BackendError(f"{cmd}: {first}")
        with open(out, encoding="utf-8") as f:
            ptx = f.read()
    if path:
        try:
            fd, tmpname = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"source": source, "command": cmd, "version": version(name),
                           "ptx": ptx}, f)
            os.replace(tmpname, path)
        except OSError:
            pass                                  # caching is best effort
    _remember(key, ptx)
    return ptx, False


def _remember(key: str, ptx: str) -> None:
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.pop(next(iter(_MEMO)))
    _MEMO[key] = (ptx, True)


def clear_memo() -> None:
    """Forget the in-process copies (benchmarks measuring an empty cache use it)."""
    _MEMO.clear()


def ptxas_check(ptx: str, sm: int) -> str | None:
    """``ptxas -arch=sm_XX`` on ``ptx``: None when valid (or ptxas absent: see
    :func:`ptxas_unavailable`), else ptxas's first error line."""
    if shutil.which(PTXAS) is None:
        return None
    with tempfile.TemporaryDirectory(prefix="scopefuzz-ptxas-") as tmp:
        src = os.path.join(tmp, "test.ptx")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx)
        try:
            r = subprocess.run([PTXAS, f"-arch=sm_{sm}", src, "-o", os.path.join(tmp, "t.cubin")],
                               capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"ptxas timed out after {TIMEOUT_S} s"
        if r.returncode == 0:
            return None
        err = [ln for ln in r.stderr.splitlines() if "error" in ln] or \
            r.stderr.splitlines() or [f"exit status {r.returncode}"]
        return err[0].replace(src, "test.ptx").strip()


def ptxas_unavailable() -> str | None:
    return None if shutil.which(PTXAS) else f"{PTXAS} not found on PATH"

"""clang-22 and llvm-objdump-22: compile a test's OpenCL C, disassemble it, cache the result.

The cache key is a hash of the source, the target and its flags, and both tools' versions (their
``--version`` text and the resolved binary path, size and modification time), so a new compiler
never serves stale code. Cache directory: ``$SCOPEFUZZ_ISA_CACHE``, else
``$XDG_CACHE_HOME/scopefuzz/isa``, else ``~/.cache/scopefuzz/isa``; when that cannot be written
(a read-only HOME) a per-user folder under the system temp dir; when that fails too, no disk
cache (an in-process one remains). Entries are written atomically (temp file + rename), so
parallel processes may share the directory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass

from ..backend import BackendError
from .targets import Target

CLANG = os.environ.get("SCOPEFUZZ_CLANG", "clang-22")
OBJDUMP = os.environ.get("SCOPEFUZZ_OBJDUMP", "llvm-objdump-22")
BASE_FLAGS = ("-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-nogpulib")
TIMEOUT_S = 120


class ToolchainError(BackendError):
    """clang-22 / llvm-objdump-22 missing or failing (one line)."""


@dataclass(frozen=True)
class Compiled:
    """One compilation: the commands (as a user would type them), versions, disassembly."""

    source: str
    clang_cmd: str
    objdump_cmd: str
    version: str
    disasm: str
    cached: bool = False


def tools_available() -> str | None:
    """None when both tools are on PATH, else why not (for skips and errors)."""
    for tool in (CLANG, OBJDUMP):
        if shutil.which(tool) is None:
            return f"{tool} not found on PATH (Debian: apt-get install clang-22 llvm-22)"
    return None


@functools.lru_cache(maxsize=None)
def _identity(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise ToolchainError(f"{tool} not found on PATH (Debian: apt-get install clang-22 llvm-22)")
    real = os.path.realpath(path)
    st = os.stat(real)
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolchainError(f"{tool} --version failed: {e}") from None
    return f"{out.strip()}\n{real} {st.st_size} {int(st.st_mtime)}"


def version() -> str:
    """clang's first version line (what a bug report names)."""
    return _identity(CLANG).splitlines()[0]


def clang_args(target: Target, src: str, obj: str, extra: tuple[str, ...] = ()) -> list[str]:
    return [CLANG, *BASE_FLAGS, f"-mcpu={target.name}", *target.clang_flags(), *extra, "-c", src,
            "-o", obj]


#: what a batch adds to the command (not at -O0): internalize every function but the kernels
#: before optimising, so that the ``__clang_ocl_kern_imp_NAME`` clone of each kernel (a callable
#: copy, never called at -O2: the kernel has it inlined) is deleted instead of compiled. Half of
#: a batch's functions, and 60 % of its clang time; the kernels' code is the same instruction
#: for instruction (tests/test_isa_batch.py compares them with each test's own compilation on
#: every target).
INTERNALIZE = ("-mllvm", "-amdgpu-internalize-symbols")


def objdump_args(target: Target, obj: str) -> list[str]:
    return [OBJDUMP, "-d", f"--mcpu={target.name}", obj]


def _dir_ok(d: str) -> bool:
    try:
        os.makedirs(d, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=d, prefix=".probe-", delete=True)
        probe.close()
        return True
    except OSError:
        return False


@functools.lru_cache(maxsize=None)
def cache_dir() -> str | None:
    """The disk cache folder in use (created), or None when no folder can be written."""
    cands = []
    if os.environ.get("SCOPEFUZZ_ISA_CACHE"):
        cands.append(os.environ["SCOPEFUZZ_ISA_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    cands.append(os.path.join(xdg, "scopefuzz", "isa"))
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    cands.append(os.path.join(tempfile.gettempdir(), f"scopefuzz-isa-{uid}"))
    for d in cands:
        if _dir_ok(d):
            return d
    return None


_MEMO: dict[str, Compiled] = {}
_MEMO_MAX = 4096
_MEMO_LOCK = threading.Lock()      # a campaign compiles the next batch in a background thread


def _key(source: str, target: Target) -> str:
    h = hashlib.sha256()
    for part in (source, target.name, " ".join(target.clang_flags()), _identity(CLANG),
                 _identity(OBJDUMP)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def _commands(target: Target) -> tuple[str, str]:
    return (shlex.join(clang_args(target, "test.cl", "test.o")),
            shlex.join(objdump_args(target, "test.o")))


def compile_source(source: str, target: Target) -> Compiled:
    """Compile and disassemble ``source`` for ``target`` (cached); ToolchainError on failure."""
    key = _key(source, target)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    cc, oc = _commands(target)
    d = cache_dir()
    path = os.path.join(d, key + ".json") if d else None
    if path and os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                rec = json.load(f)
            if rec.get("source") == source:
                out = Compiled(source, cc, oc, version(), rec["disasm"], cached=True)
                _remember(key, out)
                return out
        except (OSError, ValueError, KeyError):
            pass                                  # a damaged entry: compile again
    with tempfile.TemporaryDirectory(prefix="scopefuzz-isa-") as tmp:
        src, obj = os.path.join(tmp, "test.cl"), os.path.join(tmp, "test.o")
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        for args, what in ((clang_args(target, src, obj), "clang"),
                           (objdump_args(target, obj), "llvm-objdump")):
            try:
                r = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
            except FileNotFoundError:
                raise ToolchainError(f"{args[0]} not found on PATH") from None
            except subprocess.TimeoutExpired:
                raise ToolchainError(f"{what} timed out after {TIMEOUT_S} s") from None
            if r.returncode != 0:
                err = [ln for ln in r.stderr.splitlines() if "error" in ln] or \
                    r.stderr.splitlines() or [f"exit status {r.returncode}"]
                raise ToolchainError(f"{what} failed for {target.name}: "
                                     f"{err[0].replace(src, 'test.cl').strip()}")
        disasm = r.stdout
    out = Compiled(source, cc, oc, version(), disasm)
    if path:
        _store(key, out, target)
    _remember(key, out)
    return out


_KERNEL_DEF = re.compile(r"__kernel void (\w+)\(")


def _batch_name(k: int, name: str) -> str:
    return f"sfb{k}_{name}"


def _run_tool(args: list[str], timeout: float, cancel: threading.Event | None):
    """``subprocess.run`` that gives up (kills the tool, returns None) when ``cancel`` is set or
    the tool fails to start or runs past ``timeout``."""
    if cancel is not None and cancel.is_set():
        return None
    try:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError:
        return None
    waited = 0.0
    while True:
        try:
            out, err = p.communicate(timeout=0.05)
            return subprocess.CompletedProcess(args, p.returncode, out, err)
        except subprocess.TimeoutExpired:
            waited += 0.05
            if (cancel is not None and cancel.is_set()) or waited > timeout:
                p.kill()
                p.communicate()
                return None


_PADDING = re.compile(r"^\s+(s_nop 0|s_code_end)\s*//")


def _drop_padding(lines: list[str]) -> list[str]:
    """A kernel's lines less the alignment padding after its last ``s_endpgm`` (in a batch
    without the kernels' clones, the next kernel starts at the next 256-byte boundary)."""
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    while end > 0 and _PADDING.match(lines[end - 1]):
        end -= 1
    if end < len(lines) and end > 0 and "s_endpgm" in lines[end - 1]:
        return lines[:end]
    return lines


def compile_batch(sources: list[str], target: Target,
                  cancel: threading.Event | None = None) -> int:
    """Compile many sources for ``target`` in one clang-22 call and disassemble them in one
    llvm-objdump-22 call, filling the caches that :func:`compile_source` reads; returns how many
    were compiled (those already cached are skipped).

    The sources become one translation unit, each kernel renamed ``sfb<k>_<name>`` (one ``cc1``
    run instead of one process pair per test: on a loaded machine, process start-up and loading
    LLVM dominate the time of compiling a litmus test). Every kernel is compiled on its own (no
    calls between them), so its code is the code of its own compilation; the listing is cut per
    source and renamed back, and each part cached under that source's key. When the batch fails
    (one source clang rejects), nothing is cached: each test then compiles alone, and its own
    error names it. Outside -O0 the batch is compiled with :data:`INTERNALIZE`. ``cancel``
    (set by another thread) stops the batch early: the tools are killed, nothing is cached.
    """
    todo: dict[str, tuple[int, str]] = {}
    d = cache_dir()
    for src in sources:
        key = _key(src, target)
        if key in _MEMO or key in todo or (d and os.path.exists(os.path.join(d, key + ".json"))):
            continue
        todo[key] = (len(todo), src)
    if len(todo) < 2:
        return 0
    names: dict[str, tuple[str, str]] = {}          # batch name -> (key, original name)
    parts = []
    for key, (k, src) in todo.items():
        def rename(m, k=k, key=key):
            names[_batch_name(k, m.group(1))] = (key, m.group(1))
            return f"__kernel void {_batch_name(k, m.group(1))}("
        parts.append(f"/* ---- batch part {k} ---- */\n" + _KERNEL_DEF.sub(rename, src))
    with tempfile.TemporaryDirectory(prefix="scopefuzz-isab-") as tmp:
        src_path, obj = os.path.join(tmp, "batch.cl"), os.path.join(tmp, "batch.o")
        with open(src_path, "w", encoding="utf-8") as f:
            f.write("\n".join(parts))
        extra = INTERNALIZE if target.opt != "-O0" else ()
        for args in (clang_args(target, src_path, obj, extra), objdump_args(target, obj)):
            r = _run_tool(args, TIMEOUT_S * 4, cancel)
            if r is None or r.returncode != 0:
                return 0
    per: dict[str, list[list[str]]] = {key: [] for key in todo}    # key -> its symbols' lines
    cur = None
    sym = re.compile(r"^([0-9a-fA-F]+) <([^>]+)>:\s*$")
    for line in r.stdout.splitlines():
        m = sym.match(line)
        if m:
            name = m.group(2)
            base = name[len("__clang_ocl_kern_imp_"):] if name.startswith("__clang_ocl_kern_imp_") \
                else name
            cur = names.get(base)
            if cur is not None:
                per[cur[0]].append([])
        if cur is not None:
            per[cur[0]][-1].append(line)
    cc, oc = _commands(target)
    ver = version()
    for key, (k, src) in todo.items():
        text = "".join("\n" + "\n".join(_drop_padding(sec) if extra else sec)
                       for sec in per[key]) + "\n"
        for bname, (bkey, orig) in names.items():
            if bkey == key:
                text = re.sub(rf"\b{re.escape(bname)}\b", orig, text)
        out = Compiled(src, cc, oc, ver, "batch.o:\tfile format elf64-amdgpu\n\n"
                       "Disassembly of section .text:\n" + text)
        _store(key, out, target)
        _remember(key, out)
    return len(todo)


def _store(key: str, out: Compiled, target: Target) -> None:
    """Write one compilation to the disk cache (atomically; best effort)."""
    d = cache_dir()
    if not d:
        return
    try:
        fd, tmpname = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"source": out.source, "target": target.label(), "clang": out.clang_cmd,
                       "version": out.version, "disasm": out.disasm}, f)
        os.replace(tmpname, os.path.join(d, key + ".json"))
    except OSError:
        pass                                  # caching is best effort


def _remember(key: str, c: Compiled) -> None:
    with _MEMO_LOCK:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = c

"""``scopefuzz report --upstream FINDING_DIR``: the LLVM issue an ``isa`` finding needs.

Writes ``FINDING_DIR/upstream.md`` and, beside it in ``FINDING_DIR/upstream/``, the files it
names: ``test.cl`` (the OpenCL C), ``test.ll`` (clang-22 ``-S -emit-llvm``), ``interesting.py``
(the interestingness test: the marked instruction sequence is still emitted by ``llc-22``) and
``reduced.ll`` (``llvm-reduce-22 --test=interesting.py test.ll``; when llvm-reduce-22 is missing
or fails, the report says so and shows the unreduced IR).

The marked sequence comes from the finding's bucket (fuzz/buckets.py, hw/isa/culprit.py): a
``scalar-load`` bucket marks an ``s_load_dword`` after the acquire; a missing wait marks the
access that lacks it. The issue holds the title, both reproducers with their exact commands, the
compiled code with the instructions that matter marked, the AMDGPUUsage rule, the expected
(hand lowering) against the produced code, the litmus test with the simulator's histogram and
what would confirm it on hardware.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import hw
from litmus import parse

from .finding import FindingFileError, read_finding
from .findings import histogram_table, outcome_text

LLC = os.environ.get("SCOPEFUZZ_LLC", "llc-22")
REDUCE = os.environ.get("SCOPEFUZZ_LLVM_REDUCE", "llvm-reduce-22")
REDUCE_TIMEOUT_S = 600

#: the instructions that implement an acquire before the culprit (the first one starts the
#: marked sequence)
SYNC = r"(s_barrier|buffer_inv|buffer_wbinvl1|global_inv|buffer_gl[01]_inv)"

#: AMDGPUUsage rules (quoted in /work/shared/notes/llvm-amdgpu.md, docs/isa.md), per bucket kind
RULES = {
    "scalar-load": (
        "AMDGPUUsage, memory model (GFX90A/GFX942 and later): \"Scalar operations access a "
        "scalar L1 cache shared by all wavefronts on a group of CUs. The scalar and vector L1 "
        "caches are not coherent. However, scalar operations are used in a restricted way so do "
        "not impact the memory model.\" The acquire sequences invalidate only the vector caches "
        "(`buffer_inv`, `buffer_gl0_inv`, `global_inv`), so a load that must see a value made "
        "visible by an acquire cannot go through the scalar cache."),
    "missing-wait": (
        "AMDGPUUsage, memory model code sequences (GFX90A/GFX942, store atomic release "
        "workgroup): `s_waitcnt lgkm/vmcnt(0)` before the store — \"use lgkmcnt(0) if not "
        "TgSplit execution mode\"; and for GFX90A: \"the L2 ... each CU has a separate request "
        "queue per channel\", so \"s_waitcnt vmcnt(0) is needed\" to order one CU's global "
        "writes before a later release that another wave performs at agent scope "
        "(happens-before is transitive)."),
}


class UpstreamError(Exception):
    """The finding cannot be written up (one line)."""


def _family_rule(bucket: dict) -> str:
    sig = bucket.get("signature", "")
    if "scalar-load" in sig:
        return RULES["scalar-load"]
    if "missing-wait" in sig or "weaker-wait" in sig:
        return RULES["missing-wait"]
    return ("AMDGPUUsage, memory model: the code sequences table of the target's section (see "
            "/work/shared/notes/llvm-amdgpu.md §4) for the operation marked below.")


def marked_sequence(bucket: dict) -> tuple[list[str], str]:
    """(regexes the llc-22 output must match in order, the IR text it must keep) for a bucket."""
    sig = bucket.get("signature", "")
    ins = (bucket.get("instruction") or "").replace("before ", "").split()
    op = ins[0] if ins else ""
    if "scalar-load" in sig:
        return [SYNC, rf"\b{re.escape(op or 's_load_dword')}\s"], "acquire"
    m = re.search(r"missing-wait:(\w+)", sig)
    if m and op:
        return [rf"\b{re.escape(op)}\s"], "release"
    return ([rf"\b{re.escape(op)}\s"] if op else [SYNC]), ""


_SCRIPT = '''#!{python}
"""Interestingness test for llvm-reduce-22 (written by scopefuzz report --upstream): the IR
still has {ir!r} and llc-22 still emits, in this order, lines matching {seq!r}."""
import re, subprocess, sys
ir = open(sys.argv[1]).read()
if {ir!r} and {ir!r} not in ir:
    sys.exit(1)
try:
    r = subprocess.run({llc!r} + [sys.argv[1], "-o", "-"], capture_output=True, text=True,
                       timeout=60)
except Exception:
    sys.exit(1)
if r.returncode != 0:
    sys.exit(1)
pos = 0
for rx in {seq!r}:
    m = re.compile(rx).search(r.stdout, pos)
    if m is None:
        sys.exit(1)
    pos = m.end()
sys.exit(0)
'''


def _run(args, cwd, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _marked_listing(text: str, seq: list[str]) -> list[str]:
    """``text``'s lines with the first in-order matches of ``seq`` marked ``<==``."""
    out, k = [], 0
    for line in text.splitlines():
        if line.lstrip().startswith((".section", ".amdhsa", ".end_amdhsa", ".amdgpu_metadata")):
            continue          # the kernel descriptor and metadata: not the code
        mark = ""
        if k < len(seq) and re.search(seq[k], line):
            mark, k = "   <== marked", k + 1
        out.append(line + mark)
    return out


def write_upstream(finding_dir: str) -> str:
    """Write ``finding_dir/upstream.md`` (and ``upstream/``); returns its path."""
    path = os.path.join(finding_dir, "finding.json")
    if not os.path.exists(path):
        raise UpstreamError(f"{finding_dir}: not a finding directory (no finding.json)")
    try:
        rec = read_finding(path)
    except FindingFileError as e:
        raise UpstreamError(str(e)) from None
    backend = rec.backend if rec.backend != "?" else ""
    try:
        spec = hw.parse_backend_spec(backend) if backend else None
    except hw.BackendError as e:
        raise UpstreamError(f"{path}: {e}") from None
    if spec is None or spec.family != "isa":
        raise UpstreamError(f"{path}: an upstream report is for isa findings (compiled code), "
                            f"not {backend or '?'}")
    from hw.isa.backend import IsaBackend, tools_available
    from hw.isa.crosscheck import check, side_by_side
    from hw.isa.evidence import listing
    from hw.isa import toolchain
    why = tools_available()
    if why:
        raise UpstreamError(f"{path}: isa backend: {why}")
    try:
        be = IsaBackend(spec.detail, None)    # the compiler's own code: no mutant edits
    except Exception as e:
        raise UpstreamError(f"{path}: {e}") from None
    test = parse(rec.test)
    b = be.build(test)
    from hw.isa import machine as glue
    glue.machine(b)
    bucket = rec.bucket
    if not bucket:
        from .buckets import bucket_of
        bucket = bucket_of(rec.to_dict(), be)
    t = be.target
    up = os.path.join(finding_dir, "upstream")
    os.makedirs(up, exist_ok=True)
    with open(os.path.join(up, "test.cl"), "w", encoding="utf-8") as f:
        f.write(b.compiled.source)
    base = [toolchain.CLANG, *toolchain.BASE_FLAGS, f"-mcpu={t.name}", *t.clang_flags()]
    emit = base + ["-S", "-emit-llvm", "test.cl", "-o", "test.ll"]
    r = _run(emit, up)
    if r.returncode != 0:
        raise UpstreamError(f"clang-22 -emit-llvm failed: {(r.stderr.splitlines() or ['?'])[0]}")
    llc = [LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={t.name}", "-O2"]
    if t.wave64:
        llc.append("-mattr=+wavefrontsize64")
    if t.tgsplit:
        llc.append("-mattr=+tgsplit")
    if t.cumode:
        llc.append("-mattr=+cumode")
    if t.noscalar:
        llc.append("-amdgpu-scalarize-global-loads=false")
    seq, ir_keep = marked_sequence(bucket)
    with open(os.path.join(up, "interesting.py"), "w", encoding="utf-8") as f:
        f.write(_SCRIPT.format(python=sys.executable, ir=ir_keep, seq=seq, llc=llc))
    os.chmod(os.path.join(up, "interesting.py"), 0o755)
    check_full = _run([sys.executable, "interesting.py", "test.ll"], up)
    reduce_cmd = [REDUCE, "--test=interesting.py", "test.ll", "-o", "reduced.ll"]
    reduced, note = None, ""
    if check_full.returncode != 0:
        note = ("llc-22 on the unreduced IR does not emit the marked sequence (the behaviour "
                "needs clang's pipeline); the IR below is unreduced")
    else:
        try:
            rr = _run(reduce_cmd, up, REDUCE_TIMEOUT_S)
            if rr.returncode == 0 and os.path.exists(os.path.join(up, "reduced.ll")):
                with open(os.path.join(up, "reduced.ll"), encoding="utf-8") as f:
                    reduced = f.read()
            else:
                note = f"llvm-reduce-22 failed: {(rr.stderr.splitlines() or ['?'])[-1]}"
        except FileNotFoundError:
            note = f"{REDUCE} not found: the IR below is unreduced"
        except subprocess.TimeoutExpired:
            note = f"llvm-reduce-22 ran past {REDUCE_TIMEOUT_S} s: the IR below is unreduced"
    ir_file = "reduced.ll" if reduced is not None else "test.ll"
    with open(os.path.join(up, ir_file), encoding="utf-8") as f:
        ir = f.read()
    asm = _run(llc + [ir_file, "-o", "-"], up)
    _, checks = check(test, t, b)
    culprit = bucket.get("signature", "?")
    title = _title(bucket, t.name)
    lines = [f"# {title}", "",
             f"Found by scopefuzz (finding `{rec.id}`, bucket `{bucket.get('id', '?')}`: "
             f"`{culprit}`) on `{backend}` with {toolchain.version()}.", "",
             "## Reduced reproducer (LLVM IR)", ""]
    if note:
        lines += [f"Note: {note}.", ""]
    lines += ["```llvm", ir.rstrip("\n"), "```", "",
              "```", shlex.join(llc + [ir_file, "-o", "-"]), "```", "",
              f"Reduced with `{shlex.join(reduce_cmd)}` from `test.ll` made by "
              f"`{shlex.join(emit)}`; the interestingness test (`upstream/interesting.py`) keeps "
              f"IR that still contains `{ir_keep or '(anything)'}` and whose llc-22 output still "
              f"has lines matching, in order: " + ", ".join(f"`{s}`" for s in seq) + ".", "",
              "llc-22 output, the marked sequence flagged `<==`:", "", "```"]
    lines += _marked_listing(asm.stdout, seq) if asm.returncode == 0 else \
        [f"(llc-22 failed: {(asm.stderr.splitlines() or ['?'])[0]})"]
    lines += ["```", "", "## Reproducer (OpenCL C)", "", "```c", b.compiled.source.rstrip("\n"),
              "```", "", "```", b.compiled.clang_cmd, b.compiled.objdump_cmd, "```", "",
              "## Emitted instructions", "",
              "Each thread's executed code; `>>` marks memory instructions (what they do in "
              "scopefuzz's simulator, the litmus instruction they carry), `<==` the culprit:", ""]
    op = (bucket.get("instruction") or "").replace("before ", "").split()
    for th in b.threads:
        lines += ["```"]
        for line in listing(b, th):
            hit = op and re.search(rf"\b{re.escape(op[0])}\b", line)
            lines.append(line + ("   <== culprit" if hit else ""))
        lines += ["```", ""]
    lines += ["## The rule", "", "> " + _family_rule(bucket), "",
              "## Expected vs produced", "",
              "The expected sequence is the AMDGPUUsage code-sequence table as scopefuzz's "
              "hand lowering writes it (hw/sim/lower.py); the produced one is clang-22's, cut at "
              "the same memory accesses. `^` lines name the differences:", "", "```",
              side_by_side(b, checks).rstrip("\n"), "```", "",
              "## Litmus test and the simulator's histogram", "", "```",
              rec.test.rstrip("\n"), "```", "",
              f"The memory model (`{rec.model if rec.model is not None else 'amdgpu'}`, AMDGPUUsage's) forbids "
              f"`{outcome_text(rec.outcome)}`; the compiled code run on "
              f"scopefuzz's simulator of {t.name} ({rec.iterations if rec.iterations is not None else '?'} iterations):", "",
              *histogram_table(rec), "",
              "## What would confirm it on hardware", "",
              f"Run `upstream/test.cl` on a {t.name} GPU with one workgroup per kernel as the "
              "litmus placements say (work-item ids as in the source's `lid` tests), many "
              "iterations with memory stress, and look for the forbidden outcome above in the "
              "output slots (`m[1024...]`); e.g. `scopefuzz run --backend opencl:P:D` on the "
              "minimized test with the device's OpenCL driver. Seeing it confirms the bug; not "
              "seeing it in millions of iterations does not refute it (the window is narrow). "
              "The code-level evidence (the marked sequence against the rule) stands on its "
              "own.", ""]
    out = os.path.join(finding_dir, "upstream.md")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return out


def _title(bucket: dict, target: str) -> str:
    sig = bucket.get("signature", "")
    if "scalar-load" in sig:
        return (f"[AMDGPU] a plain global load after an acquire is selected as "
                f"{bucket.get('instruction') or 's_load'} (scalar cache, not invalidated by the "
                f"acquire) on {target}")
    m = re.search(r"missing-wait:(\w+) before (\S+)", sig)
    if m:
        return (f"[AMDGPU] no s_waitcnt {m.group(1)}(0) before {m.group(2)} of a release on "
                f"{target}: the release is not cumulative")
    return f"[AMDGPU] memory-model violation on {target}: {sig}"


def cmd_upstream(finding_dir: str) -> int:
    try:
        print(write_upstream(finding_dir))
        return 0
    except UpstreamError as e:
        print(f"scopefuzz report: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"scopefuzz report: cannot write in {finding_dir}: {e.strerror or e}",
              file=sys.stderr)
        return 3

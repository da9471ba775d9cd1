"""The ``ptx`` code-generation dialect (hw/opencl/emit_ptx.py): PTX tests -> OpenCL C 1.2 with
inline PTX, for NVIDIA GPUs. No device: the expectations are the PTX instructions the PTX ISA
spells for each construct (worked out by hand below), and the compile checks turn every kernel
into PTX text with ``clang-22 -target nvptx64-nvidia-cuda`` and assemble that with ``ptxas``
(which checks the inline PTX itself; skipped with the reason when a tool is absent)."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import litmus
from fuzz.ptx_strategies import draw_program
from hw.opencl.codegen import CodegenError, barrier_problem, generate
from hw.opencl.runner import default_kernel_language

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "ptx"
CLANG = shutil.which("clang-22")
PTXAS = shutil.which("ptxas")


def ptx_test(threads: str, decl: str = "x=0; y=0;", places: str = "") -> litmus.Test:
    rows = [r.split("|") for r in threads.strip().splitlines()]
    n = len(rows[0])
    head = " | ".join(f"P{i}@cta {i},gpu 0" for i in range(n)) if not places else places
    body = "\n".join(" " + " | ".join(c.strip() for c in r) + " ;" for r in rows)
    return litmus.parse(f"PTX t\n{{ {decl} }}\n {head} ;\n{body}\nexists (x == 0)\n")


def asm_lines(src: str) -> list[str]:
    """The inline-PTX instructions of the test's body, in program order (phase 0 onwards)."""
    body = src[src.index("/* phase 0 */"):]
    return re.findall(r'__asm__ __volatile__\("([^"]*)"', body)


# --- each construct: the PTX instruction (hand-derived from the PTX ISA's syntax) --------------

CASES = [
    # weak and strong accesses: ld{.weak,.relaxed.scope,.acquire.scope}.ss.type (PTX ISA, ld)
    ("ld.weak r0, x", "ld.weak.global.u32 %0, [%1];"),
    ("ld.relaxed.cta r0, x", "ld.relaxed.cta.global.u32 %0, [%1];"),
    ("ld.acquire.sys r0, x", "ld.acquire.sys.global.u32 %0, [%1];"),
    ("ld.volatile r0, x", "ld.volatile.global.u32 %0, [%1];"),
    ("st.weak x, 1", "st.weak.global.u32 [%0], %1;"),
    ("st.release.gpu x, 1", "st.release.gpu.global.u32 [%0], %1;"),
    ("st.relaxed.cluster x, 1", "st.relaxed.gpu.global.u32 [%0], %1;"),      # no clusters: .gpu
    # atom{.sem}{.scope}{.space}.op.type d, [a], b (PTX ISA, atom)
    ("atom.acq_rel.gpu.add r0, x, 1", "atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"),
    ("atom.acquire.cta.exch r0, x, 1", "atom.acquire.cta.global.exch.b32 %0, [%1], %2;"),
    ("atom.max r0, x, 1", "atom.relaxed.gpu.global.max.s32 %0, [%1], %2;"),   # default .relaxed.gpu
    ("atom.release.sys.inc r0, x, 3", "atom.release.sys.global.inc.u32 %0, [%1], %2;"),
    ("atom.cas r0, x, 0, 1", "atom.relaxed.gpu.global.cas.b32 %0, [%1], %2, %3;"),
    # red{.sem}{.scope}{.space}.op.type [a], b with .sem in {.relaxed, .release} (PTX ISA, red)
    ("red.release.gpu.or x, 2", "red.release.gpu.global.or.b32 [%0], %1;"),
    ("red.acquire.gpu.add x, 1", "atom.acquire.gpu.global.add.u32 %0, [%1], %2;"),
    # fences (PTX ISA, membar/fence): membar.gl = fence.sc.gpu on sm_70+
    ("fence.sc.cta", "fence.sc.cta;"),
    ("fence.acq_rel.sys", "fence.acq_rel.sys;"),
    ("fence.acquire.gpu", "fence.acq_rel.gpu;"),
    ("membar.gl", "fence.sc.gpu;"),
    ("fence.proxy.alias", "fence.proxy.alias;"),
]


@pytest.mark.parametrize("instr,want", CASES)
def test_each_construct_is_the_ptx_instruction(instr, want):
    assert asm_lines(generate(ptx_test(instr), "ptx").source) == [want]


def test_operands_constants_registers_and_sub():
    src = generate(ptx_test("ld.weak r0, x\nst.weak y, r0\natom.sub r1, x, 3"), "ptx").source
    assert '"l"(p0_y), "r"(P0_r0)' in src                 # the register: a data dependency
    assert '"l"(p0_x), "r"(-3)' in src                    # x - 3 = x + (-3): atom has no .sub
    # PTX operands are registers or integers; an IR expression operand (other front ends) is refused
    t = ptx_test("ld.weak r0, x\nst.weak y, r0")
    ld, st = t.threads[0].code
    th = dataclasses.replace(t.threads[0], code=(ld, st.replace(attrs=("val=r0 + 1",))))
    t = dataclasses.replace(t, threads=(th,))
    with pytest.raises(CodegenError, match=r"P0: .*: an expression operand has no kernel"):
        generate(t, "ptx")


def test_program_order_is_kept_and_registers_reach_out():
    t = litmus.parse_file(CORPUS / "MP+relacq.gpu.xcta.litmus")
    src = generate(t, "ptx").source
    assert [a.split(" ")[0] for a in asm_lines(src)] == [
        "st.weak.global.u32", "st.release.gpu.global.u32",
        "ld.acquire.gpu.global.u32", "ld.weak.global.u32"]
    assert "out[(ulong)i1 * 2u + 0u] = P1_r0;" in src and "out[(ulong)i1 * 2u + 1u] = P1_r1;" in src
    # no OpenCL library call: ids, the phase barrier and the rendezvous counter are PTX too
    assert not re.search(r"\b(get_group_id|get_local_id|barrier|atomic_\w+)\(", src)


def test_weakenings_miscompile_as_documented():
    t = ptx_test("st.weak x, 1 | ld.acquire.gpu r0, y\nfence.sc.gpu | fence.sc.gpu\n"
                 "st.release.gpu y, 1 | ld.weak r1, x")
    assert "fence.acq_rel.gpu;" in asm_lines(generate(t, "ptx", "sc-fence-as-acq_rel").source)
    lines = asm_lines(generate(t, "ptx", "relaxed").source)
    assert not any(w in a for a in lines for w in ("acquire", "release", "fence."))


def test_barriers_are_phase_boundaries_and_arrives_fold():
    t = litmus.parse_file(CORPUS / "MP+bar.samecta.litmus")
    src = generate(t, "ptx").source
    body = src[src.index("/* phase 0 */"):]
    # the writer's store before the one boundary, the reader's load after it
    assert body.index("st.weak") < body.index("SF_PHASE_BARRIER();") < body.index("ld.weak")
    assert generate(t, "ptx").phases == 1
    arrive = generate(litmus.parse_file(CORPUS / "MP+bar.arrive.samecta.litmus"), "ptx")
    assert arrive.phases == 1 and "the arrive folds into the next phase barrier" in arrive.source


def test_barriers_the_kernel_cannot_honour_are_named():
    hang = litmus.parse_file(CORPUS / "MP+bar.count3.hang.litmus")
    assert "barrier thread count 3 is not the 2 threads of its CTA" in barrier_problem(hang)
    two = "P0@cta 0,gpu 0 | P1@cta 0,gpu 0"
    regid = ptx_test("ld.weak r0, x | bar.cta.sync 0, 1\nbar.cta.sync 0, r0 | ld.weak r1, x",
                     places=two)
    assert "barrier id r0 is a register" in barrier_problem(regid)
    ok = ptx_test("st.weak x, 1 | bar.cta.sync 0, 1, 2\nbar.cta.sync 0, 1, 2 | ld.weak r1, x",
                  places=two)
    assert barrier_problem(ok) is None


def _uses_proxy_or_alias(path: Path) -> bool:
    """From the file text: a surface/texture/constant access or an alias declaration."""
    text = path.read_text()
    return bool(re.search(r"\b(suld|sust|tld|cold|suatom|sured)\b|\baliases\b", text))


def test_every_corpus_test_is_lowered_or_refused_for_proxies_and_aliases():
    lowered = refused = 0
    for path in sorted(CORPUS.glob("*.litmus")):
        t = litmus.parse_file(path)
        try:
            k = generate(t, "ptx")
        except CodegenError as e:
            assert _uses_proxy_or_alias(path), (path.name, e)
            assert re.search(r"(surface|texture|constant) proxy|an alias", str(e))
            assert "\n" not in str(e)
            refused += 1
            continue
        assert not _uses_proxy_or_alias(path), path.name
        assert k.kernel_language == "ptx"
        lowered += 1
    assert lowered >= 45 and refused >= 1


def test_dialects_and_tests_are_matched():
    amd = litmus.parse("AMDGPU a\n{ x = 0; }\n P0@wg 0 ;\n ld r0, x ;\nexists (true)\n")
    with pytest.raises(CodegenError, match="the ptx dialect lowers PTX tests; this test is AMDGPU"):
        generate(amd, "ptx")
    with pytest.raises(CodegenError, match=r"lowers AMDGPU tests; this test is PTX \(use "
                                           r"--dialect ptx\)"):
        generate(ptx_test("ld.weak r0, x"), "cl3")


def test_the_runner_picks_ptx_on_nvidia_gpus():
    assert default_kernel_language("NVIDIA CUDA", gpu=True) == "ptx"
    assert default_kernel_language("AMD Accelerated Parallel Processing", gpu=True) == "amdgcn"
    assert default_kernel_language("Portable Computing Language", gpu=False) == "cl3"
    assert default_kernel_language("NVIDIA CUDA", gpu=False) == "cl3"


def test_codegen_command_defaults_to_ptx_for_ptx_tests():
    f = str(CORPUS / "SB+fence.sc.gpu.xcta.litmus")
    r = subprocess.run([sys.executable, "-m", "fuzz.cli", "codegen", f], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "scopefuzz ptx kernel" in r.stdout
    assert asm_lines(r.stdout).count("fence.sc.gpu;") == 2
    r = subprocess.run([sys.executable, "-m", "fuzz.cli", "codegen", "--dialect", "cl3", f],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--dialect ptx" in r.stderr


# --- compile checks: clang-22 (nvptx64) to PTX text, ptxas over that text --------------------

def _ptx_text(tmp_path: Path, name: str, src: str) -> str:
    cl, out = tmp_path / f"{name}.cl", tmp_path / f"{name}.ptx"
    cl.write_text(src)
    r = subprocess.run([CLANG, "-target", "nvptx64-nvidia-cuda", "-march=sm_70", "-x", "cl",
                        "-cl-std=CL1.2", "-O1", "-S", "-o", str(out), str(cl)],
                       capture_output=True, text=True)
    assert r.returncode == 0, (name, r.stderr[:2000])
    if PTXAS:
        # CUDA 12+ ptxas starts at sm_75; the PTX text targets sm_70, which sm_75 runs
        a = subprocess.run([PTXAS, "-arch=sm_75", str(out), "-o", str(tmp_path / f"{name}.o")],
                           capture_output=True, text=True)
        assert a.returncode == 0, (name, a.stderr[:2000])
    return out.read_text()


def _kernels():
    for path in sorted(CORPUS.glob("*.litmus")):
        try:
            yield path.stem, generate(litmus.parse_file(path), "ptx").source
        except CodegenError:
            pass
    for i in range(40):                      # programs of the PTX fuzzer (fixed seed)
        t = draw_program(7, i)
        if barrier_problem(t) is None:
            try:
                yield f"fuzz{i}", generate(t, "ptx").source
            except CodegenError:
                pass


@pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")
def test_every_kernel_compiles_for_nvptx64_with_its_instructions(tmp_path):
    n = 0
    for name, src in _kernels():
        ptx = _ptx_text(tmp_path, re.sub(r"\W", "_", name), src)
        inline = re.findall(r"// begin inline asm\n\s*(.*?)\n\s*// end inline asm", ptx)
        # every instruction of the test survives, in program order, into the PTX text
        want = [a.split(" ")[0] for a in asm_lines(src)]
        got = [a.split()[0] for a in inline]
        it = iter(got)
        assert all(w in it for w in want), (name, want, got)
        n += 1
    assert n >= 60


@pytest.mark.skipif(CLANG is None or PTXAS is None, reason="clang-22 or ptxas not installed")
def test_ptxas_rejects_a_wrong_instruction(tmp_path):
    """The compile check can fail: a kernel with a misspelt scope does not assemble."""
    src = generate(ptx_test("ld.acquire.gpu r0, x"), "ptx").source
    bad = src.replace("ld.acquire.gpu.global", "ld.acquire.gpux.global")
    cl, out = tmp_path / "bad.cl", tmp_path / "bad.ptx"
    cl.write_text(bad)
    subprocess.run([CLANG, "-target", "nvptx64-nvidia-cuda", "-march=sm_70", "-x", "cl",
                    "-cl-std=CL1.2", "-S", "-o", str(out), str(cl)], check=True)
    a = subprocess.run([PTXAS, "-arch=sm_75", str(out), "-o", str(tmp_path / "bad.o")],
                       capture_output=True, text=True)
    assert a.returncode != 0 and "gpux" in a.stderr

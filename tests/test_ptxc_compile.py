"""Compile and read back with the real compilers (hw/ptxc): conformance programs compile at
sm_90 -O2 with clang-cuda and clang-ocl, their PTX passes ptxas, and the read-back is a PTX
litmus test with the source's observables and condition. A deterministic sample runs by
default; ``SCOPEFUZZ_PTXC_ALL=1`` runs every program of the C11 and OPENCL suites. nvcc tests
skip with the reason when nvcc is missing (nvcc takes seconds per program: one program each)."""

from __future__ import annotations

import os
import re

import pytest

from hw import BackendRefused
from hw.ptxc import Compiler, available, compile_many, compile_test, ptxas_check, refusal
from hw.ptxc import toolchain
from litmus.dialects import litmus_files, parse_file
from litmus.parse_c import parse_c

CONF = "/work/shared/conformance"
SUITES = [os.path.join(CONF, "C11"), os.path.join(CONF, "OPENCL")]
ALL = os.environ.get("SCOPEFUZZ_PTXC_ALL") == "1"


def _files() -> list[str]:
    present = [s for s in SUITES if os.path.isdir(s)]
    if not present:
        return []
    files = litmus_files(present)
    return files if ALL else files[::16]          # a spread sample of ~16 programs


FILES = _files()
CLANG = [Compiler("clang-cuda"), Compiler("clang-ocl")]


def _observed(test) -> list[str]:
    return [k for k in test.observables() if ":" not in k or re.fullmatch(r"P\d+:r\d+", k)]


@pytest.mark.skipif(not FILES, reason=f"conformance suites not found under {CONF}")
@pytest.mark.parametrize("c", CLANG, ids=lambda c: c.name)
@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, CONF))
def test_corpus_program_compiles_and_reads_back(path, c):
    why = available(c)
    if why is not None:
        pytest.skip(why)
    src = parse_file(path)
    if refusal(src, c) is not None:
        with pytest.raises(BackendRefused):
            compile_test(src, c)
        return
    r = compile_test(src, c)
    back = r.test
    assert back.dialect == "PTX"
    assert [loc.name for loc in back.locations] == [loc.name for loc in src.locations]
    assert len(back.threads) == len(src.threads)
    assert set(_observed(src)) <= set(back.observables())
    assert back.condition == src.condition
    # the origins name, per read-back row, a line of the PTX holding that instruction text
    ptx_lines = r.ptx.splitlines()
    for tid, rows in enumerate(r.origin):
        assert len(rows) == len(back.threads[tid].code)
        for line, text, src_line in rows:
            if line:
                assert " ".join(ptx_lines[line - 1].split()).startswith(text.split()[0])
            if src_line is not None:
                assert 1 <= src_line <= len(r.source.splitlines())
    if toolchain.ptxas_unavailable() is None:
        assert ptxas_check(r.ptx, c.sm) is None


MP = parse_c("""C MP
{ [x]=0; [y]=0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (1:r0=1 /\\ 1:r1=0)
""")


@pytest.mark.parametrize("c", CLANG + [Compiler("clang-cuda", 70, "O0", True)],
                         ids=lambda c: c.spec())
def test_mp_reads_back_its_release_and_acquire(c):
    if available(c) is not None:
        pytest.skip(available(c))
    r = compile_test(MP, c)
    p0 = [i for i in r.test.threads[0].code if i.is_memory_access]
    p1 = [i for i in r.test.threads[1].code if i.is_memory_access]
    # the release store and the acquire load survive at system scope (C11 atomics are unscoped)
    assert [(i.base, i.loc, i.order) for i in p0] == [("st", "x", "rlx"), ("st", "y", "rel")]
    assert [(i.base, i.loc, i.order) for i in p1] == [("ld", "y", "acq"), ("ld", "x", "rlx")]
    assert all(i.scope == "sys" for i in p0 + p1)
    assert r.command[0].startswith("clang-22 ") and "test.ptx" in r.command[0]
    if c.name == "clang-cuda":
        # the release store's row names the source line that spells it (from the .loc tables)
        src = r.source.splitlines()
        rel = [o for ins, o in zip(r.test.threads[0].code, r.origin[0]) if ins.order == "rel"]
        assert rel and rel[0][2] is not None
        assert "__ATOMIC_RELEASE" in src[rel[0][2] - 1] and "p_y" in src[rel[0][2] - 1]
    assert r.version.startswith(("clang version", "Debian clang version", "Ubuntu clang"))


def test_compile_cache_hit_and_mutation_leaves_cache_alone():
    c = Compiler("clang-cuda")
    if available(c) is not None:
        pytest.skip(available(c))
    compile_test(MP, c)
    again = compile_test(MP, c)
    assert again.cached
    mutated = compile_test(MP, c, mutate=lambda ptx: ptx.replace("st.release.sys", "st.relaxed.sys"))
    orders = [i.order for i in mutated.test.threads[0].code if i.is_store]
    assert orders == ["rlx", "rlx"]
    clean = compile_test(MP, c)
    assert [i.order for i in clean.test.threads[0].code if i.is_store] == ["rlx", "rel"]


@pytest.mark.parametrize("name", ["nvcc-libcu", "nvcc-builtins"])
def test_nvcc_compiles_mp(name):
    c = Compiler(name, 90, "O2")
    if available(c) is not None:
        pytest.skip(available(c))
    r = compile_test(MP, c)
    p1 = [i for i in r.test.threads[1].code if i.is_memory_access]
    assert [(i.base, i.loc, i.order, i.scope) for i in p1] == \
        [("ld", "y", "acq", "sys"), ("ld", "x", "rlx", "sys")]
    assert r.command[0].startswith("nvcc -arch=sm_90 -ptx -Xcicc -O2")
    if toolchain.ptxas_unavailable() is None:
        assert ptxas_check(r.ptx, 90) is None


def test_nvcc_sm70_is_unavailable_with_a_reason():
    if toolchain.unavailable("nvcc-libcu", 90) is not None:
        pytest.skip("nvcc not installed")
    assert "sm_70" in available(Compiler("nvcc-libcu", 70))


def test_ptxas_rejects_bad_ptx():
    if toolchain.ptxas_unavailable() is not None:
        pytest.skip(toolchain.ptxas_unavailable())
    bad = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nfoo.bar;\n}\n"
    err = ptxas_check(bad, 90)
    assert err is not None and "error" in err.lower()


def test_compiler_error_is_one_line_with_the_command():
    c = Compiler("clang-cuda")
    if available(c) is not None:
        pytest.skip(available(c))
    from hw import BackendError
    with pytest.raises(BackendError) as e:
        toolchain.compile_ptx("clang-cuda", 90, "O2", ".cu", "this is not C++;\n")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("clang-22 -x cuda") and "error" in msg


SB = parse_c("""C SB
{ [x]=0; [y]=0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_seq_cst);
  int r0 = atomic_load_explicit(y, memory_order_seq_cst);
}
P1 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(y, 1, memory_order_seq_cst);
  int r1 = atomic_load_explicit(x, memory_order_seq_cst);
}
exists (0:r0=0 /\\ 1:r1=0)
""")

BARRIER = parse_file(os.path.join(CONF, "OPENCL", "herd", "barrier_example.litmus")) \
    if os.path.isfile(os.path.join(CONF, "OPENCL", "herd", "barrier_example.litmus")) else None


@pytest.mark.parametrize("c", CLANG + [Compiler("clang-cuda", 80, "O1", True)],
                         ids=lambda c: c.spec())
def test_compile_many_reads_back_like_compile_test(c):
    if available(c) is not None:
        pytest.skip(available(c))
    tests = [MP, SB] + ([BARRIER] if BARRIER is not None else [])
    res = compile_many(tests, c)
    for t, r in zip(tests[:2], res[:2]):
        alone = compile_test(t, c)
        assert [th.code for th in r.test.threads] == [th.code for th in alone.test.threads]
        assert r.test.condition == t.condition
    if BARRIER is not None:
        assert isinstance(res[2], BackendRefused)


def test_compile_many_with_nvcc():
    c = Compiler("nvcc-builtins")
    if available(c) is not None:
        pytest.skip(available(c))
    mp, sb = compile_many([MP, SB], c)
    assert [(i.base, i.loc, i.order) for i in mp.test.threads[1].code if i.is_memory_access] == \
        [("ld", "y", "acq"), ("ld", "x", "rlx")]
    # a seq_cst load is a fence.sc then an acquire load (the standard mapping), in both roles
    for tid in (0, 1):
        code = [i for i in sb.test.threads[tid].code if i.base in ("fence", "ld", "st")]
        assert code[-2].base == "fence" and code[-2].order == "sc"
        assert code[-1].base == "ld" and code[-1].order == "acq"


def test_cuda_dialect_source_compiles_and_keeps_placement():
    from litmus.dialects import parse
    src = parse("""CUDA MP
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (int* x, atomic_int* y) {
  *x = 1;
  atomic_store_explicit(y, 1, memory_order_release, cuda::thread_scope_device);
}
P1@cta 0,gpu 0 (int* x, atomic_int* y) {
  int r1 = 0;
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_block);
  if (r0 == 1) { r1 = *x; }
}
exists (P1:r0=1 /\\ P1:r1=0)
""")
    c = Compiler("clang-cuda")
    if available(c) is not None:
        pytest.skip(available(c))
    r = compile_test(src, c)
    # both threads in block 0: one CTA in the read-back too
    assert [th.placement.wg for th in r.test.threads] == [0, 0]
    assert r.test.condition == src.condition
    p1 = [i for i in r.test.threads[1].code if i.is_memory_access]
    assert [(i.base, i.loc, i.order) for i in p1] == [("ld", "y", "acq"), ("ld", "x", None)]

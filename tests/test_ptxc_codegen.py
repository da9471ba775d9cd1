"""``scopefuzz codegen --compile``: source kernel, PTX and read-back litmus of a real compile
(issue 29, hw/ptxc/commands.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from litmus import parse, parse_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MP = os.path.join(ROOT, "corpora", "cuda", "MP.dev.litmus")
SPEC = "clang-cuda:sm_90,O2"
needs_clang = pytest.mark.skipif(shutil.which("clang-22") is None,
                                 reason="clang-22 is not installed (optional compiler)")


def _cli(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    return subprocess.run([sys.executable, "-m", "fuzz.cli", "codegen", *argv],
                          capture_output=True, text=True, cwd=ROOT, env=e, timeout=300)


def _sections(out: str) -> dict[str, str]:
    """Section title (first word after the file name / '==') -> body."""
    parts = re.split(r"^== (.*) ==$", out, flags=re.M)
    assert parts[0] == ""
    return {title: body for title, body in zip(parts[1::2], parts[2::2])}


@needs_clang
def test_mp_three_sections_and_read_back_parses_to_compiled_test():
    from hw.ptxc import compile_test, parse_spec
    r = _cli("--compile", SPEC, MP)
    assert r.returncode == 0, r.stderr
    secs = _sections(r.stdout)
    titles = list(secs)
    assert len(titles) == 3
    assert titles[0] == f"{MP}: source ({SPEC})"
    assert titles[1] == "ptx"
    assert titles[2].startswith("read back")
    src, ptx, back = secs.values()
    # the source section is the kernel clang was given: the release store is there
    assert "__ATOMIC_RELEASE" in src and "__MEMORY_SCOPE_DEVICE" in src
    # clang-22 lowers a device-scope release store to st.release.sys (scope widened to .sys)
    assert re.search(r"^\s*\d+\s+st\.release\.(gpu|sys)\.global\.b32\s", ptx, re.M)
    assert "// command: clang-22 -x cuda --cuda-device-only" in ptx
    assert "--cuda-gpu-arch=sm_90 -O2" in ptx
    assert re.search(r"^// version: .*clang version 22", ptx, re.M)
    compiled = compile_test(parse_file(MP), parse_spec(SPEC))
    reread = parse(back, "<read back>")
    assert reread.dialect == "PTX"
    assert reread == compiled.test
    # every table row names where it came from; the release store's row points at the PTX line
    # holding st.release and at the source line holding __ATOMIC_RELEASE
    row = next(ln for ln in back.splitlines() if "st.release" in ln)
    m = re.search(r"// P0: ptx (\d+) src (\d+)", row)
    assert m, row
    ptx_lines = {int(n): t for n, t in re.findall(r"^\s*(\d+)  (.*)$", ptx, re.M)}
    src_lines = {int(n): t for n, t in re.findall(r"^\s*(\d+)  (.*)$", src, re.M)}
    assert "st.release." in ptx_lines[int(m.group(1))]
    assert "__ATOMIC_RELEASE" in src_lines[int(m.group(2))]


@needs_clang
def test_ptx_mutant_is_applied_before_read_back():
    r = _cli("--compile", SPEC, "--ptx-mutant", "drop-release", MP)
    assert r.returncode == 0, r.stderr
    back = _sections(r.stdout)
    back = back[list(back)[2]]
    assert "st.release" not in back
    assert re.search(r"st\.relaxed\.(gpu|sys) y, 1", back)


@needs_clang
def test_several_files_each_get_their_sections():
    sb = os.path.join(ROOT, "corpora", "cuda", "SB.sc.litmus")
    if not os.path.exists(sb):
        pytest.skip("corpora/cuda/SB.sc.litmus is absent")
    r = _cli("--compile", SPEC, MP, sb)
    assert r.returncode == 0, r.stderr
    titles = re.findall(r"^== (.*) ==$", r.stdout, re.M)
    assert [t for t in titles if ": source (" in t] == [f"{MP}: source ({SPEC})",
                                                    f"{sb}: source ({SPEC})"]
    assert len(titles) == 6


@pytest.mark.parametrize("argv, needle", [
    (["--compile", "gcc-ptx", MP], "unknown compiler 'gcc-ptx'"),
    (["--compile", "clang-cuda:sm_12", MP], "unsupported target 'sm_12'"),
    (["--compile", "clang-cuda:O7", MP], "bad compiler option 'O7'"),
    (["--compile", SPEC, "--ptx-mutant", "nope", MP], "unknown PTX mutant 'nope'"),
    (["--compile", SPEC, "/nonexistent/x.litmus"], "/nonexistent/x.litmus:1:1: cannot read"),
])
def test_bad_input_is_one_line_exit_2(argv, needle):
    r = _cli(*argv)
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr


def test_refused_source_is_one_line_exit_2():
    ptx_test = os.path.join(ROOT, "corpora", "ptx")
    files = sorted(f for f in os.listdir(ptx_test) if f.endswith(".litmus")) \
        if os.path.isdir(ptx_test) else []
    if not files:
        pytest.skip("no corpora/ptx/*.litmus to refuse")
    path = os.path.join(ptx_test, files[0])
    r = _cli("--compile", SPEC, path)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith(f"{path}: clang-cuda: ") and "not PTX" in r.stderr


def test_compiler_failure_is_one_line_exit_2(tmp_path):
    fake = tmp_path / "clang-22"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fake clang version 22.0'; "
                    "exit 0; fi\necho 'test.cu:3:1: error: planted failure' >&2\n"
                    "echo 'test.cu:4:1: error: second' >&2\nexit 1\n")
    fake.chmod(0o755)
    r = _cli("--compile", SPEC, MP, env={"SCOPEFUZZ_CLANG": str(fake)})
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "planted failure" in lines[0], r.stderr


def test_compile_and_dialect_are_mutually_exclusive():
    r = _cli("--compile", SPEC, "--dialect", "cl3", MP)
    assert r.returncode == 2
    assert "not allowed with argument" in r.stderr


def test_ptx_mutant_without_compile_and_several_files_without_compile_exit_2():
    r = _cli("--ptx-mutant", "drop-release", MP)
    assert r.returncode == 2 and "--ptx-mutant needs --compile" in r.stderr
    r = _cli(MP, MP)
    assert r.returncode == 2 and "several only with --compile" in r.stderr

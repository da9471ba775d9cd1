"""The OpenCL backend on the fuzzer's random programs (fuzz.strategies.draw_program, seeded).

- every program, whatever its features, turns into kernels in both dialects; the runner either
  accepts its barriers or names the problem; the kernels compile with clang-22;
- programs the oracle decides run on PoCL without a forbidden outcome (soundness of the lowering on
  a real device, beyond the hand-written corpus).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

import litmus
import oracle
from fuzz.strategies import FEATURES, draw_program
from hw import BackendError
from hw.opencl.codegen import barrier_problem, generate

CLANG = shutil.which("clang-22")


def programs(n: int, features, seed: int = 2026):
    return [draw_program(seed, i, frozenset(features)) for i in range(n)]


def test_every_random_program_has_kernels(tmp_path):
    tests = programs(150, FEATURES)
    cl3, gcn = [], []
    for i, t in enumerate(tests):
        cl3.append(generate(t, "cl3", kernel_name=f"k{i}").source)
        gcn.append(generate(t, "amdgcn", kernel_name=f"k{i}").source)
        p = barrier_problem(t)
        assert p is None or (isinstance(p, str) and "\n" not in p)
    assert any(ins.is_barrier for t in tests for _, _, ins in t.instructions())
    assert any(ins.is_async for t in tests for _, _, ins in t.instructions())
    if CLANG is None:
        pytest.skip("clang-22 not installed: generated, not compiled")
    (tmp_path / "g.cl").write_text("\n".join(gcn))
    (tmp_path / "c.cl").write_text("\n".join(cl3))
    for target in ("gfx942", "gfx1250"):
        r = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                            f"-mcpu={target}", "-nogpulib", "-O0", "-emit-llvm", "-c", "-o",
                            str(tmp_path / "g.bc"), str(tmp_path / "g.cl")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[:2000]
    r = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL3.0", "-Xclang", "-finclude-default-header",
                        "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-fsyntax-only",
                        str(tmp_path / "c.cl")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]


def test_random_programs_show_no_forbidden_outcome_on_pocl():
    from hw.opencl.runner import OpenCLBackend
    try:
        backend = OpenCLBackend(None)
    except BackendError as e:
        pytest.skip(f"no OpenCL device: {e}")
    decided = []
    for t in programs(60, FEATURES, seed=7):
        try:
            res = oracle.check(t)
        except oracle.OracleError:
            continue
        if res.verdict != "Undef" and barrier_problem(t) is None:
            decided.append((t, res))
        if len(decided) == 20:
            break
    assert len(decided) >= 12
    # the draw covers barriers and async copies, whose lowering is the least direct
    assert any(ins.is_barrier for t, _ in decided for _, _, ins in t.instructions())
    assert any(ins.is_async for t, _ in decided for _, _, ins in t.instructions())
    backend.prepare([t for t, _ in decided])
    bad = []
    for t, res in decided:
        h = backend.run(t, 4096, 5)
        assert h.total == 4096
        bad += [(litmus.format_test(t), o) for o, _ in h.outcomes() if not res.allows(o)]
    assert bad == []

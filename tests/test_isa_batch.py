"""Batched compilation (hw/isa/toolchain.compile_batch): many tests in one clang-22 call and one
llvm-objdump-22 call give each test the code of its own compilation (on every target, with the
kernels' clones internalized away outside -O0), fill the shared disk cache, and a batch clang
rejects caches nothing (each test then fails alone, with its own error); a cancelled batch
caches nothing either."""

from __future__ import annotations

import threading

import pytest

from fuzz.strategies import draw_program, for_backend, parse_features
from hw.isa import disasm, source, toolchain
from hw.isa.mutants import MUTANTS
from hw.isa.targets import parse_spec

pytestmark = pytest.mark.skipif(toolchain.tools_available() is not None,
                                reason=f"isa backend: {toolchain.tools_available()}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SCOPEFUZZ_ISA_CACHE", str(tmp_path / "cache"))
    toolchain.cache_dir.cache_clear()
    toolchain._MEMO.clear()
    yield tmp_path / "cache"
    toolchain.cache_dir.cache_clear()
    toolchain._MEMO.clear()


def _sources(spec: str, n: int):
    t, _ = parse_spec(spec, MUTANTS)
    feats = for_backend(parse_features(None), t.capabilities())
    out, i = [], 0
    while len(out) < n:
        try:
            s = source.generate(draw_program(21, i, feats), t)
            if s.text not in {x.text for x in out}:
                out.append(s)
        except source.IsaRefused:
            pass
        i += 1
    return t, out


def _code(text: str, kernels) -> dict:
    """Each kernel's instructions as printed, and each branch's target relative to its kernel
    (a batch places the kernels at other addresses)."""
    return {k: [(ins.text, None if ins.target is None else ins.target - v.addr) for ins in v.code]
            for k, v in disasm.parse(text, set(kernels)).items()}


@pytest.mark.parametrize("spec", ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1250",
                                  "gfx942,O0", "gfx942,tgsplit", "gfx1100,wave64"])
def test_batch_gives_each_test_its_own_code(spec, cache):
    t, srcs = _sources(spec, 8)
    assert toolchain.compile_batch([s.text for s in srcs], t) == 8
    batched = {s.text: toolchain.compile_source(s.text, t).disasm for s in srcs}
    assert len(list(cache.glob("*.json"))) == 8            # one disk entry per test
    toolchain._MEMO.clear()
    for p in cache.glob("*.json"):
        p.unlink()
    for s in srcs:
        alone = toolchain.compile_source(s.text, t).disasm
        assert _code(batched[s.text], s.kernels) == _code(alone, s.kernels)
        assert set(_code(alone, s.kernels)) == set(s.kernels)


def test_a_batch_compiles_no_kernel_clone_outside_O0(cache):
    t, srcs = _sources("gfx942", 3)
    toolchain.compile_batch([s.text for s in srcs], t)
    for s in srcs:
        text = toolchain.compile_source(s.text, t).disasm
        assert "__clang_ocl_kern_imp_" not in text
        for k in disasm.parse(text, set(s.kernels)).values():     # padding dropped
            assert k.code[-1].mnemonic == "s_endpgm"


def test_a_cancelled_batch_caches_nothing(cache):
    t, srcs = _sources("gfx942", 4)
    stop = threading.Event()
    stop.set()
    assert toolchain.compile_batch([s.text for s in srcs], t, cancel=stop) == 0
    assert not list(cache.glob("*.json"))


def test_batched_tests_need_no_further_compile(cache, monkeypatch):
    t, srcs = _sources("gfx942", 4)
    toolchain.compile_batch([s.text for s in srcs], t)
    toolchain._MEMO.clear()                  # from the disk cache, as another worker would

    def no_run(*a, **k):
        raise AssertionError("clang called for a test the batch compiled")
    monkeypatch.setattr(toolchain.subprocess, "run", no_run)
    for s in srcs:
        assert toolchain.compile_source(s.text, t).cached


def test_a_rejected_batch_caches_nothing(cache):
    t, srcs = _sources("gfx942", 3)
    bad = "__kernel void wg0(__global int *m) { this is not C; }\n"
    assert toolchain.compile_batch([s.text for s in srcs] + [bad], t) == 0
    assert not list(cache.glob("*.json"))
    with pytest.raises(toolchain.ToolchainError, match="clang failed"):
        toolchain.compile_source(bad, t)

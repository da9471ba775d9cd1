"""gpu-check (issue 29): what can be checked without a GPU.

The harness rewrite (hand-written PTX and compiler output assembled by nvcc for sm_90), the
placement of roles and locations, the decoding of a launch's buffers (a fake executor plays the
GPU), the classification of histograms, the plan's model sets for a known test, and the no-GPU
path. Running the harness on a GPU is what only a lent GPU can confirm (docs/compilers.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from hw.backend import BackendRefused
from hw.gpu import place as gpu_place
from hw.gpu.harness import ENTRY, harness, only_entry
from hw.ptxc.layout import make_layout
from litmus import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MP_SAME = """CUDA MP.same
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_block);
  atomic_store_explicit(y, 1, memory_order_release, cuda::thread_scope_block);
}
P1@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_block);
  int r1 = atomic_load_explicit(x, memory_order_relaxed, cuda::thread_scope_block);
}
exists (P1:r0=1 /\\ P1:r1=0)
"""

IRIW = """CUDA IRIW.mixed
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed, cuda::thread_scope_device);
}
P1@cta 1,gpu 0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(y, 1, memory_order_relaxed, cuda::thread_scope_device);
}
P2@cta 2,gpu 0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_acquire, cuda::thread_scope_device);
  int r1 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_device);
}
P3@cta 2,gpu 0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire, cuda::thread_scope_device);
  int r1 = atomic_load_explicit(x, memory_order_acquire, cuda::thread_scope_device);
}
exists (P2:r0=1 /\\ P2:r1=0 /\\ P3:r0=1 /\\ P3:r1=0)
"""

# the shape clang-22 emits for a two-location switch kernel (hand-written, shortened)
HAND_PTX = """.version 8.8
.target sm_90
.address_size 64

.visible .entry other(
\t.param .u64 other_param_0
)
{
\tmov.u32 \t%r1, %tid.x;
\tret;
}

.visible .entry litmus(
\t.param .u64 .ptr .align 1 litmus_param_0,
\t.param .u64 .ptr .align 1 litmus_param_1,
\t.param .u64 .ptr .align 1 litmus_param_2
)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<7>;
\t.reg .b64 \t%rd<7>;

\tld.param.b64 \t%rd4, [litmus_param_0];
\tcvta.to.global.u64 \t%rd1, %rd4;
\tld.param.b64 \t%rd5, [litmus_param_1];
\tcvta.to.global.u64 \t%rd2, %rd5;
\tld.param.b64 \t%rd6, [litmus_param_2];
\tcvta.to.global.u64 \t%rd3, %rd6;
\tmov.u32 \t%r2, %tid.x;
\tmov.u32 \t%r3, %ctaid.x;
\tmov.u32 \t%r4, %ntid.x;
\tmad.lo.s32 \t%r1, %r3, %r4, %r2;
\tsetp.eq.b32 \t%p1, %r1, 1;
\t@%p1 bra \t$L__BB0_3;
\tsetp.ne.b32 \t%p2, %r1, 0;
\t@%p2 bra \t$L__BB0_4;
\tst.relaxed.gpu.global.b32 \t[%rd1], 1;
\tst.release.gpu.global.b32 \t[%rd2], 1;
\tbra.uni \t$L__BB0_4;
$L__BB0_3:
\tld.acquire.gpu.global.b32 \t%r5, [%rd2];
\tld.relaxed.gpu.global.b32 \t%r6, [%rd1];
\tst.global.b32 \t[%rd3+8], %r5;
\tst.global.b32 \t[%rd3+12], %r6;
$L__BB0_4:
\tret;
}
"""


def _body(text: str) -> list[str]:
    start = text.index("$SFZ_BODY:")
    return [ln.strip() for ln in text[start:].splitlines()]


# --- the harness rewrite -------------------------------------------------------------------------

def test_harness_rewrites_entry_params_and_specials():
    h = harness(HAND_PTX, 2)
    assert ".entry other(" not in h and f".entry {ENTRY}(" in h and ".entry litmus(" not in h
    assert ".param .u64 scopefuzz_map" in h and ".param .u64 scopefuzz_scratch" in h
    body = _body(h)
    # each parameter load is followed by the thread's offset for that parameter (out: the last)
    for p, d in ((0, "%rd4"), (1, "%rd5"), (2, "%rd6")):
        i = body.index(f"ld.param.b64 \t{d}, [litmus_param_{p}];")
        assert body[i + 1] == f"add.s64 \t{d}, {d}, %sfzo{p};"
    # the role switch reads the record's words: tid.x -> word 0, ctaid.x -> 1, ntid.x -> 2
    assert "mov.u32 \t%r2, %sfz4;" in body
    assert "mov.u32 \t%r3, %sfz5;" in body
    assert "mov.u32 \t%r4, %sfz6;" in body
    assert not any(s in ln for ln in body for s in ("%tid.x", "%ctaid.x", "%ntid.x"))
    # the memory-order instructions are untouched
    assert "ld.acquire.gpu.global.b32 \t%r5, [%rd2];" in body
    assert "st.release.gpu.global.b32 \t[%rd2], 1;" in body


def test_harness_offsets_come_from_the_record():
    pro = harness(HAND_PTX, 2).split("$SFZ_BODY:")[0]
    # record: tid cta ntid out loc0 loc1 -> 6 words of 4 bytes per thread
    assert "mul.wide.u32 \t%sfzd1, %sfz3, 24;" in pro
    assert "cvt.s64.s32 \t%sfzo0, %sfz8;" in pro      # x: word 4
    assert "cvt.s64.s32 \t%sfzo1, %sfz9;" in pro      # y: word 5
    assert "cvt.s64.s32 \t%sfzo2, %sfz7;" in pro      # out: word 3


def test_harness_refuses_what_it_cannot_rewrite():
    with pytest.raises(BackendRefused, match="parameters"):
        harness(HAND_PTX, 3)
    with pytest.raises(BackendRefused, match="no kernel 'P0'"):
        harness(HAND_PTX, 2, kernel="P0")
    helper = _called(HAND_PTX.replace("mov.u32 \t%r1, %tid.x;", "add.s32 \t%r1, %tid.x, 1;"))
    with pytest.raises(BackendRefused, match="special-register read outside the kernel"):
        harness(helper, 2)


def test_harness_rewrites_special_registers_in_called_functions():
    # clang-ocl -O0: the kernel calls its implementation, a .func that reads %tid.x
    h = harness(_called(HAND_PTX), 2)
    func = h[h.index(".func helper("):h.index(f".entry {ENTRY}(")]
    assert "mov.u32 \t%r1, %tid.x;" not in func
    assert "ld.global.u64 \t%sfza0, [scopefuzz_map_addr];" in func
    assert "mul.wide.u32 \t%sfza1, %sfzt3, 24;" in func
    assert "ld.global.s32 \t%r1, [%sfza0+0];" in func          # word 0: the role's tid.x
    assert ".global .align 8 .u64 scopefuzz_map_addr;" in h.split(".func helper(")[0]
    assert "st.global.u64 \t[scopefuzz_map_addr], %sfzd0;" in h


def _called(ptx: str) -> str:
    """HAND_PTX with kernel ``other`` turned into a function ``helper`` that litmus calls."""
    return ptx.replace(".visible .entry other(", ".func helper(").replace(
        "other_param_0", "helper_param_0").replace(
        "$L__BB0_4:\n", "$L__BB0_4:\n\tcall.uni \thelper, (%rd1);\n")


def test_prune_keeps_what_the_kernel_reaches():
    text = (_called(HAND_PTX).replace(".func helper(", ".func unused(\n\t.param .u64 u0\n)\n{\n"
                                      "\tret;\n}\n\n.func helper(")
            + "\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 95,90,0\n\t}\n")
    text = text.replace(".target sm_90\n", ".target sm_90, debug\n")       # clang -O0
    h = harness(text, 2)
    assert ".target sm_90\n" in h and "debug\n" not in h
    assert ".func helper(" in h and ".func unused(" not in h
    assert ".debug_str" not in h and "$L__info_string0" not in h
    assert "call.uni \thelper, (%rd1);" in h


def test_only_entry_keeps_one_kernel():
    out = only_entry(HAND_PTX, "litmus")
    assert ".entry other(" not in out and ".entry litmus(" in out and ".target sm_90" in out


def _nvcc_cubin(ptx: str) -> str | None:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "h.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", src, "-o", os.path.join(d, "h.cubin")],
                           capture_output=True, text=True, timeout=300)
        return None if r.returncode == 0 else r.stderr


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


@needs_nvcc
def test_hand_harness_assembles_for_sm_90():
    assert _nvcc_cubin(harness(HAND_PTX, 2)) is None


@needs_nvcc
@pytest.mark.parametrize("spec", ["clang-cuda:sm_90,O2", "clang-ocl:sm_90,O0",
                                  "nvcc-libcu:sm_90,O2", "nvcc-builtins:sm_90,O0"])
def test_compiled_harnesses_assemble_for_sm_90(spec):
    import hw.ptxc as ptxc
    comp = ptxc.parse_spec(spec)
    why = ptxc.available(comp)
    if why:
        pytest.skip(why)
    tests = [parse(MP_SAME, "a.litmus"), parse(IRIW, "b.litmus"),
             parse(open(os.path.join(ROOT, "corpora/cuda/MP.cas.acq_rel.litmus")).read(),
                   "c.litmus")]
    for i, (t, c) in enumerate(zip(tests, ptxc.compile_many(tests, comp))):
        assert isinstance(c, ptxc.Compiled), c
        kernel = f"t{i}_litmus" if f".entry t{i}_litmus(" in c.ptx else "litmus"
        h = harness(c.ptx, len(t.locations), kernel)
        assert h.count(".entry ") == 1
        assert _nvcc_cubin(h) is None, (t.name, spec)


# --- placement ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [MP_SAME, IRIW,
                                  open(os.path.join(ROOT, "corpora/cuda/MP.dev.litmus")).read()])
def test_placement_keeps_ctas_and_picks_each_role(text):
    test = parse(text, "t.litmus")
    lay = make_layout(test)
    blocks, threads = 12, 64
    rng = np.random.default_rng(7)
    pl = gpu_place.place(lay, len(test.locations), blocks, threads, rng, testing=0.5)
    per = len(test.threads)
    assert pl.ninst == blocks * (threads // 2 // per)
    # every role thread's record rebuilds the layout's gid (the compiled switch picks the role)
    for r in lay.roles:
        recs = pl.records[pl.role_thread[:, r.tid]]
        assert (recs[:, 1] * recs[:, 2] + recs[:, 0] == r.gid).all()
    # no real thread runs two roles; every other thread is a stress thread
    used = pl.role_thread.ravel()
    assert len(set(used.tolist())) == used.size
    others = np.setdiff1d(np.arange(blocks * threads), used)
    assert (pl.records[others, 0] == -1).all()
    # roles the source puts in one CTA share a real CTA; roles in different CTAs never do
    cta = pl.role_thread // threads
    for a in lay.roles:
        for b in lay.roles:
            same = cta[:, a.tid] == cta[:, b.tid]
            assert same.all() if a.cta == b.cta else not same.any()
    # every (instance, location) has its own word, and the records point at it
    words = pl.loc_word.ravel()
    assert len(set(words.tolist())) == words.size and words.max() < pl.loc_words
    for r in lay.roles:
        recs = pl.records[pl.role_thread[:, r.tid]]
        assert (recs[:, 4:4 + len(test.locations)] == pl.loc_word * 4).all()


def test_placement_shuffles_between_launches():
    test = parse(MP_SAME, "t.litmus")
    lay = make_layout(test)
    rng = np.random.default_rng(1)
    a = gpu_place.place(lay, 2, 8, 64, rng)
    b = gpu_place.place(lay, 2, 8, 64, rng)
    assert not np.array_equal(a.role_thread, b.role_thread)
    assert not np.array_equal(a.loc_word, b.loc_word)
    # roles are spread over the CTA's threads, not packed at its start
    assert (a.role_thread % 64).max() > 2 * a.ninst // 8


def test_placement_refusals():
    xgpu = parse(open(os.path.join(ROOT, "corpora/cuda/MP.sys.xgpu.litmus")).read(), "t.litmus")
    assert "2 GPUs" in gpu_place.refusal(xgpu, make_layout(xgpu))
    mp = parse(MP_SAME, "t.litmus")
    assert gpu_place.refusal(mp, make_layout(mp)) is None
    with pytest.raises(ValueError, match="real CTAs"):
        iriw = parse(IRIW, "t.litmus")
        gpu_place.place(make_layout(iriw), 2, 2, 64, np.random.default_rng(0))


def _fake_gpu(lay, pl, locs, out, skip=None):
    """Play the GPU: each role thread stores (its role * 10 + register index) into its out
    words and sets each location's final value to the instance's number mod 7."""
    for inst in range(pl.ninst):
        if inst == skip:
            continue
        for r in lay.roles:
            rec = pl.records[pl.role_thread[inst, r.tid]]
            base = rec[3] // 4 + r.tid * lay.stride
            for j in range(len(r.observed)):
                out[base + j] = r.tid * 10 + j
        locs[pl.loc_word[inst]] = inst % 7


def test_outcomes_decode_a_launch_and_drop_unwritten_instances():
    test = parse(IRIW, "t.litmus")
    lay = make_layout(test)
    pl = gpu_place.place(lay, 2, 6, 64, np.random.default_rng(3))
    keys, idx = gpu_place.keys(lay, test)
    assert keys == ["P2:r0", "P2:r1", "P3:r0", "P3:r1", "x", "y"]
    out = np.full(pl.out_words, gpu_place.POISON, dtype=np.int32)
    locs = np.zeros(pl.loc_words, dtype=np.int32)
    _fake_gpu(lay, pl, locs, out, skip=5)
    rows, bad = gpu_place.outcomes(lay, pl, out, locs, idx)
    assert bad == 1 and rows.shape == (pl.ninst - 1, 6)
    want = [[20, 21, 30, 31, i % 7, i % 7] for i in range(pl.ninst) if i != 5]
    assert rows.tolist() == want


# --- judging histograms -------------------------------------------------------------------------

def test_classification_of_synthetic_histograms():
    from fuzz.gpu_verdict import judge
    keys = ["P1:r0", "P1:r1"]
    ptx = [[0, 0], [1, 1], [0, None]]           # (0, undef) matches (0, anything)
    src = [[0, 0], [1, 1], [0, 1]]
    counts = {(0, 0): 50, (1, 1): 40, (0, 1): 7, (1, 0): 3, (0, 5): 2}
    v = judge(keys, counts, ptx, src)
    cls = {tuple(o.values()): c for o, _, c in v.rows}
    assert cls == {(0, 0): "allowed", (1, 1): "allowed", (0, 1): "allowed",
                   (1, 0): "both-forbidden", (0, 5): "source-forbidden"}
    assert v.total == 102 and v.count("both-forbidden") == 3 and v.finding
    assert (v.reached, v.allowed) == (3, 3)
    # a racy source (no source states) allows everything: only the PTX model can forbid
    v2 = judge(keys, {(1, 0): 1, (1, 1): 4}, [[1, 1]], None)
    assert [c for _, _, c in v2.rows] == ["allowed", "ptx-forbidden"]
    assert (v2.reached, v2.allowed) == (1, 1)
    v3 = judge(keys, {(0, 0): 9}, ptx, src)
    assert not v3.finding and (v3.reached, v3.allowed) == (2, 3)


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 not on PATH")
def test_plan_entry_has_both_models_sets(tmp_path):
    from fuzz.gpu_plan import load, prepare, save
    f = tmp_path / "MP.same.litmus"
    f.write_text(MP_SAME)
    plan = prepare([str(f)], ("clang-cuda:sm_90,O2",), sample=0, write=lambda s: None)
    save(plan, str(tmp_path / "p.json"))
    (e,) = load(str(tmp_path / "p.json"))["entries"]
    assert e["status"] == "ready" and e["keys"] == ["P1:r0", "P1:r1", "x", "y"]
    # MP with release/acquire at block scope in one block: (1, 0) is forbidden by both
    mp = [[0, 0, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1]]
    assert e["ptx_states"] == mp and e["source_states"] == mp
    assert ".entry scopefuzz_harness(" in e["harness"]
    # what the GPU run needs of the test, without parsing it (no hw.ptxc, no numba there)
    assert e["inits"] == [0, 0] and e["loc_idx"] == [0, 1]
    from hw.gpu.place import Shape
    shape = Shape.from_json(json.loads(json.dumps(e["shape"])))
    assert shape == Shape.of(make_layout(parse(MP_SAME, "t.litmus")))
    assert [(r.cta, r.pos, r.observed) for r in shape.roles] == [(0, 0, ()), (0, 1, ("r0", "r1"))]


def test_run_path_needs_no_numba():
    # the lent machine's python runs `gpu_check run`: hw.gpu and the verdict import no numba
    code = ("import sys; import fuzz.gpu_check, fuzz.gpu_verdict, hw.gpu.run, hw.gpu.place; "
            "print(sorted(m for m in ('numba', 'oracle', 'hw.ptxc', 'cupy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


# --- no GPU -------------------------------------------------------------------------------------

def test_no_gpu_is_one_line_and_exit_2(monkeypatch, tmp_path):
    from fuzz import gpu_check
    from hw.gpu import run as gpu_run
    monkeypatch.setattr(gpu_run, "unavailable", lambda: "CuPy is not importable (test)")
    lines = []
    for action in ("run", "check"):
        rc = gpu_check.main([action, "--plan", str(tmp_path / "none.json")], write=lines.append)
        assert rc == 2
    assert lines == ["gpu-check: no GPU here: CuPy is not importable (test)"] * 2
    assert not (tmp_path / "none.json").exists()        # nothing was compiled


def test_damaged_plan_names_file_line_col(monkeypatch, tmp_path):
    from fuzz import gpu_check
    from hw.gpu import run as gpu_run
    monkeypatch.setattr(gpu_run, "unavailable", lambda: None)
    bad = tmp_path / "plan.json"
    bad.write_text('{"version": 1,\n  "entries": [,]}\n')
    lines = []
    assert gpu_check.main(["run", "--plan", str(bad)], write=lines.append) == 2
    assert lines == [f"gpu-check: {bad}:2:15: not JSON (Expecting value)"]
    bad.write_text(json.dumps({"version": 99}))
    lines.clear()
    assert gpu_check.main(["run", "--plan", str(bad)], write=lines.append) == 2
    assert "not a gpu-check plan" in lines[0]


def test_unavailable_without_cupy_says_why():
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed here")
    r = subprocess.run([sys.executable, "-m", "fuzz.gpu_check", "check", "--plan",
                        os.path.join(tempfile.gettempdir(), "scopefuzz-no-plan.json")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 2 and r.stderr == ""
    assert r.stdout.strip() == ("gpu-check: no GPU here: CuPy is not importable "
                                "(ModuleNotFoundError: No module named 'cupy')")


# --- the run loop, with a fake CuPy playing the GPU ---------------------------------------------

class _FakeKernel:
    """Plays the harness: checks the arguments' order (locations..., out, map, scratch) and,
    for every thread whose record has a role, picks the role by the record's gid as the compiled
    switch does and stores ``values`` for its observed registers; locations end at ``final``."""

    def __init__(self, shape, values, final):
        self.shape, self.values, self.final = shape, values, final
        self.launches = []

    def __call__(self, grid, block, args):
        nlocs = len(args) - 3
        locs, out, rec, scratch = args[0], args[nlocs], args[nlocs + 1], args[nlocs + 2]
        assert all(a is locs for a in args[:nlocs])
        width = 4 + max(nlocs, 1)
        rec = rec.reshape(-1, width)
        assert rec.shape[0] == grid[0] * block[0] and scratch.size > 0
        by_gid = {r.gid: r for r in self.shape.roles}
        self.launches.append(int((rec[:, 0] >= 0).sum()))
        for t in np.flatnonzero(rec[:, 0] >= 0):
            role = by_gid[rec[t, 1] * rec[t, 2] + rec[t, 0]]
            base = rec[t, 3] // 4 + role.tid * self.shape.stride
            for j, name in enumerate(role.observed):
                out[base + j] = self.values[(role.tid, name)]
            for i in range(nlocs):
                locs[rec[t, 4 + i] // 4] = self.final[i]


def _fake_cupy(kernel):
    import types
    cp = types.ModuleType("cupy")
    cp.int32 = np.int32
    cp.zeros = np.zeros
    cp.full = np.full
    cp.asarray = lambda a: np.array(a)
    cp.asnumpy = lambda a: np.array(a)
    cp.RawModule = lambda path: types.SimpleNamespace(get_function=lambda name: kernel)
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, deviceSynchronize=lambda: None,
        getDeviceProperties=lambda i: {"name": b"Fake GPU", "multiProcessorCount": 3})
    cp.cuda = types.SimpleNamespace(runtime=runtime,
                                    Device=lambda *a: types.SimpleNamespace(id=0))
    return cp


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 not on PATH")
@pytest.mark.parametrize("r0,r1,rc,cls", [(0, 0, 0, "allowed"), (1, 0, 1, "both-forbidden")])
def test_run_loop_counts_and_judges(monkeypatch, tmp_path, r0, r1, rc, cls):
    from fuzz import gpu_check
    from fuzz.gpu_plan import prepare, save
    from hw.gpu.place import Shape
    f = tmp_path / "MP.same.litmus"
    f.write_text(MP_SAME)
    plan = prepare([str(f)], ("clang-cuda:sm_90,O2",), sample=0, write=lambda s: None)
    save(plan, str(tmp_path / "p.json"))
    shape = Shape.from_json(plan["entries"][0]["shape"])
    kernel = _FakeKernel(shape, {(1, "r0"): r0, (1, "r1"): r1}, [1, 1])
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(kernel))
    lines = []
    got = gpu_check.main(["run", "--plan", str(tmp_path / "p.json"), "--json",
                          str(tmp_path / "o.json"), "--launches", "3", "--threads", "32",
                          "--seconds", "60"], write=lines.append)
    assert got == rc
    assert lines[0].startswith("gpu-check: 1 programs on Fake GPU (3 SMs), 6 CTAs x 32 threads")
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["complete"] is True and doc["device"] == "Fake GPU"
    (res,) = doc["results"]
    # 6 CTAs x (16 testing threads // 2 roles) instances per launch, 3 launches
    assert kernel.launches == [96, 96, 96] and res["instances"] == 3 * 48
    assert res["histogram"] == [{"outcome": {"P1:r0": r0, "P1:r1": r1, "x": 1, "y": 1},
                                 "count": 144, "class": cls}]
    assert res["unwritten"] == 0 and res["reached"] == (1 if r0 == r1 == 0 else 0)
    assert res["status"] == ("ok" if rc == 0 else "finding")
    # the summary at the end (what a lent machine's reply carries)
    assert "  clang-cuda:sm_90,O2: 1 of 1 run, 144 instances" in "\n".join(lines)
    if rc:
        assert lines[-2] == ("FINDING MP.same (clang-cuda:sm_90,O2): both-forbidden "
                             "{'P1:r0': 1, 'P1:r1': 0, 'x': 1, 'y': 1} x144")


def test_a_failing_program_is_its_row(monkeypatch, tmp_path):
    from fuzz import gpu_check
    plan = {"version": 1, "entries": [{"status": "ready", "file": "a.litmus", "name": "A",
                                       "compiler": "clang-cuda:sm_90,O2", "harness": "junk"}]}
    (tmp_path / "p.json").write_text(json.dumps(plan))
    kernel = _FakeKernel(None, {}, [])
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(kernel))
    lines = []
    assert gpu_check.main(["run", "--plan", str(tmp_path / "p.json"), "--json",
                           str(tmp_path / "o.json")], write=lines.append) == 1
    (res,) = json.loads((tmp_path / "o.json").read_text())["results"]
    assert res["status"] == "error" and res["why"] == "KeyError: 'shape'"
    assert "1 with a forbidden or unwritten outcome or an error" in lines[-1]


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 not on PATH")
def test_run_keeps_to_the_limit(monkeypatch, tmp_path):
    from fuzz import gpu_check
    from fuzz.gpu_plan import prepare, save
    from hw.gpu.place import Shape
    f = tmp_path / "MP.same.litmus"
    f.write_text(MP_SAME)
    plan = prepare([str(f)], ("clang-cuda:sm_90,O2",), sample=0, write=lambda s: None)
    save(plan, str(tmp_path / "p.json"))
    kernel = _FakeKernel(Shape.from_json(plan["entries"][0]["shape"]),
                         {(1, "r0"): 0, (1, "r1"): 0}, [1, 1])
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(kernel))
    lines = []
    assert gpu_check.main(["run", "--plan", str(tmp_path / "p.json"), "--json",
                           str(tmp_path / "o.json"), "--limit", "0"], write=lines.append) == 0
    (res,) = json.loads((tmp_path / "o.json").read_text())["results"]
    assert res["status"] == "not-run" and kernel.launches == []
    assert "1 not run: past --limit" in lines[-1]


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 not on PATH")
def test_plan_with_ptxas(monkeypatch, tmp_path):
    from fuzz.gpu_plan import prepare
    from hw.ptxc import toolchain
    f = tmp_path / "MP.same.litmus"
    f.write_text(MP_SAME)
    if toolchain.ptxas_unavailable() is None:
        (e,) = prepare([str(f)], ("clang-cuda:sm_90,O0",), sample=0, write=lambda s: None,
                       ptxas=True)["entries"]
        assert e["status"] == "ready"
    seen = []
    monkeypatch.setattr(toolchain, "ptxas_check",
                        lambda ptx, sm: seen.append(sm) or "ptxas error : boom")
    (e,) = prepare([str(f)], ("clang-cuda:sm_90,O0",), sample=0, write=lambda s: None,
                   ptxas=True)["entries"]
    assert seen == [90] and e["status"] == "error" and "harness" not in e
    assert e["why"] == "ptxas rejects the harness: ptxas error : boom"


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 not on PATH")
def test_check_prepares_a_missing_plan_then_runs(monkeypatch, tmp_path):
    from fuzz import gpu_check
    from hw.gpu.place import Shape
    f = tmp_path / "MP.same.litmus"
    f.write_text(MP_SAME)
    lay = Shape.of(make_layout(parse(MP_SAME, "t.litmus")))
    kernel = _FakeKernel(lay, {(1, "r0"): 1, (1, "r1"): 1}, [1, 1])
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(kernel))
    lines = []
    rc = gpu_check.main(["check", "--plan", str(tmp_path / "p.json"), "--json",
                         str(tmp_path / "o.json"), "--compiler", "clang-cuda:sm_90,O2",
                         "--sample", "0", "--launches", "2", "--threads", "32", str(f)],
                        write=lines.append)
    assert rc == 0 and (tmp_path / "p.json").exists()
    assert lines[0] == "prepared clang-cuda:sm_90,O2: 1 of 1 programs ready"
    (res,) = json.loads((tmp_path / "o.json").read_text())["results"]
    assert res["status"] == "ok" and res["reached"] == 1 and res["ptx_allowed"] == 3

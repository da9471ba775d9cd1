"""The PTX mutant catalogue (hw/ptxc/mutants.py): each edit does what its name says on PTX text,
and each planted bug is found by the compilers check on the CUDA corpus (corpora/cuda), which
holds without a mutant. clang-cuda prints device scope as .sys, so scope-gpu-to-cta is planted in
nvcc-builtins' PTX (skipped without nvcc)."""

import os

import pytest

import hw
from fuzz.compilers import run_corpus
from hw.ptxc.mutants import MUTANTS, get

CORPUS = os.path.join(os.path.dirname(__file__), "..", "corpora", "cuda")
PTX = ("\tld.acquire.gpu.global.b32 \t%r5, [%rd2];\n\t.loc\t1 4 13\n\tfence.sc.sys;\n"
       "@%p1 st.release.sys.global.b32 [%rd1], 1;\n\tatom.acq_rel.gpu.global.cas.b32 %r7, [%rd2], 0, 1;\n"
       "\tst.relaxed.gpu.global.b32 [%rd1], 2;\n")


@pytest.mark.parametrize("name, changed", [
    ("drop-acquire", "\tld.relaxed.gpu.global.b32 \t%r5, [%rd2];"),
    ("drop-release", "@%p1 st.relaxed.sys.global.b32 [%rd1], 1;"),
    ("acq-rel-to-relaxed", "\tatom.relaxed.gpu.global.cas.b32 %r7, [%rd2], 0, 1;"),
    ("drop-fence", "\t// mutant dropped: fence.sc.sys;"),
    ("fence-sc-to-acq-rel", "\tfence.acq_rel.sys;"),
    ("scope-sys-to-gpu", "@%p1 st.release.gpu.global.b32 [%rd1], 1;"),
    ("relaxed-to-weak", "\tst.global.b32 [%rd1], 2;"),
])
def test_edit_changes_only_its_instruction(name, changed):
    out = get(name)(PTX)
    diff = [b for a, b in zip(PTX.splitlines(), out.splitlines()) if a != b]
    assert changed in diff
    assert "\t.loc\t1 4 13" in out.splitlines()
    assert len(out.splitlines()) == len(PTX.splitlines())


def test_unknown_mutant_names_the_known_ones():
    with pytest.raises(hw.BackendError, match="unknown PTX mutant 'nope'.*drop-acquire"):
        get("nope")


def _run(spec, mutant):
    import hw.ptxc as ptxc
    why = ptxc.available(ptxc.parse_spec(spec))
    if why:
        pytest.skip(why)
    lines = []
    rc = run_corpus([CORPUS], spec, mutate=get(mutant) if mutant else None, write=lines.append)
    status = {l.split()[0]: l.split()[1] for l in lines if l and not l.startswith(" ")
              and len(l.split()) > 1 and l.split()[1] in ("holds", "counterexample")}
    return rc, status


def test_corpus_holds_unmutated():
    rc, status = _run("clang-cuda:sm_90,O2", None)
    assert rc == 0 and len(status) == 8 and set(status.values()) == {"holds"}


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m != "scope-gpu-to-cta"])
def test_each_mutant_is_found_clang_cuda(mutant):
    rc, status = _run("clang-cuda:sm_90,O2", mutant)
    assert rc == 1 and "counterexample" in status.values()


def test_scope_gpu_to_cta_is_found_in_nvcc_ptx():
    import hw.ptxc as ptxc
    why = ptxc.available(ptxc.parse_spec("nvcc-builtins:sm_90,O2"))
    if why:
        pytest.skip(why)
    lines = []
    rc = run_corpus([os.path.join(CORPUS, "MP.dev.litmus")], "nvcc-builtins:sm_90,O2",
                    mutate=get("scope-gpu-to-cta"), write=lines.append)
    assert rc == 1 and lines[0].startswith("MP.dev  counterexample  P1:r0=1, P1:r1=0")

"""The PTX mutant catalogue (hw/ptxc/mutants.py): each edit does what its name says on PTX text,
and each planted bug is found by the compilers check on the CUDA corpus (corpora/cuda), which
holds without a mutant. clang-cuda prints device scope as .sys on loads, stores and fences and
leaves it implicit on atom (the PTX default, .gpu): scope-gpu-to-cta narrows both the written and
the implicit .gpu. Each mutant is also found by a campaign from scratch (seed 0, a bounded number
of programs: fuzz/cuda_strategies.py's families must reach the shapes each needs)."""

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


@pytest.mark.parametrize("name, line, changed", [
    # an atom without sem/scope is .relaxed.gpu (PTX ISA 9.7.13.5): narrowed, sem kept explicit
    ("scope-gpu-to-cta", "\tatom.global.add.u32 \t%r9, [%rd2], 1;",
     "\tatom.relaxed.cta.global.add.u32 \t%r9, [%rd2], 1;"),
    ("scope-gpu-to-cta", "\tred.global.add.u32 [%rd2], 1;",
     "\tred.relaxed.cta.global.add.u32 [%rd2], 1;"),
    ("scope-gpu-to-cta", "\tatom.acq_rel.global.cas.b32 %r1, [%rd1], 0, 1;",
     "\tatom.acq_rel.cta.global.cas.b32 %r1, [%rd1], 0, 1;"),
    ("scope-gpu-to-cta", "\tld.acquire.global.b32 %r1, [%rd1];",
     "\tld.acquire.cta.global.b32 %r1, [%rd1];"),
    ("scope-gpu-to-cta", "\tmembar.gl;", "\tmembar.cta;"),
    ("scope-sys-to-gpu", "\tmembar.sys;", "\tmembar.gl;"),
    ("scope-sys-to-cta", "\tmembar.sys;", "\tmembar.cta;"),
    # weak, volatile and explicitly scoped accesses of another scope are left alone
    ("scope-gpu-to-cta", "\tld.global.b32 %r1, [%rd1];", "\tld.global.b32 %r1, [%rd1];"),
    ("scope-gpu-to-cta", "\tld.volatile.global.b32 %r1, [%rd1];",
     "\tld.volatile.global.b32 %r1, [%rd1];"),
    ("scope-gpu-to-cta", "\tst.relaxed.sys.global.b32 [%rd1], 1;",
     "\tst.relaxed.sys.global.b32 [%rd1], 1;"),
])
def test_scope_mutants_on_implicit_scopes_and_membar(name, line, changed):
    assert get(name)(line + "\n") == changed + "\n"


def test_implicit_gpu_narrowing_reads_back_as_cta_and_ptxas_accepts_it():
    import hw.ptxc as ptxc
    from litmus import parse
    comp = ptxc.parse_spec("clang-cuda:sm_90,O2")
    why = ptxc.available(comp)
    if why:
        pytest.skip(why)
    src = ("CUDA t\n{ [x] = 0; }\nP0@cta 0,gpu 0 (atomic_int* x) {\n"
           "  int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed, "
           "cuda::thread_scope_device);\n}\nP1@cta 1,gpu 0 (atomic_int* x) {\n"
           "  int r0 = atomic_exchange_explicit(x, 2, memory_order_relaxed, "
           "cuda::thread_scope_device);\n}\nexists (x=0)\n")
    t = parse(src, "t.litmus")
    plain = ptxc.compile_test(t, comp)
    mutated = ptxc.compile_test(t, comp, get("scope-gpu-to-cta"))
    rmws = lambda c: [(i.order, i.scope) for th in c.test.threads for i in th.code  # noqa: E731
                      if i.base == "rmw"]
    assert rmws(plain) == [("rlx", "agent")] * 2          # the PTX default: .relaxed.gpu
    assert rmws(mutated) == [("rlx", "wg")] * 2
    assert ptxc.ptxas_check(get("scope-gpu-to-cta")(plain.ptx), 90) is None


#: programs of seed 0 within which each mutant must be found (bench_ptxc.py measures the time)
CAMPAIGN_PROGRAMS = 80


@pytest.mark.parametrize("mutant", MUTANTS)
def test_each_mutant_is_found_by_a_campaign_from_scratch(mutant, tmp_path):
    import hw.ptxc as ptxc
    from fuzz.compilers_campaign import CompileConfig, CompilerCampaign, backend_name
    from fuzz.findings import load_findings
    comp = ptxc.parse_spec("clang-cuda:sm_90,O2")
    why = ptxc.available(comp)
    if why:
        pytest.skip(why)
    cfg = CompileConfig(backend=backend_name(comp.spec(), mutant), out=str(tmp_path), seed=0,
                        features=frozenset({"cuda"}), minimize_seconds=0, time=None,
                        programs=CAMPAIGN_PROGRAMS, max_findings=1)
    st = CompilerCampaign(cfg).run()
    planted = [r for r in load_findings(str(tmp_path))
               if not (r.get("baseline") or {}).get("forbidden")]
    assert planted, f"{mutant}: not found in {st.programs} programs"


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

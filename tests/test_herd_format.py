"""``check --format herd`` in herd7's layout (issue 33).

Two kinds of checks:

- without herd7: three small C tests whose herd log is written out by hand from herd7's
  documented layout (Test / States N / one line per state, registers ``T:r`` first by thread,
  then locations as ``[x]``, each group in name order, lines in value order / Ok, No or Undef /
  Witnesses / Positive / Flag lines / Condition with locations in brackets / Observation), every
  line compared but Time and Hash (herd's own timing and hash);
- with herd7 (``HERD7=/path/to/herd7``; docs/oracle.md "herd7 comparison" says how to build it):
  herd7's own output on C11 conformance files, line for line, under rc11 (``rc11.cat``) and c11
  (``c11_simp.cat``). Skipped with the reason when herd7 or the suite is absent.
"""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from fuzz.cli import main

SB = """C SB
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  int r0 = atomic_load_explicit(y, memory_order_relaxed);
}
P1 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(y, 1, memory_order_relaxed);
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (0:r0=0 /\\ 1:r0=0)
"""

#: SB with relaxed atomics under rc11: every pair of register values, one execution each
SB_LOG = """Test SB Allowed
States 4
0:r0=0; 1:r0=0;
0:r0=0; 1:r0=1;
0:r0=1; 1:r0=0;
0:r0=1; 1:r0=1;
Ok
Witnesses
Positive: 1 Negative: 3
Condition exists (0:r0=0 /\\ 1:r0=0)
Observation SB Sometimes 1 3"""

# locations declared y before x, condition naming y first: the States lines list [x] before
# [y] (herd's order), the Condition keeps the test's order
W2 = """C W2
{ [y] = 0; [x] = 0; }
P0 (atomic_int* y, atomic_int* x) {
  atomic_store_explicit(y, 1, memory_order_relaxed);
  atomic_store_explicit(x, 1, memory_order_relaxed);
}
P1 (atomic_int* y, atomic_int* x) {
  atomic_store_explicit(x, 2, memory_order_relaxed);
  atomic_store_explicit(y, 2, memory_order_relaxed);
}
~exists (y=2 /\\ x=1)
"""

#: 2+2W, relaxed: both coherence orders of each location, one execution per final state; the
#: state the condition forbids is reachable, so the ~exists test fails: No. Positive counts what
#: validates the condition (the three states without the proposition), the Observation line what
#: satisfies the proposition (one)
W2_LOG = """Test W2 Forbidden
States 4
[x]=1; [y]=1;
[x]=1; [y]=2;
[x]=2; [y]=1;
[x]=2; [y]=2;
No
Witnesses
Positive: 3 Negative: 1
Condition ~exists ([y]=2 /\\ [x]=1)
Observation W2 Sometimes 1 3"""

# MP whose data is a plain int: the read of x races with the write (no synchronisation), which
# rc11 makes undefined behaviour: Undef and herd's Flag line; the register values are the
# condition's two, in every combination
MPNA = """C MPna
{ [x] = 0; [y] = 0; }
P0 (atomic_int* y, int* x) {
  *x = 1;
  atomic_store_explicit(y, 1, memory_order_relaxed);
}
P1 (atomic_int* y, int* x) {
  int r0 = atomic_load_explicit(y, memory_order_relaxed);
  int r1 = *x;
}
exists (1:r0=1 /\\ 1:r1=0)
"""

MPNA_LOG = """Test MPna Allowed
States 4
1:r0=0; 1:r1=0;
1:r0=0; 1:r1=1;
1:r0=1; 1:r1=0;
1:r0=1; 1:r1=1;
Undef
Witnesses
Positive: 1 Negative: 3
Flag *undef*
Condition exists (1:r0=1 /\\ 1:r1=0)
Observation MPna Sometimes 1 3"""


def _herd_blocks(out: str) -> list[list[str]]:
    """The log's blocks, each without its Time and Hash lines."""
    return [[ln for ln in b.splitlines() if not ln.startswith(("Time ", "Hash="))]
            for b in out.strip().split("\n\n")]


@pytest.mark.parametrize("text,want", [(SB, SB_LOG), (W2, W2_LOG), (MPNA, MPNA_LOG)],
                         ids=["SB", "2+2W-forbidden", "MP-na-race"])
def test_herd_layout_of_small_c_tests(tmp_path, capsys, monkeypatch, text, want):
    monkeypatch.setenv("SCOPEFUZZ_VERDICT_CACHE", "off")
    path = tmp_path / "t.litmus"
    path.write_text(text)
    status = main(["check", "--format", "herd", "--model", "rc11", str(path)])
    out = capsys.readouterr().out
    assert status in (0, 1)
    [block] = _herd_blocks(out)
    assert block == want.splitlines()
    name = want.split()[1]
    assert any(ln.startswith(f"Time {name} ") for ln in out.splitlines())


def test_herd_key_and_order():
    from oracle.herd_format import herd_key, herd_state
    assert herd_key("P1:r0") == "1:r0" and herd_key("x") == "[x]" and herd_key("[x]") == "[x]"
    # registers by thread (numerically: 2 before 10), then locations by name; undef left out
    state = {"z": 1, "P10:r0": 3, "a": 0, "P2:r1": 4, "P2:r0": "undef"}
    assert herd_state(state) == "2:r1=4; 10:r0=3; [a]=0; [z]=1;"


# --- against herd7 itself -------------------------------------------------------------------------
from conftest import SHARED as _SHARED  # noqa: E402

SHARED = _SHARED / "conformance" / "C11"
HERD7 = os.environ.get("HERD7")

#: a few C11 files covering an Ok, a No, an Undef (race), locations in the condition declared
#: out of name order and a register plus four locations
FILES = ["manual/mp_relaxed.litmus", "manual/iriw_sc.litmus", "auto/a1+Racq+rel.litmus",
         "auto/a1_reorder.litmus", "auto/linearisation.litmus", "auto/roachmotel.litmus",
         "manual/example1.litmus"]


@pytest.mark.skipif(not HERD7 or not os.access(HERD7, os.X_OK),
                    reason="herd7 not available: set HERD7=/path/to/herd7 (docs/oracle.md, "
                           "'herd7 comparison', says how to build it from source)")
@pytest.mark.skipif(not SHARED.is_dir(), reason=f"no C11 conformance suite at {SHARED}")
@pytest.mark.parametrize("model,cat", [("rc11", "rc11.cat"), ("c11", "c11_simp.cat")])
def test_herd_format_matches_herd7(capsys, monkeypatch, model, cat):
    """Every line but Time, Hash and the witness counts (Positive/Negative and the
    Observation's numbers: herd counts executions, scopefuzz projected states) is herd7's."""
    monkeypatch.setenv("SCOPEFUZZ_VERDICT_CACHE", "off")
    files = [str(SHARED / f) for f in FILES]
    herd = subprocess.run([HERD7, "-model", cat, *files], capture_output=True, text=True,
                          timeout=300)
    assert herd.returncode == 0, herd.stderr
    main(["check", "--format", "herd", "--model", model, *files])
    ours = capsys.readouterr().out

    def strip(out):
        return [[" ".join(ln.split()[:3]) if ln.startswith("Observation ") else ln
                 for ln in b if not ln.startswith("Positive: ")] for b in _herd_blocks(out)]
    assert strip(ours) == strip(herd.stdout)


# --- benchmarks/scaling.py --herd: the C form of the asymmetric AMDGPU programs ------------------
@pytest.mark.parametrize("shape", [(3, 2, 8), (3, 2, 9), (4, 2, 9)])
def test_asymmetric_c_form_is_the_same_program(shape):
    """``amdgpu_to_c`` keeps each thread's loads, stores and rmws: relaxed system-scope AMDGPU
    atomics and relaxed C11 atomics are both coherence-only here, so the AMDGPU program under
    amdgpu and its C form under rc11 allow the same register values and give the same verdict."""
    import sys
    import litmus
    import oracle
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
    import scaling
    amd = scaling.asymmetric(*shape, "sys")
    c = scaling.amdgpu_to_c(amd)
    assert c.startswith("C ") and c.count("\nP") == shape[0]
    ta, tc = litmus.parse(amd), litmus.parse(c)
    ra, rc = oracle.check(ta), oracle.check(tc, "rc11")

    def regs(res):
        return {tuple(sorted((k, v) for k, v in s.items() if ":" in k)) for s in res.states}
    assert ra.verdict == rc.verdict and regs(ra) == regs(rc) and len(regs(rc)) > 1
    assert not rc.flags                       # all atomics: no race, no Undef

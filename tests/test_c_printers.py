"""The C, OPENCL and CUDA printers (litmus/dialects/{c,opencl,cuda}/printer.py, issue 34).

Each printer undoes its front end's lowering: the printed text reads back as an equal test and
printing it again gives the same text. Checked on hand-written tests (the expected canonical
text is written out here, by hand), on the compiler campaign's generated programs in all three
source dialects, on random programs with expressions, branches, loops, arrays and
compare-exchanges (a Hypothesis property), and on rows no statement lowers to (refused with a
PrintError naming the row). The corpora and the conformance suites: tests/test_dialects.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus import Instr, Location, PrintError, Test, Thread, format_test, parse
from litmus.ir import Atom, Condition
from litmus.scopes import Placement
from fuzz.c_strategies import SOURCES, draw_source, render_source


def round_trip(text: str) -> str:
    t = parse(text, "t.litmus")
    out = format_test(t)
    back = parse(out, "printed.litmus")
    assert back == t, out
    assert format_test(back) == out
    return out


# --- canonical layout, written out by hand -------------------------------------------------------

def test_c_canonical_layout():
    src = """C  messy
"a doc line"
{ y = 2; int a[2] = {0, 5}; [x]=0; }
P0 (volatile int* y, atomic_int *x, atomic_int* a) {
  int r0 = atomic_load(x);           // seq_cst by default
  if (r0 == 1 && *y) *y = r0 + 1; else { atomic_store_explicit(&a[1], 3, memory_order_release); }
  while (atomic_load_explicit(x, memory_order_acquire) != 2) { }
  int r1 = atomic_fetch_add_explicit(x, -1, memory_order_relaxed) + y[0];
}
P1 (atomic_int* x, atomic_int* a) {
  int e = 0;
  int ok = atomic_compare_exchange_weak(x, &e, 2);
  atomic_thread_fence(memory_order_acq_rel);
  r = a[ok];
}
exists (0:r0=1 /\\ ~(x = 2))
"""
    src = src.replace("  r = a[ok];", "  int r = a[ok];")
    expected = """C messy
"a doc line"
{ [y] = 2; int a[2] = {0, 5}; [x] = 0; }
P0 (int* y, atomic_int* a, atomic_int* x) {
  int r0 = atomic_load_explicit(x, memory_order_seq_cst);
  if (r0 == 1 && *y) {
    *y = r0 + 1;
  } else {
    atomic_store_explicit(&a[1], 3, memory_order_release);
  }
  while (atomic_load_explicit(x, memory_order_acquire) != 2) {
  }
  int r1 = atomic_fetch_add_explicit(x, -1, memory_order_relaxed) + y;
}
P1 (atomic_int* a, atomic_int* x) {
  int e = 0;
  int ok = atomic_compare_exchange_strong_explicit(x, &e, 2, memory_order_seq_cst, memory_order_seq_cst);
  atomic_thread_fence(memory_order_acq_rel);
  int r = a[ok];
}
exists (P0:r0 == 1 /\\ ~(x == 2))
"""
    # y is not an array: y[0] is refused by the front end, so the source reads *y there
    src = src.replace("+ y[0];", "+ *y;")
    expected = expected.replace("+ y;", "+ *y;")
    assert round_trip(src) == expected


def test_opencl_canonical_layout():
    src = """OPENCL ocl
{ [x] = 0; [y] = 0; [z] = 0; }
P0@wg 0, dev 0 (global atomic_int* x, local int* y) {
  *y = 1;
  atomic_work_item_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_work_group);
  B2: work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
  atomic_store(x, 1);
}
P1@wg 1, dev 0 (global atomic_int* x, global int* y, __global atomic_int* z) {
  int r0 = atomic_load_explicit(x, memory_order_acquire, memory_scope_all_svm_devices);
  B1: barrier(0);
}
exists (1:r0 = 1)
"""
    expected = """OPENCL ocl
{ [x] = 0; [y] = 0; [z] = 0; }
P0@wg 0, dev 0 (global atomic_int* x, global int* y, global atomic_int* z) {
  *y = 1;
  atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_release, memory_scope_work_group);
  B2: work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
  atomic_store_explicit(x, 1, memory_order_seq_cst, memory_scope_device);
}
P1@wg 1, dev 0 (global atomic_int* x, local int* y) {
  int r0 = atomic_load_explicit(x, memory_order_acquire, memory_scope_all_svm_devices);
  B1: barrier(0);
}
exists (P1:r0 == 1)
"""
    # y is in both regions (one thread says global, the other local: P0 uses it, P1 declares
    # it) and z, which no thread uses, is declared by P0: Test.meta's regions and non-atomic
    # set read back the same
    assert round_trip(src) == expected


def test_cuda_canonical_layout():
    src = """CUDA cu
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (int* x, cuda::atomic<int>* y) {
  *x = 1;
  atomic_thread_fence(memory_order_seq_cst);
  atomic_exchange_explicit(y, 2, memory_order_release, cuda::thread_scope_block);
}
P1@cta 1,gpu 1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_fetch_max_explicit(y, 3, memory_order_acq_rel, cuda::thread_scope_system);
}
exists (P1:r0=2)
"""
    expected = """CUDA cu
{ [x] = 0; [y] = 0; }
P0@cta 0,gpu 0 (int* x, atomic_int* y) {
  *x = 1;
  atomic_thread_fence(memory_order_seq_cst, cuda::thread_scope_system);
  atomic_exchange_explicit(y, 2, memory_order_release, cuda::thread_scope_block);
}
P1@cta 1,gpu 1 (atomic_int* y) {
  int r0 = atomic_fetch_max_explicit(y, 3, memory_order_acq_rel, cuda::thread_scope_system);
}
exists (P1:r0 == 2)
"""
    assert round_trip(src) == expected


def test_unsequenced_operands_stay_one_expression():
    """``r = *x + *y``: both loads are unsequenced (C11 6.5p3), the first goes straight into
    ``r``; printed apart they would be sequenced, so the printer keeps them in one expression."""
    src = ("C u\n{ [x] = 0; [y] = 0; }\nP0 (int* x, int* y) {\n  int r = *x + *y;\n"
           "  int s = *x;\n  s = s + 1;\n}\nexists (0:r = 0)\n")
    out = round_trip(src)
    assert "  int r = *x + *y;\n" in out
    assert [i.attrs for i in parse(out).threads[0].code[:2]] == [("unseq=1:0",), ("unseq=1:1",)]


# --- generated programs ---------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), index=st.integers(0, 500), source=st.sampled_from(SOURCES))
def test_campaign_programs_round_trip(seed, index, source):
    """The compiler campaign's programs (fuzz/c_strategies.py) in CUDA, C and OPENCL."""
    text = render_source(draw_source(seed, index, source), source)
    out = round_trip(text)
    assert out.split(None, 1)[0] == {"cuda": "CUDA", "c": "C", "opencl": "OPENCL"}[source]


ORDERS = {"ld": ("relaxed", "acquire", "seq_cst"), "st": ("relaxed", "release", "seq_cst"),
          "rmw": ("relaxed", "acquire", "release", "acq_rel", "seq_cst")}
SCOPES = {"C": ("",), "OPENCL": ("memory_scope_work_item", "memory_scope_work_group",
                                 "memory_scope_device", "memory_scope_all_svm_devices"),
          "CUDA": ("cuda::thread_scope_thread", "cuda::thread_scope_block",
                   "cuda::thread_scope_device", "cuda::thread_scope_system")}


@st.composite
def c_family_programs(draw) -> str:
    """A random program of the C, OPENCL or CUDA dialect with nested if/else and while,
    expressions over loads, read-modify-writes and registers, array elements chosen by a
    register, compare-exchanges and (OPENCL) barriers."""
    dialect = draw(st.sampled_from(("C", "OPENCL", "CUDA")))

    def order(kind):
        return "memory_order_" + draw(st.sampled_from(ORDERS[kind]))

    def scope():
        s = draw(st.sampled_from(SCOPES[dialect]))
        return f", {s}" if s else ""

    def address(regs):
        k = draw(st.integers(0, 4))
        if k == 4 and regs:
            return f"&a[{draw(st.sampled_from(regs))} % 2]"
        return ("x", "y", "&a[0]", "&a[1]", "x")[k]

    def expr(regs, depth):
        k = draw(st.integers(0, 8 if depth > 0 else 4))
        if k == 0 or (k == 1 and not regs):
            return str(draw(st.integers(-3, 3)))
        if k == 1:
            return draw(st.sampled_from(regs))
        if k == 2:
            return f"atomic_load_explicit({address(regs)}, {order('ld')}{scope()})"
        if k == 3:
            return draw(st.sampled_from(("*x", "*y", "a[1]", "*(a + 1)")))
        if k == 4:
            op = draw(st.sampled_from(("add", "sub", "or", "xor", "max")))
            return (f"atomic_fetch_{op}_explicit({address(regs)}, {expr(regs, 0)}, "
                    f"{order('rmw')}{scope()})")
        if k == 5:
            return f"{draw(st.sampled_from(('!', '-')))}({expr(regs, depth - 1)})"
        if k == 8:
            return (f"atomic_compare_exchange_strong_explicit({address(regs)}, y, "
                    f"{expr(regs, 0)}, {order('rmw')}, memory_order_relaxed{scope()})")
        op = draw(st.sampled_from(("+", "-", "*", "==", "!=", "<", "&&", "||", "&", "^")))
        return f"({expr(regs, depth - 1)} {op} {expr(regs, depth - 1)})"

    def body(regs, depth, n):
        lines = []
        for _ in range(n):
            k = draw(st.integers(0, 9 if depth > 0 else 5))
            if k == 0:
                r = f"r{len(regs)}"
                lines.append(f"int {r} = {expr(regs, 2)};")
                regs.append(r)
            elif k == 1 and regs:
                lines.append(f"{draw(st.sampled_from(regs))} = {expr(regs, 2)};")
            elif k == 2:
                lines.append(f"atomic_store_explicit({address(regs)}, {expr(regs, 1)}, "
                             f"{order('st')}{scope()});")
            elif k == 3:
                place = draw(st.sampled_from(("*x", "*y", "a[0]")))
                lines.append(f"{place} = {expr(regs, 1)};")
            elif k == 4:
                o = "memory_order_" + draw(st.sampled_from(("acquire", "release", "seq_cst")))
                if dialect == "OPENCL":
                    lines.append(f"atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, {o}, "
                                 f"memory_scope_device);")
                else:
                    lines.append(f"atomic_thread_fence({o}{scope()});")
            elif k == 5:
                r = f"r{len(regs)}"
                e = f"r{len(regs) + 1}"
                lines.append(f"int {e} = {draw(st.integers(0, 2))};")
                exp = draw(st.sampled_from((f"&{e}", "y")))
                fail = "memory_order_" + draw(st.sampled_from(ORDERS["ld"][:2]))
                lines.append(f"int {r} = atomic_compare_exchange_strong_explicit(x, {exp}, "
                             f"{expr(regs, 0)}, {order('rmw')}, {fail}{scope()});")
                regs += [r, e]
            elif k == 6:
                lines.append(f"if ({expr(regs, 1)}) {{")
                lines += ["  " + ln for ln in body(regs, depth - 1, draw(st.integers(0, 2)))]
                if draw(st.booleans()):
                    lines.append("} else {")
                    lines += ["  " + ln for ln in body(regs, depth - 1, draw(st.integers(0, 2)))]
                lines.append("}")
            elif k == 7:
                lines.append(f"while ({expr(regs, 1)}) {{")
                lines += ["  " + ln for ln in body(regs, depth - 1, draw(st.integers(0, 2)))]
                lines.append("}")
            elif k == 8 and dialect == "OPENCL":
                lines.append(f"B{draw(st.integers(1, 2))}: barrier(CLK_GLOBAL_MEM_FENCE);")
            else:                                   # an expression statement
                lines.append(f"{draw(st.sampled_from(('', '(void) ')))}{expr(regs, 2)};")
        return lines

    head = {"C": "", "OPENCL": "@wg {t}, dev 0", "CUDA": "@cta {t},gpu 0"}[dialect]
    space = "global " if dialect == "OPENCL" else ""
    out = [f"{dialect} gen", "{ [x] = 0; [y] = 1; int a[2] = {0, 0}; }"]
    nthreads = draw(st.integers(1, 3))
    for t in range(nthreads):
        kinds = [draw(st.sampled_from(("atomic_int*", "int*"))) for _ in range(3)]
        spaces = [draw(st.sampled_from(("global ", "local ", ""))) if space else ""
                  for _ in range(3)]        # OPENCL: regions per thread (Test.meta)
        params = ", ".join(f"{sp}{k} {n}" for sp, k, n in zip(spaces, kinds, ("x", "y", "a")))
        out.append(f"P{t}{head.format(t=t)} ({params}) {{")
        out += ["  " + ln for ln in body([], 2, draw(st.integers(1, 5)))]
        out.append("}")
    out.append("exists (x == 1)")
    return "\n".join(out) + "\n"


@settings(max_examples=150, deadline=None)
@given(c_family_programs())
def test_random_c_family_programs_round_trip(text):
    round_trip(text)


# --- refusals ---------------------------------------------------------------------------------------

def _test(dialect: str, code: tuple, placement=Placement(), meta=()) -> Test:
    return Test("T", (Location("x"),), (Thread(placement, code),),
                Condition("exists", Atom(None, "x", "==", 0)), dialect=dialect, meta=meta)


def test_rows_no_statement_lowers_to_are_refused_by_name():
    store = Instr("st", access="atom", order="rlx", scope="sys", loc="x", args=(1,))
    assert parse(format_test(_test("C", (store,)))) == _test("C", (store,))
    with pytest.raises(PrintError, match=r"P0 row 0: goto \[target=_L1\] has no C spelling"):
        format_test(_test("C", (Instr("goto", attrs=("target=_L1",)),)))
    with pytest.raises(PrintError, match=r"P0 row 0: scope 'agent' .*has no C spelling"):
        format_test(_test("C", (store.replace(scope="agent"),)))
    with pytest.raises(PrintError, match=r"P0 row 0: st \[proxy=surface\] has no C spelling"):
        format_test(_test("C", (store.replace(attrs=("proxy=surface",)),)))
    with pytest.raises(PrintError, match="has no OPENCL spelling"):
        format_test(_test("OPENCL", (store,), Placement(wave=1, wg=0),
                          (("regions", (("x", ("global",)),)), ("nonatomic", ()))))
    cbar = (Instr("cbar", order="rel", scope="wg", attrs=("fence=entry", "id=1", "flags=global")),
            Instr("cbar", order="acq", scope="wg", attrs=("fence=exit", "id=1", "flags=global")))
    with pytest.raises(PrintError, match=r"a barrier \(the CUDA dialect has none\)"):
        format_test(_test("CUDA", cbar, Placement(wg=0, agent=0),
                          (("regions", (("x", ("global",)),)), ("nonatomic", ()))))


def test_a_row_that_reads_back_differently_is_refused_not_printed():
    """A relaxed fence prints as text the front end drops (C11: no effect): the read-back
    check refuses the test instead of returning text that reads as another test."""
    fence = Instr("fence", order="rlx", scope="sys")
    with pytest.raises(PrintError, match="P0 row 0: fence: no C statement lowers to these rows"):
        format_test(_test("C", (fence,)))


def test_names_no_c_text_can_hold_are_refused_not_crashed():
    """A hand-built test whose location name is no C identifier, or whose branch condition is
    malformed: a PrintError, never a ParseError or an IndexError from the printer."""
    t = _test("C", (Instr("st", access="atom", order="rlx", scope="sys", loc="x", args=(1,)),))
    odd = Test("T", (Location("x y"),), (Thread(Placement(), (t.threads[0].code[0].replace(
        loc="x y"),)),), Condition("exists", Atom(None, "x y", "==", 0)), dialect="C")
    with pytest.raises(PrintError, match="does not read back"):
        format_test(odd)
    with pytest.raises(PrintError, match="rows no C statement lowers to"):
        format_test(_test("C", (Instr("branch", attrs=("cond=(!", "target=_L1")),)))

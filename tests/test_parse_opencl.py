"""The OpenCL front end (litmus/parse_opencl.py): every file of the OPENCL suite parses;
placements, scopes, regions, fences and barriers are lowered as documented; bad input is a
ParseError with file:line:col."""

import pytest

from litmus import ParseError, parse
from litmus.dialects import litmus_files, parse_file
from litmus.scopes import Placement

MP = """OPENCL mp
{ [x] = 0; [y] = 0; }
P0@wg 0, dev 0 (global int* x, local atomic_int* y) {
  *x = 1;
  atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group);
}
P1@wg 1, dev 2 (global int* x, __local atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load(y);
  atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_acq_rel,
                         memory_scope_all_svm_devices);
  atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_relaxed, memory_scope_work_group);
  int r2 = *x;
}
exists (1:r0=1 /\\ 1:r2=0 /\\ y=1)
"""


def test_every_opencl_file_parses(conformance):
    files = litmus_files([conformance / "OPENCL"])
    assert len(files) >= 120
    for f in files:
        t = parse_file(f)
        assert t.dialect == "OPENCL" and t.threads
        assert all(th.placement.wg is not None for th in t.threads)


def test_placement_scopes_and_regions():
    t = parse(MP, "mp.litmus")
    assert [th.placement for th in t.threads] == [Placement(wg=0, agent=0),
                                                   Placement(wg=1, agent=2)]
    p0, p1 = (th.code for th in t.threads)
    assert [(i.base, i.access, i.order, i.scope) for i in p0] == [
        ("st", "plain", None, None), ("st", "atom", "rel", "wg")]
    # an explicit call without a scope, and the plain form (seq_cst): memory_scope_device
    assert [(i.order, i.scope) for i in p1[:2]] == [("acq", "agent"), ("sc", "agent")]
    fence = p1[2]
    assert (fence.base, fence.order, fence.scope) == ("fence", "acq_rel", "sys")
    assert "flags=global,local" in fence.attrs
    # a relaxed fence has no effect (OpenCL C 2.0): no instruction
    assert [i.base for i in p1[3:]] == ["ld"]
    meta = dict(t.meta)
    assert dict(meta["regions"]) == {"x": ("global",), "y": ("local",)}
    assert meta["nonatomic"] == ("x",)
    # local locations are single locations of the model, observable like global ones
    assert t.observables()[-2:] == ["x", "y"]


def test_barrier_is_an_entry_and_an_exit_fence():
    t = parse("""OPENCL b
{ [x] = 0; }
P0@wg 0, dev 0 (global int* x) {
  *x = 1;
  B7: barrier(CLK_GLOBAL_MEM_FENCE);
  B8: work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_device);
  B9: work_group_barrier(0);
}
exists (x=1)
""")
    bars = [i for i in t.threads[0].code if i.base == "cbar"]
    got = [(i.order, i.scope, i.attrs) for i in bars]
    assert got == [
        ("rel", "wg", ("fence=entry", "id=7", "flags=global")),
        ("acq", "wg", ("fence=exit", "id=7", "flags=global")),
        ("rel", "agent", ("fence=entry", "id=8", "flags=local")),
        ("acq", "agent", ("fence=exit", "id=8", "flags=local")),
        ("rel", "wg", ("fence=entry", "id=9", "flags=")),
        ("acq", "wg", ("fence=exit", "id=9", "flags="))]


def test_location_declared_in_two_regions_and_atomicity():
    # Dat3M's reading (example7a of the suite): a location is in every region some thread
    # names, and non-atomic when some thread declares it non-atomic
    t = parse("""OPENCL r
{ [x] = 0; }
P0@wg 0, dev 0 (global atomic_int* x) { atomic_store(x, 1); }
P1@wg 0, dev 0 (local int* x, int* z) { int r0 = *x; }
exists (1:r0=1)
""")
    meta = dict(t.meta)
    assert dict(meta["regions"]) == {"x": ("global", "local"), "z": ()}
    assert meta["nonatomic"] == ("x", "z")


def test_pointer_register_in_condition_is_an_address():
    # barrier_example of the suite writes 0:x for the parameter x: an address is never 0
    t = parse("""OPENCL p
{ [x] = 0; }
P0@wg 0, dev 0 (global atomic_int* x) { atomic_store(x, 1); }
exists (0:x=0)
""")
    from litmus.ir import Const
    assert t.condition.prop == Const(False)


@pytest.mark.parametrize("body, col, words", [
    ("atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_sub_group);", 53,
     "sub_group"),
    ("atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_galaxy);", 53,
     "memory scope"),
    ("atomic_store(x, 1, memory_scope_device);", 3, "takes 2 argument(s)"),
    ("atomic_thread_fence(memory_order_seq_cst);", 3, "no atomic_thread_fence"),
    ("atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_seq_cst, memory_scope_device);",
     26, "image"),
    ("atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE & CLK_LOCAL_MEM_FENCE, memory_order_seq_cst,"
     " memory_scope_device);", 47, "'|'"),
    ("barrier(CLK_GLOBAL_MEM_FENCE);", 3, "id as a label"),
    ("B1: atomic_store(x, 1);", 7, "barrier label"),
    ("B1: work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_item);", 48,
     "work_item"),
])
def test_malformed_gives_line_col(body, col, words):
    text = f"OPENCL t\n{{ [x] = 0; }}\nP0@wg 0, dev 0 (global atomic_int* x) {{\n  {body}\n}}\n" \
           "exists (x=1)\n"
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    err = e.value
    assert (err.path, err.line, err.col) == ("bad.litmus", 4, col), str(err)
    assert words in err.reason
    assert "\n" not in str(err)


@pytest.mark.parametrize("header, line, col, words", [
    ("P0 (global atomic_int* x) {", 3, 4, "needs a placement"),
    ("P0@wg 0, cta 0 (global atomic_int* x) {", 3, 10, "'dev'"),
    ("P0@wg 0 dev 0 (global atomic_int* x) {", 3, 9, "','"),
    ("P0@wg 0, dev 0 (global local atomic_int* x) {", 3, 42, "two address spaces"),
    ("P0@wg 0, dev 0 (global atomic_int x) {", 3, 35, "not a pointer"),
])
def test_malformed_thread_header(header, line, col, words):
    text = f"OPENCL t\n{{ [x] = 0; }}\n{header}\n  atomic_store(x, 1);\n}}\nexists (x=1)\n"
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    assert (e.value.line, e.value.col) == (line, col), str(e.value)
    assert words in e.value.reason

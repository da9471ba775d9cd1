"""The C front end: every C11 conformance file parses; lowering is right; bad input is a
ParseError with file:line:col."""

import pytest

from litmus import ParseError, parse
from litmus.cfg import paths_per_thread, value_domains
from litmus.dialects import litmus_files, parse_file

MP = """C mp
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, volatile int* y) {
  *y = 1;
  atomic_store_explicit(x, 1, memory_order_release);
}
P1 (atomic_int* x, volatile int* y) {
  int r0 = atomic_load_explicit(x, memory_order_acquire);
  if (r0 == 1) { int r1 = *y; }
}
exists (1:r0=1 /\\ 1:r1=0)
"""


def test_every_c11_file_parses(conformance):
    files = litmus_files([conformance / "C11"])
    assert len(files) >= 90
    for f in files:
        t = parse_file(f)
        assert t.dialect == "C" and t.threads


def test_lowering_of_mp():
    t = parse(MP, "mp.litmus")
    p0, p1 = (th.code for th in t.threads)
    assert [(i.base, i.access, i.loc) for i in p0] == [("st", "plain", "y"), ("st", "atom", "x")]
    assert p0[1].order == "rel"
    assert p1[0].base == "ld" and p1[0].order == "acq" and p1[0].reg == "r0"
    assert [i.base for i in p1[1:]] == ["branch", "ld", "label"]
    assert t.condition.quantifier == "exists"
    assert t.observables() == ["P1:r0", "P1:r1", "x", "y"]


def test_paths_follow_the_branch():
    t = parse(MP, "mp.litmus")
    paths = paths_per_thread(t)
    # P1 reads y only when it read x == 1; nothing uses r1, so that read is free (rf gives its
    # value later, the path does not enumerate it): two paths
    p1 = paths[1]
    got = sorted(tuple(op.rval for op in p.ops) for p in p1)
    assert got == [(0,), (1, None)]
    free = [p for p in p1 if len(p.ops) == 2][0]
    assert dict(free.regs)["r1"] == ("read", 1)


def test_expression_values_and_cas():
    t = parse("""C e
{ [x] = 0; [y] = 0; [one] = 1; }
P0 (atomic_int* x, atomic_int* y, atomic_int* one) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed) + 2;
  atomic_store_explicit(y, r0 - 1, memory_order_relaxed);
  int ok = atomic_compare_exchange_strong_explicit(x, one, 5, memory_order_acq_rel,
                                                   memory_order_acquire);
}
exists (0:r0=2 /\\ 0:ok=0)
""", "e.litmus")
    dom = value_domains(t)
    # y holds its initial 0 or (a value of x) + 2 - 1; the cas can write 5 into x (when *one
    # was overwritten with 0 by an earlier failure: the domains over-approximate across paths)
    assert dom["x"] == {0, 5}
    assert dom["y"] == {0} | {v + 1 for v in dom["x"]}
    cas = [i for i in t.threads[0].code if i.base == "cas"][0]
    assert cas.order == "acq_rel" and cas.fail_order == "acq"
    # on failure the value read goes back into *one (C11 7.17.7.4)
    assert any(i.base == "st" and i.loc == "one" for i in t.threads[0].code)


def test_while_loop_is_bounded():
    t = parse("""C w
{ [x] = 0; }
P0 (atomic_int* x) { atomic_store_explicit(x, 1, memory_order_release); }
P1 (atomic_int* x) {
  int n = 0;
  while (atomic_load_explicit(x, memory_order_acquire) == 0) { n = n + 1; }
}
exists (1:n=2)
""")
    paths = paths_per_thread(t)[1]
    # the loop body writes a register, so it is not a spin loop: unrolled, at most UNROLL
    # executions of each instruction; the loop exits with n = number of iterations that spun
    assert sorted(dict(p.regs)["n"] for p in paths) == [0, 1, 2]


def test_deref_in_parentheses_is_not_a_comment():
    t = parse("""C d
{ [b] = 0; }
P0 (volatile int* b) {
  if (*b) { *b = 2; }
}
exists (b=2)
""")
    assert [i.base for i in t.threads[0].code][:2] == ["ld", "branch"]


@pytest.mark.parametrize("text, line, col, words", [
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  atomic_store_explicit(x, 1, memory_order_bogus);\n}\n"
     "exists (x=1)\n", 4, 31, "memory order"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  int r0 = atomic_load_explicit(z, memory_order_relaxed);\n}\n"
     "exists (0:r0=1)\n", 4, 33, "not a parameter"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  for (;;) { }\n}\nexists (x=1)\n", 4, 3, "'for'"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  int r0 = atomic_load_explicit(x, memory_order_relaxed);\n}\n"
     "exists (0:r9=1)\n", 6, 11, "unknown register"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  atomic_store_explicit(x, 1, memory_order_relaxed)\n}\n"
     "exists (x=1)\n", 5, 1, "expected ';'"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  foo(x);\n}\nexists (x=1)\n", 4, 3, "unknown function"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  *x = 1;\n", 5, 1, "unterminated block"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  *x = 1;\n}\nexists (x=1) junk\n", 6, 14, "unexpected"),
])
def test_malformed_gives_line_col(text, line, col, words):
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    err = e.value
    assert (err.path, err.line, err.col) == ("bad.litmus", line, col), str(err)
    assert words in err.reason
    assert "\n" not in str(err)


def test_malformed_variants_of_suite_files(conformance):
    """Damaging a real suite file (drop a ';' or a ')') gives a ParseError, never a crash."""
    files = litmus_files([conformance / "C11"])[:30]
    for f in files:
        text = open(f).read()
        for needle in (";", ")"):
            k = text.rfind(needle, 0, text.find("exists") if "exists" in text else None)
            bad = text[:k] + text[k + 1:]
            with pytest.raises(ParseError) as e:
                parse(bad, f)
            assert e.value.line >= 1 and e.value.col >= 1


# --- arrays, address dependencies, cas through a local variable, pointer registers -----------

ARRAY = """C arr
{ atomic_int y[3] = {0, 7}; [x] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  int r1 = atomic_load_explicit(y+r0, memory_order_relaxed);
  atomic_store_explicit(&y[2], 5, memory_order_relaxed);
  int r2 = y[1];
  *(y + 2) = 6;
}
P1 (atomic_int* x) { atomic_store_explicit(x, 1, memory_order_relaxed); }
exists (0:r1=7 /\\ y[2]=6)
"""


def test_array_declaration_and_constant_elements():
    t = parse(ARRAY, "arr.litmus")
    # elements y[0..2], the listed initial values, the missing one 0
    assert [(loc.name, loc.init) for loc in t.locations][:3] == [("y[0]", 0), ("y[1]", 7),
                                                                  ("y[2]", 0)]
    code = t.threads[0].code
    st = [i for i in code if i.base == "st"]
    assert [(i.loc, i.args, i.access) for i in st] == [("y[2]", (5,), "atom"),
                                                       ("y[2]", (6,), "plain")]
    plain = [i for i in code if i.base == "ld" and i.access == "plain"][0]
    assert plain.loc == "y[1]" and plain.reg == "r2"
    assert t.condition.prop.args[1].name == "y[2]"


def test_address_dependency_picks_the_element_per_path():
    t = parse(ARRAY, "arr.litmus")
    dyn = t.threads[0].code[1]
    assert dyn.loc == "y[0]" and "arr=y:3" in dyn.attrs and "off=r0" in dyn.attrs
    # x holds 0 or 1, so the dependent read goes to y[0] or y[1]: the element follows r0
    by_r0 = {}
    for p in paths_per_thread(t)[0]:
        r0 = p.ops[0].rval
        by_r0.setdefault(r0, set()).add(p.ops[1].loc)
    assert by_r0 == {0: {"y[0]"}, 1: {"y[1]"}}


def test_address_outside_the_array_drops_the_path():
    t = parse("""C oob
{ atomic_int y[2]; [x] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  int r1 = atomic_load_explicit(y+r0, memory_order_relaxed);
}
P1 (atomic_int* x) { atomic_store_explicit(x, 5, memory_order_relaxed); }
exists (0:r0=5)
""")
    # r0 = 5 would read y[5]: no location of the test, that path is not a path of the program
    assert sorted(p.ops[0].rval for p in paths_per_thread(t)[0]) == [0]


def test_cas_with_expected_in_a_local_variable():
    t = parse(TEXT := """C casv
{ [x] = 1; }
P0 (atomic_int* x) {
  int e = 0;
  int ok = atomic_compare_exchange_strong_explicit(x, &e, 2, memory_order_relaxed,
                                                   memory_order_relaxed);
}
exists (0:ok=0 /\\ 0:e=1)
""")
    # x is always 1 and e starts at 0: the cas fails, reads 1 and stores it into e (C11
    # 7.17.7.4); that is the only path
    (path,) = paths_per_thread(t)[0]
    regs = dict(path.regs)
    assert regs["ok"] == 0 and regs["e"] == 1
    assert [op.kind for op in path.ops] == ["R"]          # a failed cas only reads
    # with e = 1 it succeeds on reading 1: one rmw writing 2, e unchanged (x's domain also
    # holds that 2, whose path fails)
    (succ,) = [p for p in paths_per_thread(parse(TEXT.replace("int e = 0", "int e = 1")))[0]
               if p.ops[0].rval == 1]
    assert dict(succ.regs)["ok"] == 1 and dict(succ.regs)["e"] == 1
    assert [(op.kind, op.rval, op.wval) for op in succ.ops] == [("U", 1, 2)]


def test_void_cast_and_pointer_register_in_condition():
    t = parse("""C v
{ [x] = 0; }
P0 (atomic_int* x) { (void)atomic_exchange_explicit(x, 3, memory_order_relaxed); }
exists (0:x=0 \\/ 0:x!=0 /\\ x=3)
""")
    assert [i.base for i in t.threads[0].code] == ["rmw"]
    # 0:x names the pointer register x (an address): '=0' is false, '!=0' true
    from litmus.ir import And, Const, Or
    assert t.condition.prop == Or((Const(False), And((Const(True), t.condition.prop.args[1]
                                                      .args[1]))))


def test_release_failure_order_means_its_load_part():
    t = parse("""C f
{ [x] = 0; [e] = 0; }
P0 (atomic_int* x, int* e) {
  int ok = atomic_compare_exchange_strong_explicit(x, e, 1, memory_order_release,
                                                   memory_order_release);
}
exists (0:ok=1)
""")
    cas = [i for i in t.threads[0].code if i.base == "cas"][0]
    assert cas.order == "rel" and cas.fail_order == "rlx"


@pytest.mark.parametrize("text, line, col, words", [
    ("C t\n{ atomic_int y[2]; }\nP0 (atomic_int* y) {\n  atomic_store_explicit(y+2, 1, memory_order_relaxed);\n}\n"
     "exists (y[0]=1)\n", 4, 25, "outside y[2]"),
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  atomic_store_explicit(x+1, 1, memory_order_relaxed);\n}\n"
     "exists (x=1)\n", 4, 25, "not an array"),
    ("C t\n{ atomic_int y[2] = {1, 2, 3}; }\nP0 (atomic_int* y) {\n  *y = 1;\n}\nexists (y[0]=1)\n",
     2, 28, "more than 2 initial values"),
    ("C t\n{ atomic_int y[0]; }\nP0 (atomic_int* y) {\n  *y = 1;\n}\nexists (y[0]=1)\n",
     2, 16, "positive length"),
])
def test_malformed_arrays_give_line_col(text, line, col, words):
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    assert (e.value.line, e.value.col) == (line, col), str(e.value)
    assert words in e.value.reason

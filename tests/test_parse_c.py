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

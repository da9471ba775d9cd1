"""The path combinations of models with a no-thin-air axiom (``litmus.cfg.justified_paths``, the
rc11 builder's): exactly those an execution built in po | rf order can produce, derived by hand on
small programs; and on random C programs whose values flow through registers, branches and rmws,
the engine (built from them) and the Python reference (which enumerates the product of every
value domain and lets the model reject the cycles) allow the same outcomes."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
from litmus import parse
from litmus.cfg import justified_paths, paths_per_thread
from test_conformance_rc11 import (agrees_with_reference_or_reject,
                                    assert_engine_agrees_with_reference)


# P0 copies x + 1 into y, P1 copies y into x: load buffering through data dependencies
LB_DATA = """C lb-data
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  atomic_store_explicit(y, r0 + 1, memory_order_relaxed);
}
P1 (atomic_int* x, atomic_int* y) {
  int r1 = atomic_load_explicit(y, memory_order_relaxed);
  atomic_store_explicit(x, r1, memory_order_relaxed);
}
exists (0:r0=1)
"""


def values(combo):
    """Per thread, the values its reads returned."""
    return tuple(tuple(op.rval for op in path.ops if op.rval is not None) for path in combo)


def test_load_buffering_through_data_is_justified_only_in_po_rf_order():
    # growing executions: P0 reads x = 0 (the only value written so far) and writes y = 1; P1
    # reads y = 0 or 1 and writes it to x. x = 1 for P0 would need P1's write, which needs P0's
    # write of y, which comes after P0's read: a cycle, never offered
    got = sorted(values(c) for c in justified_paths(parse(LB_DATA)))
    assert got == [((0,), (0,)), ((0,), (1,))]
    # the value domains offer more (x grows 0, 1, 2, ... around the cycle); only the justified
    # ones have consistent executions
    domains = [len(p) for p in paths_per_thread(parse(LB_DATA), seed=False)]
    assert domains[0] > 2 and domains[1] > 2
    res = oracle.check(parse(LB_DATA), "rc11")
    assert {(s["P0:r0"], s["P1:r1"]) for s in res.states} == {(0, 0), (0, 1)}
    assert res.verdict == "No"


def test_a_branch_on_a_value_from_another_thread():
    t = parse("""C br
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 2, memory_order_relaxed);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  if (r0 == 2) { atomic_store_explicit(y, 1, memory_order_relaxed); }
}
exists (y=1)
""")
    combos = justified_paths(t)
    # P1 reads the initial 0 (no store) or P0's 2 (a store of y): two paths of P1, P0's one
    assert sorted(values(c) for c in combos) == [((), (0,)), ((), (2,))]
    assert [len(c[1].ops) for c in combos] == [1, 2]


def test_an_rmw_never_reads_its_own_write():
    t = parse("""C rmw
{ [x] = 0; }
P0 (atomic_int* x) { int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed); }
P1 (atomic_int* x) { int r1 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed); }
exists (0:r0=1 /\\ 1:r1=1)
""")
    # each reads 0 or the other's write: (0, 0), (0, 1), (1, 0); never (1, 1) nor a 2
    assert sorted(values(c) for c in justified_paths(t)) == [((0,), (0,)), ((0,), (1,)),
                                                             ((1,), (0,))]


def test_the_order_is_that_of_the_product():
    # the builder's pre-executions come in the order of paths_per_thread's product (explain
    # shows the first execution that produces an outcome)
    t = parse(LB_DATA)
    product = [values(c) for c in itertools.product(*paths_per_thread(t, seed=False))]
    got = [values(c) for c in justified_paths(t)]
    assert [product.index(v) for v in got] == sorted(product.index(v) for v in got)


ORDERS = ["relaxed", "acquire", "release", "seq_cst"]
#: loads and fetch_adds in a generated program with dependencies, and writes per location:
#: at most (3 + 1) ** 5 rf choices times 3! co orders per location
MAX_READS = 5
MAX_WRITES = 3


@st.composite
def dependent_c_programs(draw):
    """2-3 threads over x, y: loads whose values feed stores (r, r + 1) and branches
    (if (r == k)), constant stores, fetch_add and fences. At most :data:`MAX_READS` loads and
    fetch_adds in all and :data:`MAX_WRITES` writes per location: the Python reference
    enumerates every rf and co choice of every combination of the threads' value paths and
    refuses past 300,000 candidates (3 threads with 15 reads, or 6 reads and 6 writes to one
    location, went past it)."""
    nthreads = draw(st.integers(2, 3))
    threads = []
    regs = []
    reads = 0
    writes = {"x": 0, "y": 0}
    for tid in range(nthreads):
        lines = []
        mine = []
        for _ in range(draw(st.integers(1, 4))):
            kinds = ["fence"]
            if reads < MAX_READS:
                kinds += ["ld"]
            if any(n < MAX_WRITES for n in writes.values()):
                kinds += ["st"] + (["add"] if reads < MAX_READS else []) + \
                    (["stdep", "if"] if mine or reads < MAX_READS else [])
            kind = draw(st.sampled_from(kinds))
            if kind in ("stdep", "if") and not mine:
                kind = "ld"                   # nothing to depend on yet: a load instead
            reads += kind in ("ld", "add")
            if kind in ("st", "stdep", "if", "add"):
                x = draw(st.sampled_from([v for v in ("x", "y") if writes[v] < MAX_WRITES]))
                writes[x] += 1
            else:
                x = draw(st.sampled_from(["x", "y"]))
            o = draw(st.sampled_from(ORDERS))
            lo = o if o in ("relaxed", "acquire", "seq_cst") else "relaxed"
            so = o if o in ("relaxed", "release", "seq_cst") else "relaxed"
            if kind == "ld":
                r = f"r{len(regs)}"
                lines.append(f"int {r} = atomic_load_explicit({x}, memory_order_{lo});")
                mine.append(r)
                regs.append((tid, r))
            elif kind == "st":
                lines.append(f"atomic_store_explicit({x}, {draw(st.integers(1, 2))}, "
                             f"memory_order_{so});")
            elif kind == "stdep":
                r = draw(st.sampled_from(mine))
                e = draw(st.sampled_from([r, f"{r} + 1"]))
                lines.append(f"atomic_store_explicit({x}, {e}, memory_order_{so});")
            elif kind == "if":
                r = draw(st.sampled_from(mine))
                k = draw(st.integers(0, 2))
                lines.append(f"if ({r} == {k}) {{ atomic_store_explicit({x}, "
                             f"{draw(st.integers(1, 2))}, memory_order_{so}); }}")
            elif kind == "add":
                r = f"r{len(regs)}"
                lines.append(f"int {r} = atomic_fetch_add_explicit({x}, 1, memory_order_{o});")
                mine.append(r)
                regs.append((tid, r))
            else:
                lines.append(f"atomic_thread_fence(memory_order_{o});")
        threads.append(f"P{tid} (atomic_int* x, atomic_int* y) {{ " + " ".join(lines) + " }")
    cond = " /\\ ".join(f"{t}:{r}=1" for t, r in regs[:2]) or "x=1"
    return "C dep\n{ [x] = 0; [y] = 0; }\n" + "\n".join(threads) + f"\nexists ({cond})\n"


@settings(max_examples=40, deadline=None)
@given(dependent_c_programs())
def test_engine_and_reference_agree_on_programs_with_dependencies(text):
    agrees_with_reference_or_reject(parse(text))


# P0's load of x and its fetch_add of y are the two operands of one '+' (or, split, two
# statements); P1 copies y into x
UNSEQ_LB = """C unseq-lb
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) { %s }
P1 (atomic_int* x, atomic_int* y) {
  int r = atomic_load_explicit(y, memory_order_relaxed);
  atomic_store_explicit(x, r, memory_order_relaxed);
}
exists (0:t=1 /\\ 1:r=1)
"""


def test_unsequenced_operands_may_read_a_value_justified_by_the_other_operand():
    # the two operands of '+' are unsequenced (C11 6.5p3): po does not order the load of x
    # and the fetch_add of y. The execution where the fetch_add writes y = 1, P1 reads it and
    # writes x = 1 and P0's load reads x = 1 then has an acyclic po | rf, so rc11 allows
    # t = x + old y = 1 + 0 = 1 with r = 1, although the load comes first in P0's code (an
    # exploration in code order never offers it x = 1). Split into two
    # statements, sb orders the load first and the same execution is a po | rf cycle.
    one = parse(UNSEQ_LB % "int t = atomic_load_explicit(x, memory_order_relaxed) + "
                           "atomic_fetch_add_explicit(y, 1, memory_order_relaxed);")
    two = parse(UNSEQ_LB % "int a = atomic_load_explicit(x, memory_order_relaxed); "
                           "int t = a + atomic_fetch_add_explicit(y, 1, memory_order_relaxed);")
    assert oracle.check(one, "rc11").verdict == "Ok"
    assert oracle.check(two, "rc11").verdict == "No"
    assert_engine_agrees_with_reference(one)
    assert_engine_agrees_with_reference(two)

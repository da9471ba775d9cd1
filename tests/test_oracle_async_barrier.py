"""Async LDS DMA and barriers in the AMDGPU model: hand-derived cases and metamorphic properties.

Derivations follow seeds/amdgpu-async-operations.txt and seeds/amdgpu-execution-synchronization.txt
with DESIGN.md's choices (async op = non-atomic read of global x + non-atomic wg-store-available
write of LDS a, ordered only through marks and waits; fenced barriers synchronize).
"""

from __future__ import annotations

from hypothesis import assume, given, settings, strategies as st

import litmus
import oracle
from litmus.ir import UNDEF
from reference import reference_check
from test_oracle_props import exhaustive_consistent

U = UNDEF


def check(text):
    return oracle.check(litmus.parse(text))


def states(text, keys):
    return {tuple(s[k] for k in keys) for s in check(text).states}


def one_thread(body: str, init="x = 5; lds a = 0; lds b = 0; y = 7;") -> str:
    rows = "\n".join(f" {ln} ;" for ln in body.strip().split("\n"))
    return f"AMDGPU t\n{{ {init} }}\n P0 ;\n{rows}\nexists (P0:r0 == 0)\n"


def test_async_load_without_wait_races_with_the_read():
    # the DMA write to a is not hb the ld: the read may see it without lo -> undef
    assert states(one_thread("async.ld a, x\nld r0, a"), ["P0:r0"]) == {(U,)}


def test_async_load_completed_by_mark_and_wait():
    # W.async a hb the wait hb ld a; every LDS access is wg store-available/load-visible, so
    # W.async lo R (and hides the initial write): rule 4 gives the value the DMA read, x = 5
    text = one_thread("async.ld a, x\nasync.mark\nasync.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(5,)}


def test_async_copy_with_the_lds_location_declared_first():
    # declaration order changes nothing: the copy's LDS write takes its value from the read of
    # the global, whatever order the init block names them in (the builder numbers globals
    # first; the search resolves a location's values after the locations its values come from)
    for init in ("lds a = 0; y = 7;", "y = 7; lds a = 0;"):
        text = one_thread("async.ld a, y\nasync.mark\nasync.wait 0\nld r0, a", init=init)
        assert states(text, ["P0:r0"]) == {(7,)}, init


def test_wait_without_a_later_mark_completes_nothing():
    assert states(one_thread("async.ld a, x\nasync.wait 0\nld r0, a"), ["P0:r0"]) == {(U,)}
    # a mark before the issue does not track it
    text = one_thread("async.mark\nasync.ld a, x\nasync.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(U,)}


def test_wait_n_leaves_the_last_n_marks_outstanding():
    text = one_thread("async.ld a, x\nasync.mark\nasync.ld b, y\nasync.mark\nasync.wait 1\n"
                      "ld r0, a\nld r1, b")
    assert states(text, ["P0:r0", "P0:r1"]) == {(5, U)}


def test_async_read_of_a_global_written_before_the_issue_copies_it():
    # seeds/amdgpu-async-operations.txt: "A memory operation X program ordered before an
    # overlapping asynchronous operation A happens-before A", and the memory model's
    # program-order clause of location order applies to X and A: W x=9 po-before the issue is lo
    # the DMA read and hides the initial x (W1 lo W2 lo R) -> rule 4, the DMA copies 9.
    text = one_thread("st x, 9\nasync.ld a, x\nasync.mark\nasync.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(9,)}
    # an LDS store before the issue is lo the DMA's LDS write (both wg store-available, hb):
    # after the wait the load sees only the DMA write, which copied x = 5
    text = one_thread("st a, 7\nasync.ld a, x\nasync.mark\nasync.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(5,)}


def test_edges_out_of_an_async_op_need_completion_even_into_another_async_op():
    # two DMAs into a: the first is po-before the second's issue, but an edge out of an async
    # op counts only once it is completed ("A ... happens-before X only if A is completed before
    # X"), so the two writes to a are unordered; after wait 0 both are lo ld a and neither hides
    # the other: rule 5, undef
    text = one_thread("async.ld a, x\nasync.ld a, y\nasync.mark\nasync.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(U,)}
    # completed before the second issue (mark + wait 0 in between): W.async(x) hb the wait,
    # which is po-before the second DMA (poa): ordered, the second write hides the first -> 7
    text = one_thread("async.ld a, x\nasync.mark\nasync.wait 0\nasync.ld a, y\nasync.mark\n"
                      "async.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(7,)}


def test_async_read_does_not_see_later_writes_ordered():
    # a store po-after the issue is not ordered with the DMA read: the read may see both the
    # initial value (lo via the initial write) and the store (not lo) -> undef
    text = one_thread("async.ld a, x\nst x, 9\nasync.mark\nasync.wait 0\nld r0, a")
    assert states(text, ["P0:r0"]) == {(U,)}


BAR_MP = """AMDGPU barrier-mp
{{ x = 0; }}
 P0@wave 0, wg 0  | P1@wave 1, wg 0   ;
 st x, 1          | {b1}              ;
 {f1}             | {f2}              ;
 {b0}             | ld r0, x          ;
exists (P1:r0 == 0)
"""


def bar_mp(f1="fence.rel.wg", f2="fence.acq.wg", b0="barrier", b1="barrier"):
    return BAR_MP.format(f1=f1, f2=f2, b0=b0, b1=b1)


def test_fenced_barrier_synchronizes():
    # F rel po arrive(P0) participates-in wait(P1) po F acq, inclusive wg scopes: sw; the
    # release/acquire fences also make W x available and visible: r0 = 1
    assert states(bar_mp(), ["P1:r0"]) == {(1,)}
    assert check(bar_mp()).verdict == "No"


def test_barrier_alone_orders_no_memory():
    text = bar_mp(f1="", f2="")
    assert states(text, ["P1:r0"]) == {(U,)}


SPLIT = """AMDGPU split
{ x = 0; }
 P0@wave 0, wg 0  | P1@wave 1, wg 0   ;
 st x, 1          | bar.signal -1     ;
 fence.rel.wg     | bar.wait -1       ;
 bar.signal -1    | fence.acq.wg      ;
 WAIT             | ld r0, x          ;
exists (P1:r0 == 0)
"""


def test_split_barrier_synchronizes():
    # both waves arrive in one phase (expected count 2): P0's arrive participates in P1's wait
    assert states(SPLIT.replace("WAIT", "bar.wait -1"), ["P1:r0"]) == {(1,)}


def test_signal_then_exit_is_undefined():
    # P0 arrives and ends (drops). In the schedule where P1 arrives first, P0's arrive
    # participates in P1's wait, which does not barrier-execute-before P0's drop: the seed's
    # arrive-then-drop rule is broken -> Undef. (In the other schedule P0's arrive and drop
    # complete a phase alone and P1 sees no synchronization.)
    res = check(SPLIT.replace("WAIT", ""))
    assert res.verdict == "Undef"
    assert any("drops it" in r for r in res.ub)
    assert {s["P1:r0"] for s in res.states} == {1, U}


def test_barrier_fences_across_workgroups_do_not_synchronize():
    text = bar_mp().replace("P1@wave 1, wg 0", "P1@wave 0, wg 1")
    # each workgroup has its own barrier: no participation across workgroups
    assert states(text, ["P1:r0"]) == {(U,)}


def test_named_barrier_without_init_is_undef():
    res = check("AMDGPU n\n{ x = 0; }\n P0 ;\n bar.join 1 ;\n bar.signal 1 ;\n bar.wait 1 ;\n"
                "exists (x == 0)\n")
    assert res.verdict == "Undef"
    assert any("not an init" in r for r in res.ub)


def test_deadlock_is_undef():
    res = check("AMDGPU d\n{ x = 0; }\n P0 ;\n bar.init 1, 2 ;\n bar.join 1 ;\n"
                " bar.signal 1 ;\n bar.wait 1 ;\nexists (x == 0)\n")
    assert res.verdict == "Undef"
    assert any("deadlock" in r for r in res.ub)


def test_named_barrier_completes_with_two_waves():
    text = """AMDGPU named
{ x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 bar.init 1, 2   |                 ;
 bar.join 1      | bar.join 1      ;
 st x, 1         |                 ;
 fence.rel.wg    |                 ;
 bar.signal 1    | bar.signal 1    ;
                 | bar.wait 1      ;
                 | fence.acq.wg    ;
                 | ld r0, x        ;
exists (P1:r0 == 0)
"""
    res = check(text)
    # P1 may signal before P0 initializes: then the first modification is not an init
    assert res.verdict == "Undef"
    assert any("not an init" in r for r in res.ub)


def test_leave_without_join_is_undef():
    res = check("AMDGPU l\n{ x = 0; }\n P0 ;\n bar.leave ;\nexists (x == 0)\n")
    assert res.verdict == "Undef"


# --- metamorphic properties ------------------------------------------------------------------------
@st.composite
def async_programs(draw):
    nth = draw(st.integers(1, 2))
    cols = []
    for t in range(nth):
        code, reg = [], 0
        for _ in range(draw(st.integers(1, 4))):
            k = draw(st.sampled_from(("async", "mark", "wait", "ldl", "stl", "ldx", "stx",
                                      "fence")))
            if k == "async":
                code.append("async.ld a, x")
            elif k == "mark":
                code.append("async.mark")
            elif k == "wait":
                code.append(f"async.wait {draw(st.integers(0, 1))}")
            elif k == "ldl":
                code.append(f"ld r{reg}, a")
                reg += 1
            elif k == "ldx":
                code.append(f"ld.atom.acq.wg r{reg}, x")
                reg += 1
            elif k == "stl":
                code.append(f"st a, {draw(st.integers(1, 2))}")
            elif k == "stx":
                code.append(f"st.atom.rel.wg x, {draw(st.integers(1, 2))}")
            else:
                code.append(f"fence.{draw(st.sampled_from(('acq', 'rel', 'acq_rel')))}.wg")
        cols.append(code)
    return cols


def render(cols) -> str:
    head = " | ".join(f"P{t}@wave {t}, wg 0" for t in range(len(cols))) + " ;"
    rows = [" | ".join(c[k] if k < len(c) else "" for c in cols) + " ;"
            for k in range(max(len(c) for c in cols))]
    return "AMDGPU gen\n{ x = 0; lds a = 0; }\n" + head + "\n" + "\n".join(rows) + \
        "\nexists (x == 0)\n"


def covers(weak, s):
    return any(all(w[k] == U or (s[k] != U and w[k] == s[k]) for k in s) for w in weak)


def assert_covered(weak_cols, strong_cols):
    weak, strong = check(render(weak_cols)), check(render(strong_cols))
    assume(not strong.ub)           # UB allows anything: no outcome set to compare
    for s in strong.states:
        assert covers(weak.states, s), (render(weak_cols), render(strong_cols), s)


@settings(max_examples=60, deadline=None)
@given(async_programs(), st.data())
def test_adding_a_wait_never_adds_outcomes(cols, data):
    t = data.draw(st.integers(0, len(cols) - 1))
    k = data.draw(st.integers(0, len(cols[t])))
    strong = [list(c) for c in cols]
    strong[t].insert(k, "async.wait 0")
    assert_covered(cols, strong)


@settings(max_examples=60, deadline=None)
@given(async_programs(), st.data())
def test_removing_a_wait_never_removes_outcomes(cols, data):
    waits = [(t, k) for t, c in enumerate(cols) for k, i in enumerate(c) if i.startswith("async.w")]
    assume(waits)
    t, k = data.draw(st.sampled_from(waits))
    weak = [list(c) for c in cols]
    del weak[t][k]
    assume(weak[t])                 # a thread with no instruction is not a program
    assert_covered(weak, cols)


@settings(max_examples=40, deadline=None)
@given(async_programs(), st.data())
def test_adding_a_fenced_barrier_never_adds_outcomes(cols, data):
    strong = []
    for c in cols:
        k = data.draw(st.integers(0, len(c)))
        strong.append(c[:k] + ["fence.rel.wg", "barrier", "fence.acq.wg"] + c[k:])
    assert_covered(cols, strong)


@settings(max_examples=40, deadline=None)
@given(async_programs(), st.booleans())
def test_engine_agrees_with_reference_on_async_and_barriers(cols, with_barrier):
    if with_barrier:
        cols = [c[:1] + ["fence.rel.wg", "barrier", "fence.acq.wg"] + c[1:] for c in cols]
    test = litmus.parse(render(cols))
    res = oracle.check(test)
    ref, _, ncons = reference_check(test)
    assert {tuple(s[k] for k in test.observables()) for s in res.states} == ref
    assert res.consistent <= ncons and (res.consistent > 0) == (ncons > 0)   # bounding
    assert exhaustive_consistent(test) == ncons

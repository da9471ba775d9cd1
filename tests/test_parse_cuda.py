"""The CUDA source dialect (litmus/parse_cuda.py) and its default model (the opencl unit read with
block = work-group, device = agent): hand-derived verdicts for MP / SB / LB / IRIW."""

import pytest

from litmus import parse
from litmus.lexer import ParseError
from oracle import check


def two(name, p0, p1, cond, cta1=1, decl="atomic_int* x, atomic_int* y"):
    return (f"CUDA {name}\n{{ [x] = 0; [y] = 0; }}\n"
            f"P0@cta 0,gpu 0 ({decl}) {{\n{p0}\n}}\n"
            f"P1@cta {cta1},gpu 0 ({decl}) {{\n{p1}\n}}\nexists ({cond})\n")


def st(loc, v, o, s):
    return f"  atomic_store_explicit({loc}, {v}, memory_order_{o}, cuda::thread_scope_{s});"


def ld(r, loc, o, s):
    return f"  int {r} = atomic_load_explicit({loc}, memory_order_{o}, cuda::thread_scope_{s});"


def mp(s, cta1=1):
    return two(f"MP-{s}", st("x", 1, "relaxed", s) + "\n" + st("y", 1, "release", s),
               ld("r0", "y", "acquire", s) + "\n" + ld("r1", "x", "relaxed", s),
               "P1:r0=1 /\\ P1:r1=0", cta1)


def verdict(text):
    return check(parse(text, "t.litmus")).verdict


def test_ir_scopes_and_placement():
    t = parse(mp("block"), "t.litmus")
    assert t.dialect == "CUDA"
    assert {i.scope for th in t.threads for i in th.code if i.base in ("ld", "st")} == {"wg"}
    assert t.threads[1].placement.wg == 1 and t.threads[1].placement.agent == 0
    assert dict(t.meta)["regions"] == (("x", ("global",)), ("y", ("global",)))


def test_mp_device_scope_forbidden_block_scope_across_ctas_allowed():
    # rel/acq at device scope between two CTAs of one GPU synchronise: MP forbidden
    assert verdict(mp("device")) == "No"
    assert verdict(mp("system")) == "No"
    # block scope does not include a thread of another CTA: no synchronisation
    assert verdict(mp("block")) == "Ok"
    # ... but two threads of one CTA do synchronise at block scope
    assert verdict(mp("block", cta1=0)) == "No"


def test_sb_relaxed_allowed_sc_forbidden():
    sb = lambda o: two(f"SB-{o}", st("x", 1, o, "device") + "\n" + ld("r0", "y", "seq_cst" if o == "seq_cst" else "relaxed", "device"),
                       st("y", 1, o, "device") + "\n" + ld("r0", "x", "seq_cst" if o == "seq_cst" else "relaxed", "device"),
                       "P0:r0=0 /\\ P1:r0=0")
    assert verdict(sb("relaxed")) == "Ok"
    assert verdict(sb("seq_cst")) == "No"


def test_lb_relaxed_allowed_acq_rel_forbidden():
    lb = lambda lo, so: two("LB", ld("r0", "x", lo, "device") + "\n" + st("y", 1, so, "device"),
                            ld("r0", "y", lo, "device") + "\n" + st("x", 1, so, "device"),
                            "P0:r0=1 /\\ P1:r0=1")
    assert verdict(lb("relaxed", "relaxed")) == "Ok"     # no thin-air axiom: LB allowed (as PTX)
    assert verdict(lb("acquire", "release")) == "No"     # sw both ways: hb cycle


def test_iriw_acquire_allowed_sc_forbidden():
    def iriw(o):
        so = o if o == "seq_cst" else "release"
        head = lambda k: f"P{k}@cta {k},gpu 0 (atomic_int* x, atomic_int* y) {{\n"
        body = (head(0) + st("x", 1, so, "device") + "\n}\n"
                + head(1) + ld("r0", "x", o, "device") + "\n" + ld("r1", "y", o, "device") + "\n}\n"
                + head(2) + st("y", 1, so, "device") + "\n}\n"
                + head(3) + ld("r0", "y", o, "device") + "\n" + ld("r1", "x", o, "device") + "\n}\n")
        return (f"CUDA IRIW\n{{ [x] = 0; [y] = 0; }}\n{body}"
                "exists (P1:r0=1 /\\ P1:r1=0 /\\ P3:r0=1 /\\ P3:r1=0)\n")
    assert verdict(iriw("acquire")) == "Ok"
    assert verdict(iriw("seq_cst")) == "No"


def test_fence_mp_and_race():
    fenced = two("MP+fences", "  *x = 1;\n  atomic_thread_fence(memory_order_release, cuda::thread_scope_device);\n"
                 + st("y", 1, "relaxed", "device"),
                 ld("r0", "y", "relaxed", "device") + "\n  atomic_thread_fence(memory_order_acquire, cuda::thread_scope_device);\n"
                 "  int r1 = 0;\n  if (r0 == 1) { r1 = *x; }",
                 "P1:r0=1 /\\ P1:r1=0", decl="int* x, atomic_int* y")
    assert verdict(fenced) == "No"
    racy = fenced.replace("cuda::thread_scope_device", "cuda::thread_scope_block")
    # block-scoped fences across CTAs do not synchronise: the *x accesses race (flag racy)
    assert "racy" in check(parse(racy, "t.litmus")).flags
    assert "racy" not in check(parse(fenced, "t.litmus")).flags


@pytest.mark.parametrize("body, where, msg", [
    ("  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);", "4:53", "CUDA thread scope"),
    ("  __syncthreads();", "4:3", "not in the CUDA dialect"),
])
def test_errors_name_the_place(body, where, msg):
    text = two("E", body, st("y", 1, "relaxed", "device"), "y=1")
    with pytest.raises(ParseError) as e:
        parse(text, "e.litmus")
    assert f"e.litmus:{where}" in str(e.value) and msg in str(e.value)


def test_placement_required():
    text = two("E", st("x", 1, "relaxed", "device"), st("y", 1, "relaxed", "device"), "y=1")
    with pytest.raises(ParseError, match="e.litmus:3:.*placement"):
        parse(text.replace("P0@cta 0,gpu 0", "P0"), "e.litmus")

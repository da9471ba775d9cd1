"""The format document's examples parse, and the IR helpers mean what the format says
(docs/litmus-format.md, the repository's own account of ../shared/LITMUS.md)."""

import re
import subprocess
import sys

import pytest

import litmus
from litmus import UNDEF, parse
from litmus.outcome import satisfiable, valid, verdict

from conftest import DOCS, ROOT


def litmus_md_examples():
    text = (DOCS / "litmus-format.md").read_text()
    blocks = re.findall(r"```\n(.*?)```", text, re.S)
    return [b for b in blocks if b.lstrip().startswith("AMDGPU")]


def test_every_litmus_md_example_parses():
    examples = litmus_md_examples()
    assert examples, "docs/litmus-format.md has AMDGPU examples"
    for ex in examples:
        t = parse(ex, "litmus-format.md")
        assert parse(litmus.format_test(t)) == t


def test_litmus_md_example_meaning():
    t = parse(litmus_md_examples()[0])
    assert t.name == "MP+fences.agent"
    assert [l.name for l in t.globals] == ["x", "y"] and [l.name for l in t.lds_locations] == ["a"]
    assert t.observables() == ["P1:r0", "P1:r1", "x", "y"]
    # P0 and P1 are in different workgroups of the same cluster and agent
    assert not t.same(0, 1, "wg") and t.same(0, 1, "cluster") and t.same(0, 1, "agent")
    fence = t.threads[0].code[1]
    assert fence.base == "fence" and fence.order == "rel" and fence.scope == "agent"
    assert t.threads[1].code[0].order == "rlx"       # ld.atom defaults to monotonic
    assert t.threads[0].code[0].access == "plain"


PLACED = """AMDGPU placed
{ x; }
 P0@wave 0, wg 0 | P1@wave 0, wg 0 | P2@wave 1, wg 0 | P3@wg 1, cluster 1 | P4 | P5@agent 1 ;
 ld r0, x        | ld r0, x        | ld r0, x        | ld r0, x           | ld r0, x | ld r0, x ;
exists (P0:r0 == 0)
"""


def test_scope_instances_and_inclusive_scopes():
    t = parse(PLACED)
    assert t.same(0, 1, "wave")                  # lanes of one wavefront
    assert not t.same(0, 2, "wave") and t.same(0, 2, "wg")
    assert not t.same(0, 3, "wg") and not t.same(0, 3, "cluster") and t.same(0, 3, "agent")
    assert not t.same(4, 0, "wg") and t.same(4, 0, "cluster")   # left-out wg: its own
    assert not t.same(5, 0, "agent") and t.same(5, 0, "sys")
    assert not t.same(0, 1, "thread")
    # inclusive: each instance contains the other's thread
    assert t.inclusive(0, "wg", 2, "wg")
    assert not t.inclusive(0, "wave", 2, "wg")          # P0's wave instance lacks P2
    assert t.inclusive(0, "agent", 3, "agent")
    assert not t.inclusive(0, "agent", 3, "wg")
    assert not t.inclusive(0, "agent", 5, "sys")        # P0's agent lacks P5 (agent 1)
    assert t.inclusive(0, "sys", 5, "sys")
    assert t.waves_in_workgroup(0) == 2 and t.waves_in_workgroup(3) == 1


def test_undef_semantics_of_conditions():
    t = parse(PLACED.replace("exists (P0:r0 == 0)",
                             "exists (P0:r0 == 1 /\\ P0:r0 == 2)"))
    state = {k: 0 for k in t.observables()}
    state["P0:r0"] = UNDEF
    # one undef position takes one value: it cannot be 1 and 2 at once
    assert not satisfiable(t.condition.prop, state)
    t2 = parse(PLACED.replace("exists (P0:r0 == 0)", "forall (P0:r0 == 1 \\/ P0:r0 != 1)"))
    assert valid(t2.condition.prop, state)
    t3 = parse(PLACED.replace("exists (P0:r0 == 0)", "~exists (P0:r0 == 7)"))
    assert verdict(t3.condition, [state]) == "No"       # undef may be 7
    assert verdict(t3.condition, [{**state, "P0:r0": 1}]) == "Ok"
    assert verdict(t3.condition, [state], undefined=True) == "Undef"


def test_instruction_defaults_are_normalized():
    t = parse("""AMDGPU d
{ x; }
 P0 ;
 cas.rel r0, x, 0, 1 ;
 cas.acq_rel r1, x, 0, 1 ;
 cas.sc.rlx r2, x, 0, 1 ;
 rmw.add r3, x, 1 ;
 st.av x, 2 ;
exists (x == 2)
""")
    c = t.threads[0].code
    assert (c[0].order, c[0].fail_order) == ("rel", "rlx")
    assert (c[1].order, c[1].fail_order) == ("acq_rel", "acq")
    assert (c[2].order, c[2].fail_order) == ("sc", "rlx")
    assert (c[3].order, c[3].scope, c[3].op) == ("rlx", "sys", "add")
    assert (c[4].access, c[4].scope) == ("av", "sys")
    # modifier order is free
    t2 = parse(str(litmus.format_test(t)).replace("rmw.add r3", "rmw.sys.add.rlx r3"))
    assert t2 == t


def test_fmt_cli_prints_canonical_layout_and_rejects_bad_files(tmp_path, capsys):
    from fuzz.cli import main
    good = tmp_path / "good.litmus"
    good.write_text(PLACED.replace(" | ", "|"))
    assert main(["fmt", str(good)]) == 0
    out = capsys.readouterr().out
    assert parse(out) == parse(PLACED)
    assert " | " in out
    bad = tmp_path / "bad.litmus"
    bad.write_text(PLACED.replace("ld r0, x        | ld r0", "ld.foo r0, x    | ld r0"))
    assert main(["fmt", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"{bad}:4:5: unknown modifier 'foo' in 'ld.foo'"


def test_fmt_check_and_directories(tmp_path, capsys):
    from fuzz.cli import main
    d = tmp_path / "suite"
    d.mkdir()
    t = parse(PLACED)
    (d / "a.litmus").write_text(litmus.format_test(t))
    (d / "b.litmus").write_text(PLACED)
    assert main(["fmt", "--check", str(d)]) == 1
    assert "b.litmus: not in canonical layout" in capsys.readouterr().err


def test_console_script_runs():
    exe = ROOT / ".venv" / "bin" / "scopefuzz"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "fuzz.cli"]
    r = subprocess.run(cmd + ["fmt", "/nonexistent.litmus"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("/nonexistent.litmus:1:1: cannot read file")


def test_unknown_dialect_is_reported_at_the_header():
    with pytest.raises(litmus.ParseError) as e:
        parse("\n  ARMv9 foo\n{}\n", "h.litmus")
    assert "unknown dialect 'ARMv9'" in e.value.reason and (e.value.line, e.value.col) == (2, 3)


def test_registers_sorted_by_number_with_initialised_ones_and_a_fresh_list_each_time():
    # P0 writes r10 then r2; P1 writes nothing but r7 has an initial value; y is LDS (no
    # observable): by hand, P0's registers are r2, r10 (by number, not by first write or by
    # text), P1's r7, and the observables those keys then the global x
    t = parse("""AMDGPU regs
{ x; lds y; P1:r7 = 3; }
 P0          | P1 ;
 ld r10, x   | st x, 1 ;
 ld r2, x    | ;
exists (P0:r10 == 0)
""")
    assert t.registers(0) == ["r2", "r10"] and t.registers(1) == ["r7"]
    assert t.observables() == ["P0:r2", "P0:r10", "P1:r7", "x"]
    # a caller may change the list it is given: the test's answer does not change with it
    t.registers(0).append("r99")
    t.registers(1).clear()
    assert t.registers(0) == ["r2", "r10"] and t.registers(1) == ["r7"]
    assert t.observables() == ["P0:r2", "P0:r10", "P1:r7", "x"]

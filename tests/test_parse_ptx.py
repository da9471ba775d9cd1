"""The PTX front end and printer: every PTX conformance file parses and prints back to an equal
test; the lowering follows the PTX ISA's defaults and Dat3M's spellings; path dependencies; bad
input is a ParseError with file:line:col."""

import pytest

from litmus import ParseError, format_test, parse
from litmus.cfg import attr, paths_per_thread
from litmus.dialects import litmus_files, parse_file
from litmus.print_ptx import format_ptx

MP = """PTX mp
"a doc line"
{
x=0; flag=0;
y @ generic aliases x;
s @ surface aliases y;
t @ texture aliases x;
P1:r0=0;
}
 P0@cta 0,gpu 0           | P1@cta 1,cluster 2,gpu 0  ;
 st.weak x, 1             | ld.acquire.gpu r0, flag   ;
 sust.weak s, 2           | tld.weak r1, t            ;
 fence.proxy.surface      | ld.relaxed.cta r2, y      ;
 fence.sc.sys             | fence.gpu                 ;
 st.release.sys flag, 1   | atom.add r3, x, 1         ;
 red.acq_rel.cta.sub x, 2 | atom.acquire.sys.cas r4, flag, 1, r0 ;
 membar.gl                | ld.volatile r5, x         ;
exists (P1:r0 == 1 /\\ P1:r1 != 2)
"""


def test_every_ptx_conformance_file_parses_and_prints_back(conformance):
    files = litmus_files([conformance / "PTX"])
    assert len(files) >= 180
    for f in files:
        t = parse_file(f)
        assert t.dialect == "PTX" and t.threads
        again = parse(format_test(t), f)
        assert again == t and again.meta == t.meta, f


def test_lowering_follows_the_ptx_isa():
    t = parse(MP, "mp.litmus")
    assert t.doc == ("a doc line",)
    assert [loc.name for loc in t.locations] == ["x", "flag"]      # aliases are no locations
    p0, p1 = (th.code for th in t.threads)
    # placements: cta -> workgroup, cluster -> cluster, gpu -> agent
    assert (t.threads[1].placement.wg, t.threads[1].placement.cluster,
            t.threads[1].placement.agent) == (1, 2, 0)
    st, sust, pfence, fsc, rel, red, membar = p0
    assert (st.base, st.access, st.order, st.scope, st.attrs) == ("st", "plain", None, None, ())
    # s is a surface view of y, itself a generic alias (another virtual address) of x
    assert (sust.loc, attr(sust, "proxy"), attr(sust, "via"), attr(sust, "vloc")) == \
        ("x", "surface", "s@surface", "y")
    assert (pfence.base, pfence.order, attr(pfence, "proxy")) == ("fence", None, "surface")
    assert (fsc.order, fsc.scope) == ("sc", "sys")
    assert (rel.access, rel.order, rel.scope) == ("atom", "rel", "sys")
    # red: an rmw without a destination, marked so that its read forms no acquire pattern
    assert (red.base, red.op, red.order, red.scope, red.reg, red.args) == \
        ("rmw", "sub", "acq_rel", "wg", None, (2,))
    assert "red" in red.attrs
    assert (membar.order, membar.scope) == ("sc", "agent")        # membar.gl = fence.sc.gpu
    acq, tld, rlx, fence, atom, cas, vol = p1
    assert (acq.access, acq.order, acq.scope) == ("atom", "acq", "agent")
    assert (attr(tld, "proxy"), attr(tld, "vloc")) == ("texture", None)   # t views x itself
    assert (rlx.loc, attr(rlx, "vloc"), rlx.scope) == ("x", "y", "wg")
    assert (fence.order, fence.scope) == ("acq_rel", "agent")     # fence default: .acq_rel
    assert (atom.op, atom.order, atom.scope) == ("add", "rlx", "agent")   # atom defaults
    assert (cas.base, cas.order, cas.fail_order) == ("cas", "acq", "acq")
    assert set(cas.attrs) == {"exp=1", "val=r0", "cmov"}
    assert (vol.access, vol.order, vol.scope, vol.attrs) == ("atom", "rlx", "sys", ("volatile",))


def test_barriers_moves_and_branches():
    t = parse("""PTX b
{ x=0; P0:r2=1; }
 P0@cta 0,gpu 0         | P1@cta 0,gpu 0         ;
 ld r1, 3               | bar.cta.arrive 2       ;
 bar.cta.sync 1, r2, 2  | LC00:                  ;
 add r3, r1, r2         | ld.weak r0, x          ;
 st.weak x, r3          | bne r0, 4, LC00        ;
exists (P0:r3 == 4 /\\ P1:r0 == 4)
""")
    p0, p1 = (th.code for th in t.threads)
    assert (p0[0].base, p0[0].reg, p0[0].attrs) == ("assign", "r1", ("val=3",))
    assert (p0[1].base, p0[1].scope) == ("cbar", "wg")
    assert set(p0[1].attrs) == {"inst=1", "id=r2", "quorum=2"}
    assert p0[2].attrs == ("val=(+ r1 r2)",)
    assert set(p1[0].attrs) == {"inst=2", "arrive"}
    assert [i.base for i in p1[1:]] == ["label", "ld", "branch"]


def test_comparisons_in_the_condition_print_back():
    t = parse(MP.replace("exists (P1:r0 == 1 /\\ P1:r1 != 2)", "exists (P1:r0 == P1:r1)"))
    text = format_ptx(t)
    assert text.rstrip().endswith("exists (P1:r0 == P1:r1)")
    assert parse(text) == t


def test_paths_carry_data_and_control_dependencies():
    t = parse("""PTX deps
{ x=0; y=0; z=0; }
 P0@cta 0,gpu 0     ;
 ld.weak r0, x      ;
 ld.weak r1, y      ;
 add r2, r0, 1      ;
 st.weak z, r2      ;
 bne r1, 0, LC00    ;
 st.weak x, 1       ;
 LC00:              ;
 ld.weak r3, z      ;
exists (P0:r3 == 0)
""")
    (paths,) = paths_per_thread(t, seed=False, deps=True)
    path = next(p for p in paths if dict(p.regs)["r1"] == 0)
    ld_x, ld_y, st_z, st_x, ld_z = path.ops
    assert st_z.deps == {0}                   # data: z = r0 + 1
    assert st_x.deps == {1}                   # control: the branch on r1
    assert ld_z.deps == {1}                   # control reaches every later operation
    assert ld_x.deps == ld_y.deps == frozenset()


def test_a_failed_cas_writes_back_what_it_read():
    t = parse("""PTX cas
{ x=5; }
 P0@cta 0,gpu 0                  ;
 atom.relaxed.gpu.cas r0, x, 1, 2 ;
exists (x == 5)
""")
    (paths,) = paths_per_thread(t, seed=False)
    (op,) = paths[0].ops
    assert (op.kind, op.rval, op.wval) == ("U", 5, 5)      # *a = (*a == b) ? c : *a


@pytest.mark.parametrize("cell, where, message", [
    ("ld.relaxed r0, x", 2, "ld.relaxed needs a scope (.cta, .cluster, .gpu or .sys)"),
    ("ld.weak.gpu r0, x", 10, "a weak ld takes no scope"),
    ("st.acquire.gpu x, 1", 5, "st cannot be .acquire"),
    ("atom.weak.add r0, x, 1", 7, "atom cannot be .weak"),
    ("atom.relaxed.gpu r0, x, 1", 2, "atom needs an operation"),
    ("red.relaxed.gpu.cas x, 1", 18, "red has no .cas"),
    ("fence.sc", 2, "a fence needs a scope"),
    ("fence.proxy.async", 14, "expected fence.proxy.alias, .surface, .texture or .constant"),
    ("membar.gpu", 9, "expected membar.cta, membar.gl or membar.sys"),
    ("bar.cta.wait 1", 6, "expected bar.cta.sync or bar.cta.arrive"),
    ("bar.cta.sync 1, 1, 0", 21, "the thread count must be a positive integer"),
    ("bar.cta.sync r1", 15, "the barrier instance must be an integer"),
    ("tld.relaxed.gpu r0, x", 2, "tld (the texture proxy) is weak only"),
    ("ld.weak r0, x, 1", 10, "ld takes 2 operand(s), got 3"),
    ("frobnicate r0", 2, "unknown instruction 'frobnicate'"),
    ("ld.acquire.gpu.acquire r0, x", 17, "two memory orders"),
])
def test_bad_instructions_are_errors_with_a_position(cell, where, message):
    text = f"PTX bad\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {cell} ;\nexists (x == 0)\n"
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    assert str(e.value).startswith(f"bad.litmus:4:{where}: "), str(e.value)
    assert message in str(e.value)


@pytest.mark.parametrize("init, where, message", [
    ("y @ generic aliases z;", "2:28", "alias of undeclared location 'z'"),
    ("y @ shared aliases x;", "2:12", "unknown proxy 'shared'"),
    ("x=0;", "2:8", "location 'x' declared twice"),
    ("y = &x;", "2:12", "locations holding addresses are not supported"),
])
def test_bad_declarations_are_errors_with_a_position(init, where, message):
    text = f"PTX bad\n{{ x=0; {init} }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 0)\n"
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    assert str(e.value).startswith(f"bad.litmus:{where}: "), str(e.value)
    assert message in str(e.value)


def test_bad_placement_is_an_error_with_a_position():
    with pytest.raises(ParseError, match=r"bad.litmus:3:5: bad placement: unknown level 'wg' "
                                         r"\(expected cta, cluster or gpu\)"):
        parse("PTX bad\n{ x=0; }\n P0@wg 0 ;\n st.weak x, 1 ;\nexists (x == 0)\n", "bad.litmus")

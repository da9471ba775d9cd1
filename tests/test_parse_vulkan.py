"""The Vulkan front end: every VULKAN conformance file parses; lowering is right; bad input is a
ParseError with file:line:col."""

import pytest

from litmus import ParseError, parse
from litmus.cfg import paths_per_thread, spin_loops
from litmus.dialects import litmus_files, parse_file

MP = """Vulkan mp
"doc line"
{
P1:r0=0;
x=0;
y=0;
}
 P0@sg 0, wg 0, qf 0                 | P1@sg 1,wg 0, qf 0                  ;
 st.av.dv.sc0 x, 1                   | ld.atom.acq.wg.sc0.semsc0 r0, y     ;
 st.atom.rel.wg.sc1.semsc0.semsc1.semav y, 1 | ld.vis.dv.sc0 r1, x         ;
exists
(P1:r0 == 1 /\\ P1:r1 == 0)
"""

LOOP = """VULKAN spin
{ flag=0; data=0; }
 P0@sg 0,wg 0, qf 0       | P1@sg 0,wg 1, qf 0     ;
 LC00:                    | st.atom.dv.sc0 data, 1 ;
 ld.atom.dv.sc0 r1, flag  | membar.rel.dv.semsc0   ;
 bne r1, 0, LC01          | st.atom.dv.sc0 flag, 1 ;
 goto LC00                | cbar.acq_rel.wg.semsc0 1, 2, 1 ;
 LC01:                    |                        ;
 ld.atom.dv.sc0 r2, data  |                        ;
 add r3, r2, 1            |                        ;
exists (P0:r3 == 2 /\\ P0:r2 == P0:r1)
"""


def test_every_vulkan_file_parses(conformance):
    files = litmus_files([conformance / "VULKAN"])
    assert len(files) >= 150
    for f in files:
        t = parse_file(f)
        assert t.dialect in ("Vulkan", "VULKAN") and t.threads


def test_lowering_of_mp():
    t = parse(MP, "mp.litmus")
    assert t.doc == ("doc line",)
    p0, p1 = (th.code for th in t.threads)
    st_av, st_rel = p0
    assert (st_av.base, st_av.access, st_av.scope, st_av.loc) == ("st", "av", "dv", "x")
    assert set(st_av.attrs) == {"sc0", "nonpriv"}
    assert (st_rel.access, st_rel.order, st_rel.scope) == ("atom", "rel", "wg")
    assert set(st_rel.attrs) == {"sc1", "semsc0", "semsc1", "semav", "nonpriv"}
    assert p1[0].order == "acq" and p1[1].access == "vis"
    # placements: sg -> wave, wg -> workgroup, qf -> agent
    assert (t.threads[1].placement.wave, t.threads[1].placement.wg) == (1, 0)
    assert t.reg_init == ((1, "r0", 0),)


def test_branches_loops_and_register_comparison():
    t = parse(LOOP, "spin.litmus")
    p0 = t.threads[0].code
    assert [i.base for i in p0[:5]] == ["label", "ld", "branch", "goto", "label"]
    assert spin_loops(p0) == {3}                # the goto closes a side-effect-free loop
    # the register comparison became an assign at the end of P0 and an atom on its result
    assert p0[-1].base == "assign" and p0[-1].reg.startswith("_c")
    cbar = t.threads[1].code[-1]
    assert cbar.base == "cbar" and set(cbar.attrs) >= {"inst=1", "id=2", "quorum=1"}
    paths = paths_per_thread(t)[0]
    # the spin loop exits at once (r1 != 0): the only value of flag that lets it is 1
    assert {dict(p.regs)["r1"] for p in paths} == {1}


def test_aliases_and_ssw():
    t = parse("""Vulkan a
{ x=0; y aliases x; }
{ ssw 0 1; }
 P0@sg 0,wg 0, qf 0 | P1@sg 1,wg 0, qf 0 ;
 st.sc0 x, 1        | ld.sc1 r0, y       ;
filter (P1:r0 == 1)
""")
    ld = t.threads[1].code[0]
    assert ld.loc == "x" and "vloc=y" in ld.attrs
    meta = dict(t.meta)
    assert meta["ssw"] == ((0, 1),)
    assert "filter" in meta


@pytest.mark.parametrize("cell, col_word, words", [
    ("ld.atom.acq.wg.sc0 r0, y", None, ""),                         # valid (control)
    ("ld.atom.acq.wg r0, y", "ld", "storage class"),
    ("st.vis.dv.sc0 y, 1", "vis", "cannot be 'vis'"),
    ("ld.atom.acq.zz.sc0 r0, y", "zz", "unknown modifier"),
    ("ld.atom.acq.wg.sc0 r0 y", "y", "expected ','"),
    ("membar.dv.semsc0", "membar", "needs an order"),
    ("bne r0, 1, L1", "L1", "label"),
    ("goto LC7", "LC7", "undefined label"),
    ("frob r0, y", "frob", "unknown instruction"),
    ("ld.atom.acq.wg.sc0.sc1 r0, y", "sc1", "two storage classes"),
])
def test_malformed_cell_gives_line_col(cell, col_word, words):
    text = ("Vulkan t\n{ y=0; }\n P0@sg 0, wg 0, qf 0 ;\n " + cell + " ;\nexists (y == 0)\n")
    if col_word is None:
        parse(text, "bad.litmus")
        return
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    err = e.value
    assert err.path == "bad.litmus"
    assert err.line == 4, str(err)
    assert err.col == 2 + cell.index(col_word), str(err)
    assert words in err.reason, str(err)


@pytest.mark.parametrize("text, line, col, words", [
    ("Vulkan t\n{ y=0;\n", 2, 1, "unterminated"),
    ("Vulkan t\n{ y=0; }\n P0@zz 0, wg 0, qf 0 ;\n ld.sc0 r0, y ;\nexists (P0:r0 == 0)\n",
     3, 5, "unknown level"),
    ("Vulkan t\n{ y=0; }\n P0@sg 0, wg 0, qf 0 | P1@sg 1, wg 0, qf 0 ;\n ld.sc0 r0, y ;\n"
     "exists (P0:r0 == 0)\n", 4, 2, "expected 2"),
    ("Vulkan t\n{ y=0; }\n P0@sg 0, wg 0, qf 0 ;\n ld.sc0 r0, y ;\nexists (P0:r5 == 0)\n",
     5, 12, "unknown register"),
    ("Vulkan t\n{ y=0; }\n P0@sg 0, wg 0, qf 0 ;\n ld.sc0 r0, y ;\n", 5, 1, "missing final"),
    ("Vulkan t\n{ y=0; P3:r0=1; }\n P0@sg 0, wg 0, qf 0 ;\n ld.sc0 r0, y ;\nexists (y == 0)\n",
     2, 8, "names thread P3"),
])
def test_malformed_file_gives_line_col(text, line, col, words):
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    err = e.value
    assert (err.line, err.col) == (line, col), str(err)
    assert words in err.reason, str(err)


def test_malformed_variants_of_suite_files(conformance):
    """Damaging real suite files (a modifier misspelt, a row's ';' dropped) gives ParseError."""
    files = litmus_files([conformance / "VULKAN" / "Kronos-Group"])[:25]
    for f in files:
        text = open(f).read()
        bad = text.replace(".sc0", ".sc9", 1)
        with pytest.raises(ParseError) as e:
            parse(bad, f)
        assert "sc9" in e.value.reason
        k = text.index(";", text.index("P0@"))
        with pytest.raises(ParseError):
            parse(text[:k] + text[k + 1:], f)

"""The Tile IR dialect and model units (litmus/parse_tileir.py, oracle/models/tileir/).

Expectations are derived by hand from the seed (tile-ir-memory-model.txt) and the reconstruction
the model files name (docs/tileir.md); the corpus's default-model verdicts are checked by
test_corpora_verdicts.py from corpora/tileir/expected.csv.
"""

from __future__ import annotations

import pytest

import oracle
from conftest import CORPORA
from litmus import ParseError, parse, parse_file
from litmus.tileir import TileOp
from oracle.models.tileir import VARIANTS
from oracle.models.tileir.builder import build, token_order
from reference import reference_check

TILE = CORPORA / "tileir"

MP = """TILEIR MP
{ x[0..1] = 0; f = 0; P1:r9 = 4; }
 P0@block 0, device 0                          | P1@block 1, device 0                              ;
 t0 = store relaxed device [x[0], x[1]], [1, 2] | [r0], t2 = load acquire device [f]              ;
 t1 = store release device [f], [1] token=t0   | [r1, r2], t3 = load relaxed device [x[0], x[1]] token=t2 ;
exists (P1:r0 == 1 /\\ x[1] == 2)
"""


def test_front_end_reads_tiles_tokens_and_placements():
    t = parse(MP)
    assert t.dialect == "TILEIR"
    assert [loc.name for loc in t.locations] == ["x[0]", "x[1]", "f"]
    assert t.observables() == ["P1:r0", "P1:r1", "P1:r2", "P1:r9", "x[0]", "x[1]", "f"]
    assert (t.threads[1].placement.wg, t.threads[1].placement.agent) == (1, 0)
    st = t.threads[0].code[0]
    assert isinstance(st, TileOp)
    assert (st.opname, st.sem, st.scope, st.addrs, st.vals, st.token, st.token_in) == \
        ("store", "relaxed", "device", ("x[0]", "x[1]"), (1, 2), "t0", ())
    ld = t.threads[1].code[1]
    assert (ld.regs, ld.token_in) == (("r1", "r2"), ("t2",))


def test_tl_blk_is_tile_block_and_masks_and_cas_operands():
    t = parse("""TILEIR m
{ x[0..2] = 0; }
 P0 ;
 [r0, r1, r2], t0 = atomic_cas acq_rel tl_blk [x[0], x[1], x[2]], [0, 0, 1], [5, 6, 7] mask [1, 0, 1] ;
 t1 = join_tokens t0, t0 ;
 [r3], t2 = atomic_rmw xchg relaxed sys [x[1]], [9] token=t1 ;
forall (x[1] == 9)
""")
    cas, join, rmw = t.threads[0].code
    assert (cas.scope, cas.cmps, cas.vals, cas.mask) == ("tile_block", (0, 0, 1), (5, 6, 7),
                                                          (True, False, True))
    assert join.token_in == ("t0", "t0") and rmw.op == "xchg"


@pytest.mark.parametrize("body, where, words", [
    ("t0 = store weak device [x], [1]", (4, 13), "weak store must not have a memory scope"),
    ("t0 = store relaxed [x], [1]", (4, 13), "relaxed store needs a scope"),
    ("[r0], t0 = load release device [x]", (4, 18), "load accepts the orderings"),
    ("[r0], t0 = atomic_rmw add weak [x], [1]", (4, 28), "atomic_rmw accepts"),
    ("[r0], t0 = atomic_rmw sub relaxed device [x], [1]", (4, 24), "unknown atomic_rmw mode"),
    ("t0 = store weak [x, y], [1]", (4, 7), "value tile has 1 lanes, the address tile 2"),
    ("t0 = store weak [z], [1]", (4, 19), "undeclared location 'z'"),
    ("t0 = store weak [x], [1] token=t5", (4, 33), "token t5 is not defined earlier"),
    ("t0 = join_tokens t0", (4, 19), "token t0 is not defined earlier"),
    ("t0 = make_token token=t0", (4, 18), "unexpected 'token' at the end of the op"),
    ("t0 = store weak [x], [1] mask [1, 1]", (4, 27), "the mask needs 1 bits"),
    ("[r0], t0 = store weak [x], [1]", (4, 2), "store returns no tile"),
    ("t0 = load weak [x]", (4, 2), "load returns a tile"),
    ("t0 = fence [x]", (4, 7), "unknown op 'fence'"),
    ("t0 = store weak [w], [1]", (4, 19), "'w' is a tile: name an element"),
    ("t0 = store weak [w[5]], [1]", (4, 19), "element w[5] is outside the declared tile w"),
])
def test_malformed_ops_are_one_line_errors_at_file_line_col(body, where, words):
    text = f"TILEIR bad\n{{ x = 0; y = 0; w[0..1] = 0; }}\n P0 ;\n {body} ;\nexists (x == 1)\n"
    with pytest.raises(ParseError) as e:
        parse(text, "bad.litmus")
    msg = str(e.value)
    assert "\n" not in msg and words in msg, msg
    assert (e.value.line, e.value.col) == where, msg


def test_frame_errors():
    with pytest.raises(ParseError, match=r"bad:3:25: P1 is the same tile block as P0"):
        parse("TILEIR t\n{ x = 0; }\n P0@block 1, device 0 | P1@block 1 ;\nexists (x == 0)\n",
              "bad")
    with pytest.raises(ParseError, match=r"register r0 written twice"):
        parse("TILEIR t\n{ x = 0; }\n P0 ;\n [r0], t0 = load weak [x] ;\n"
              " [r0], t1 = load weak [x] ;\nexists (x == 0)\n")
    with pytest.raises(ParseError, match=r"token t0 defined twice"):
        parse("TILEIR t\n{ x = 0; }\n P0 ;\n t0 = make_token ;\n t0 = make_token ;\n"
              "exists (x == 0)\n")
    with pytest.raises(ParseError, match=r":5:9: the condition names undeclared location 'x\[3\]'"):
        parse("TILEIR t\n{ x[0..1] = 0; }\n P0 ;\n t0 = make_token ;\nexists (x[3] == 0)\n")
    with pytest.raises(ParseError, match=r"bad element range 3..1"):
        parse("TILEIR t\n{ x[3..1] = 0; }\n P0 ;\n t0 = make_token ;\nexists (x[3] == 0)\n")


def test_token_order_looks_through_join_and_is_transitive():
    t = parse("""TILEIR tko
{ x = 0; y = 0; }
 P0 ;
 t0 = store weak [x], [1] ;
 t1 = store weak [y], [1] ;
 t2 = join_tokens t0, t1 ;
 [r0], t3 = load weak [x] token=t2 ;
 t4 = make_token ;
 [r1], t5 = load weak [y] token=t4 ;
 [r2], t6 = load weak [y] token=t3 ;
forall (x == 1)
""")
    waits = token_order(t, 0)
    assert waits[3] == {0, 1}          # the load after the join waits for both stores
    assert waits[5] == frozenset()     # make_token: no prior dependencies
    assert waits[6] == {0, 1, 3}       # transitively, through the load's token


def test_events_per_element_masks_and_cas_paths():
    t = parse("""TILEIR ev
{ x[0..3] = 0; }
 P0 ;
 [r0, r1], t0 = atomic_cas relaxed device [x[0], x[1]], [0, 0], [1, 1] ;
 t1 = store weak [x[2], x[3]], [5, 5] mask [0, 1] ;
forall (x[2] == 0)
""")
    pes = build(t)
    assert len(pes) == 4                # two cas lanes, success or failure each
    for pe in pes:
        # 4 initial writes, 4 final reads, one masked store lane, the cas lanes' reads and writes
        assert len(pe.sets["IW"]) == 4 and len(pe.sets["FR"]) == 4
        assert len(pe.sets["M"]) == 5
    no_write = build(t, failed_cas_writes=False)
    assert sorted(len(pe.sets["M"]) for pe in no_write) == [3, 4, 4, 5]


#: verdicts of the switch tests under each variant, derived by hand (see each file's doc)
VARIANT_VERDICTS = {
    "MP+rmwchain.device.litmus":
        {"tileir": "No", "tileir-nochain": "Ok", "tileir-patterns": "No", "tileir-cause": "No",
         "tileir-casnowrite": "No"},
    "MP+relpattern.device.litmus":
        {"tileir": "Ok", "tileir-nochain": "Ok", "tileir-patterns": "No", "tileir-cause": "Ok",
         "tileir-casnowrite": "Ok"},
    "WRC+relacq.device.litmus":
        {"tileir": "Ok", "tileir-nochain": "Ok", "tileir-patterns": "Ok", "tileir-cause": "No",
         "tileir-casnowrite": "Ok"},
    "CAS.fail+weakread.litmus":
        {"tileir": "Undef", "tileir-nochain": "Undef", "tileir-patterns": "Undef",
         "tileir-cause": "Undef", "tileir-casnowrite": "Ok"},
}


@pytest.mark.parametrize("name", sorted(VARIANT_VERDICTS))
@pytest.mark.parametrize("model", VARIANTS)
def test_each_switch_changes_exactly_its_test(name, model):
    res = oracle.check(parse_file(str(TILE / name)), model)
    assert res.verdict == VARIANT_VERDICTS[name][model], (res.ub, res.states)


@pytest.mark.parametrize("name, pair", [
    ("Alias.store.weak.litmus", ("P0 W x=1 [P0:0.0]", "P0 W x=2 [P0:0.1]")),
    ("Weak+rlx.xblock.litmus", ("P0 W x=1 [P0:0.0]", "P1 R x [P1:0.0]")),
    ("MP+relacq.tile_block.xblock.litmus", ("P0 W f=1 [P0:1.0]", "P1 R f [P1:0.0]")),
])
def test_a_race_is_undef_with_the_racing_pair(name, pair):
    res = oracle.check(parse_file(str(TILE / name)))
    assert res.verdict == "Undef" and "racy" in res.flags
    assert len(res.ub) == 1 and res.ub[0].startswith("racy: ")
    assert set(res.ub[0][len("racy: "):].split(" / ")) == set(pair)


def test_race_free_programs_have_no_ub():
    res = oracle.check(parse_file(str(TILE / "MP+relacq+rlx.device.xblock.litmus")))
    assert res.verdict == "No" and res.ub == [] and "racy" not in res.flags


@pytest.mark.parametrize("path", sorted(TILE.glob("*.litmus")), ids=lambda p: p.name)
def test_engine_agrees_with_the_reference_evaluator(path):
    t = parse_file(str(path))
    res = oracle.check(t, "tileir")
    states, _, _ = reference_check(t, "tileir")
    keys = t.observables()
    assert {tuple(s[k] for k in keys) for s in res.states} == states


def test_every_variant_is_a_registered_unit_reading_tileir():
    from oracle.registry import for_dialect
    assert {u.name for u in for_dialect("TILEIR")} == set(VARIANTS)
    with pytest.raises(oracle.OracleError, match="model amdgpu reads AMDGPU tests, not TILEIR"):
        oracle.check(parse_file(str(TILE / "SB.intrablock.litmus")), "amdgpu")


# --- printer, lowering, strategy ----------------------------------------------------------------

def test_printer_round_trips_every_corpus_test():
    from litmus.print_tileir import format_tileir
    for path in sorted(TILE.glob("*.litmus")):
        t = parse_file(str(path))
        assert parse(format_tileir(t)) == t, path.name


def test_lowering_emits_one_ptx_instruction_per_active_lane_in_token_then_lane_order():
    from litmus.mappings.tileir_ptx import lower
    t = parse("""TILEIR low
{ x[0..1] = 0; f = 0; P1:r2 = 3; }
 P0@block 0, device 0                               | P1@block 4, device 1 ;
 t0 = store relaxed tile_block [x[0], x[1]], [1, 2] | [r0, r1, r2], t0 = atomic_cas acq_rel sys [f, x[1], x[0]], [0, 1, 2], [5, 6, 7] mask [1, 1, 0] ;
 t1 = make_token                                    | [r3], t1 = atomic_rmw xchg acquire device [f], [9] token=t0 ;
 t2 = store release device [f], [1] token=t0        | [r4], t2 = load weak [x[0]] ;
exists (x[1] == 2 /\\ P1:r2 == 3)
""")
    text = lower(t)
    lines = text.splitlines()
    assert lines[0] == "PTX low"
    assert lines[2] == "{ x_0=0; x_1=0; f=0; P1:r2=3; }"
    rows = [[c.strip() for c in ln.rstrip(" ;").split("|")] for ln in lines[3:-1]]
    assert rows == [
        ["P0@cta 0,gpu 0", "P1@cta 4,gpu 1"],
        ["st.relaxed.cta x_0, 1", "atom.acq_rel.sys.cas r0, f, 0, 5"],
        ["st.relaxed.cta x_1, 2", "atom.acq_rel.sys.cas r1, x_1, 1, 6"],
        ["st.release.gpu f, 1", "atom.acquire.gpu.exch r3, f, 9"],
        ["", "ld.weak r4, x_0"],
    ]
    assert lines[-1] == "exists (x_1 == 2 /\\ P1:r2 == 3)"


def test_lowering_refuses_a_location_name_clash():
    from litmus.mappings.tileir_ptx import LoweringError, lower
    t = parse("TILEIR c\n{ x[0..0] = 0; x_0 = 0; }\n P0 ;\n t0 = store weak [x[0]], [1] ;\n"
              "exists (x_0 == 0)\n")
    with pytest.raises(LoweringError, match="locations x\\[0\\] and x_0 both map to the PTX name x_0"):
        lower(t)


def test_drawn_programs_are_valid_round_trip_and_stay_in_bounds():
    from litmus.print_tileir import format_tileir
    from fuzz.tileir_strategies import MAX_ACCESS_EVENTS, MAX_CAS_LANES, draw_tileir
    kinds = set()
    for i in range(150):
        t = draw_tileir(3, i)
        assert parse(format_tileir(t)) == t
        assert 2 <= len(t.threads) <= 4
        events = sum((2 if op.opname.startswith("atomic") else 1)
                     for th in t.threads for op in th.code if op.is_memory_access
                     for lane in op.lanes() if op.active(lane))
        cas = sum(1 for th in t.threads for op in th.code if op.opname == "atomic_cas"
                  for lane in op.lanes() if op.active(lane))
        assert events <= MAX_ACCESS_EVENTS and cas <= MAX_CAS_LANES
        kinds |= {op.opname for th in t.threads for op in th.code}
        kinds |= {"alias"} if any(len(set(op.addrs)) < len(op.addrs)
                                  for th in t.threads for op in th.code) else set()
        kinds |= {"mask"} if any(op.mask for th in t.threads for op in th.code) else set()
        kinds |= {"token"} if any(op.token_in for th in t.threads for op in th.code) else set()
    assert kinds >= {"load", "store", "atomic_rmw", "atomic_cas", "join_tokens", "make_token",
                     "alias", "mask", "token"}
    assert draw_tileir(3, 5) == draw_tileir(3, 5)



def test_codegen_ptx_prints_the_lowered_program(capsys):
    from fuzz.cli import main
    from litmus.mappings.tileir_ptx import lower
    path = str(TILE / "Atom+add.alias.litmus")
    assert main(["codegen", "--dialect", "ptx", path]) == 0
    out = capsys.readouterr().out
    assert out == lower(parse_file(path))
    assert " atom.relaxed.cta.add r0, x, 1 ;" in out and " atom.relaxed.cta.add r1, x, 1 ;" in out
    assert main(["codegen", path]) == 0 and capsys.readouterr().out == out
    assert main(["codegen", "--dialect", "cl3", path]) == 2
    assert "a TILEIR test is shown as its PTX program: --dialect ptx" in capsys.readouterr().err


def test_explain_reads_a_tileir_outcome(capsys):
    from fuzz.cli import main
    path = str(TILE / "MP+relacq+rlx.device.xblock.litmus")
    main(["explain", "--outcome", "P1:r0 == 1 /\\ P1:r1 == 0", path])
    out = capsys.readouterr().out
    assert "is FORBIDDEN by model tileir" in out
    assert ("fails 'causality' (irreflexive): R x[0] [P1:1.0]=0 -fr-> W x[0]=1 [P0:0.0] -tko-> "
            "W f=1 [P0:1.0] -sw-> R f [P1:0.0]=1 -tko-> R x[0] [P1:1.0]=0") in out


def test_explain_reads_a_tileir_outcome_in_the_printed_form(capsys):
    """The one outcome reader (litmus.outcome.read_outcome) serves TILEIR tests too: the printed
    form ``P1:r0=1; P1:r1=0;`` gives the same explanation as the condition form."""
    from fuzz.cli import main
    path = str(TILE / "MP+relacq+rlx.device.xblock.litmus")
    main(["explain", "--outcome", "P1:r0 == 1 /\\ P1:r1 == 0", path])
    cond = capsys.readouterr().out
    main(["explain", "--outcome", "P1:r0=1; P1:r1=0;", path])
    printed = capsys.readouterr().out
    assert "is FORBIDDEN by model tileir" in printed
    assert printed.split("\n", 1)[1] == cond.split("\n", 1)[1]    # the outcome line aside

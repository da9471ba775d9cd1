"""Typed instruction fields (litmus/fields.py, issue 34): ``ins.fields`` reads every attrs
string of every front end into a typed field, loses nothing, and gives the typed values the
printers and the control-flow code now use."""

from __future__ import annotations

import pathlib

import pytest

from litmus import Instr, parse, parse_file
from litmus.fields import Fields, fields_of

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFORMANCE = pathlib.Path("/work/shared/conformance")


def every_instruction():
    files = sorted((ROOT / "corpora").rglob("*.litmus"))
    if CONFORMANCE.is_dir():
        files += sorted(CONFORMANCE.rglob("*.litmus"))
    for path in files:
        for _, _, ins in parse_file(path).instructions():
            yield path, ins


def test_the_typed_reading_keeps_every_attr_and_knows_every_key():
    seen = 0
    for path, ins in every_instruction():
        f = ins.fields
        assert sorted(f.to_attrs()) == sorted(ins.attrs), (path, ins)
        assert f.other == (), f"{path}: attrs no field reads: {f.other}"
        seen += bool(ins.attrs)
    assert seen > 1000          # the corpora and suites do exercise the attrs


def test_typed_values():
    f = fields_of(("via=s@surface", "proxy=surface", "vloc=a", "id=r1", "quorum=3", "inst=00",
                   "unseq=2:1", "unseq=5:0", "arr=y:4", "off=(+ r0 1)", "flags=global,local",
                   "sc1", "semsc0", "semav", "nonpriv", "red", "ssw=0>1", "weird"))
    assert f.via == ("s", "surface") and f.proxy == "surface" and f.vloc == "a"
    assert f.barrier == "r1" and f.quorum == 3 and f.inst == "00"
    assert f.unseq == ((2, 1), (5, 0)) and f.arr == ("y", 4) and f.off == "(+ r0 1)"
    assert f.regions == ("global", "local") and f.storage == "sc1"
    assert f.sems == ("semsc0", "semav") and f.has("nonpriv") and f.has("red")
    assert not f.has("volatile")
    assert f.meta == ("ssw=0>1",) and f.other == ("weird",)
    assert fields_of(("id=7", "flags=")).barrier == 7
    assert fields_of(("flags=",)).regions == ()
    assert fields_of(()) == Fields()


def test_instr_fields_is_the_reading_of_its_attrs():
    ins = Instr("fence", attrs=("proxy=texture",))
    assert ins.fields.proxy == "texture" and ins.fields.via is None
    built = Fields(val="(- r0 1)", unseq=((1, 0),)).to_attrs()
    assert built == ("val=(- r0 1)", "unseq=1:0")
    assert fields_of(built) == Fields(val="(- r0 1)", unseq=((1, 0),))


@pytest.mark.parametrize("src,expect", [
    ("C t\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  int r0 = atomic_load_explicit(x, "
     "memory_order_relaxed) + atomic_load_explicit(x, memory_order_relaxed);\n}\n"
     "exists (0:r0=0)\n", "unseq"),
])
def test_c_unsequenced_operands_read_as_typed_pairs(src, expect):
    loads = [i for _, _, i in parse(src).instructions() if i.base == "ld"]
    assert [i.fields.unseq for i in loads] == [((1, 0),), ((1, 1),)]

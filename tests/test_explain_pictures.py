"""What the explanation pictures show (issue 33): the synchronisation that forbids an outcome,
drawn and named in the model's own relations, and a legend of what is drawn and nothing else.

Hand-derived for MP with a cluster-scope release/acquire pair between workgroups of one cluster
(corpora/classic/MP/MP+rel+acq.cluster.xwg.litmus): r0=1, r1=0 is forbidden because P1's read of
x may not see the initial write: ``W x=0 -lo-> W x=1 -lo-> R x``, and the second lo holds
because of the happens-before path ``W x=1 -po-> W.rel y=1 -sw-> R.acq y=1 -po-> R x``. Every
hop of that path is drawn as a highlighted edge labelled with its relation.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import pytest

import litmus
import oracle
from oracle.explanation import HOT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "{http://www.w3.org/2000/svg}"


def _explain(name: str, outcome: str):
    with open(os.path.join(ROOT, "corpora", name), encoding="utf-8") as f:
        return oracle.explain(litmus.parse(f.read()), outcome)


def _legend(svg: str) -> str:
    m = re.search(r'<g class="legend">(.*?)</g>', svg, re.S)
    assert m
    return re.sub(r"<[^>]+>", " ", m.group(1))


def _hot_labels(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text for t in root.iter(NS + "text")
            if t.get("fill") == HOT and t.get("text-anchor") == "middle"]


def test_the_release_acquire_path_is_drawn_and_named():
    ex = _explain("classic/MP/MP+rel+acq.cluster.xwg.litmus", "P1:r0 == 1 /\\ P1:r1 == 0")
    assert not ex.allowed and len(ex.items) == 1
    text = ex.text()
    assert ("W.atom.cluster x=1 -po-> W.atom.rel.cluster y=1 -sw-> R.atom.acq.cluster y=1 -po-> "
            "R.atom.cluster x=0") in text
    edges = ex.items[0].edges
    ev = ex.items[0].cand.pe.events
    named = {(ev[a].label, lab, ev[b].label) for a, lab, b in edges}
    assert {("W.atom.cluster x=1", "po", "W.atom.rel.cluster y=1"),
            ("W.atom.rel.cluster y=1", "sw", "R.atom.acq.cluster y"),
            ("R.atom.acq.cluster y", "po", "R.atom.cluster x")} <= named
    svg = ex.svg()
    labels = _hot_labels(svg)
    assert labels.count("po") == 2 and labels.count("sw") == 1 and labels.count("lo") == 2
    legend = _legend(svg)
    assert "witness" in legend and "sw" in legend and "lo" in legend
    assert "bxb" not in legend and "barrier" not in legend


def test_an_allowed_outcome_has_no_witness_in_its_legend():
    ex = _explain("classic/MP/MP+rel+acq.cluster.xwg.litmus", "P1:r0 == 0 /\\ P1:r1 == 0")
    assert ex.allowed
    svg = ex.svg()
    assert _hot_labels(svg) == []
    legend = _legend(svg)
    assert "witness" not in legend and "bxb" not in legend
    assert "po" in legend and "rf" in legend


def test_a_barrier_picture_lists_bxb():
    ex = _explain("barrier/named/BAR+named+count1+fences.xwave.litmus",
                  _condition("barrier/named/BAR+named+count1+fences.xwave.litmus"))
    svg = ex.svg()
    drawn_bxb = ">bxb<" in svg
    assert drawn_bxb == ("bxb" in _legend(svg))


def _condition(name: str) -> str:
    from litmus.printer import format_prop
    with open(os.path.join(ROOT, "corpora", name), encoding="utf-8") as f:
        return format_prop(litmus.parse(f.read()).condition.prop, "top")


def test_the_screenshot_script_renders_pictures(tmp_path):
    """scripts/screenshot_pictures.py writes each explanation's SVG and, with Chromium present, a
    PNG of it as a browser draws it (the look is for a person to judge; this checks the script
    works for the next one)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "screenshot_pictures", os.path.join(ROOT, "scripts", "screenshot_pictures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([str(tmp_path), "--tests", "classic/MP/MP+rel+acq.cluster.xwg.litmus"]) == 0
    svgs = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert svgs == ["MP+rel+acq.cluster.xwg.forbidden.svg", "MP+rel+acq.cluster.xwg.svg"]
    if mod.chromium() is None:
        pytest.skip("no chromium on PATH: SVGs written, no screenshots taken")
    for name in svgs:
        png = tmp_path / (name[:-4] + ".png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""The explanation SVG routes no edge through a box (issue 17 item 9), and no two edges share a
stretch or run within MIN_SEP (6) pixels of each other (issue 33): such a pair reads as one edge,
or as an edge from the wrong box.

The check is geometric and independent of how the drawing is made: the SVG is parsed with
``xml.etree``; every ``rect`` outside the legend is an event box; every ``path`` and ``line``
outside the legend and the arrow-head definition is an edge. Each edge's geometry (straight
segments, quadratic and cubic curves, as the path data says) is sampled every half pixel; its two
ends are the boxes nearest its first and last points (and must touch them); no sample may lie
inside any other box. The old layout (straight quadratic bends from centre to centre) fails this on
MP, IRIW, WRC and ISA2; the routed one must pass on every corpus program below and on random grids.
The separation check takes each edge's straight pieces (the path data's M/L/H/V; rounded corners
are where edges turn) and reports two pieces of different edges that are nearly parallel, overlap
along their direction and lie closer than MIN_SEP; the routing before issue 33 fails it on every
corpus program below (stubs 2.5-5 px apart, two stubs on one line).
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus
import oracle
from fuzz.strategies import litmus_programs
from oracle.routing import TRACK, Node, layout, path_data

NS = "{http://www.w3.org/2000/svg}"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# 2, 3 and 4 threads, up to 8 events per thread (the corpora's longest), forbidden and allowed
# outcomes, barriers (bxb edges), final-memory reads
CORPUS = [
    "classic/MP/MP+rel+acq.wg.xwg.litmus",
    "classic/SB/SB+sc.cluster.xwg.litmus",
    "classic/IRIW/IRIW+sc.sys.xagent.litmus",
    "classic/IRIW/IRIW+rlx.cluster.xwg.litmus",
    "classic/WRC/WRC+rel+acq.wg.xwave.litmus",
    "classic/ISA2/ISA2+fences.cluster.xwg.litmus",
    "classic/2+2W/2+2W+rlx.cluster.xwg.litmus",
    "av/chains/ISA2+av.wave+fence.rel.agent.chain.litmus",
    "barrier/named/BAR+named+count1+fences.xwave.litmus",
    "barrier/named/BAR+named+waitnoarrive.deadlock.xwave3.litmus",
    "barrier/cluster/BAR+cluster+otherwg3.ends.xwg.litmus",
    "mutants/named-wait-operand.litmus",
]


# --- the geometric check --------------------------------------------------------------------------

def _bezier(ctrl: list[tuple[float, float]], t: float) -> tuple[float, float]:
    while len(ctrl) > 1:
        ctrl = [((1 - t) * a[0] + t * b[0], (1 - t) * a[1] + t * b[1]) for a, b in zip(ctrl, ctrl[1:])]
    return ctrl[0]


def _sample(ctrl: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points every half pixel (at most) along a segment or Bézier curve (its control polygon
    is at least as long as the curve)."""
    n = int(sum(math.dist(a, b) for a, b in zip(ctrl, ctrl[1:])) / 0.5) + 2
    return [_bezier(ctrl, i / (n - 1)) for i in range(n)]


_ARGS = {"M": 2, "L": 2, "H": 1, "V": 1, "Q": 4, "T": 2, "C": 6, "S": 4, "Z": 0}


def sample_path(d: str) -> list[tuple[float, float]]:
    """Sampled geometry of SVG path data (absolute and relative M L H V Q C Z; A is not used)."""
    toks = re.findall(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", d)
    pts: list[tuple[float, float]] = []
    cur = start = (0.0, 0.0)
    i, cmd = 0, "M"
    while i < len(toks):
        if toks[i].isalpha():
            cmd = toks[i]
            i += 1
        kind, rel = cmd.upper(), cmd.islower()
        assert kind in _ARGS and kind not in "TS", f"path command {cmd} not handled by the test"
        a = [float(x) for x in toks[i:i + _ARGS[kind]]]
        i += _ARGS[kind]
        ox, oy = cur if rel else (0.0, 0.0)
        xy = [(a[k] + ox, a[k + 1] + oy) for k in range(0, len(a) - 1, 2)]
        if kind == "M":
            cur = start = xy[0]
            pts.append(cur)
            cmd = "l" if rel else "L"
            continue
        if kind == "H":
            xy = [(a[0] + ox, cur[1])]
        elif kind == "V":
            xy = [(cur[0], a[0] + (cur[1] if rel else 0.0))]
        elif kind == "Z":
            xy = [start]
        pts += _sample([cur] + xy)
        cur = xy[-1]
    return pts


def boxes_and_edges(svg: str):
    root = ET.fromstring(svg)
    skip = set()
    for el in root.iter():
        if el.tag == NS + "defs" or (el.tag == NS + "g" and el.get("class") == "legend"):
            skip |= set(el.iter())
    boxes = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
             for r in root.iter(NS + "rect") if r not in skip]
    edges = []
    for el in root.iter():
        if el in skip:
            continue
        if el.tag == NS + "path":
            edges.append(sample_path(el.get("d")))
        elif el.tag == NS + "line":
            edges.append(_sample([(float(el.get("x1")), float(el.get("y1"))),
                                  (float(el.get("x2")), float(el.get("y2")))]))
    return boxes, edges


def _distance(p, box) -> float:
    x, y, w, h = box
    return math.hypot(max(x - p[0], 0.0, p[0] - x - w), max(y - p[1], 0.0, p[1] - y - h))


def _inside(p, box, margin: float = 1.0) -> bool:
    x, y, w, h = box
    return x + margin < p[0] < x + w - margin and y + margin < p[1] < y + h - margin


def crossings(svg: str) -> list[str]:
    """Every (edge, box) where the edge passes through a box other than its two ends; an edge
    whose end touches no box is reported too."""
    boxes, edges = boxes_and_edges(svg)
    assert boxes and edges
    bad = []
    for k, pts in enumerate(edges):
        ends = set()
        for p in (pts[0], pts[-1]):
            near = min(range(len(boxes)), key=lambda b: _distance(p, boxes[b]))
            if _distance(p, boxes[near]) > 2.0:
                bad.append(f"edge {k} ends at {p}, on no box")
            ends.add(near)
        for b, box in enumerate(boxes):
            if b not in ends:
                hit = next((p for p in pts if _inside(p, box)), None)
                if hit:
                    bad.append(f"edge {k} ({pts[0]} -> {pts[-1]}) crosses box {box} at {hit}")
    return bad


def _pieces(d: str) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The straight pieces (M/L/H/V) of SVG path data; curves (the rounded corners, at most a
    few pixels) are left out: two edges may meet or cross, and corners are where they turn."""
    toks = re.findall(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", d)
    out = []
    cur = start = (0.0, 0.0)
    i, cmd = 0, "M"
    while i < len(toks):
        if toks[i].isalpha():
            cmd = toks[i]
            i += 1
        kind, rel = cmd.upper(), cmd.islower()
        a = [float(x) for x in toks[i:i + _ARGS[kind]]]
        i += _ARGS[kind]
        ox, oy = cur if rel else (0.0, 0.0)
        if kind == "M":
            cur = start = (a[0] + ox, a[1] + oy)
            cmd = "l" if rel else "L"
            continue
        nxt = {"L": lambda: (a[0] + ox, a[1] + oy), "H": lambda: (a[0] + ox, cur[1]),
               "V": lambda: (cur[0], a[0] + oy), "Z": lambda: start}.get(kind)
        if nxt is None:            # a curve: its end point
            end = (a[-2] + ox, a[-1] + oy)
        else:
            end = nxt()
            out.append((cur, end))
        cur = end
    return [s for s in out if math.dist(*s) > 1e-9]


def edge_pieces(svg: str) -> list[list[tuple[tuple[float, float], tuple[float, float]]]]:
    """Each edge of the drawing (as :func:`boxes_and_edges` finds them) as its straight pieces."""
    root = ET.fromstring(svg)
    skip = set()
    for el in root.iter():
        if el.tag == NS + "defs" or (el.tag == NS + "g" and el.get("class") == "legend"):
            skip |= set(el.iter())
    out = []
    for el in root.iter():
        if el in skip:
            continue
        if el.tag == NS + "path":
            out.append(_pieces(el.get("d")))
        elif el.tag == NS + "line":
            out.append([((float(el.get("x1")), float(el.get("y1"))),
                         (float(el.get("x2")), float(el.get("y2"))))])
    return out


MIN_SEP = 6.0       # pixels: no two edges run closer than this along each other


def _run_along(s, t) -> tuple[float, float]:
    """(distance, shared length) of two straight pieces that run side by side: nearly parallel
    (under 10 degrees apart), the length over which their projections on ``s``'s direction
    overlap and the distance between them there; (inf, 0) when they do not run side by side."""
    (ax, ay), (bx, by) = s
    ux, uy = bx - ax, by - ay
    n = math.hypot(ux, uy)
    ux, uy = ux / n, uy / n
    (cx, cy), (dx, dy) = t
    vx, vy = dx - cx, dy - cy
    m = math.hypot(vx, vy)
    if abs(ux * vy - uy * vx) / m > math.sin(math.radians(10)):
        return math.inf, 0.0
    p0, p1 = sorted(((cx - ax) * ux + (cy - ay) * uy, (dx - ax) * ux + (dy - ay) * uy))
    lo, hi = max(0.0, p0), min(n, p1)
    if hi - lo <= 0.5:
        return math.inf, 0.0
    # the largest perpendicular distance of t's ends from s's line bounds it over the overlap
    dist = max(abs((cx - ax) * uy - (cy - ay) * ux), abs((dx - ax) * uy - (dy - ay) * ux))
    return dist, hi - lo


def close_runs(svg: str, sep: float = MIN_SEP) -> list[str]:
    """Every pair of edges with pieces that share a stretch or run within ``sep`` pixels of each
    other along it (edges that cross or meet at an angle are fine)."""
    edges = edge_pieces(svg)
    bad = []
    for i, e in enumerate(edges):
        for j in range(i + 1, len(edges)):
            for s in e:
                for t in edges[j]:
                    dist, length = _run_along(s, t)
                    if dist < sep - 1e-6:
                        bad.append(f"edges {i} and {j}: {s} and {t} run {dist:.1f} px apart "
                                   f"for {length:.1f} px")
    return bad


def test_the_check_sees_edges_that_run_close():
    """The separation check itself: two edges on one line, 2.5 px apart, 6 px apart, crossing,
    and meeting at a right angle."""
    head = '<svg xmlns="http://www.w3.org/2000/svg">'

    def svg(*ds):
        return head + "".join(f'<path d="{d}"/>' for d in ds) + "</svg>"
    assert close_runs(svg("M0,0 L100,0", "M50,0 L150,0"))                 # a shared segment
    assert close_runs(svg("M0,0 L100,0", "M0,2.5 L100,2.5"))               # 2.5 px apart
    assert close_runs(svg("M0,0 L0,100", "M3,50 l0,80"))                   # relative, vertical
    assert close_runs(svg("M0,0 L100,0", "M0,6 L100,6")) == []             # 6 px apart
    assert close_runs(svg("M0,0 L100,0", "M50,-50 L50,50")) == []          # crossing
    assert close_runs(svg("M0,0 L100,0", "M100,0 L100,80")) == []          # meeting at a corner
    assert close_runs(svg("M0,0 L100,0", "M101,0 L200,0")) == []           # end to end
    assert close_runs(svg("M0,0 L100,0 Q105,0 105,5 L105,90", "M111,5 L111,90")) == []
    assert close_runs(svg("M0,0 L100,0 Q105,0 105,5 L105,90", "M110,5 L110,90"))


def test_the_check_sees_an_edge_through_a_box():
    """The check itself: a straight line from the first box to the third through the second is
    found; the same edge bent around the middle box is not."""
    boxes = "".join(f'<rect x="{x}" y="0" width="40" height="20"/>' for x in (0, 100, 200))
    head = '<svg xmlns="http://www.w3.org/2000/svg">'
    assert crossings(head + boxes + '<path d="M40,10 L200,10"/></svg>')
    assert crossings(head + boxes + '<path d="M40,10 Q120,-40 200,10"/></svg>') == []
    assert crossings(head + boxes + '<path d="M40,10 C90,-30 150,-30 200,10"/></svg>') == []
    assert crossings(head + boxes + '<path d="M40,10 l0,-20 h160 v20"/></svg>') == []


# --- the explanations of corpus programs -----------------------------------------------------------

def _condition_outcome(test) -> str:
    from litmus.printer import format_prop
    return format_prop(test.condition.prop, "top")


@pytest.mark.parametrize("name", CORPUS)
def test_no_edge_of_a_corpus_explanation_crosses_a_box(name):
    with open(os.path.join(ROOT, "corpora", name), encoding="utf-8") as f:
        test = litmus.parse(f.read())
    svg = oracle.explain(test, _condition_outcome(test)).svg()
    assert crossings(svg) == []
    assert close_runs(svg) == []


LONG = """AMDGPU LONG+chain
"Ten events in a thread: writes and fences around one message-passing pair."
{
  x = 0; y = 0; z = 0;
}
 P0@wg 0            | P1@wg 1                 | P2@wg 2             ;
 st.atom.agent z, 1 | ld.atom.acq.agent r0, y | st.atom.agent z, 3  ;
 fence.rel.agent    | fence.acq.agent         | fence.sc.agent      ;
 st.atom.agent z, 2 | fence.rel.agent         | fence.acq.agent     ;
 fence.sc.agent     | fence.sc.agent          | fence.rel.agent     ;
 st.atom.agent x, 1 | fence.acq_rel.agent     | fence.sc.agent      ;
 fence.rel.agent    | fence.sc.agent          | fence.acq_rel.agent ;
 fence.acq_rel.agent| fence.acq.agent         | fence.sc.agent      ;
 fence.sc.agent     | fence.rel.agent         | fence.rel.agent     ;
 fence.rel.agent    | fence.acq.agent         | fence.acq.agent     ;
 st.atom.agent y, 1 | ld.atom.agent r1, x     | fence.sc.agent      ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def test_no_edge_crosses_a_box_with_ten_events_per_thread():
    test = litmus.parse(LONG)
    ex = oracle.explain(test, _condition_outcome(test))
    assert not ex.allowed and ex.items          # forbidden: witness edges span the columns
    svg = ex.svg()
    assert svg.count("<rect") >= 30
    assert crossings(svg) == []
    assert close_runs(svg) == []


# --- the router on random grids -------------------------------------------------------------------

@st.composite
def grids(draw):
    ncols = draw(st.integers(1, 4))
    nodes, nid = [], 0
    for c in range(ncols):
        for r in range(1, draw(st.integers(2 if c == 0 else 1, 10)) + 1):
            nodes.append(Node(nid, draw(st.floats(40, 200)), c, r))
            nid += 1
    for row in (0, 1):          # initial writes (row 0) and final reads (any other row: the last)
        for _ in range(draw(st.integers(0, 3))):
            nodes.append(Node(nid, draw(st.floats(40, 150)), -1, row))
            nid += 1
    ids = st.integers(0, nid - 1)
    edges = draw(st.lists(st.tuples(ids, ids).filter(lambda e: e[0] != e[1]), max_size=25))
    return nodes, edges + edges[: draw(st.integers(0, 3))]       # some edges twice (parallel)


def _svg_of(drawing) -> str:
    rects = "".join(f'<rect x="{x - w / 2}" y="{y - drawing.height_of(i) / 2}" width="{w}" '
                    f'height="{drawing.height_of(i)}"/>' for i, (x, y, w) in drawing.boxes.items())
    paths = "".join(f'<path d="{path_data(p)}"/>' for p in drawing.paths if p)
    return f'<svg xmlns="http://www.w3.org/2000/svg">{rects}{paths}</svg>'


def _segments(points):
    return [(a, b) for a, b in zip(points, points[1:])]


def _overlap(s, t) -> float:
    """Length shared by two collinear axis-parallel segments (0 when not collinear)."""
    (ax, ay), (bx, by) = s
    (cx, cy), (dx, dy) = t
    if ax == bx == cx == dx:
        return min(max(ay, by), max(cy, dy)) - max(min(ay, by), min(cy, dy))
    if ay == by == cy == dy:
        return min(max(ax, bx), max(cx, dx)) - max(min(ax, bx), min(cx, dx))
    return 0.0


@settings(max_examples=60, deadline=None)
@given(grids())
def test_routed_edges_cross_no_box_and_parallel_edges_run_apart(grid):
    nodes, edges = grid
    drawing = layout(nodes, edges)
    if any(drawing.paths):
        assert crossings(_svg_of(drawing)) == []
        assert close_runs(_svg_of(drawing)) == []
    for k, (p, (a, b)) in enumerate(zip(drawing.paths, edges)):
        assert p is not None
        assert all(p[i][0] == p[i + 1][0] or p[i][1] == p[i + 1][1] for i in range(len(p) - 1))
        for q, (c, d) in zip(drawing.paths[k + 1:], edges[k + 1:]):
            if {a, b} == {c, d}:    # the same two events: no stretch of one lies on the other
                assert all(_overlap(s, t) <= 0 for s in _segments(p) for t in _segments(q))


def test_two_edges_between_the_same_events_are_drawn_apart():
    nodes = [Node(0, 80, 0, 1), Node(1, 80, 0, 2), Node(2, 80, 0, 3), Node(3, 80, 1, 3)]
    drawing = layout(nodes, [(0, 2), (0, 2), (2, 0), (0, 3), (0, 3)])
    p02, q02, p20, p03, q03 = drawing.paths
    # one column, two rows apart: arcs beside the column, each on its own track
    xs = {max(x for x, _ in p) for p in (p02, q02)}
    assert len(xs) == 2 and abs(xs.pop() - xs.pop()) >= TRACK - 1e-9
    # down on the right of the column, up on its left
    right_of_column = drawing.column_x[0] + 80
    assert min(x for x, _ in p02) >= right_of_column - 1e-9
    assert max(x for x, _ in p20) <= drawing.column_x[0] + 1e-9
    assert p03 != q03 and p03[0] != q03[0] and p03[-1] != q03[-1]


def test_a_thread_without_events_keeps_its_column():
    nodes = [Node(0, 60, 0, 1), Node(1, 60, 2, 1), Node(2, 60, 2, 2), Node(3, 50, -1, 0)]
    drawing = layout(nodes, [(0, 2), (3, 1), (2, 0)], columns=4)
    assert len(drawing.column_x) == 4
    assert drawing.column_x[0] < drawing.column_x[1] < drawing.column_x[2] < drawing.column_x[3]
    assert drawing.boxes[1][0] - 30 == pytest.approx(drawing.column_x[2])
    assert crossings(_svg_of(drawing)) == []


# --- many explanations: corpus tests and generated programs ----------------------------------------

def _amdgpu_corpus() -> list[str]:
    """Every AMDGPU-dialect corpus test (the dialect ``explain`` draws), relative to corpora/."""
    out = []
    for d, _, files in os.walk(os.path.join(ROOT, "corpora")):
        for f in sorted(files):
            if f.endswith(".litmus"):
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    if fh.readline().startswith("AMDGPU"):
                        out.append(os.path.relpath(path, os.path.join(ROOT, "corpora")))
    return sorted(out)


def _explanation_svgs(test):
    """The SVG of the test's condition and of one outcome the model forbids (if any): both kinds
    of picture (a consistent execution; failing candidates with their witness)."""
    out = [oracle.explain(test, _condition_outcome(test)).svg()]
    forbidden = _a_forbidden_outcome(test)
    if forbidden is not None:
        ex = oracle.explain(test, forbidden)
        assert not ex.allowed
        out.append(ex.svg())
    return out


def _a_forbidden_outcome(test) -> dict | None:
    """An outcome the model forbids, one value away from an allowed state (None if none is)."""
    res = oracle.check(test)
    for state in list(res.states)[:4]:
        concrete = {k: v for k, v in state.items() if isinstance(v, int)}
        for k in sorted(concrete):
            for v in (0, 1, 2):
                o = dict(concrete, **{k: v})
                if o != concrete and len(o) == len(state) and not res.allows(o):
                    return o
    return None


def _assert_readable(svg: str) -> None:
    """No edge through a box (when there are edges: a consistent execution may have none) and
    no two edges closer than MIN_SEP along each other."""
    if edge_pieces(svg):
        assert crossings(svg) == []
    assert close_runs(svg) == []


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(_amdgpu_corpus()))
def test_corpus_explanations_keep_edges_apart(name):
    """Any AMDGPU corpus test's explanation: no edge through a box, no two edges along each
    other closer than MIN_SEP."""
    with open(os.path.join(ROOT, "corpora", name), encoding="utf-8") as f:
        test = litmus.parse(f.read())
    for svg in _explanation_svgs(test):
        _assert_readable(svg)


@settings(max_examples=80, deadline=None)
@given(litmus_programs("atomics,plain,rmw,fences,barriers", near_miss=0.5))
def test_generated_explanations_keep_edges_apart(test):
    """Programs from the public strategy (near misses included, so forbidden outcomes with
    witnesses are drawn): the same two checks."""
    for svg in _explanation_svgs(test):
        _assert_readable(svg)

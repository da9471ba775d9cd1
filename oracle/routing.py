"""Where an execution graph's boxes go and how its edges run between them (the SVG drawing).

The drawing is a grid: one column per thread (its events top to bottom in program order), a row
of initial writes above and a row of final-memory reads below. Between two columns (and left of
the first, right of the last) runs a vertical *channel*; between two rows a horizontal *gap*.
Neither holds a box, so an edge that keeps to them crosses no box:

- a thread's event is left and entered through its side, straight into the channel beside it;
- an initial write is left through its bottom (into the gap below the initial row), a final read
  entered through its top (the gap above the final row);
- between them an edge runs along channels and gaps only: events of one thread as an arc in the
  channel beside the column (down the right side, up the left), events of neighbouring threads
  across the channel between them, events further apart along a channel, the gap next to the
  target's row and the channel next to the target.

Each edge gets its own *track* in every channel and gap it uses and its own point on each box
side it leaves or enters, so parallel edges (rf and a witness between the same events) run apart.
No two edges run closer than :data:`MIN_SEP` pixels along each other (a reader must be able to
follow each one):

- tracks are :data:`TRACK` apart;
- the short horizontal stubs between a box side and a channel are at the height of the box's
  row, and the stubs of *every* box of that row that open onto that channel (the right sides of
  one column and the left sides of the next) share one pool of heights, :data:`SPREAD_SIDE`
  apart, so two stubs never lie on one line; a row is made as tall as its fullest pool;
- an initial write or final read is made wide enough for its ports (:data:`SPREAD_TOP` apart) and
  shifted right until none of its ports lies within :data:`MIN_SEP` of a channel's track (its
  vertical stub would otherwise run along that track's vertical segments).

The channels and gaps are made wide enough for their tracks, then the coordinates are fixed.
:func:`layout` does it all; the caller (:func:`oracle.explanation._svg`) only draws.
"""

from __future__ import annotations

import dataclasses

BOX_H = 20            # height of an event box
TRACK = 7             # distance between two tracks of a channel or gap
PAD = 10              # from a channel's or gap's border to its first track
MIN_CHANNEL = 56      # narrowest channel between columns (room for a label)
MIN_GAP = 40          # narrowest gap between rows
MIN_SEP = 6           # no two edges run closer than this along each other
SPREAD_SIDE = 7       # distance between two stubs at one row's height in one channel
SPREAD_TOP = 8        # ... two edges leaving one top or bottom
PORT_MARGIN = 5       # from a box's corner to its outermost port


@dataclasses.dataclass
class Node:
    """A box to place: a thread's event (``column`` >= 0, ``row`` from 1), an initial write
    (``column`` -1, row 0) or a final read (``column`` -1, the last row)."""

    id: int
    width: float
    column: int
    row: int


@dataclasses.dataclass
class Drawing:
    """The result: boxes (id -> centre x, centre y, width), each edge's polyline (in the order
    the edges were given; None for an edge whose end is not drawn), the columns' left x, the
    block's size."""

    boxes: dict[int, tuple[float, float, float]]
    paths: list[list[tuple[float, float]] | None]
    column_x: list[float]
    width: float
    height: float
    box_h: dict[int, float] = dataclasses.field(default_factory=dict)   # id -> box height

    def height_of(self, node: int) -> float:
        return self.box_h.get(node, BOX_H)


# A route is a list of points whose coordinates are symbolic until the sizes are known:
#   ("chan", v, track)  the x of a track of channel v      ("gap", g, track)  the y of a track of gap g
#   ("port", node, side, slot)  the x or y where the edge meets a box side (for a left or right
#   side, ``slot`` is the place in the pool of the box's row and the channel beside that side)
#   ("cx", node) / ("cy", node)  a box's centre


class _Router:
    """Chooses each edge's route (which ports, channels and gaps) and hands out the tracks; the
    coordinates come later, from :class:`_Geometry`. ``near`` (a geometry without tracks) only
    decides which side of a box is nearer to the other end."""

    def __init__(self, nodes: list[Node], ncols: int, nrows: int):
        self.nodes = {n.id: n for n in nodes}
        self.ncols, self.nrows = ncols, nrows          # nrows: thread rows; finals at nrows + 1
        self.chan_tracks = [0] * (ncols + 1)
        self.gap_tracks = [0] * (nrows + 3)
        self.ports: dict[tuple, int] = {}     # (node, side) or (row, channel) -> ports in it

    def _track(self, kind: str, i: int) -> tuple:
        counts = self.chan_tracks if kind == "chan" else self.gap_tracks
        counts[i] += 1
        return (kind, i, counts[i] - 1)

    def _port(self, node: int, side: str) -> tuple:
        n = self.nodes[node]
        if side in ("left", "right"):       # one pool per row and channel
            key = ("row", n.row, n.column + (1 if side == "right" else 0))
        else:
            key = (node, side)
        k = self.ports.get(key, 0)
        self.ports[key] = k + 1
        return ("port", node, side, k)

    def _is_thread(self, n: Node) -> bool:
        return n.column >= 0

    def _gap_of(self, n: Node) -> int:
        """The gap an initial write leaves into (below row 0) or a final read is entered from."""
        return 1 if n.row == 0 else self.nrows + 1

    def route(self, a: int, b: int, near: "_Geometry") -> list[tuple]:
        na, nb = self.nodes[a], self.nodes[b]
        if self._is_thread(na) and self._is_thread(nb):
            return self._thread_to_thread(na, nb)
        if self._is_thread(na):
            return self._thread_special(na, nb, near)
        if self._is_thread(nb):
            return list(reversed(self._thread_special(nb, na, near)))
        return self._special_to_special(na, nb, near)

    def _side(self, n: Node, right: bool) -> tuple[tuple, int]:
        """The port on ``n``'s right (or left) side and the channel beside it."""
        return self._port(n.id, "right" if right else "left"), n.column + (1 if right else 0)

    def _thread_to_thread(self, na: Node, nb: Node) -> list[tuple]:
        if na.column == nb.column:
            # an arc beside the column: down on the right, up on the left
            down = nb.row > na.row
            pa, v = self._side(na, down)
            pb, _ = self._side(nb, down)
            x = self._track("chan", v)
            return [pa, (x, pa), (x, pb), pb]
        right = nb.column > na.column
        pa, va = self._side(na, right)
        pb, vb = self._side(nb, not right)
        if va == vb:              # neighbouring columns: across the channel between them
            x = self._track("chan", va)
            return [pa, (x, pa), (x, pb), pb]
        # further apart: along a's channel to the gap beside b's row, along it to b's channel
        g = nb.row if nb.row >= na.row else nb.row + 1
        xa, y, xb = self._track("chan", va), self._track("gap", g), self._track("chan", vb)
        return [pa, (xa, pa), (xa, y), (xb, y), (xb, pb), pb]

    def _thread_special(self, t: Node, s: Node, near: "_Geometry") -> list[tuple]:
        """From thread event ``t`` to initial write or final read ``s`` (reversed by the caller
        when the edge runs the other way): out of t's side nearer to s, along that channel to
        s's gap, along the gap to above (or below) s."""
        right = near.cx(s) >= near.cx(t)
        pt, v = self._side(t, right)
        ps = self._port(s.id, "bottom" if s.row == 0 else "top")
        x, y = self._track("chan", v), self._track("gap", self._gap_of(s))
        return [pt, (x, pt), (x, y), (ps, y), ps]

    def _special_to_special(self, na: Node, nb: Node, near: "_Geometry") -> list[tuple]:
        pa = self._port(na.id, "bottom" if na.row == 0 else "top")
        pb = self._port(nb.id, "bottom" if nb.row == 0 else "top")
        ga, gb = self._gap_of(na), self._gap_of(nb)
        if ga == gb:
            y = self._track("gap", ga)
            return [pa, (pa, y), (pb, y), pb]
        v = near.nearest_channel((near.cx(na) + near.cx(nb)) / 2)
        ya, x, yb = self._track("gap", ga), self._track("chan", v), self._track("gap", gb)
        return [pa, (pa, ya), (x, ya), (x, yb), (pb, yb), pb]


class _Geometry:
    """Channel and gap positions from their track counts; row heights from the side-port pools;
    box positions from those (initial writes and final reads kept clear of the channels'
    tracks)."""

    def __init__(self, nodes: list[Node], ncols: int, nrows: int, chan_tracks: list[int],
                 gap_tracks: list[int], x0: float, y0: float, ports: dict | None = None):
        ports = ports or {}
        self.ncols, self.nrows = ncols, nrows
        self.ports = ports
        col_w = [max([n.width for n in nodes if n.column == c] + [30.0]) for c in range(ncols)]
        self.chan_w = [max(MIN_CHANNEL if 0 < v < ncols else 2 * PAD,
                           2 * PAD + TRACK * max(n - 1, 0)) for v, n in enumerate(chan_tracks)]
        self.chan_x, self.col_x = [], []
        x = x0
        for c in range(ncols + 1):
            self.chan_x.append(x)
            x += self.chan_w[c]
            if c < ncols:
                self.col_x.append(x)
                x += col_w[c]
        self.right = x
        self.chan_tracks, self.gap_tracks = chan_tracks, gap_tracks
        # a row is as tall as its fullest pool of side ports needs
        self.row_h = [float(BOX_H)] * (nrows + 2)
        for key, m in ports.items():
            if key[0] == "row":
                self.row_h[key[1]] = max(self.row_h[key[1]],
                                         SPREAD_SIDE * (m - 1) + 2 * PORT_MARGIN)
        self.gap_h = [max(MIN_GAP, 2 * PAD + TRACK * max(n - 1, 0)) for n in gap_tracks]
        self.row_y = [y0]
        for g in range(1, nrows + 2):
            self.row_y.append(self.row_y[-1] + self.row_h[g - 1] / 2 + self.gap_h[g]
                              + self.row_h[g] / 2)
        self.boxes: dict[int, tuple[float, float, float]] = {}
        self.box_h: dict[int, float] = {}
        tracks = [self.track_x(v, k) for v in range(ncols + 1) for k in range(chan_tracks[v])]
        specials: dict[int, float] = {}
        for n in nodes:
            if n.column >= 0:
                self.boxes[n.id] = (self.col_x[n.column] + n.width / 2, self.row_y[n.row], n.width)
            else:
                side = "bottom" if n.row == 0 else "top"
                m = ports.get((n.id, side), 0)
                w = max(n.width, SPREAD_TOP * (m - 1) + 2 * PORT_MARGIN)
                sx = specials.get(n.row, self.col_x[0] if ncols else x0 + PAD)
                sx = _clear_of(sx, w, m, tracks)
                self.boxes[n.id] = (sx + w / 2, self.row_y[n.row], w)
                specials[n.row] = sx + w + 30
                self.right = max(self.right, sx + w + PAD)
            self.box_h[n.id] = self.row_h[n.row]

    def cx(self, n: Node) -> float:
        return self.boxes[n.id][0]

    def nearest_channel(self, x: float) -> int:
        return min(range(self.ncols + 1), key=lambda v: abs(self.chan_x[v] + self.chan_w[v] / 2 - x))

    def track_x(self, v: int, k: int) -> float:
        n = self.chan_tracks[v]
        return self.chan_x[v] + (self.chan_w[v] - TRACK * (n - 1)) / 2 + TRACK * k

    def track_y(self, g: int, k: int) -> float:
        n = self.gap_tracks[g]
        top = self.row_y[g - 1] + self.row_h[g - 1] / 2
        return top + (self.gap_h[g] - TRACK * (n - 1)) / 2 + TRACK * k


def _top_ports(x: float, w: float, m: int) -> list[float]:
    """The xs of ``m`` ports on the top or bottom of a box centred at ``x``, ``w`` wide."""
    step = SPREAD_TOP if m < 2 else min(SPREAD_TOP, (w - 2 * PORT_MARGIN) / (m - 1))
    return [x + (k - (m - 1) / 2) * step for k in range(m)]


def _clear_of(sx: float, w: float, m: int, tracks: list[float]) -> float:
    """The least left edge from ``sx`` on at which none of a box's ``m`` top or bottom ports lies
    within :data:`MIN_SEP` of a channel track (each shift moves a port past a track, so this
    ends)."""
    for _ in range(4 * len(tracks) + 4):
        shift = 0.0
        for p in _top_ports(sx + w / 2, w, m):
            for t in tracks:
                if abs(p - t) < MIN_SEP:
                    shift = max(shift, t + MIN_SEP - p)
        if shift <= 0:
            break
        sx += shift + 1e-6
    return sx


def _resolve(p, geo: _Geometry, ports: dict) -> tuple[float, float]:
    """A route point's coordinates."""
    if p[0] == "port":
        _, node, side, k = p
        x, y, w = geo.boxes[node]
        if side in ("left", "right"):
            n = geo.node_of[node]
            m = ports[("row", n.row, n.column + (1 if side == "right" else 0))]
            return (x - w / 2 if side == "left" else x + w / 2), y + (k - (m - 1) / 2) * SPREAD_SIDE
        m = ports[(node, side)]
        return _top_ports(x, w, m)[k], (y + geo.box_h[node] / 2 if side == "bottom"
                                        else y - geo.box_h[node] / 2)
    xs, ys = p

    def coord(c, axis):
        if c[0] == "chan":
            return geo.track_x(c[1], c[2])
        if c[0] == "gap":
            return geo.track_y(c[1], c[2])
        return _resolve(c, geo, ports)[axis]
    return coord(xs, 0), coord(ys, 1)


def layout(nodes: list[Node], edges: list[tuple[int, int]], x0: float = 10.0,
           y0: float = 0.0, columns: int = 0) -> Drawing:
    """Place ``nodes`` (thread events in ``column``/``row``; initial writes in row 0, final reads
    in the row after the last event row) and route ``edges`` (node id pairs) between them along
    channels and gaps, crossing no box. Row 0's centre is at ``y0``; there are at least
    ``columns`` columns (a thread without events keeps its column)."""
    ncols = max([n.column + 1 for n in nodes] + [columns])
    nrows = max([n.row for n in nodes if n.column >= 0] + [0])
    for n in nodes:
        if n.column < 0 and n.row != 0:
            n.row = nrows + 1
    known = {n.id for n in nodes}
    router = _Router(nodes, ncols, nrows)
    near = _Geometry(nodes, ncols, nrows, [0] * (ncols + 1), [0] * (nrows + 3), x0, y0)
    routes = [router.route(a, b, near) if a in known and b in known and a != b else None
              for a, b in edges]
    geo = _Geometry(nodes, ncols, nrows, router.chan_tracks, router.gap_tracks, x0, y0,
                    router.ports)
    geo.node_of = router.nodes
    paths = [None if r is None else _simplify([_resolve(p, geo, router.ports) for p in r])
             for r in routes]
    height = geo.row_y[nrows + 1] + geo.row_h[nrows + 1] / 2 - y0
    return Drawing(geo.boxes, paths, geo.col_x, geo.right + PAD, height, geo.box_h)


def _simplify(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Drop repeated points and the middle one of three on a line."""
    out: list[tuple[float, float]] = []
    for p in points:
        if out and abs(p[0] - out[-1][0]) < 1e-6 and abs(p[1] - out[-1][1]) < 1e-6:
            continue
        if len(out) >= 2:
            (ax, ay), (bx, by) = out[-2], out[-1]
            if (abs(ax - bx) < 1e-6 and abs(bx - p[0]) < 1e-6) or \
                    (abs(ay - by) < 1e-6 and abs(by - p[1]) < 1e-6):
                out[-1] = p
                continue
        out.append(p)
    return out


def path_data(points: list[tuple[float, float]], radius: float = 5.0) -> str:
    """SVG path data for a polyline of horizontal and vertical segments, corners rounded (a
    quadratic curve inside the corner, so the path never leaves the segments' bounding box)."""
    d = [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for i in range(1, len(points) - 1):
        (px, py), (cx, cy), (nx, ny) = points[i - 1], points[i], points[i + 1]
        lin = (abs(px - cx) + abs(py - cy)) / 2
        lout = (abs(nx - cx) + abs(ny - cy)) / 2
        r = min(radius, lin, lout)
        ax, ay = _towards(cx, cy, px, py, r)
        bx, by = _towards(cx, cy, nx, ny, r)
        d.append(f"L{ax:.1f},{ay:.1f} Q{cx:.1f},{cy:.1f} {bx:.1f},{by:.1f}")
    d.append(f"L{points[-1][0]:.1f},{points[-1][1]:.1f}")
    return " ".join(d)


def _towards(x: float, y: float, tx: float, ty: float, r: float) -> tuple[float, float]:
    dx, dy = tx - x, ty - y
    n = (dx * dx + dy * dy) ** 0.5 or 1.0
    return x + dx / n * r, y + dy / n * r


def label_point(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Where an edge's label goes: the middle of its longest segment."""
    best = max(range(len(points) - 1),
               key=lambda i: abs(points[i + 1][0] - points[i][0]) + abs(points[i + 1][1] - points[i][1]))
    (ax, ay), (bx, by) = points[best], points[best + 1]
    return (ax + bx) / 2, (ay + by) / 2

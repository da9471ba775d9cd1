"""Explanations: why a model forbids an outcome (or which execution allows it), as text and SVG.

For a forbidden outcome, every candidate execution that would produce it is listed with the first
check of the model it fails and a witness: for ``acyclic``/``irreflexive`` checks a cycle written
with the relations that make it up (``W x=1 -po-> F rel -sw-> F acq -po-> R x=0 -fr-> W x=1``),
for ``empty`` checks the offending pairs. For an allowed outcome, one consistent execution that
produces it.

Everything comes from the compiled engine: the candidates are those of the packed pre-execution
(:func:`oracle.pack.pack`), their values are resolved by the search's own location check, and
each candidate is evaluated by :func:`oracle.engine.eval_rows`, whose slots then hold the value of
every expression of the model that the checks up to the failing one needed
(:attr:`oracle.lang.Program.node_slots`); the witness path follows the model's AST over them.
Which relations are drawn as one labelled edge is the model unit's declaration (``edges``,
``aliases``).
"""

from __future__ import annotations

import dataclasses
import html

from litmus.dialects import parse
from litmus.ir import Atom, And, Test
from litmus.lexer import ParseError
from litmus.outcome import read_outcome, satisfiable
from litmus.printer import format_prop, format_test

from .candidates import Candidate, candidates, pair_set as _pairs, shortest_cycle  # noqa: F401
from .check import default_model, pre_executions
from .errors import OracleError
from .events import UNDEF_VAL
from .lang import Node, Program, load_model
from .registry import ModelUnit, get as get_unit
from .routing import Node as RouteNode, label_point, layout, path_data

MAX_LISTED = 12


def _outcome_prop(test: Test, outcome):
    if isinstance(outcome, dict):
        return And(tuple(Atom(int(k[1:k.index(":")]) if ":" in k else None,
                              k.split(":")[-1], "==", int(v)) for k, v in outcome.items()))
    try:
        return read_outcome(test, outcome)      # the printed form or the condition form
    except ParseError as e:
        raise OracleError(f"--outcome {outcome!r}: {e.reason}")


class _Relations:
    """The value of a node of the model's AST in one evaluated candidate, as a set of pairs."""

    def __init__(self, prog: Program, cand: Candidate):
        self.prog = prog
        self.cand = cand
        self.cache: dict[int, set] = {}

    def ev(self, node: Node) -> set:
        s = self.prog.node_slots.get(id(node))
        if s is None and node.op == "name":
            s = self.prog.slots.get(node.name)
        if s is None:
            raise OracleError(f"internal: no slot holds {node.op} {node.name or ''}")
        if s not in self.cache:
            n = self.cand.pe.n
            self.cache[s] = _pairs(self.cand.slots[s], n, self.cand.slots.shape[1] // max(n, 1))
        return self.cache[s]


class _Paths:
    """Decompose a pair of a relation into a path of labelled edges, following the model's AST."""

    def __init__(self, prog, cand: Candidate, unit: ModelUnit):
        self.defs = {st.name: st.expr for st in prog.stmts if st.kind in ("let", "fix")}
        self.ev = _Relations(prog, cand)
        self.edges = unit.edges
        self.aliases = unit.aliases

    def path(self, node: Node, x: int, y: int, depth: int = 0) -> list[tuple[int, str, int]]:
        if depth > 40:
            return [(x, "?", y)]
        op, a = node.op, node.args
        if op == "name":
            name = node.name
            if name in self.edges or name in self.aliases or name not in self.defs:
                return [(x, self.aliases.get(name, name), y)]
            return self.path(self.defs[name], x, y, depth + 1)
        if op in ("id", "restrict", "dom", "ran") or (op == "opt" and x == y) or \
                (op == "star" and x == y):
            return []
        if op == "union":
            for sub in a:
                if (x, y) in self.ev.ev(sub):
                    return self.path(sub, x, y, depth + 1)
        if op in ("inter", "diff"):
            return self.path(a[0], x, y, depth + 1)
        if op == "seq":
            left = self.ev.ev(a[0])
            right = self.ev.ev(a[1])
            for (p, z) in sorted(left):
                if p == x and (z, y) in right:
                    return self.path(a[0], x, z, depth + 1) + self.path(a[1], z, y, depth + 1)
        if op == "inv":
            return [(q, lab + "^-1" if not lab.endswith("^-1") else lab[:-3], p)
                    for (p, lab, q) in reversed(self.path(a[0], y, x, depth + 1))]
        if op in ("plus", "star", "opt"):
            step = self.ev.ev(a[0])
            if op == "opt":
                return self.path(a[0], x, y, depth + 1)
            prev = {x: None}
            frontier = [x]
            while frontier:
                nxt = []
                for u in frontier:
                    for (p, v) in sorted(step):
                        if p == u and v not in prev:
                            prev[v] = u
                            nxt.append(v)
                frontier = nxt
                if y in prev and y != x:
                    break
            if y == x:                  # a cycle back to x
                for (p, v) in sorted(step):
                    if v == x and p in prev:
                        hops = [p]
                        while prev[hops[-1]] is not None:
                            hops.append(prev[hops[-1]])
                        hops.reverse()
                        hops.append(x)
                        out = []
                        for i in range(len(hops) - 1):
                            out += self.path(a[0], hops[i], hops[i + 1], depth + 1)
                        return out
            if y in prev:
                hops = [y]
                while prev[hops[-1]] is not None:
                    hops.append(prev[hops[-1]])
                hops.reverse()
                out = []
                for i in range(len(hops) - 1):
                    out += self.path(a[0], hops[i], hops[i + 1], depth + 1)
                return out
        return [(x, op, y)]


def _label(cand: Candidate, i: int) -> str:
    e = cand.pe.events[i]
    lab = e.label
    if i in cand.src:                      # a read: show the value it got
        v = cand.val[i]
        return f"{lab}={'undef' if v == UNDEF_VAL else v}"
    if e.wsrc >= 0:
        v = cand.val[i]
        return f"{lab}={'undef' if v == UNDEF_VAL else v}"
    return lab


def _cross_bxb(cand: Candidate) -> list[tuple[int, int]]:
    """barrier-executes-before pairs from an arrive/drop to a wait of another thread."""
    pe = cand.pe
    out = []
    waits = pe.sets.get("BWAIT", set())
    for a, row in enumerate(pe.rels.get("bxb", ())):
        if a in waits:
            continue
        for b in waits:
            if row >> b & 1 and pe.events[a].thread != pe.events[b].thread:
                out.append((a, b))
    return sorted(out)


def _barrier_phases(cand: Candidate) -> str:
    pairs = _cross_bxb(cand)
    return "; ".join(f"{_who(cand, a)} {cand.pe.events[a].label} -> {_who(cand, b)} "
                     f"{cand.pe.events[b].label}" for a, b in pairs)


def _who(cand: Candidate, i: int) -> str:
    t = cand.pe.events[i].thread
    return f"P{t}" if t >= 0 else "-"


@dataclasses.dataclass
class Item:
    cand: Candidate
    witness_text: str
    edges: list[tuple[int, str, int]]


@dataclasses.dataclass
class Explanation:
    test: Test
    model: str
    outcome_text: str
    allowed: bool
    items: list[Item]
    total: int

    def text(self) -> str:
        out = [f"{self.test.name}: outcome {self.outcome_text} is "
               f"{'ALLOWED' if self.allowed else 'FORBIDDEN'} by model {self.model}"]
        if self.allowed:
            out.append("an execution that produces it:")
        elif not self.items:
            out.append("no candidate execution produces it (values cannot arise at all)")
        else:
            out.append(f"{self.total} candidate execution(s) would produce it; each fails a check:")
        for k, it in enumerate(self.items, 1):
            c = it.cand
            rf = ", ".join(f"{_label(c, r)} <-rf- "
                           f"{'undef' if w < 0 else c.pe.events[w].label}"
                           for r, w in sorted(c.src.items()))
            co = "; ".join(" -co-> ".join(c.pe.events[w].label for w in o)
                           for o in c.co if len(o) > 1)
            out.append(f"  [{k}] rf: {rf}")
            if co:
                out.append(f"      co: {co}")
            phases = _barrier_phases(c)
            if phases:
                out.append(f"      barrier phases (barrier-executes-before across threads): "
                           f"{phases}")
            out.append(f"      {it.witness_text}")
        if self.total > len(self.items):
            out.append(f"  ... and {self.total - len(self.items)} more")
        return "\n".join(out) + "\n"

    def svg(self) -> str:
        return _svg(self)

    def dot(self) -> str:
        """The executions as Graphviz DOT (herd's ``-dot`` habit): one cluster per candidate,
        a column (subgraph) per thread, po grey, rf/co/barrier edges coloured, the failed check's
        witness edges bold red."""
        return _dot(self)


def _witness(prog, cand: Candidate, unit: ModelUnit):
    if cand.failed is None:
        return "consistent", []
    st = next(s for s in prog.check_stmts if s.name == cand.failed)
    paths = _Paths(prog, cand, unit)
    if st.kind == "acyclic":
        cyc = cand.witness
        edges = []
        for i in range(len(cyc) - 1):
            edges += paths.path(st.expr, cyc[i], cyc[i + 1])
    elif st.kind == "irreflexive":
        a = min(a for a, _ in cand.witness)
        edges = paths.path(st.expr, a, a)
    else:
        pairs = sorted(cand.witness)
        if all(a == b for a, b in pairs):
            evs = ", ".join(f"{_who(cand, a)} {_label(cand, a)}" for a, _ in pairs)
            # the witness is a set of events: self-pairs, marked on the events in the drawings
            return f"fails '{st.name}' (empty): {evs}", [(a, st.name, a) for a, _ in pairs]
        fr = cand.pe.sets.get("FR", set())
        pairs = [p for p in pairs if p[1] not in fr] or pairs
        parts, drawn = [], []
        for a, b in pairs:
            why, hops = _why_not(paths, cand, st.expr, a, b)
            parts.append(f"{_label(cand, a)} -> {_label(cand, b)}{why}")
            drawn.append((a, st.name, b))
            drawn += hops
        return f"fails '{st.name}' (empty): {'; '.join(parts)}", drawn
    if not edges:
        return f"fails '{st.name}'", []
    sync_text, sync = _sync_paths(paths, cand, edges)
    return f"fails '{st.name}' ({st.kind}): {_chain(cand, edges)}{sync_text}", edges + sync


#: relations drawn as they are: the candidate's own (rf, co, fr and their restrictions), program
#: order and synchronizes-with. Any other relation on a witness (lo, hb, eco, a model's own
#: orders) is shown with the hb path that puts its two events in order, when there is one.
_BASE = {"po", "rf", "co", "fr", "sw", "rmw", "sb", "bsw", "bxb", "ini", "fin", "tko",
         "synchronizes", "syncbar"}


def _chain(cand: Candidate, hops: list[tuple[int, str, int]]) -> str:
    chain = _label(cand, hops[0][0])
    for (_, lab, b) in hops:
        chain += f" -{lab}-> {_label(cand, b)}"
    return chain


def _sync_paths(paths: "_Paths", cand: Candidate, hops) -> tuple[str, list]:
    """For each hop of a witness whose relation is not a base one (:data:`_BASE`) and whose
    events are ordered by the model's ``hb``: the hb path between them, in the model's own
    names (``W x=1 -po-> W.rel y=1 -sw-> R.acq y=1 -po-> R x=0``), as text and as edges. This is
    the synchronisation that forbids the outcome, which a witness such as ``lo`` only names."""
    hb = paths.defs.get("hb")
    if hb is None:
        return "", []
    text, edges, seen = [], [], set()
    for a, lab, b in hops:
        base = lab.replace("^-1", "")
        if base in _BASE or (a, b) in seen or a == b:
            continue
        if (a, b) not in paths.ev.ev(hb):
            continue
        seen.add((a, b))
        sub = paths.path(hb, a, b)
        if len(sub) > 1:        # one hop (ini, po) restates the pair; a path shows the sync
            text.append(f"{_label(cand, a)} -hb-> {_label(cand, b)}: {_chain(cand, sub)}")
            edges += sub
    return ("; " + "; ".join(text) if text else ""), edges


def _why_not(paths: _Paths, cand, node: Node, a: int, b: int,
             depth: int = 0) -> tuple[str, list]:
    """For a pair of ``X \\ Y`` (an ``empty`` check's witness), the path showing it lies in Y
    (and the hb path behind each of its derived hops, :func:`_sync_paths`): text and edges."""
    if depth > 12:
        return "", []
    if node.op == "name" and node.name in paths.defs:
        return _why_not(paths, cand, paths.defs[node.name], a, b, depth + 1)
    if node.op == "diff":
        left, right = node.args
        if (a, b) in paths.ev.ev(right):
            if right.op == "inv":           # show X^-1 the way round it was built
                a, b = b, a
                right = right.args[0]
            hops = paths.path(right, a, b)
            if hops:
                sync_text, sync = _sync_paths(paths, cand, hops)
                return f" (excluded: {_chain(cand, hops)}{sync_text})", hops + sync
            return "", []
        if right.op == "name" and right.name in paths.defs:
            return _why_not(paths, cand, paths.defs[right.name], a, b, depth + 1)
        if right.op == "diff" or right.op == "name":
            return "", []
        return _why_not(paths, cand, left, a, b, depth + 1)
    return "", []


def explain(test: Test, outcome, model: str | None = None) -> Explanation:
    model = model or default_model(test)
    prop = _outcome_prop(test, outcome)
    otext = outcome if isinstance(outcome, str) else format_prop(prop, "top")
    prog = load_model(model)
    unit = get_unit(model)
    keys = test.observables()
    producing: list[Candidate] = []
    for pe in pre_executions(unit, test):
        for c in candidates(pe, prog, unit.hints):
            if c is None:
                continue
            o = c.outcome()
            if not satisfiable(prop, {k: o[k] for k in keys}):
                continue
            if c.failed is None:
                return Explanation(test, model, otext, True, [Item(c, "consistent", [])], 1)
            producing.append(c)
    # candidates that differ only in what the final-memory reads saw are one execution of the
    # program: keep, per program rf/co, the candidate that passes the most checks
    order = {name: i for i, name in enumerate(prog.checks)}
    best: dict = {}
    for c in producing:
        fr = c.pe.sets.get("FR", set())
        key = (id(c.pe), tuple(sorted((r, w) for r, w in c.src.items() if r not in fr)),
               tuple(tuple(o) for o in c.co))
        if key not in best or order[c.failed] > order[best[key].failed]:
            best[key] = c
    producing = list(best.values())
    items = []
    for c in producing[:MAX_LISTED]:
        txt, edges = _witness(prog, c, unit)
        items.append(Item(c, txt, edges))
    return Explanation(test, model, otext, False, items, len(producing))


# --- SVG ------------------------------------------------------------------------------------------
COLORS = {"po": "#555555", "rf": "#c0392b", "co": "#2471a3", "fr": "#d68910", "sw": "#1e8449",
          "hb": "#7d3c98", "lo": "#117a65", "bxb": "#8e44ad", "bsw": "#1e8449"}


CHAR_W = 7.3          # width of one character of the 12px monospace labels


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _candidate_edges(it: "Item") -> list[tuple[int, str, int, bool]]:
    """rf, co and cross-thread barrier edges of an item's candidate, then its witness (hot)."""
    c = it.cand
    edges = [(w, "rf", r, False) for r, w in c.src.items() if w >= 0]
    edges += [(a, "co", b, False) for o in c.co for a, b in zip(o, o[1:])]
    edges += [(a, "bxb", b, False) for (a, b) in _cross_bxb(c)]
    return edges + [(a, lab, b, True) for (a, lab, b) in it.edges]


def _dot(ex: Explanation) -> str:
    verdict = "allowed" if ex.allowed else "forbidden"
    out = [f"digraph {_dot_id(ex.test.name)} {{",
           f"  label={_dot_id(f'{ex.test.name}: {ex.outcome_text} {verdict} ({ex.model})')};",
           "  labelloc=t; node [shape=box, fontname=monospace, fontsize=11]; "
           "edge [fontsize=10];"]
    for k, it in enumerate(ex.items, 1):
        c = it.cand
        pe = c.pe
        out.append(f"  subgraph cluster_{k} {{")
        out.append(f"    label={_dot_id(f'[{k}] {it.witness_text}')};")
        for t in range(len(ex.test.threads)):
            evs = [i for i, e in enumerate(pe.events) if e.thread == t]
            out.append(f"    subgraph cluster_{k}_P{t} {{ label=\"P{t}\"; style=dotted;")
            for i in evs:
                out.append(f"      e{k}_{i} [label={_dot_id(_label(c, i))}];")
            for a, b in zip(evs, evs[1:]):
                out.append(f"      e{k}_{a} -> e{k}_{b} [label=po, color=\"{COLORS['po']}\"];")
            out.append("    }")
        for i, e in enumerate(pe.events):
            if e.thread < 0:
                out.append(f"    e{k}_{i} [label={_dot_id(_label(c, i))}, style=rounded];")
        for a, lab, b, hot in _candidate_edges(it):
            if a == b:
                if hot:        # the witness is an event (an irreflexive or empty check)
                    out.append(f"    e{k}_{a} [color=\"#e01010\", penwidth=2.5];")
                continue
            color = "#e01010" if hot else COLORS.get(lab.replace("^-1", ""), "#333333")
            style = ", penwidth=2.5" if hot else ""
            out.append(f"    e{k}_{a} -> e{k}_{b} [label={_dot_id(lab)}, color=\"{color}\", "
                       f"fontcolor=\"{color}\"{style}, constraint=false];")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


HOT = "#e01010"       # the failed check's witness and the synchronisation behind it


def _legend(y: float, kinds: list[str], hot: list[str]) -> tuple[str, float]:
    """A key to the colours of what the picture shows, and only that: the base relations drawn
    (``kinds``, in the order po rf co bxb) and, when a witness is drawn, its relation names
    (``hot``). Returns the markup and its right end."""
    names = {"bxb": "bxb (barrier)"}
    keys = [(names.get(k, k), COLORS[k]) for k in ("po", "rf", "co", "bxb") if k in kinds]
    if hot:
        keys.append((f"failed check's witness: {', '.join(hot)}", HOT))
    parts, x = [], 10.0
    for name, color in keys:
        parts.append(f'<line x1="{x:.0f}" y1="{y:.0f}" x2="{x + 24:.0f}" y2="{y:.0f}" '
                     f'stroke="{color}" stroke-width="{2.5 if color == HOT else 2}"/>'
                     f'<text x="{x + 28:.0f}" y="{y + 4:.0f}" '
                     f'font-size="11" fill="{color}">{html.escape(name)}</text>')
        x += 40 + len(name) * 6.5
    return '<g class="legend">' + "".join(parts) + "</g>", x


TITLE_CHARS = 110     # a block's title (the witness) wraps at spaces to lines this long


def _wrap(text: str, n: int) -> list[str]:
    """``text`` in lines of at most ``n`` characters, broken at spaces (a longer word alone)."""
    lines, cur = [], ""
    for word in text.split(" "):
        if cur and len(cur) + 1 + len(word) > n:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    return lines + [cur]


LABEL_W, LABEL_H = 6.2, 12.0     # per character, and the height of an 11px edge label


def _place_label(points, lab: str, placed: list, boxes: dict, drawing) -> tuple[float, float]:
    """Where an edge's label goes: on one of its straight pieces (horizontal ones first, longest
    first; along each, the middle, then nearer its ends), the first spot whose label box overlaps
    no event box and no label placed before; the middle of the longest piece when there is none.
    The chosen box is added to ``placed``."""
    w, h = len(lab) * LABEL_W + 4, LABEL_H
    pieces = sorted(zip(points, points[1:]),
                    key=lambda s: (abs(s[0][1] - s[1][1]) > 1e-6,
                                   -(abs(s[0][0] - s[1][0]) + abs(s[0][1] - s[1][1]))))
    rects = [(x - bw / 2 - 2, y - drawing.height_of(i) / 2 - 2, bw + 4,
              drawing.height_of(i) + 4) for i, (x, y, bw) in boxes.items()]

    def free(cx, cy):
        r = (cx - w / 2, cy - h / 2, w, h)
        return not any(r[0] < q[0] + q[2] and q[0] < r[0] + r[2] and r[1] < q[1] + q[3]
                       and q[1] < r[1] + r[3] for q in rects + placed)
    for (ax, ay), (bx, by) in pieces:
        for f in (0.5, 0.35, 0.65, 0.2, 0.8):
            cx, cy = ax + (bx - ax) * f, ay + (by - ay) * f
            if free(cx, cy):
                placed.append((cx - w / 2, cy - h / 2, w, h))
                return cx, cy
    cx, cy = label_point(points)
    placed.append((cx - w / 2, cy - h / 2, w, h))
    return cx, cy


def _svg(ex: Explanation) -> str:
    """Each candidate execution drawn as in papers: threads as columns of boxed events (initial
    writes above, final-memory reads below), po as grey arrows down a column, the candidate's
    rf/co/barrier edges in their colours, the failed check's witness edges bold red (a witness
    that is an event: its box outlined red). Edges run in the channels between columns and the
    gaps between rows (:mod:`oracle.routing`), so none crosses a box other than its ends."""
    top = 70                    # from a block's top to the centre of its initial-write row
    nth = len(ex.test.threads)
    blocks: list[str] = []
    kinds: list[str] = []       # base relations drawn (for the legend)
    hot_names: list[str] = []   # the witnesses' relation names, in order of appearance
    y0 = 30
    width = 600
    for k, it in enumerate(ex.items, 1):
        c = it.cand
        pe = c.pe
        labels = {i: _label(c, i) for i in range(len(pe.events))}
        nodes, rows_used = [], [0] * nth
        for i, e in enumerate(pe.events):
            w = len(labels[i]) * CHAR_W + 12
            if e.thread >= 0:
                rows_used[e.thread] += 1
                nodes.append(RouteNode(i, w, e.thread, rows_used[e.thread]))
            else:               # initial writes in row 0, final reads (they read) below the rest
                nodes.append(RouteNode(i, w, -1, 1 if i in c.src else 0))
        edges = _candidate_edges(it)
        hot_events = {a for a, _, b, hot in edges if hot and a == b}
        edges = [e for e in edges if e[0] != e[2]]
        title_lines = _wrap(f"[{k}] {it.witness_text}", TITLE_CHARS)
        extra = 16 * (len(title_lines) - 1)     # a wrapped title pushes the drawing down
        drawing = layout(nodes, [(a, b) for a, _, b, _ in edges], x0=10.0,
                         y0=y0 + top + extra, columns=nth)
        pos = drawing.boxes
        placed: list[tuple[float, float, float, float]] = []     # labels' boxes so far
        width = max(width, max(int(len(x) * 7.5) + 40 for x in title_lines),
                    int(drawing.width) + 30)
        parts = [f'<text x="10" y="{y0 + 20 + 16 * n}" font-weight="bold">{html.escape(x)}</text>'
                 for n, x in enumerate(title_lines)]
        for t in range(nth):
            parts.append(f'<text x="{drawing.column_x[t]:.1f}" y="{y0 + 45 + extra}" '
                         f'font-weight="bold">P{t}</text>')
        # po down each column, between neighbouring boxes
        for t in range(nth):
            evs = [i for i, e in enumerate(pe.events) if e.thread == t]
            x = drawing.column_x[t] + 8
            if len(evs) > 1 and "po" not in kinds:
                kinds.append("po")
            for a, b in zip(evs, evs[1:]):
                parts.append(f'<line x1="{x:.1f}" y1="{pos[a][1] + drawing.height_of(a) / 2:.1f}" '
                             f'x2="{x:.1f}" y2="{pos[b][1] - drawing.height_of(b) / 2 - 1:.1f}" '
                             f'stroke="#999" marker-end="url(#arr)"/>')
        for (a, lab, b, hot), points in zip(edges, drawing.paths):
            if points is None:
                continue
            color = HOT if hot else COLORS.get(lab.replace("^-1", ""), "#333")
            if hot and lab not in hot_names:
                hot_names.append(lab)
            elif not hot and lab not in kinds:
                kinds.append(lab)
            parts.append(f'<path d="{path_data(points)}" fill="none" stroke="{color}" '
                         f'stroke-width="{2 if hot else 1.2}" marker-end="url(#arr)"/>')
            lx, ly = _place_label(points, lab, placed, pos, drawing)
            parts.append(f'<text x="{lx:.1f}" y="{ly + 4:.1f}" fill="{color}" font-size="11" '
                         f'text-anchor="middle" stroke="white" stroke-width="3" '
                         f'paint-order="stroke">{html.escape(lab)}</text>')
        for a, lab, b, hot in _candidate_edges(it):
            if hot and a == b and lab not in hot_names:
                hot_names.append(lab)
        for i, (x, y, w) in pos.items():
            stroke = f'"{HOT}" stroke-width="2.5"' if i in hot_events else '"#bbb"'
            h = drawing.height_of(i)
            parts.append(f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" '
                         f'height="{h:.1f}" rx="4" fill="white" stroke={stroke}/>'
                         f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" '
                         f'font-family="monospace" font-size="12">{html.escape(labels[i])}</text>')
        blocks.append("\n".join(parts))
        y0 += top + extra + drawing.height + 30
    legend, legend_end = _legend(14, kinds, hot_names)
    width = max(width, int(legend_end) + 10)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y0 + 40}" '
            f'font-family="sans-serif" font-size="13">\n'
            f'<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
            f'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker>'
            f'</defs>\n<text x="10" y="{y0 + 25}">{html.escape(ex.test.name)}: '
            f'{html.escape(ex.outcome_text)} '
            f'{"allowed" if ex.allowed else "forbidden"} ({html.escape(ex.model)})</text>\n')
    return head + legend + "\n" + "\n".join(blocks) + "\n</svg>\n"

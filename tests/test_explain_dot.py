"""``explain --dot`` (Graphviz, herd's ``-dot`` habit) and the SVG legend (issue 17 item 9).

Hand-derived for MP with release/acquire: the outcome r0=1, r1=0 needs P1's acquire load to read
P0's release store of y (an rf edge between those two events in every candidate), po runs down each
thread, and every candidate fails a check whose witness (edges, or an event) is drawn bold red.
"""

from __future__ import annotations

import re

from fuzz.cli import main

from test_outcome_reader import MP  # noqa: E402 (the MP test shared with the outcome tests)


def test_explain_writes_dot_and_svg_with_legend(tmp_path, capsys):
    f = tmp_path / "mp.litmus"
    f.write_text(MP)
    dot, svg = tmp_path / "mp.dot", tmp_path / "mp.svg"
    assert main(["explain", str(f), "--outcome", "P1:r0=1; P1:r1=0;", "--dot", str(dot),
                 "--svg", str(svg)]) == 0
    text = dot.read_text()
    assert text.startswith('digraph "MP" {') and text.count("{") == text.count("}")
    nodes = dict(re.findall(r"^\s*(e\d+_\d+) \[label=\"([^\"]*)\"", text, re.M))
    edges = re.findall(r"^\s*(e\d+_\d+) -> (e\d+_\d+) \[label=\"?([^\",]*)\"?, color=\"(#\w+)\"(.*)\];",
                       text, re.M)
    assert edges and all(a in nodes and b in nodes for a, b, _, _, _ in edges)
    clusters = sorted(set(re.findall(r"subgraph (cluster_\d+) \{", text)))
    n_candidates = int(re.search(r"(\d+) candidate execution", capsys.readouterr().out).group(1))
    assert len(clusters) == n_candidates >= 1
    for k in range(1, n_candidates + 1):
        mine = [(nodes[a], nodes[b], lab, col, rest) for a, b, lab, col, rest in edges
                if a.startswith(f"e{k}_")]
        assert ("W.atom.rel.agent y=1", "R.atom.acq.agent y=1", "rf") in \
            {(a, b, lab) for a, b, lab, _, _ in mine}
        assert ("W x=1", "W.atom.rel.agent y=1", "po") in {(a, b, lab) for a, b, lab, _, _ in mine}
        hot_nodes = re.findall(rf"^\s*e{k}_\d+ \[color=\"#e01010\", penwidth", text, re.M)
        assert hot_nodes or any(col == "#e01010" and "penwidth" in rest for *_, col, rest in mine)
    legend = re.search(r'<g class="legend">(.*?)</g>', svg.read_text(), re.S)
    assert legend and all(k in legend.group(1) for k in ("po", "rf", "co", "witness"))

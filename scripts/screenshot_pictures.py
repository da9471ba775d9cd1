"""Render explanation pictures and a campaign report to PNGs with headless Chromium, to look at
them as a reader will (issue 33: "look at every picture in a real browser").

    python scripts/screenshot_pictures.py OUT [--campaign DIR] [--tests FILE...]

Writes OUT/<name>.svg and OUT/<name>.png for each test's explanation (its condition, and one
forbidden outcome when there is one) and, with ``--campaign DIR`` (a campaign directory),
OUT/report.png of DIR/report.html (rebuilt first). Needs ``chromium`` (Debian: ``apt-get install
chromium``); without it, the SVGs are written and the script says it took no screenshots.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DEFAULT_TESTS = [
    "classic/MP/MP+rel+acq.cluster.xwg.litmus",
    "classic/SB/SB+sc.cluster.xwg.litmus",
    "classic/IRIW/IRIW+sc.sys.xagent.litmus",
    "classic/WRC/WRC+rel+acq.wg.xwave.litmus",
    "classic/ISA2/ISA2+fences.cluster.xwg.litmus",
    "av/chains/ISA2+av.wave+fence.rel.agent.chain.litmus",
    "barrier/named/BAR+named+count1+fences.xwave.litmus",
    "mutants/named-wait-operand.litmus",
]


def chromium() -> str | None:
    """The Chromium binary on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(browser: str, url_path: str, png: str, size: str = "1400,1000") -> None:
    """One headless Chromium screenshot of a local file."""
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={png}", f"--window-size={size}",
                    "file://" + os.path.abspath(url_path)],
                   check=True, capture_output=True, timeout=120)


def explanation_svgs(rel: str) -> list[tuple[str, str]]:
    """(name, svg) of a corpus test's condition and of a forbidden outcome near an allowed one."""
    import litmus
    import oracle
    from litmus.printer import format_prop
    with open(os.path.join(ROOT, "corpora", rel), encoding="utf-8") as f:
        test = litmus.parse(f.read())
    base = os.path.splitext(os.path.basename(rel))[0]
    out = [(base, oracle.explain(test, format_prop(test.condition.prop, "top")).svg())]
    res = oracle.check(test)
    for state in list(res.states)[:4]:
        concrete = {k: v for k, v in state.items() if isinstance(v, int)}
        for k in sorted(concrete):
            o = dict(concrete, **{k: 1 - concrete[k] if concrete[k] in (0, 1) else 0})
            if not res.allows(o):
                out.append((base + ".forbidden", oracle.explain(test, o).svg()))
                return out
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--campaign", help="a campaign directory: screenshot its report.html")
    ap.add_argument("--tests", nargs="*", default=DEFAULT_TESTS, help="corpus-relative paths")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    browser = chromium()
    made = []
    for rel in a.tests:
        for name, svg in explanation_svgs(rel):
            path = os.path.join(a.out, name + ".svg")
            with open(path, "w", encoding="utf-8") as f:
                f.write(svg)
            made.append(path)
    if a.campaign:
        from fuzz.report import build_report
        page, _ = build_report(a.campaign)
        made.append(page)
    if browser is None:
        print(f"{len(made)} pictures written to {a.out}; no chromium on PATH: no screenshots")
        return 0
    for path in made:
        name = "report" if path.endswith("report.html") else os.path.basename(path)[:-4]
        png = os.path.join(a.out, name + ".png")
        screenshot(browser, path, png, "1400,4000" if name == "report" else "1400,1000")
        print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())

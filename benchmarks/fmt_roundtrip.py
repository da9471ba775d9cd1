"""How many litmus files ``scopefuzz fmt`` prints faithfully, per dialect (issue 34).

Usage: ``.venv/bin/python benchmarks/fmt_roundtrip.py [DIR ...]`` (default: ``corpora`` and
``/work/shared/conformance``, the latter left out with a note when absent).

For every ``*.litmus`` file: parse, print with :func:`litmus.format_test`, parse the text again.
A file counts as ``ok`` when the second parse gives an equal test (same dialect, same events,
same condition) and printing it again gives the same text; ``refused`` when the printer raised
:class:`litmus.PrintError` (a dialect without a printer, or a construct it cannot spell); any
other outcome (a different test, an exception) is counted as ``WRONG`` and listed, and the exit
status is 1. tests/test_dialects.py asserts the same over the same files; this prints the counts
that docs and reports quote.
"""

from __future__ import annotations

import pathlib
import sys
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from litmus import PrintError, format_test, parse, parse_file  # noqa: E402
from litmus.dialect import get  # noqa: E402


def outcome(path: pathlib.Path) -> tuple[str, str]:
    """(dialect, ok | refused | WRONG)."""
    test = parse_file(path)
    name = get(test.dialect).name
    try:
        text = format_test(test)
    except PrintError:
        return name, "refused"
    try:
        back = parse(text, str(path))
    except Exception:                 # the printed text does not even parse: WRONG
        return name, "WRONG"
    same = back == test and back.dialect == test.dialect and format_test(back) == text
    return name, "ok" if same else "WRONG"


def main(argv: list[str]) -> int:
    tops = [pathlib.Path(a) for a in argv] or [ROOT / "corpora",
                                               pathlib.Path("/work/shared/conformance")]
    counts: Counter = Counter()
    wrong = []
    for top in tops:
        if not top.is_dir():
            print(f"({top} is absent: left out)")
            continue
        for path in sorted(top.rglob("*.litmus")):
            dialect, what = outcome(path)
            counts[(top.name, dialect, what)] += 1
            if what == "WRONG":
                wrong.append(path)
    print(f"{'tree':<12} {'dialect':<8} {'ok':>5} {'refused':>8} {'WRONG':>6}")
    for top, dialect in sorted({(t, d) for t, d, _ in counts}):
        print(f"{top:<12} {dialect:<8} {counts[(top, dialect, 'ok')]:>5} "
              f"{counts[(top, dialect, 'refused')]:>8} {counts[(top, dialect, 'WRONG')]:>6}")
    total = Counter()
    for (_, _, what), n in counts.items():
        total[what] += n
    print(f"all: {sum(total.values())} files, {total['ok']} ok, {total['refused']} refused, "
          f"{total['WRONG']} wrong")
    for path in wrong:
        print(f"WRONG: {path}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

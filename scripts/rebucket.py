"""Re-bucket a campaign's findings with this tree's code: ``FINDINGS_DIR/*/minimized.litmus`` and
the forbidden outcome of each ``finding.json``, run through :func:`fuzz.buckets.bucket_of` on the
finding's backend (or ``--backend``); prints one row per finding, old bucket -> new bucket, then
the new buckets with their counts (programs, as the campaign summary counts them).

    PYTHONPATH=. python scripts/rebucket.py /work/camps12/gfx90a/findings [--backend isa:gfx90a]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("findings", help="a campaign's findings/ folder")
    ap.add_argument("--backend", help="backend spec (default: each finding's own)")
    a = ap.parse_args(argv)
    import hw
    from fuzz.buckets import bucket_of
    rows, counts, sigs = [], Counter(), {}
    dirs = sorted(p for p in Path(a.findings).iterdir() if (p / "finding.json").is_file())
    if not dirs:
        print(f"{a.findings}: no finding.json under it", file=sys.stderr)
        return 2
    backends = {}
    for d in dirs:
        rec = json.loads((d / "finding.json").read_text())
        text = (d / "minimized.litmus").read_text() if (d / "minimized.litmus").is_file() \
            else rec["test"]
        spec = a.backend or rec["backend"]
        be = backends.setdefault(spec, hw.get_backend(spec))
        new = bucket_of({"test": text, "forbidden": rec["forbidden"]}, be)
        old = (rec.get("bucket") or {}).get("signature", "(none)")
        rows.append((d.name, old, new["signature"]))
        n = len(rec.get("sources", [])) or 1
        counts[new["id"]] += n
        sigs[new["id"]] = new["signature"]
    print("| finding | old bucket | new bucket |\n|---|---|---|")
    for name, old, new in rows:
        print(f"| `{name}` | {old} | {new} |")
    print("\n| new bucket | id | programs |\n|---|---|---:|")
    for bid, n in counts.most_common():
        print(f"| {sigs[bid]} | `{bid}` | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The campaign's progress line in a log (not a terminal): every ``interval`` seconds, and at once
for the first finding, so that a log shows when the first finding came (fuzz/progress.py)."""

import io

from fuzz.campaign import Stats
from fuzz.coverage import Coverage
from fuzz.progress import Progress


def test_the_first_finding_prints_a_line_at_once_later_ones_wait_for_the_interval():
    out = io.StringIO()
    p = Progress(out, interval=3600.0, tty=False)
    p.begin(Stats())
    p.update(Stats(programs=5), Coverage())
    assert out.getvalue() == ""                         # within the interval, no finding
    p.update(Stats(programs=9, findings=1), Coverage())
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "programs 9 |" in lines[0] and "findings 1 |" in lines[0]
    p.update(Stats(programs=12, findings=2), Coverage())
    p.update(Stats(programs=15, findings=3), Coverage())
    assert len(out.getvalue().splitlines()) == 1        # later findings: the interval again
    p.finish(Stats(programs=20, findings=3), Coverage())
    assert "findings 3 |" in out.getvalue().splitlines()[-1]

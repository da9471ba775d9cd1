"""The campaign's progress line (standard library only, TTY-aware).

On a terminal the line is rewritten in place with ``\\r`` a few times a second; elsewhere (CI logs,
pipes) a plain line is printed every ``interval`` seconds, and at once when the first finding
arrives (a log shows when it came, not up to ``interval`` seconds later). Both show programs
done, executions per second, findings, errors (those over the oracle's search budget among
them) and undef programs skipped, and coverage of kinds and scope pairs.
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, stream=None, interval: float | None = None, tty: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval = interval if interval is not None else (0.2 if self.tty else 10.0)
        self.start = time.monotonic()
        self.last = self.start
        self.first_execs: int | None = None
        self._width = 0
        self._last_text = ""
        self._first_finding = False     # a line was printed with findings >= 1

    def begin(self, stats) -> None:
        """Start timing now; executions already done (a resumed campaign) do not count."""
        self.start = self.last = time.monotonic()
        self.first_execs = stats.executions

    def line(self, stats, coverage) -> str:
        el = max(time.monotonic() - self.start, 1e-9)
        if self.first_execs is None:
            self.first_execs = stats.executions
        rate = (stats.executions - self.first_execs) / el
        return (f"programs {stats.programs} | {rate:,.0f} exec/s | findings {stats.findings} | "
                f"undef {stats.undef} | errors {stats.errors}"
                + (f" (budget {stats.budget})" if stats.budget else "")
                + f" | {coverage.summary()} | "
                f"{el:.0f}s")

    def update(self, stats, coverage) -> None:
        now = time.monotonic()
        if self.first_execs is None:
            self.first_execs = 0
        first = stats.findings > 0 and not self._first_finding
        if now - self.last < self.interval and not first:
            return
        self._first_finding = self._first_finding or stats.findings > 0
        self.last = now
        self._emit(self.line(stats, coverage))

    def _emit(self, text: str) -> None:
        if text == self._last_text:
            return
        self._last_text = text
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self, stats, coverage) -> None:
        self._emit(self.line(stats, coverage))
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

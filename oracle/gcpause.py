"""Keep the cyclic garbage collector off while the oracle works on one program.

A check allocates thousands of short-lived containers (thread paths, blocks, relation rows, the
search's inputs and outcome rows) that reference counting frees when it returns; they form no
cycles. With the collector on, each 700 net container allocations start a generation-0 pass that
walks them all for nothing: about 3 % of an rc11 conformance check's CPU time
(``benchmarks/conformance.py --suite RC11``; measured in docs/oracle.md). :class:`paused` turns the
collector off for the duration and on again after, only where it found it on: a nested pause, or a
caller that runs with the collector off, is left as it was. The collector's counts go on counting
meanwhile, so whatever does survive (a cycle) is collected by the first pass after.
"""

from __future__ import annotations

import gc


class paused:
    """``with paused(): ...``: the block runs with the cyclic collector off (see the module
    docstring); a class rather than a contextlib generator, which costs a few microseconds a use."""

    __slots__ = ("was_on",)

    def __enter__(self) -> "paused":
        self.was_on = gc.isenabled()
        if self.was_on:
            gc.disable()
        return self

    def __exit__(self, *exc) -> bool:
        if self.was_on:
            gc.enable()
        return False

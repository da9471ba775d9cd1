"""The AMDGPU builder's bound on a test before any search (:attr:`oracle.registry.ModelUnit.size_check`)."""

from __future__ import annotations

from litmus.ir import Test

from oracle.errors import TooManyEvents
from oracle.events import WORD


def check_size(test: Test) -> None:
    """Every instruction of a (straight-line) AMDGPU test gives at least one event and every
    location an initial write: past the AMDGPU event builder's limit (one word per relation row)
    on that lower bound alone, no search (barrier schedules included) can start."""
    n = sum(len([i for i in th.code if i is not None]) for th in test.threads) + len(test.locations)
    if n > WORD:
        raise TooManyEvents(f"{test.name}: program has more than {WORD} events (the AMDGPU event "
                            f"builder's limit): {n} instructions and locations")

"""Property tests over generated programs keep only the *defined* ones (verdict not Undef).

They say so with :func:`hypothesis.assume`, never an early ``return``: Hypothesis then counts each
Undef program as a rejected example and, with its filter health check on (the projects' profiles
leave it on), fails the test loudly when a strategy yields (almost) nothing but Undef programs,
instead of passing on examples that checked nothing.
"""

from __future__ import annotations

from hypothesis import assume

import oracle


def assume_defined(test, model: str | None = None):
    """The oracle's result for ``test``; rejects the example when its verdict is Undef."""
    res = oracle.check(test, model)
    assume(res.verdict != "Undef")
    return res

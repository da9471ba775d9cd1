"""Shared test set-up: paths to the repository's corpora and the conformance suites, Hypothesis
profiles.

Nothing in the suite needs ``../shared`` except the outside conformance suites (Dat3M's, with their
expected verdicts), read from ``$SCOPEFUZZ_CONFORMANCE`` or ``../shared/conformance``; the tests that
need them skip, saying so, in a public clone that has neither.
"""

import os
import pathlib
import sys

import pytest
from hypothesis import HealthCheck, settings

#: the suite is hermetic: ``check``'s verdict cache (litmus/verdicts.py) would carry results from
#: one test, or one run, to the next (a test of the oracle's errors could meet an earlier
#: success); tests/test_verdicts.py turns it on in a directory of its own
os.environ["SCOPEFUZZ_VERDICT_CACHE"] = "off"

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = pathlib.Path(os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
CORPORA = ROOT / "corpora"
DOCS = ROOT / "docs"


def conformance_dir() -> pathlib.Path | None:
    """The conformance suites: ``$SCOPEFUZZ_CONFORMANCE``, else ``../shared/conformance``; None
    when neither is a directory."""
    env = os.environ.get("SCOPEFUZZ_CONFORMANCE")
    for d in ([pathlib.Path(env)] if env else []) + [SHARED / "conformance"]:
        if d.is_dir():
            return d
    return None

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))   # tests/ helpers (strategies)

# Health checks stay on (filter_too_much included: a strategy whose draws are mostly rejected by
# assume() fails loudly) but too_slow, which times data generation: tests run in parallel workers on
# a shared 2-core machine, where that time measures the load, not the strategy.
settings.register_profile("ci", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def conformance():
    """The conformance suites' directory (``C11/``, ``VULKAN/``, ``expected/*.csv``), or a skip
    that says where they were looked for."""
    d = conformance_dir()
    if d is None:
        pytest.skip("conformance suites not found: set SCOPEFUZZ_CONFORMANCE to a directory "
                    f"holding Dat3M's suites and expected/*.csv (looked in {SHARED / 'conformance'})")
    return d

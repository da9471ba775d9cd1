"""Shared test set-up: paths to the repository's corpora and to ../shared, Hypothesis profiles."""

import os
import pathlib
import sys

import pytest
from hypothesis import HealthCheck, settings

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = pathlib.Path(os.environ.get("SCOPEFUZZ_SHARED", ROOT.parent / "shared"))
CORPORA = ROOT / "corpora"

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
def shared():
    if not SHARED.is_dir():
        pytest.fail(f"../shared not found at {SHARED} (set SCOPEFUZZ_SHARED)")
    return SHARED

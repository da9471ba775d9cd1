"""A wall-clock limit on the oracle (issue 17 item 12): ``--timeout`` on ``check``, ``run``,
``explain`` and ``--litmus-timeout`` in the plugin; size limits checked before any search.

A slow oracle is simulated (a check that sleeps): a timed-out test is reported as timed out, never
with a verdict, and the run goes on to the next file.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

import litmus
import oracle
import oracle.check  # noqa: F401,E402  (import oracle alone loads neither numpy nor numba)
import oracle.judge  # noqa: F401,E402
import oracle.query  # noqa: F401,E402
from fuzz.cli import main
from oracle.deadline import Timeout, call_with_timeout

pytest_plugins = ["pytester"]

from test_oracle_cli import SB  # noqa: E402 (relaxed SB, shared with the CLI tests)


#: a slow oracle: the amdgpu unit's event graph builder sleeps on a test named SLOW (every
#: oracle computation, the full check and the outcome queries of ``run``, builds first)
SLOW_BUILDER = """
import dataclasses, time
import oracle.registry

def slow_down(units):
    unit = oracle.registry.get("amdgpu")

    def build(test):
        if test.name == "SLOW":
            time.sleep(600)
        return unit.build(test)

    units["amdgpu"] = dataclasses.replace(unit, build=build)
"""
_ns: dict = {}
exec(SLOW_BUILDER, _ns)
#: SB named SLOW, with one more location: not a cached answer of SB (caches ignore the name)
SLOW_SB = SB.replace("AMDGPU SB", "AMDGPU SLOW").replace("y = 0; }", "y = 0; z = 0; }")


@pytest.fixture
def slow_oracle(monkeypatch, tmp_path):
    import oracle.registry
    oracle.check(litmus.parse(SB))      # compiled here, so the forked child only looks it up
    units = dict(oracle.registry._UNITS)
    _ns["slow_down"](units)
    monkeypatch.setattr(oracle.registry, "_UNITS", units)
    (tmp_path / "a_slow.litmus").write_text(SLOW_SB)
    (tmp_path / "b_sb.litmus").write_text(SB)
    return tmp_path


def test_call_with_timeout_returns_raises_and_stops():
    assert call_with_timeout(sum, 30, [1, 2, 3]) == 6
    with pytest.raises(ZeroDivisionError):
        call_with_timeout(lambda: 1 // 0, 30)
    t = time.monotonic()
    with pytest.raises(Timeout) as e:
        call_with_timeout(time.sleep, 0.5, 60)
    assert "timed out after 0.5 s (no verdict)" == str(e.value)
    assert time.monotonic() - t < 50           # stopped, not waited for


def test_check_timeout_is_reported_not_a_verdict(slow_oracle, capsys):
    assert main(["check", "--timeout", "20", str(slow_oracle)]) == 2
    out = capsys.readouterr()
    assert out.err.strip() == f"{slow_oracle / 'a_slow.litmus'}:1:1: SLOW: timed out after 20 s " \
                              "(no verdict)"
    assert out.out.startswith("SB  Ok")        # the next file was checked
    assert "SLOW" not in out.out
    assert main(["check", "--json", "--timeout", "20", str(slow_oracle)]) == 2
    first, second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert first["timeout"] is True and "verdict" not in first and second["verdict"] == "Ok"


def test_run_timeout(slow_oracle, capsys):
    assert main(["run", "--backend", "sim", "--iterations", "100", "--timeout", "20", "--json",
                 str(slow_oracle / "a_slow.litmus")]) == 2
    (obj,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert obj["timeout"] is True and "timed out after 20 s" in obj["error"]


@pytest.mark.parametrize("value", ["0", "-1", "nan", "x"])
def test_bad_timeout_is_rejected(value, capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", "--timeout", value, "f.litmus"])
    assert e.value.code == 2 and "--timeout" in capsys.readouterr().err


def test_size_is_checked_before_any_search(monkeypatch):
    """1,000 threads: refused at once, before the builder (and its barrier-schedule search)."""
    def no_build(unit, test):
        raise AssertionError("the builder ran")
    monkeypatch.setattr(sys.modules["oracle.check"], "pre_executions", no_build)
    cols = 1000
    text = ("AMDGPU wide\n{ x = 0; }\n " + " | ".join(f"P{i}" for i in range(cols)) + " ;\n "
            + " | ".join("st.atom x, 1" for _ in range(cols)) + " ;\nexists (x == 1)\n")
    with pytest.raises(oracle.OracleError) as e:
        oracle.check(litmus.parse(text))
    assert "more than 64 events" in str(e.value)


def test_plugin_litmus_timeout(pytester):
    pytester.makeconftest(SLOW_BUILDER + "\nslow_down(oracle.registry._UNITS)\n")
    pytester.makefile(".litmus", slow=SLOW_SB, sb=SB)
    r = pytester.runpytest_subprocess("--litmus", "--litmus-backend=none", "--litmus-timeout=20",
                                      str(pytester.path))
    r.assert_outcomes(passed=1, failed=1)
    r.stdout.fnmatch_lines(["*SLOW: the oracle timed out after 20 s (no verdict) (--litmus-timeout)*"])

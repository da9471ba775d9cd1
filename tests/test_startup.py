"""Start-up: a check loads its own model unit only, the oracle's compiled code is loaded before the
clock of ``check`` starts (``seconds`` is the test's own time), and the warm-up loads every
compiled entry point of the check and the explanation."""

import importlib
import json
import os
import subprocess
import sys
import time

import litmus.dialect
import oracle
import oracle.registry
import oracle.warmup
from litmus import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_check_imports_its_own_unit_only():
    got = json.loads(_python(
        "import json, sys, oracle\n"
        "from litmus import parse\n"
        "from litmus.dialect import get\n"
        "oracle.check(parse(get('C').sample))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('oracle.models.'))))\n"))
    assert "oracle.models.rc11" in got
    # not the other units, nor the readable-form executions (the PTX builder and the tests'
    # references use them)
    assert not [m for m in got if m.startswith(("oracle.models.amdgpu", "oracle.models.vulkan"))]
    assert "oracle.models.path_executions" not in got


def test_seconds_leave_out_the_warm_up(monkeypatch):
    """Whatever the warm-up costs (loading or compiling machine code), it happens before the
    check's clock starts."""
    test = parse(litmus.dialect.get("C").sample.replace("warmup", "warmup-timing"))
    oracle.warmup.ready(oracle.registry.get("rc11"))       # what the stand-in below replaces
    calls = []

    def slow_ready(unit):
        calls.append(unit.name)
        time.sleep(0.5)

    # (the module: ``oracle.check`` is also the package's function)
    monkeypatch.setattr(importlib.import_module("oracle.check"), "ready", slow_ready)
    oracle.clear_cache()
    res = oracle.check(test)
    assert calls == ["rc11"]
    assert res.seconds < 0.5


def test_warm_loads_every_compiled_entry_point():
    # a fresh process: nothing is loaded until warm() runs
    got = json.loads(_python(
        "import json\n"
        "from oracle.warmup import warm\n"
        "from oracle import engine, explore\n"
        "from oracle.models.amdgpu import static\n"
        "before = [len(f.signatures) for f in (explore.search_one_word, explore.search_words, engine.eval_rows_one_word, static.derive)]\n"
        "names = warm()\n"
        "after = [len(f.signatures) for f in (explore.search_one_word, explore.search_words, engine.eval_rows_one_word, static.derive)]\n"
        "from oracle.registry import names as registered\n"
        "print(json.dumps([names, before, after, registered()]))\n"))
    names, before, after, registered = got
    # every registered model has a warm-up program of its dialect
    assert sorted(names) == sorted(registered)
    assert {"amdgpu", "rc11", "c11", "vulkan", "opencl", "ptx", "ptx60"} <= set(names)
    assert before == [0, 0, 0, 0]
    assert all(after)


#: what ``scopefuzz check`` must not import: the OpenCL and simulator stacks, Hypothesis and the
#: campaign machinery (each costs start-up time and none of it is used)
NOT_FOR_CHECK = ("pyopencl", "hypothesis", "hw.sim", "hw.opencl", "fuzz.strategies",
                 "fuzz.campaign")


def test_the_check_command_imports_only_what_it_uses(tmp_path):
    path = tmp_path / "mp.litmus"
    path.write_text(litmus.dialect.get("C").sample)
    got = json.loads(_python(
        "import contextlib, io, json, sys\n"
        "from fuzz.cli import main\n"
        "from litmus import about\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    status = main(['check', {str(path)!r}])\n"
        "print(json.dumps([status, out.getvalue(), sorted(sys.modules),\n"
        "                  about.version.cache_info().misses,\n"
        "                  about.git_revision.cache_info().misses]))\n"))
    status, printed, modules, version_asked, git_asked = got
    # the version line (distribution metadata, two git runs) is worked out for --version only
    assert version_asked == git_asked == 0
    assert status == 0 and printed.startswith("warmup  No")
    loaded = [m for m in modules if m.split(".")[0] in ("pyopencl", "hypothesis")
              or m.startswith(NOT_FOR_CHECK[2:])]
    assert loaded == []
    # its own model unit (and the path tables it builds with), not the others, nor the
    # readable-form executions, nor explanations
    assert not [m for m in modules if m.startswith(("oracle.models.amdgpu", "oracle.models.vulkan",
                                                    "oracle.models.path_executions",
                                                    "oracle.explanation"))]


def test_the_command_table_names_the_module_registering_each_command():
    import argparse

    from fuzz.cli import COMMAND_MODULES, COMMANDS
    registered = {}
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(sub)
        registered.update({command: name for command in sub.choices})
    assert registered == COMMANDS


def test_a_check_loads_its_compiled_code_without_numbas_registries(tmp_path):
    """A check whose compiled code is in numba's cache loads it without numba importing and
    installing its implementation registries (litmus.jitcache.load_lightly: a third of a short
    ``scopefuzz check``), gives the same result as a process that filled them, and numba still
    compiles new code in that process afterwards (its compiler fills them itself)."""
    path = tmp_path / "mp.litmus"
    path.write_text(litmus.dialect.get("C").sample)
    code = (
        "import json, sys\n"
        "import oracle\n"
        "from litmus import parse_file\n"
        f"res = oracle.check(parse_file({str(path)!r}))\n"
        "light = 'numba.np.arraymath' not in sys.modules and 'numba.typed.dictimpl' not in sys.modules\n"
        "import numpy as np\n"
        "from numba import njit\n"
        "@njit\n"
        "def later(a):\n"
        "    d = {1: 2}\n"
        "    return np.sort(a)[0] + d[1], len(str(345))\n"
        "print(json.dumps([light, res.verdict, list(res.states), res.candidates, res.consistent,\n"
        "                  *later(np.array([3, 1, 2]))]))\n")
    _python(code)                    # fills numba's cache if this checkout's is empty
    light, verdict, states, candidates, consistent, low, n = json.loads(_python(code))
    assert light
    assert low == 3 and n == 3
    # the message-passing sample under rc11, by hand: r0 reads y = 0 or 1, r1 x = 0 or 1, but
    # r0 = 1 (synchronizing with the release) forces r1 = 1; finals x = y = 1
    got = sorted((s["P1:r0"], s["P1:r1"], s["x"], s["y"]) for s in states)
    assert got == [(0, 0, 1, 1), (0, 1, 1, 1), (1, 1, 1, 1)] and verdict == "No"
    # the same counts as a process whose registries numba filled before the load
    full = json.loads(_python(
        "import json\n"
        "from numba import njit\n"
        "njit(lambda: 1)()\n"
        "import oracle\n"
        "from litmus import parse_file\n"
        f"res = oracle.check(parse_file({str(path)!r}))\n"
        "print(json.dumps([res.verdict, list(res.states), res.candidates, res.consistent]))\n"))
    assert full == [verdict, states, candidates, consistent]


def test_version_prints_on_stdout():
    """``--version``, worked out when asked for (:class:`fuzz.cli._Version`), prints the version
    line on stdout and exits 0, as argparse's own version action did."""
    out = subprocess.run([sys.executable, "-m", "fuzz.cli", "--version"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.startswith("scopefuzz ") and out.stderr == ""

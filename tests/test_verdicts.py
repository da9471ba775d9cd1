"""The verdict cache of ``scopefuzz check`` (litmus/verdicts.py): a file checked before with the
same code is answered without the oracle, with exactly the output the oracle gave; anything that
could change the answer (the text, the model, the code) misses; a hit loads neither numpy nor
numba."""

import contextlib
import glob
import importlib
import io
import json
import os
import subprocess
import sys

import pytest

from fuzz.cli import main
from litmus import verdicts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFORMANCE = "/work/shared/conformance"

#: a few files of every dialect with a model in the corpora (small state sets)
FILES = (sorted(glob.glob(os.path.join(ROOT, "corpora", "classic", "*", "*.litmus")))[:6]
         + sorted(glob.glob(os.path.join(ROOT, "corpora", "ptx", "*.litmus")))[:4]
         + sorted(glob.glob(os.path.join(ROOT, "corpora", "opencl", "**", "*.litmus"),
                            recursive=True))[:3]
         + sorted(glob.glob(os.path.join(ROOT, "corpora", "tileir", "**", "*.litmus"),
                            recursive=True))[:2])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "verdicts"
    monkeypatch.setenv(verdicts.ENV, str(d))
    return d


def _run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _no_oracle(monkeypatch):
    """From now on the oracle's check fails the test if it is called."""
    def refuse(*a, **k):
        raise AssertionError("the oracle was called")
    monkeypatch.setattr(importlib.import_module("oracle.check"), "check", refuse)


def _entries(cache) -> list[str]:
    return glob.glob(str(cache / "*" / "*.json"))


def _strip_seconds(text: str) -> list:
    return [{k: v for k, v in json.loads(ln).items() if k != "seconds"}
            for ln in text.splitlines()]


@pytest.mark.parametrize("options", [["--json"], ["--states"], []])
def test_a_hit_prints_exactly_what_the_oracle_printed(cache, monkeypatch, options):
    assert len(FILES) >= 10
    first = _run(["check", *options, *FILES])
    assert len(_entries(cache)) == len(FILES)
    _no_oracle(monkeypatch)
    again = _run(["check", *options, *FILES])
    assert again == first
    if options == ["--json"]:
        # and what the oracle prints with the cache off (apart from the seconds it took)
        monkeypatch.undo()
        monkeypatch.setenv(verdicts.ENV, "off")
        off = _run(["check", *options, *FILES])
        assert off[0] == first[0] and _strip_seconds(off[1]) == _strip_seconds(first[1])


MP_C = """C mp
{ [x] = 0; [y] = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (1:r0=1 /\\ 1:r1=0)
"""


def test_the_text_the_model_and_the_code_are_the_key(cache, monkeypatch, tmp_path):
    path = tmp_path / "t.litmus"
    text = MP_C
    path.write_text(text)
    _run(["check", "--json", str(path)])
    assert len(_entries(cache)) == 1
    calls = []
    check_module = importlib.import_module("oracle.check")
    real = check_module.check

    def counting(*a, **k):
        calls.append(a[1] if len(a) > 1 else k.get("model"))
        return real(*a, **k)

    monkeypatch.setattr(check_module, "check", counting)
    # the same text: a hit
    _run(["check", "--json", str(path)])
    assert calls == []
    # a comment added: another text, computed and stored
    path.write_text(text + "\n(* a comment *)\n")
    _run(["check", "--json", str(path)])
    assert len(calls) == 1 and len(_entries(cache)) == 2
    # the dialect's default model (rc11) named: the same key
    _run(["check", "--json", "--model", "rc11", str(path)])
    assert len(calls) == 1
    # another model of the dialect: another key
    _run(["check", "--json", "--model", "c11", str(path)])
    assert calls[-1] == "c11" and len(calls) == 2 and len(_entries(cache)) == 3
    # other code (a changed source of litmus or oracle): every entry misses
    monkeypatch.setattr(verdicts, "_DIGEST", ["0" * 64])
    _run(["check", "--json", str(path)])
    assert len(calls) == 3


def test_a_damaged_entry_is_a_miss(cache, monkeypatch, tmp_path):
    path = tmp_path / "t.litmus"
    path.write_text(open(FILES[1]).read())
    status, out, _ = _run(["check", "--json", str(path)])
    (entry,) = _entries(cache)
    with open(entry, "w") as f:
        f.write('{"format": 1, "key": "')
    again = _run(["check", "--json", str(path)])
    # (the seconds differ: in this process the oracle's own result cache answers the miss)
    assert again[0] == status and again[2] == "" and _strip_seconds(again[1]) == _strip_seconds(out)
    # rewritten whole by the miss
    assert json.load(open(entry))["result"]["verdict"] == json.loads(out)["verdict"]


def test_errors_are_not_stored(cache, tmp_path):
    bad = tmp_path / "bad.litmus"
    bad.write_text("AMDGPU bad\n{ x = 0; }\n P0 ;\n ld.nonsense r0, x ;\nexists (P0:r0 == 1)\n")
    status, _, err = _run(["check", str(bad)])
    assert status == 2 and err.startswith(str(bad))
    assert _entries(cache) == []


def test_off_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(verdicts.ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _run(["check", FILES[0]])
    assert verdicts.cache_root() is None
    assert not list(tmp_path.rglob("*.json"))


def test_the_suite_runs_with_the_cache_off():
    # tests/conftest.py: no test sees another's (or an earlier run's) results
    assert os.environ.get(verdicts.ENV) == "off"


def test_a_hit_loads_neither_numpy_nor_numba(cache, tmp_path):
    path = tmp_path / "t.litmus"
    path.write_text(open(FILES[2]).read())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=ROOT)
    env[verdicts.ENV] = str(cache)
    code = ("import json, sys\nfrom fuzz.cli import main\n"
            f"status = main(['check', {str(path)!r}])\n"
            "print(json.dumps([status, sorted(m for m in sys.modules\n"
            "                  if m.split('.')[0] in ('numpy', 'numba', 'multiprocessing'))]))\n")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (r.stdout.splitlines() for r in runs)
    assert first[0] == second[0]                      # the same line printed
    assert "numba" in json.loads(first[-1])[1]        # the first run ran the oracle
    assert json.loads(second[-1]) == [0, []]          # the second did not load it at all

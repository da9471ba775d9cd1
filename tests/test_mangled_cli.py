"""Hostile input (issue 33): ``fmt`` and ``check`` on mangled real litmus files keep the error
contract -- exit 0, 1 or 2, every stderr line ``path:line:col: reason`` or ``path: reason``, never a
traceback -- and special files (FIFO, devices, over-size files, huge integers, deep nesting) are
refused with one located line. The out-of-process sweep over tens of thousands of variants is
benchmarks/mangle_sweep.py."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fuzz.cli import main
from mangling import KINDS, error_line_ok, mangle

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = sorted(str(p) for d in ("classic", "ptx", "opencl", "barrier", "thinair")
                for p in (ROOT / "corpora" / d).rglob("*.litmus"))[::7]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def assert_contract(status: int, out: str, err: str, path: str) -> None:
    assert status in (0, 1, 2), (status, err)
    assert "Traceback" not in out + err
    for line in err.splitlines():
        assert error_line_ok(line, path), line


def test_corpus_sample_is_real():
    assert len(CORPUS) >= 10


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=st.sampled_from(CORPUS or ["-"]), kind=st.sampled_from(sorted(KINDS)),
       seed=st.integers(0, 2**32 - 1))
def test_mangled_files_keep_the_error_contract(tmp_path_factory, src, kind, seed):
    data = mangle(pathlib.Path(src).read_bytes(), kind, seed)
    path = str(tmp_path_factory.mktemp("m") / "t.litmus")
    pathlib.Path(path).write_bytes(data)
    assert_contract(*run_cli(["fmt", path]), path)
    assert_contract(*run_cli(["check", "--timeout", "20", path]), path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifo_is_refused_before_reading(tmp_path):
    fifo = tmp_path / "d" / "f.litmus"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    for argv in (["fmt", str(fifo)], ["check", str(fifo.parent)]):
        status, _, err = run_cli(argv)
        assert status == 2
        assert err == f"{fifo}:1:1: not a regular file (a FIFO): only regular files are read\n"


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused(dev):
    if not os.path.exists(dev):
        pytest.skip(f"{dev} absent")
    status, _, err = run_cli(["check", dev])
    assert status == 2 and err.startswith(f"{dev}:1:1: not a regular file (a character device)")


def test_size_cap_names_the_cap_and_the_variable(tmp_path, monkeypatch):
    path = tmp_path / "big.litmus"
    path.write_text("AMDGPU big\n" + " " * 5000)
    monkeypatch.setenv("SCOPEFUZZ_MAX_FILE_BYTES", "4096")
    status, _, err = run_cli(["fmt", str(path)])
    assert status == 2
    assert err == (f"{path}:1:1: file of 5011 bytes is over the 4096-byte limit on litmus files "
                   "(raise it with SCOPEFUZZ_MAX_FILE_BYTES)\n")


MP = ROOT / "corpora" / "classic" / "MP"


def _mp() -> pathlib.Path:
    return sorted(MP.glob("*.litmus"))[0]


def test_integer_of_thousands_of_digits_is_located(tmp_path):
    text = _mp().read_text()
    k = text.index("st.atom")
    k = text.index("1", k)
    path = tmp_path / "t.litmus"
    path.write_text(text[:k] + "9" * 5000 + text[k + 1:])
    line = text[:k].count("\n") + 1
    col = k - text.rfind("\n", 0, k)
    status, _, err = run_cli(["check", str(path)])
    assert status == 2
    assert err == (f"{path}:{line}:{col}: integer of 5000 characters is out of range (signed "
                   f"64-bit: -9223372036854775808..9223372036854775807)\n")


def test_long_comment_is_blanked(tmp_path):
    text = _mp().read_text()
    head, rest = text.split("\n", 1)
    path = tmp_path / "t.litmus"
    path.write_text(head + "\n(* " + "x" * 2_000_000 + " *)\n" + rest)
    assert run_cli(["fmt", str(path)])[1] == run_cli(["fmt", str(_mp())])[1]


def test_herd_states_are_the_conditions_observables_without_undef():
    status, out, _ = run_cli(["check", "--format", "herd", str(_mp())])
    assert status == 0
    lines = out.splitlines()
    n = int(lines[1].split()[1])
    states = lines[2:2 + n]
    cond = next(l for l in lines if l.startswith("Condition "))
    keys = set(re.findall(r"(\d+:r\d+|\b[a-z]\w*)=", cond))
    for s in states:
        assert "undef" not in s
        assert {kv.split("=")[0] for kv in s.split("; ") if kv} == keys, s


def test_text_check_names_the_model():
    status, out, _ = run_cli(["check", str(_mp())])
    assert status == 0 and "(model amdgpu, " in out


def test_explain_defaults_to_the_condition():
    text = _mp().read_text()
    cond = re.search(r"exists \((.*)\)", text).group(1)
    status, out, _ = run_cli(["explain", str(_mp())])
    assert status == 0
    assert f"outcome {cond} is" in out.splitlines()[0]


@pytest.mark.parametrize("old,new", [
    ("st.release.gpu y, 1 ", "st.release.gpu y, 9223372036854775806"),
    ("atom.relaxed.gpu.add r2, y, 1", "atom.relaxed.gpu.add r2, y, 9223372036854775807")])
def test_in_range_64_bit_values_wrap_instead_of_overflowing(tmp_path, old, new):
    """An atom.add on a value near 2^63 wraps (two's complement, as a 64-bit atomic does) instead
    of overflowing the oracle's int64 tables."""
    text = (ROOT / "corpora" / "ptx" / "MP+rmwchain.gpu.xcta.litmus").read_text()
    assert old in text
    path = tmp_path / "t.litmus"
    path.write_text(text.replace(old, new))
    status, out, err = run_cli(["check", "--json", str(path)])
    assert status == 0, err
    ys = {s["y"] for s in json.loads(out)["states"]}
    if "add" in new:                      # 1 + (2^63 - 1) wraps to -2^63
        assert ys == {1, -(1 << 63)}
    else:                                 # (2^63 - 2) + 1 = 2^63 - 1, in range
        assert ys == {9223372036854775806, 9223372036854775807}


def test_wrap64():
    from litmus.cfg import wrap64
    assert wrap64((1 << 63) - 1) == (1 << 63) - 1
    assert wrap64(1 << 63) == -(1 << 63)
    assert wrap64(-(1 << 63) - 1) == (1 << 63) - 1
    assert wrap64((1 << 64) + 5) == 5


@pytest.mark.parametrize("exc,status,reason", [
    (MemoryError(), 2, "out of memory: the test is too large to handle within the memory available"),
    (RecursionError("maximum recursion depth exceeded"), 2,
     "the test nests too deeply to handle (recursion limit)"),
    (OverflowError("Python int too large to convert to C long"), 5,
     "internal error: OverflowError: Python int too large to convert to C long (a bug in "
     "scopefuzz; please report it with this file)")])
def test_unexpected_exceptions_are_one_line_with_their_own_status(monkeypatch, exc, status,
                                                                   reason):
    import importlib
    check_module = importlib.import_module("oracle.check")

    def boom(*a, **k):
        raise exc
    monkeypatch.setattr(check_module, "check", boom)
    path = str(_mp())
    got, out, err = run_cli(["check", path, path])
    assert got == status and out == ""
    assert err == f"{path}: {reason}\n" * 2


def test_main_turns_an_escaped_exception_into_one_line(monkeypatch):
    import litmus.commands

    def boom(args):
        raise KeyError("x")
    monkeypatch.setattr(litmus.commands, "cmd_fmt", boom)
    status, _, err = run_cli(["fmt", str(_mp())])
    assert status == 5
    assert err == ("scopefuzz fmt: internal error: KeyError: 'x' (a bug in scopefuzz; please "
                   "report it with this file)\n")

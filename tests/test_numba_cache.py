"""Numba's cache in unfriendly places (issue 17 items 4 and 5): a read-only install run by a user
without a writable home still works (a private temporary cache, said on stderr; no cache at all
when nothing can be written), and a run that compiles says so once, while one that loads from the
cache says nothing.

Each case runs a fresh Python on a copy of the packages or with its own cache directory, and
compiles one small function of the oracle (``oracle.models.amdgpu.static.avail_rank``) rather
than the whole engine."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: run the packages from PKG (first on sys.path; an editable install's finder set aside)
PRELUDE = """import sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path.insert(0, {pkg!r})
"""
#: compile (or load) one small compiled function of the oracle
CALL = """import oracle.models.amdgpu.static as s
assert s.__file__.startswith({pkg!r}), s.__file__
print(s.avail_rank(4, True), s.avail_rank(4, False))
"""


def _run(code: str, env: dict, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _env(**changes) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(changes)
    return env


def _read_only_copy(tmp_path) -> str:
    """The packages copied, with every ``__pycache__`` a plain file: numba cannot cache next to
    them (not even as root, which file permissions would not stop)."""
    pkg = tmp_path / "pkg"
    for name in ("litmus", "oracle"):
        shutil.copytree(os.path.join(ROOT, name), pkg / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for d, _, _ in list(os.walk(pkg)):
        with open(os.path.join(d, "__pycache__"), "w") as f:
            f.write("not a directory\n")
    return str(pkg)


def _homeless(tmp_path) -> str:
    """A home whose ``.cache`` is a file: numba's user-wide cache cannot be made there."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".cache").write_text("not a directory\n")
    return str(home)


def test_read_only_install_without_a_home_caches_in_a_private_temporary_directory(tmp_path):
    pkg = _read_only_copy(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = _env(HOME=_homeless(tmp_path), TMPDIR=str(tmp))
    out = _run(PRELUDE.format(pkg=pkg) + CALL.format(pkg=pkg), env, str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "4"]   # LDS: the workgroup (rank 2); else its own (agent, 4)
    cache = tmp / f"scopefuzz-numba-{os.getuid()}"
    assert f"caching compiled code in {cache}" in out.stderr
    assert list(cache.rglob("static.avail_rank-*.nbi"))  # the function went to that cache
    assert cache.stat().st_uid == os.getuid() and oct(cache.stat().st_mode & 0o777) == "0o700"
    # the next run loads it from there, silently about compiling
    again = _run(PRELUDE.format(pkg=pkg) + CALL.format(pkg=pkg), env, str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert "compiling" not in again.stderr


def test_nothing_writable_means_no_cache_and_says_so(tmp_path):
    pkg = _read_only_copy(tmp_path)
    blocked = tmp_path / "tmp-is-a-file"
    blocked.write_text("")
    code = (PRELUDE.format(pkg=pkg) + f"import tempfile\ntempfile.tempdir = {str(blocked)!r}\n"
            + CALL.format(pkg=pkg))
    out = _run(code, _env(HOME=_homeless(tmp_path)), str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "4"]
    assert "compiled code is not cached" in out.stderr
    assert "compiling the oracle (1 function, every run: no writable cache directory)" \
        in out.stderr


def test_a_compile_is_announced_once_and_a_load_from_the_cache_is_silent(tmp_path):
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    code = PRELUDE.format(pkg=ROOT) + CALL.format(pkg=ROOT)
    first = _run(code, env, ROOT)
    assert first.returncode == 0, first.stderr
    lines = [ln for ln in first.stderr.splitlines() if "compil" in ln]
    # avail_rank calls no other compiled function: one function, then the last line
    assert lines[0] == ("scopefuzz: compiling the oracle into numba's cache (1 function, first "
                        "run only; `scopefuzz warm` compiles everything ahead)")
    assert len(lines) == 2 and lines[1].startswith("scopefuzz: compiled the oracle: 1 function in ")
    second = _run(code, env, ROOT)
    assert second.returncode == 0, second.stderr
    assert "compil" not in second.stderr


def test_cache_saves_wait_for_the_lock_other_processes_hold(tmp_path):
    """Several processes fill one numba cache at once (a campaign's helper, ``warm``'s parts);
    numba's save (read the index, pick a data file number, write both) is not atomic, so every
    save holds an exclusive lock on one file of the cache directory (litmus/jitcache.py
    ``serialize_saves``): while another holder has it, a save waits, then completes."""
    import fcntl
    import threading

    from numba.core.caching import IndexDataCacheFile

    from litmus.jitcache import SAVE_LOCK, serialize_saves
    serialize_saves()
    f = IndexDataCacheFile(str(tmp_path), "f-1.py311", "stamp")
    fd = os.open(str(tmp_path / SAVE_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)          # as another process saving would
    th = threading.Thread(target=f.save, args=(("sig", "magic"), b"code"), daemon=True)
    th.start()
    th.join(1.0)
    try:
        assert th.is_alive()                # waiting for the lock: nothing written yet
        assert not (tmp_path / "f-1.py311.nbi").exists()
    finally:
        os.close(fd)                        # releases the lock
    th.join(30)
    assert not th.is_alive()
    assert f.load(("sig", "magic")) == b"code"


def test_a_group_of_explicit_compiles_is_announced_as_one(tmp_path):
    """``litmus.jitprogress.group``: a share of functions compiled one after the other with
    explicit signatures (oracle/warmup.py ``compile_share``) says one first line counting all
    of them and one last line, not a pair of lines per compile; the functions compiled are
    counted (``compiled``) once each, whatever their number of signatures."""
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    code = PRELUDE.format(pkg=ROOT) + (
        "from numba import types\n"
        "import oracle.models.amdgpu.static as s\n"
        "from litmus.jitprogress import compiled, group, label\n"
        "label('oracle', 'a share')\n"
        "with group('oracle', [s.avail_rank]):\n"
        "    s.avail_rank.compile((types.int64, types.boolean))\n"
        "    s.avail_rank.compile((types.int32, types.boolean))\n"
        "print(compiled('oracle'), len(s.avail_rank.signatures))\n")
    first = _run(code, env, ROOT)
    assert first.returncode == 0, first.stderr
    lines = [ln for ln in first.stderr.splitlines() if "compil" in ln]
    assert lines[0] == ("scopefuzz: compiling the oracle (a share) into numba's cache (1 function, "
                        "first run only; `scopefuzz warm` compiles everything ahead)")
    assert len(lines) == 2 and lines[1].startswith("scopefuzz: compiled the oracle (a share): "
                                                   "1 function in ")
    assert first.stdout.split() == ["1", "2"]
    second = _run(code, env, ROOT)
    assert second.returncode == 0, second.stderr
    assert "compil" not in second.stderr and second.stdout.split() == ["0", "2"]

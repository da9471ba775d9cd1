"""A first run (issue 33, "First run fast"): it compiles only what the command uses, says what it
compiles and how far along while it does, and code that other processes compiled into the shared
cache is loaded, not compiled again.

Each case runs a fresh Python with its own numba cache directory (``NUMBA_CACHE_DIR``). To keep
the cases short, the caches are seeded with this checkout's compiled search (the part every
check shares, minutes to compile) and what is left to compile is the AMDGPU builder's pass
(``oracle/models/amdgpu/static.py``: ``derive`` and the five functions it calls) or the
symmetric-program closure (``oracle/symmetry.py: _close`` and the two it calls)."""

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from litmus.jitprogress import reachable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "oracle")
AMDGPU = os.path.join(ORACLE, "models", "amdgpu")

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

MP_AMDGPU = """AMDGPU mp
{ x = 0; y = 0; }
 P0@wg 0                | P1@wg 1                   ;
 st.atom.agent x, 1     | ld.atom.acq.agent r0, y   ;
 st.atom.rel.agent y, 1 | ld.atom.agent r1, x       ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
"""


def _env(cache) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = ROOT
    return env


def _python(code: str, env: dict) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    return out


def _subpath(package_dir: str) -> str:
    from numba.core.caching import _CacheLocator
    return _CacheLocator.get_suitable_cache_subpath(os.path.join(package_dir, "x.py"))


@pytest.fixture(scope="module")
def search_cache(tmp_path_factory):
    """A numba cache directory holding the oracle's compiled search and nothing else of the
    oracle (no AMDGPU builder, no symmetric closure, no explanation-only code)."""
    from litmus.jitcache import cache_dir
    # this checkout's cache, filled if empty (a rc11 check loads or compiles the search)
    _python("from oracle.warmup import part_search; part_search()",
            {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
            | {"PYTHONPATH": ROOT})
    src = cache_dir(ORACLE)
    assert src is not None
    cache = tmp_path_factory.mktemp("numba-cache")
    dst = cache / _subpath(ORACLE)
    dst.mkdir(parents=True)
    for f in glob.glob(os.path.join(src, "*")):
        name = os.path.basename(f)
        if name.startswith("symmetry.") or name.endswith((".pyc",)) or os.path.isdir(f):
            continue
        shutil.copy2(f, dst / name)
    assert glob.glob(str(dst / "explore.search_one_word-*.nbi"))
    return cache


def _fresh(search_cache, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(search_cache, cache)
    return cache


def _compile_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "compil" in ln]


def test_reachable_follows_the_calls_in_the_code():
    from oracle.models.amdgpu import static
    from oracle import symmetry
    got = {f"{d.py_func.__module__.rsplit('.', 1)[-1]}.{d.py_func.__name__}"
           for d in reachable(static.derive)}
    # derive calls these (static.py), and they call only _bit (engine.py)
    assert got == {"static.derive", "static.avail_rank", "static._async_order",
                   "static._static_pruning", "static._undef_ok", "engine._bit"}
    got = {d.py_func.__name__ for d in reachable(symmetry._close)}
    # explore.py's set-of-rows helpers, and the hash they inline
    assert got == {"_close", "_find", "_insert", "_row_hash"}


def test_a_c_check_compiles_nothing_of_the_amdgpu_model(search_cache, tmp_path):
    cache = _fresh(search_cache, tmp_path)
    path = tmp_path / "mp.litmus"
    path.write_text(MP_C)
    out = _python("import sys\nfrom fuzz.cli import main\n"
                  f"sys.exit(main(['check', {str(path)!r}]))", _env(cache))
    assert out.stdout.startswith("mp  No  (model rc11,")
    assert _compile_lines(out.stderr) == []          # the search loads: nothing compiles
    assert not glob.glob(str(cache / "**" / "static.*"), recursive=True)


def test_an_amdgpu_check_compiles_its_builder_only_and_says_so(search_cache, tmp_path):
    cache = _fresh(search_cache, tmp_path)
    path = tmp_path / "mp.litmus"
    path.write_text(MP_AMDGPU)
    code = ("import sys\nfrom fuzz.cli import main\n"
            f"sys.exit(main(['check', {str(path)!r}]))")
    out = _python(code, _env(cache))
    assert out.stdout.startswith("mp  No  (model amdgpu,")
    lines = _compile_lines(out.stderr)
    # derive and the four others of static.py it calls, and engine._bit unless the seeded
    # cache has it (the search may use it)
    n = 5 if glob.glob(str(cache / "**" / "engine._bit-*.nbi"), recursive=True) else 6
    # the first line: what, for which model, how many functions
    assert lines[0] == ("scopefuzz: compiling the oracle (model amdgpu) into numba's cache "
                        f"({n} functions, first run only; `scopefuzz warm` compiles everything "
                        "ahead)")
    assert lines[-1].startswith(f"scopefuzz: compiled the oracle (model amdgpu): {n} functions in ")
    for ln in lines[1:-1]:
        assert ln.startswith("scopefuzz: compiling the oracle (model amdgpu): ") \
            and f" of {n} functions, " in ln
    files = {os.path.basename(f).split("-")[0]
             for f in glob.glob(str(cache / "**" / "*.nbi"), recursive=True)}
    assert {"static.derive", "static.avail_rank", "static._async_order",
            "static._static_pruning", "static._undef_ok", "engine._bit"} <= files
    assert not [f for f in files if f.startswith(("symmetry.", "kernel."))]
    # the next run loads it all: silent
    again = _python(code, _env(cache))
    assert _compile_lines(again.stderr) == []
    assert again.stdout.split("(")[0] == out.stdout.split("(")[0]


def test_parts_compiled_by_other_processes_load_here_without_compiling(search_cache, tmp_path):
    """``scopefuzz warm``'s parallel parts: two processes compile the AMDGPU builder and the
    symmetric closure into the shared cache at the same time; this process then loads both."""
    cache = _fresh(search_cache, tmp_path)
    out = _python(
        "import json\n"
        "from fuzz.warm import compile_parts, uncached_parts\n"
        "said = []\n"
        "before = uncached_parts(['amdgpu', 'symmetry', 'search'])\n"
        "failed = compile_parts(['amdgpu', 'symmetry'], 2, said.append)\n"
        "after = uncached_parts(['amdgpu', 'symmetry', 'search'])\n"
        "from oracle.warmup import part_amdgpu, part_symmetry\n"
        "part_amdgpu(); part_symmetry()\n"
        "from litmus.jitprogress import compiled\n"
        "print(json.dumps([before, failed, after, said, compiled('oracle')]))\n", _env(cache))
    before, failed, after, said, here = json.loads(out.stdout.splitlines()[-1])
    assert before == ["amdgpu", "symmetry"] and failed == [] and after == []
    assert len(said) == 2 and said[0].startswith("part 1 of 2 done: ") \
        and said[1].startswith("part 2 of 2 done: ")
    assert here == 0
    # each child said what it compiled
    assert "compiling the oracle (the AMDGPU builder) into numba's cache" in out.stderr
    assert "compiling the oracle (symmetric programs) into numba's cache" in out.stderr


def test_pytest_litmus_compiles_at_session_start_and_shows_it(search_cache, tmp_path):
    """``pytest --litmus``: the controller compiles the models of the files in scope before the
    first test, with pytest's capture off (the lines reach the terminal), and only those."""
    cache = _fresh(search_cache, tmp_path)
    d = tmp_path / "suite"
    d.mkdir()
    (d / "mp_amdgpu.litmus").write_text(MP_AMDGPU)
    (d / "mp_c.litmus").write_text(MP_C)
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                          "--litmus", "--litmus-backend", "none", str(d)],
                         cwd=tmp_path, env=_env(cache), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=900)
    assert out.returncode == 0, out.stdout
    text = out.stdout                   # stdout and stderr in the order written
    lines = _compile_lines(text)
    assert lines and lines[0].startswith("scopefuzz: compiling the oracle (model amdgpu) into "
                                         "numba's cache (")
    assert lines[-1].startswith("scopefuzz: compiled the oracle (model amdgpu): ")
    # before the first test's result
    assert text.index(lines[-1]) < text.index("2 passed")
    assert not glob.glob(str(cache / "**" / "kernel.*"), recursive=True)   # backend none


def test_the_search_shares_are_the_signatures_the_search_compiles(search_cache, tmp_path):
    """A campaign's first run compiles the search's callees in two processes ahead of the search
    (fuzz/warm.py ``compile_ahead``, oracle/warmup.py ``search_share``): each (function,
    argument types) of both shares must be a signature the search itself compiled, or the
    search would compile it again. The cache seeded with the search holds exactly those."""
    cache = _fresh(search_cache, tmp_path)
    out = _python(
        "import json\n"
        "from oracle.warmup import search_share\n"
        "res = []\n"
        "for which in ('here', 'helper'):\n"
        "    for d, sig in search_share(which):\n"
        "        keys = [tuple(k[0]) for k in d._cache._cache_file._load_index()]\n"
        "        res.append([which, d.py_func.__name__, tuple(sig) in keys, len(keys)])\n"
        "from oracle.warmup import compile_share, share_cached\n"
        "cached = [share_cached('here'), share_cached('helper')]\n"
        "compile_share('here', 'x'); compile_share('helper', 'y')\n"
        "from litmus.jitprogress import compiled\n"
        "print(json.dumps([res, cached, compiled('oracle')]))\n", _env(cache))
    res, cached, here = json.loads(out.stdout.splitlines()[-1])
    assert cached == [True, True]
    names = {r[1] for r in res}
    assert {"prepare_arrays", "eval_rows", "inc_memo", "decision_order", "_eval_prefix",
            "_eval_upper", "_insert"} <= names
    missing = [r for r in res if not r[2]]
    assert missing == []
    assert here == 0                    # every one loaded from the cache, none compiled
    assert _compile_lines(out.stderr) == []


def test_the_explanation_share_compiles_two_wrappers_around_the_search_kernels(search_cache,
                                                                             tmp_path):
    """What explanations, candidates and the block split call from Python (oracle/warmup.py
    ``search_share("explain")``) are two small compiled wrappers that call the search's own
    one-word kernels (``eval_rows`` and ``prepare_arrays`` with ``W`` the literal 1): with the
    search in the cache, a first run compiles those two functions and loads every callee,
    instead of compiling the kernels again for an ``int64`` ``W``."""
    cache = _fresh(search_cache, tmp_path)
    for f in glob.glob(str(cache / "**" / "*"), recursive=True):
        base = os.path.basename(f)
        if base.startswith(("engine.eval_rows_one_word-", "prepare.prepare_one_word-")):
            os.unlink(f)
    out = _python(
        "import json\n"
        "from oracle.warmup import compile_share, search_share, share_cached\n"
        "before = share_cached('explain')\n"
        "compile_share('explain', 'x')\n"
        "from litmus.jitprogress import compiled\n"
        "names = sorted(d.py_func.__name__ for d, _ in search_share('explain'))\n"
        "print(json.dumps([before, compiled('oracle'), names, share_cached('explain')]))\n",
        _env(cache))
    before, n, names, after = json.loads(out.stdout.splitlines()[-1])
    assert names == ["eval_rows_one_word", "prepare_one_word"]
    assert before is False and after is True
    assert n == 2                       # the two wrappers; eval_rows, prepare_arrays: loaded


def test_warm_runs_several_parts_in_order_and_tells_each(search_cache, tmp_path):
    """``scopefuzz warm --part A --part B --tell`` (compile_ahead's helper process): the parts in
    order, ``done NAME`` on stdout after each (the caller waits for one of them), a failing part
    does not stop the next and makes the exit status 1."""
    cache = _fresh(search_cache, tmp_path)
    out = subprocess.run([sys.executable, "-m", "fuzz.cli", "warm", "--tell", "--part", "search",
                          "--part", "search-helper"], cwd=ROOT, env=_env(cache),
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["done", "search", "done", "search-helper"]
    assert _compile_lines(out.stderr) == []     # both loaded from the seeded cache


def test_compile_ahead_shares_nothing_of_the_search_when_the_cache_has_it(search_cache,
                                                                          tmp_path):
    """With the search in the cache and no simulator, a campaign's compile-ahead compiles
    nothing here and gives a helper (if any: the explanation's code when not cached) no share
    of the search; once the explanation's part is cached too, it starts nothing at all."""
    cache = _fresh(search_cache, tmp_path)
    out = _python(
        "import json\n"
        "from fuzz.warm import compile_ahead\n"
        "said = []\n"
        "wait = compile_ahead(False, said.append)\n"
        "wait()\n"
        "again = []\n"
        "compile_ahead(False, again.append)()\n"
        "from litmus.jitprogress import compiled\n"
        "print(json.dumps([said, again, compiled('oracle')]))\n", _env(cache))
    said, again, here = json.loads(out.stdout.splitlines()[-1])
    assert here == 0
    assert all("search" not in line and "explanations" in line for line in said)
    assert again == []


def test_a_first_check_compiles_the_search_callees_on_two_cores(monkeypatch):
    """``scopefuzz check`` on a cold cache (a first check after ``pip install``) shares the
    search's callees with one helper process, as a campaign does: the helper compiles the
    ``"helper"`` share, this process the ``"here"`` share, and the check starts only once the
    helper is done; nothing is started when the search is cached or on one core."""
    import io
    from oracle import warmup
    calls = []

    class FakeHelper:
        def __init__(self, argv, **kw):
            calls.append(("spawn", argv[-1]))
            self.pid = 4242
            self.stdout = self

        def __iter__(self):
            calls.append(("waited",))
            return iter(["done search-helper\n"])

        def wait(self):
            calls.append(("ended",))
            return 0

    monkeypatch.setattr(warmup.subprocess, "Popen", FakeHelper)
    monkeypatch.setattr(warmup, "compile_share", lambda which, what: calls.append(("here", which)))
    monkeypatch.setattr(warmup, "share_cached", lambda which: False)
    monkeypatch.setattr(warmup, "cores", lambda: 2)
    monkeypatch.setattr(warmup, "_ASKED", [])
    said = io.StringIO()
    monkeypatch.setattr(warmup, "uncached", lambda entries: True)
    assert warmup.compile_search_ahead(say=said.write) is True
    assert calls[0][0] == "spawn" and "part_search_helper()" in calls[0][1]
    assert calls[1:] == [("here", "here"), ("waited",), ("ended",)]
    assert "helper process (pid 4242)" in said.getvalue()
    # the search in the cache, both halves in the cache, or one core: nothing started
    for uncached, halves, cores in ((False, False, 2), (True, True, 2), (True, False, 1)):
        calls.clear()
        monkeypatch.setattr(warmup, "uncached", lambda entries, u=uncached: u)
        monkeypatch.setattr(warmup, "share_cached", lambda which, h=halves: h)
        monkeypatch.setattr(warmup, "cores", lambda c=cores: c)
        monkeypatch.setattr(warmup, "_ASKED", [])
        assert warmup.compile_search_ahead(say=said.write) is False
        assert calls == []

"""litmus.jitcache: numba cache files are dropped exactly when the sources they depend on change."""

from __future__ import annotations

import os

from litmus.jitcache import STAMP, guard


def _cache_files(pkg):
    cache = pkg / "__pycache__"
    cache.mkdir(exist_ok=True)
    for name in ("kernel.search-10.py311.nbi", "kernel.search-10.py311.1.nbc"):
        (cache / name).write_bytes(b"compiled")
    return cache


def test_cache_kept_while_sources_unchanged_and_dropped_when_one_changes(tmp_path):
    (tmp_path / "kernel.py").write_text("OPCODE = 1\n")
    (tmp_path / "constants.py").write_text("COLUMN = 3\n")
    (tmp_path / "unrelated.py").write_text("x = 1\n")
    sources = ["kernel.py", "constants.py"]
    cache = _cache_files(tmp_path)
    assert guard(str(tmp_path), sources)                 # no stamp yet: caches of unknown origin
    assert not list(cache.glob("*.nb*")) and (cache / STAMP).exists()
    cache = _cache_files(tmp_path)
    assert not guard(str(tmp_path), sources)             # same sources: cache kept
    assert len(list(cache.glob("*.nb*"))) == 2
    (tmp_path / "unrelated.py").write_text("x = 2\n")
    assert not guard(str(tmp_path), sources)             # a file compiled code does not read
    (tmp_path / "constants.py").write_text("COLUMN = 4\n")
    assert guard(str(tmp_path), sources)                 # a constant the kernel froze changed
    assert not list(cache.glob("*.nb*"))
    assert not guard(str(tmp_path), sources)


def test_packages_with_compiled_code_are_guarded():
    import hw.sim
    import oracle
    import oracle.models.amdgpu
    for pkg in (oracle, oracle.models.amdgpu, hw.sim):
        stamp = os.path.join(os.path.dirname(pkg.__file__), "__pycache__", STAMP)
        assert os.path.exists(stamp)

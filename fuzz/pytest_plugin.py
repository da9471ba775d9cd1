"""pytest plugin: litmus files as test items, one device per xdist worker (entry point ``pytest11``).

``pytest --litmus corpora/ -n 8 --litmus-backend=opencl`` collects every ``*.litmus`` file as an item. An item
checks the oracle's verdict against the nearest ``expected.csv`` that lists the file (when there is
one; a row naming a missing file is a failing item), then runs the program on the chosen backend and fails on any outcome the model forbids; the
failure report shows the histogram, the forbidden outcomes and the oracle's explanation. Programs
whose verdict is ``Undef`` only check the verdict (they are never run).

With ``--litmus-devices=opencl:0:0,opencl:0:1`` each xdist worker takes its own device, round robin
by worker number. ``--litmus-fuzz=SECONDS`` adds one item per xdist worker (one without xdist): item
K runs shard K/N of one fuzz campaign against the backend and fails on a finding; the controller
merges the shards into one campaign directory and report (``fuzz/gather.py``). Fixtures ``litmus_backend`` and ``litmus_oracle`` serve users' own tests.
"""

from __future__ import annotations

import os
import pathlib
import re
import time

import pytest

from litmus import ParseError, format_outcome, parse_file
from litmus.expected import read_expected

from .compare import compare
from .gather import send_home

# The options, the ini value ``litmus_paths`` and the fixtures are declared by the light entry-point
# module ``scopefuzz_pytest`` (pytest and the standard library only), which registers this module
# when litmus collection is asked for (``--litmus``, ``litmus_paths``, ``--litmus-fuzz``).


def worker_index() -> int:
    """0 for the controller / a run without xdist, K for xdist worker gwK (xdist sets
    ``PYTEST_XDIST_WORKER`` in each worker before its configuration is read)."""
    wid = os.environ.get("PYTEST_XDIST_WORKER", "")
    if wid.startswith("gw") and wid[2:].isdigit():
        return int(wid[2:])
    return 0


def backend_spec(config) -> str:
    """The backend this process uses: its own entry of --litmus-devices, else --litmus-backend."""
    devices = config.getoption("--litmus-devices")
    if devices:
        items = [d.strip() for d in devices.split(",") if d.strip()]
        if not items:
            raise pytest.UsageError("--litmus-devices is empty")
        return items[worker_index() % len(items)]
    return config.getoption("--litmus-backend")


class _Session:
    """Per-process state: the backend instance (opened lazily) and expected.csv files read."""

    def __init__(self, config):
        self.config = config
        self.spec = backend_spec(config)
        self._backend = None
        self._expected: dict[pathlib.Path, dict[str, str]] = {}

    def backend(self):
        if self.spec == "none":
            return None
        if self._backend is None:
            import hw
            self._backend = hw.get_backend(self.spec)
        return self._backend

    def expected_for(self, path: pathlib.Path, stop: pathlib.Path) -> tuple[str, str] | None:
        """(verdict, csv path) from the nearest expected.csv that lists ``path``."""
        d = path.parent
        while True:
            csv_path = d / "expected.csv"
            if csv_path.is_file():
                table = self._read(csv_path)
                rel = path.relative_to(d).as_posix()
                if rel in table:
                    return table[rel], str(csv_path)
            if d == stop or d.parent == d:
                return None
            d = d.parent

    def _read(self, csv_path: pathlib.Path) -> dict[str, str]:
        if csv_path not in self._expected:
            self._expected[csv_path] = read_expected(csv_path).by_path()
        return self._expected[csv_path]

    def close(self):
        if self._backend is not None:
            self._backend.close()


_KEY = pytest.StashKey[_Session]()


def session(config) -> _Session:
    """This process's :class:`_Session` (made on first use)."""
    s = config.stash.get(_KEY, None)
    if s is None:
        s = config.stash[_KEY] = _Session(config)
    return s


def pytest_configure(config):
    session(config)
    if config.getoption("--litmus-fuzz") and not hasattr(config, "workerinput"):
        from .gather import Gatherer       # the xdist controller gathers the fuzz shards
        config.pluginmanager.register(Gatherer(config), "scopefuzz-gather")


def pytest_unconfigure(config):
    s = config.stash.get(_KEY, None)
    if s is not None:
        s.close()


def pytest_report_header(config):
    s = session(config)
    return f"scopefuzz: litmus backend {s.spec}, {config.getoption('--litmus-iterations')} iterations"


# ------------------------------------------------------------------------------------- collection


def in_scope(config, file_path: pathlib.Path) -> bool:
    """``--litmus`` takes every file pytest is given; ``litmus_paths`` only files below them."""
    if config.getoption("--litmus"):
        return True
    p = file_path.resolve()
    for root in config.getini("litmus_paths"):
        r = pathlib.Path(root).resolve()
        if p == r or r in p.parents:
            return True
    return False


def pytest_collect_file(file_path: pathlib.Path, parent):
    if not in_scope(parent.config, file_path):
        return None
    if file_path.suffix == ".litmus":
        return LitmusFile.from_parent(parent, path=file_path)
    if file_path.name == "expected.csv":
        return ExpectedFile.from_parent(parent, path=file_path)
    return None


class ExpectedFile(pytest.File):
    """An ``expected.csv``: one failing item per row naming a file that does not exist (a renamed
    or deleted test would otherwise drop out of the suite silently); nothing when all exist."""

    def collect(self):
        try:
            table = read_expected(self.path)
        except ParseError as e:
            yield MissingListed.from_parent(self, name="expected.csv", message=str(e))
            return
        here = self.path.parent
        for row in table.rows:
            if not any((base / row.path).exists() for base in (here, here.parent)):
                yield MissingListed.from_parent(
                    self, name=f"missing[{row.path}]",
                    message=f"{self.path}:{row.line}:1: lists {row.path!r}, which does not exist "
                            f"(expected {row.verdict})")


class MissingListed(pytest.Item):
    """A row of expected.csv whose file is missing (or an unreadable expected.csv)."""

    def __init__(self, *, message: str, **kw):
        super().__init__(**kw)
        self.message = message

    def runtest(self):
        raise LitmusFailure(self.message)

    def repr_failure(self, excinfo):
        return str(excinfo.value) if isinstance(excinfo.value, LitmusFailure) \
            else super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"expected.csv: {self.name}"


def worker_count(config) -> int:
    """The number of xdist workers when this process is one (``config.workerinput``), else 1.
    (Not the ``PYTEST_XDIST_WORKER_COUNT`` variable: a pytest run started from inside an xdist
    worker, e.g. by pytester, inherits it without being a worker.)"""
    wi = getattr(config, "workerinput", None)
    return max(1, int(wi.get("workercount", 1))) if wi else 1


def pytest_collection_modifyitems(session, config, items):
    seconds = config.getoption("--litmus-fuzz")
    if seconds:
        # one campaign item per xdist worker, item K taking shard K/N of one campaign seed; every
        # worker collects the same N items (xdist requires it) and fuzz.gather's scheduler gives
        # each worker its own
        n = worker_count(config)
        for k in range(1, n + 1):
            name = f"litmus-fuzz[{seconds:g}s]" if n == 1 else f"litmus-fuzz[{seconds:g}s-{k}of{n}]"
            items.append(FuzzItem.from_parent(session, name=name, seconds=seconds, shard=(k, n)))


class LitmusFile(pytest.File):
    """One ``*.litmus`` file: one item named after the test (the file stem if it does not parse;
    the item then fails with the parse error)."""

    def collect(self):
        try:
            name = parse_file(self.path).name
        except ParseError:
            name = self.path.stem
        yield LitmusItem.from_parent(self, name=name)


class LitmusFailure(Exception):
    """An item's failure, with the report text already written."""


class LitmusItem(pytest.Item):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.add_marker("litmus")

    def runtest(self):
        session: _Session = self.config.stash[_KEY]
        try:
            test = parse_file(self.path)
        except ParseError as e:
            raise LitmusFailure(str(e))
        from oracle.judge import Judge
        model = self.config.getoption("--litmus-model")
        limit = self.config.getoption("--litmus-timeout")
        # the oracle answers the verdict and the observed outcomes only (the full allowed set
        # is computed for a failure's report)
        result = self._oracle(test, lambda: Judge(test, model, timeout=limit))
        self._oracle(test, lambda: result.verdict)
        self.user_properties.append(("verdict", result.verdict))
        exp = session.expected_for(self.path.resolve(), self.config.rootpath.resolve())
        if exp is not None:
            want, where = exp
            self.user_properties.append(("expected", want))
            if want != result.verdict:
                raise LitmusFailure(f"{test.name}: oracle verdict {result.verdict}, expected "
                                    f"{want} ({where})")
        if result.verdict == "Undef":
            return                      # undefined behaviour: never run
        if test.dialect != "AMDGPU":
            # the conformance dialects (C, Vulkan) are the oracle's: every backend runs programs
            # of the AMDGPU dialect, so the verdict check above is the whole item
            self.user_properties.append(("backend", f"not run ({test.dialect} dialect)"))
            return
        backend = session.backend()
        if backend is None:
            return
        import hw
        iters = self.config.getoption("--litmus-iterations")
        seed = self.config.getoption("--litmus-seed")
        try:
            hist = backend.run(test, iters, seed)
        except hw.BackendError as e:
            raise LitmusFailure(f"{test.name}: backend {session.spec}: {e}")
        self.user_properties.append(("backend", session.spec))
        seen = self._oracle(test, lambda: compare(result, hist, test.condition))
        for row in seen.rows:
            self.user_properties.append((f"outcome {format_outcome(row.outcome)}", row.count))
        if seen.forbidden:
            raise LitmusFailure(self._forbidden_report(test, result, seen, session))

    def _oracle(self, test, ask):
        """``ask()``, an oracle computation: a timeout or an oracle error fails the item."""
        import oracle
        from oracle.deadline import Timeout
        try:
            return ask()
        except Timeout as e:
            raise LitmusFailure(f"{test.name}: the oracle {e} (--litmus-timeout)")
        except oracle.OracleError as e:
            raise LitmusFailure(f"{self.path}: oracle: {e}")

    def _forbidden_report(self, test, result, seen, session) -> str:
        lines = [f"{test.name}: {seen.forbidden} of {seen.total} iterations on "
                 f"{session.spec} showed an outcome the {result.model} model forbids", "",
                 "histogram:"]
        for row in seen.rows:
            mark = "allowed" if row.allowed else "FORBIDDEN"
            lines.append(f"  {row.count:>10}  {format_outcome(row.outcome)}  {mark}")
        lines.append("")
        lines.append("allowed by the model:")
        try:
            lines += [f"  {format_outcome(s)}" for s in result.states]
        except Exception as e:          # e.g. past --litmus-timeout: the failure stands
            lines.append(f"  (not computed: {e})")
        try:
            import oracle
            expl = oracle.explain(test, seen.forbidden_outcomes()[0][0], result.model)
            lines += ["", "why the first forbidden outcome is forbidden:", expl.text()]
        except Exception as e:          # the explanation is a courtesy; the failure stands
            lines += ["", f"(no explanation: {e})"]
        return "\n".join(lines)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, LitmusFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"litmus: {self.name}"


class FuzzItem(pytest.Item):
    """A fuzz campaign of a fixed duration against the backend; fails on any finding."""

    def __init__(self, *, seconds: float, shard: tuple[int, int] = (1, 1), **kw):
        super().__init__(**kw)
        self.seconds = seconds
        self.shard = shard

    def runtest(self):
        from fuzz.campaign import Campaign, Config
        session: _Session = self.config.stash[_KEY]
        # a fresh directory per run (earlier campaigns and their findings are kept), on this
        # worker's host
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", session.spec)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        k, n = self.shard
        out = (pathlib.Path(self.config.rootpath) / ".scopefuzz-pytest"
               / (f"{tag}-{stamp}-{os.getpid()}-w{worker_index()}"
                  + ("" if n == 1 else f"-shard{k}of{n}")))
        cfg = Config(backend=session.spec, out=str(out), seed=self.config.getoption("--litmus-seed"),
                     time=self.seconds, shard=self.shard)
        from fuzz.workers import numba_thread_limit, numba_threads
        try:
            # the xdist workers of one host share its cores: one simulator thread each when there
            # are as many workers as cores (as ``scopefuzz fuzz --jobs`` does)
            with numba_thread_limit(numba_threads(n)):
                stats = Campaign(cfg).run()
        finally:
            send_home(self.config, str(out))
        self.user_properties.append(("programs", stats.programs))
        self.user_properties.append(("findings", stats.findings))
        self.user_properties.append(("shard", f"{k}/{n}"))
        if stats.findings:
            raise LitmusFailure(f"fuzz campaign on {session.spec}: {stats.findings} finding(s) in "
                                f"{stats.programs} programs; see {out}/findings "
                                f"(scopefuzz report {out})")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, LitmusFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return "litmus-fuzz", 0, self.name


# ------------------------------------------------------------------------ for the fixtures (users)


def oracle_checker(config):
    """``check(test_or_path)`` -> the oracle's answers under --litmus-model (``litmus_oracle``):
    a :class:`oracle.judge.Judge`, which has a Result's fields and computes each on first use
    (``verdict``, ``allows`` by outcome queries; ``states`` by the full check)."""
    from oracle.judge import Judge
    model = config.getoption("--litmus-model")

    def check(test):
        if isinstance(test, (str, os.PathLike)):
            test = parse_file(test)
        return Judge(test, model)

    return check

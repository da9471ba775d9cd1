"""pytest plugin: litmus files as test items, one device per xdist worker (entry point ``pytest11``).

``pytest corpora/ -n 8 --litmus-backend=opencl`` collects every ``*.litmus`` file as an item. An item
checks the oracle's verdict against the nearest ``expected.csv`` that lists the file (when there is
one), then runs the program on the chosen backend and fails on any outcome the model forbids; the
failure report shows the histogram, the forbidden outcomes and the oracle's explanation. Programs
whose verdict is ``Undef`` only check the verdict (they are never run).

With ``--litmus-devices=opencl:0:0,opencl:0:1`` each xdist worker takes its own device, round robin
by worker number. ``--litmus-fuzz=SECONDS`` adds one item that runs a fuzz campaign against the backend
and fails on a finding. Fixtures ``litmus_backend`` and ``litmus_oracle`` serve users' own tests.
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

# ---------------------------------------------------------------------------------------- options


def pytest_addoption(parser):
    g = parser.getgroup("scopefuzz", "litmus tests (scopefuzz)")
    g.addoption("--litmus-backend", default="sim", metavar="B",
                help="backend that runs collected litmus files: sim, sim:MUTANT, opencl, "
                     "opencl:P:D, or 'none' to check verdicts only (default: sim)")
    g.addoption("--litmus-iterations", type=int, default=2000, metavar="N",
                help="iterations per litmus test (default: 2000)")
    g.addoption("--litmus-seed", type=int, default=0, metavar="S", help="backend seed (default 0)")
    g.addoption("--litmus-devices", default=None, metavar="B1,B2,...",
                help="comma-separated backends; xdist worker gwK takes entry K mod N "
                     "(overrides --litmus-backend)")
    g.addoption("--litmus-model", default=None, metavar="M",
                help="memory model of the oracle (default: the dialect's)")
    g.addoption("--litmus-fuzz", type=float, default=None, metavar="SECONDS",
                help="add an item running a fuzz campaign of SECONDS against the backend")


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


def pytest_configure(config):
    config.stash[_KEY] = _Session(config)
    config.addinivalue_line("markers", "litmus: a litmus test collected from a *.litmus file")


def pytest_unconfigure(config):
    s = config.stash.get(_KEY, None)
    if s is not None:
        s.close()


def pytest_report_header(config):
    s = config.stash[_KEY]
    return f"scopefuzz: litmus backend {s.spec}, {config.getoption('--litmus-iterations')} iterations"


# ------------------------------------------------------------------------------------- collection


def pytest_collect_file(file_path: pathlib.Path, parent):
    if file_path.suffix == ".litmus":
        return LitmusFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(session, config, items):
    seconds = config.getoption("--litmus-fuzz")
    if seconds:
        items.append(FuzzItem.from_parent(session, name=f"litmus-fuzz[{seconds:g}s]",
                                          seconds=seconds))


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
        import oracle
        session: _Session = self.config.stash[_KEY]
        try:
            test = parse_file(self.path)
        except ParseError as e:
            raise LitmusFailure(str(e))
        model = self.config.getoption("--litmus-model")
        try:
            result = oracle.check(test, model)
        except oracle.OracleError as e:
            raise LitmusFailure(f"{self.path}: oracle: {e}")
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
        seen = compare(result, hist, test.condition)
        for row in seen.rows:
            self.user_properties.append((f"outcome {format_outcome(row.outcome)}", row.count))
        if seen.forbidden:
            raise LitmusFailure(self._forbidden_report(test, result, seen, session))

    def _forbidden_report(self, test, result, seen, session) -> str:
        lines = [f"{test.name}: {seen.forbidden} of {seen.total} iterations on "
                 f"{session.spec} showed an outcome the {result.model} model forbids", "",
                 "histogram:"]
        for row in seen.rows:
            mark = "allowed" if row.allowed else "FORBIDDEN"
            lines.append(f"  {row.count:>10}  {format_outcome(row.outcome)}  {mark}")
        lines.append("")
        lines.append("allowed by the model:")
        for s in result.states:
            lines.append(f"  {format_outcome(s)}")
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

    def __init__(self, *, seconds: float, **kw):
        super().__init__(**kw)
        self.seconds = seconds

    def runtest(self):
        from fuzz.campaign import Campaign, Config
        session: _Session = self.config.stash[_KEY]
        # a fresh directory per run: earlier campaigns (and their findings) are kept
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", session.spec)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out = (pathlib.Path(self.config.rootpath) / ".scopefuzz-pytest"
               / f"{tag}-{stamp}-{os.getpid()}-w{worker_index()}")
        cfg = Config(backend=session.spec, out=str(out), seed=self.config.getoption("--litmus-seed"),
                     time=self.seconds)
        stats = Campaign(cfg).run()
        self.user_properties.append(("programs", stats.programs))
        self.user_properties.append(("findings", stats.findings))
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


# --------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def litmus_backend(pytestconfig):
    """The backend this worker uses (its own device under --litmus-devices)."""
    b = pytestconfig.stash[_KEY].backend()
    if b is None:
        pytest.fail("--litmus-backend=none: no backend to run on")
    return b


@pytest.fixture(scope="session")
def litmus_oracle(pytestconfig):
    """``check(test_or_path)`` → the oracle's Result under --litmus-model."""
    import oracle
    model = pytestconfig.getoption("--litmus-model")

    def check(test):
        if isinstance(test, (str, os.PathLike)):
            test = parse_file(test)
        return oracle.check(test, model)

    return check

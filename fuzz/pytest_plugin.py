"""pytest plugin: litmus files as test items, one device per xdist worker (entry point ``pytest11``).

``pytest --litmus corpora/ -n 8 --litmus-backend=opencl`` collects every ``*.litmus`` file as an item. An item
checks the oracle's verdict against the nearest ``expected.csv`` that lists the file (when there is
one; a row naming a missing file is a failing item), then runs the program on the chosen backend and fails on any outcome the model forbids; the
failure report shows the histogram, the forbidden outcomes and the oracle's explanation. Programs
whose verdict is ``Undef`` only check the verdict (they are never run).

Devices: with ``--litmus-devices=opencl:0:0,opencl:0:1`` each xdist worker takes its own device,
round robin by global worker number (hosts with identical layouts); per host, the worker's host's
``SCOPEFUZZ_DEVICES`` (its environment, or ``//env:SCOPEFUZZ_DEVICES=...`` in the ``--tx`` spec) or the
ini map ``litmus_devices`` (lines ``HOST = B1,B2``) is indexed by the worker's number among that
host's workers. ``--litmus-fuzz=SECONDS`` splits one fuzz campaign into work items
(:mod:`fuzz.workitems`) that xdist hands out; each fails on a finding; the controller gathers them as
they end and merges them into one campaign directory and report (``fuzz/gather.py``). Fixtures
``litmus_backend`` and ``litmus_oracle`` serve users' own tests.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import time

import pytest

from litmus import ParseError, format_outcome, parse_file
from litmus.expected import read_expected

from .compare import compare
from . import workitems
from .placement import backend_spec, host_place

# The options, the ini value ``litmus_paths`` and the fixtures are declared by the light entry-point
# module ``scopefuzz_pytest`` (pytest and the standard library only), which registers this module
# when litmus collection is asked for (``--litmus``, ``litmus_paths``, ``--litmus-fuzz``).


def _simulated(name: str) -> bool:
    """Does backend ``name`` run the simulator (hw's reading, :func:`hw.parse_backend_spec`)?
    ``none`` and a bad name do not (the items report a bad name, one line each)."""
    import hw
    try:
        return hw.parse_backend_spec(name).simulator
    except hw.BackendError:
        return False


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
        from .gather import Gatherer       # the controller plans and gathers the work items
        config.pluginmanager.register(Gatherer(config), "scopefuzz-gather")


def fuzz_plan(config) -> tuple[workitems.Plan, set[int]]:
    """The campaign's plan and the items done before, from the controller (``workerinput`` on an
    xdist worker; the gatherer in this process otherwise)."""
    wi = getattr(config, "workerinput", None)
    if wi is not None and "scopefuzz_plan" in wi:
        return workitems.Plan(**wi["scopefuzz_plan"]), set(wi.get("scopefuzz_done", ()))
    g = config.pluginmanager.get_plugin("scopefuzz-gather")
    return g.plan, set(g.done_before)


def litmus_models(config) -> list[str]:
    """The models the oracle will run for the ``*.litmus`` files in scope: ``--litmus-model``,
    else the default model of each file's dialect (read from its header only)."""
    from litmus.dialects import DEFAULT_MODEL, dialect_of, litmus_files, read_litmus_text
    model = config.getoption("--litmus-model")
    if model:
        return [model]
    roots = list(config.args) if config.getoption("--litmus") else \
        [str(config.rootpath / r) for r in config.getini("litmus_paths")]
    found = set()
    for path in litmus_files([r for r in roots if os.path.exists(r)]):
        if not path.endswith(".litmus"):
            continue
        try:
            found.add(DEFAULT_MODEL.get(dialect_of(read_litmus_text(path)) or ""))
        except Exception:           # the item reports it
            continue
    return sorted(m for m in found if m)


def pytest_sessionstart(session):
    """Compile (or load) the oracle's models for the files in scope, and the simulator when it
    is the backend, before any test runs and with pytest's capture off, so that a first run
    shows what compiles and how far along (litmus/jitprogress.py) instead of sitting silent
    inside the first test (or inside xdist workers, whose output is not shown): the workers
    then load it from numba's cache. Done by the controller (or the only process)."""
    config = session.config
    if hasattr(config, "workerinput") or config.getoption("--litmus-fuzz"):
        return
    try:
        models = litmus_models(config)
    except Exception:
        return
    if not models:
        return
    capman = config.pluginmanager.getplugin("capturemanager")
    quiet = capman.global_and_fixture_disabled() if capman is not None \
        else contextlib.nullcontext()
    with quiet:
        from .warm import compile_ahead
        wait = compile_ahead(_simulated(backend_spec(config)))
        try:
            from oracle.registry import get
            from oracle.warmup import ready
            for name in models:
                try:
                    ready(get(name))
                except Exception:       # an unknown model: the items report it
                    pass
        finally:
            wait()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A fuzz item's report carries its result home (xdist serializes the report's attributes)."""
    rep = yield
    if call.when == "call" and isinstance(item, FuzzItem) and item.result is not None:
        rep.scopefuzz_item = item.result
    return rep


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
    if config.getoption("--litmus-fuzz"):
        # the controller's plan: item J runs shard J/M for the plan's slice; every worker collects
        # the same items (xdist requires it): those not done in an earlier session
        plan, done = fuzz_plan(config)
        for j in range(1, plan.items + 1):
            if j not in done:
                items.append(FuzzItem.from_parent(session, name=plan.item_name(j), plan=plan,
                                                  shard=(j, plan.items)))


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
        import hw
        backend = session.backend()
        runs = backend.dialects if backend is not None else hw.Backend.dialects
        if test.dialect not in runs:
            # a dialect the backend does not run (the conformance dialects C, Vulkan are the
            # oracle's): the verdict check above is the whole item
            self.user_properties.append(("backend", f"not run ({test.dialect} dialect)"))
            return
        if backend is None:
            return
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
    """Work item J of a fuzz campaign: shard J/M for the plan's time slice against this worker's
    backend; fails on any finding. Its result goes home on its report (:mod:`fuzz.gather`)."""

    def __init__(self, *, plan: workitems.Plan, shard: tuple[int, int] = (1, 1), **kw):
        super().__init__(**kw)
        self.plan = plan
        self.seconds = plan.seconds
        self.shard = shard
        self.result: dict | None = None

    def runtest(self):
        import shutil
        from fuzz.campaign import Campaign, CampaignError, Config
        from fuzz.gather import item_result
        session: _Session = self.config.stash[_KEY]
        k, n = self.shard
        # on this worker's host, under the campaign's name; a directory left by an attempt whose
        # worker was lost is started afresh (the controller counts only items it received)
        out = (pathlib.Path(self.config.rootpath) / ".scopefuzz-pytest" / self.plan.name
               / f"item-{k}of{n}")
        shutil.rmtree(out, ignore_errors=True)
        cfg = Config(backend=session.spec, out=str(out), seed=self.plan.seed,
                     time=self.seconds, shard=self.shard)
        from fuzz.workers import numba_thread_limit, numba_threads
        host, _, on_host = host_place(self.config)
        # under xdist: findings claimed by bucket before minimizing, live counters to the
        # controller, over the side channel it opened into this worker (fuzz/claims.py)
        side = (getattr(self.config, "workerinput", None) or {}).get("scopefuzz_side")
        client = None
        if side is not None:
            from fuzz.claims import ClaimClient
            client = ClaimClient(side, k)
        t0 = time.monotonic()
        try:
            # the workers of one host share its cores: the simulator's threads come from this
            # host's core count and its number of workers (as ``scopefuzz fuzz --jobs`` does)
            with numba_thread_limit(numba_threads(on_host)):
                stats = Campaign(cfg, progress=client,
                                 claim=client.claim if client else None).run()
        except CampaignError as e:
            raise LitmusFailure(f"fuzz item {k}/{n} on {session.spec}: {e}")
        finally:
            wid = os.environ.get("PYTEST_XDIST_WORKER", "main")
            self.result = item_result(str(out), k, host, wid, time.monotonic() - t0)
        self.user_properties.append(("programs", stats.programs))
        self.user_properties.append(("findings", stats.findings))
        self.user_properties.append(("shard", f"{k}/{n}"))
        skipped = client.claimed if client else 0
        if skipped:
            self.user_properties.append(("claimed elsewhere", skipped))
        if stats.findings or skipped:
            raise LitmusFailure(f"fuzz campaign on {session.spec}: {stats.findings} finding(s) in "
                                f"{stats.programs} programs; see {out}/findings "
                                f"(scopefuzz report {out})"
                                + (f"; {skipped} more not minimized here: their bucket was "
                                   "claimed by another worker" if skipped else ""))

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

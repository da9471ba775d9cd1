"""scopefuzz's pytest plugin, as pytest loads it (entry point ``pytest11``): options and nothing else.

Installed with scopefuzz, this module is loaded by *every* pytest run in the environment, so it
imports only pytest and the standard library: a project with its own ``litmus``, ``oracle``, ``hw``
or ``fuzz`` package, or with ``*.litmus`` files of another tool (herd's AArch64 tests), is not
touched. Litmus files are collected only when asked: ``--litmus`` (every ``*.litmus`` file under the
paths pytest is given) or the ini option ``litmus_paths`` (``*.litmus`` files under those
directories). Only then is the implementation (:mod:`fuzz.pytest_plugin`) imported and registered;
if another project's package shadows one of scopefuzz's, that is one clear usage error.
The fixtures ``litmus_backend`` and ``litmus_oracle`` load the implementation when first used.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

#: scopefuzz's top-level packages (their names are generic: another project may have one)
PACKAGES = ("litmus", "oracle", "hw", "fuzz")
_IMPL = "scopefuzz-litmus"


def pytest_addoption(parser):
    g = parser.getgroup("scopefuzz", "litmus tests (scopefuzz)")
    g.addoption("--litmus", action="store_true", default=False,
                help="collect *.litmus files (scopefuzz's format) under the given paths as tests")
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
    g.addoption("--litmus-timeout", type=float, default=60.0, metavar="SECONDS",
                help="stop the oracle on one litmus file after SECONDS: the item fails as timed "
                     "out, with no verdict (default 60; 0: no limit)")
    g.addoption("--litmus-fuzz", type=float, default=None, metavar="SECONDS",
                help="run a fuzz campaign of SECONDS against the backend, as work items that "
                     "xdist workers share")
    g.addoption("--litmus-fuzz-items", type=int, default=None, metavar="M",
                help="split the fuzz campaign into M work items (default: 4 per xdist worker and "
                     "at most 600 s each; 1 without xdist up to 600 s); each runs "
                     "SECONDS x workers / M seconds")
    g.addoption("--litmus-campaign", default=None, metavar="NAME",
                help="name of the fuzz campaign's directory .scopefuzz-pytest/NAME (default: "
                     "BACKEND-seedS-TIME-PID, printed at the end)")
    g.addoption("--litmus-resume", action="store_true", default=False,
                help="continue --litmus-campaign NAME: run only its work items not received yet")
    g.addoption("--litmus-retry-lost", type=int, default=1, metavar="N",
                help="hand a work item whose worker was lost to another worker up to N times "
                     "(default 1; then it is listed for --litmus-resume)")
    g.addoption("--litmus-ssh-keepalive", type=int, default=5, metavar="SECONDS",
                help="ssh gateways (--tx ssh=...) get -o ServerAliveInterval=SECONDS "
                     "-o ServerAliveCountMax=3 -o ConnectTimeout=2*SECONDS, so an unreachable "
                     "host is a lost worker after ~3*SECONDS (default 5; 0: leave ssh as it is)")
    parser.addini("litmus_paths", type="paths", default=[],
                  help="directories whose *.litmus files are collected as scopefuzz litmus tests "
                       "(as if --litmus were given for them)")
    parser.addini("litmus_devices", type="linelist", default=[],
                  help="per-host backends, one line per host: HOST = B1,B2 (* = ... for any "
                       "other host); a host's workers take them round robin")


def enabled(config) -> bool:
    """Litmus collection (or the fuzz item) was asked for."""
    return bool(config.getoption("--litmus") or config.getini("litmus_paths")
                or config.getoption("--litmus-fuzz"))


def shadowed_package() -> str | None:
    """A one-line reason when one of :data:`PACKAGES` would be imported from somewhere other than
    the installation this module belongs to (another project's package of the same name)."""
    home = os.path.dirname(os.path.abspath(__file__))
    for name in PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            where = getattr(spec, "origin", None) or "nowhere"
            return f"package {name!r} of scopefuzz is not importable (found: {where})"
        locs = [os.path.abspath(p) for p in spec.submodule_search_locations]
        if not any(os.path.dirname(p) == home for p in locs):
            return (f"package {name!r} resolves to {locs[0]}, not scopefuzz's (in {home}): "
                    f"another project's {name!r} package shadows it")
    return None


def implementation(config):
    """:mod:`fuzz.pytest_plugin`, registered with pytest on first use (a usage error when one of
    scopefuzz's packages is shadowed)."""
    impl = config.pluginmanager.get_plugin(_IMPL)
    if impl is not None:
        return impl
    why = shadowed_package()
    if why:
        raise pytest.UsageError(f"scopefuzz litmus plugin: {why}; litmus tests cannot run in "
                                "this environment (rename the other package or run from a "
                                "directory where it is not on sys.path)")
    impl = importlib.import_module("fuzz.pytest_plugin")
    config.pluginmanager.register(impl, _IMPL)
    return impl


def _ssh_keepalive(spec: str, seconds: int) -> str:
    """``--tx`` spec ``spec`` with ssh keepalive options added to its ``ssh=`` value (unless it
    names ServerAliveInterval itself)."""
    parts = spec.split("//")
    for n, p in enumerate(parts):
        head, star, rest = p.partition("*")
        body = rest if star and head.isdigit() else p
        if body.startswith("ssh=") and "ServerAlive" not in body:
            opts = (f"-o ServerAliveInterval={seconds} -o ServerAliveCountMax=3 "
                    f"-o ConnectTimeout={2 * seconds} ")
            body = "ssh=" + opts + body[4:]
            parts[n] = f"{head}*{body}" if star and head.isdigit() else body
    return "//".join(parts)


def pytest_cmdline_main(config):
    """Distributed fuzzing as documented: the xdist settings it needs (runs after xdist's own
    ``pytest_cmdline_main``, which expands ``-n``)."""
    opt = config.option
    if hasattr(config, "workerinput"):       # an xdist worker (its --tx is the controller's)
        return None
    if not getattr(opt, "litmus_fuzz", None) or not getattr(opt, "tx", None):
        return None
    if getattr(opt, "dist", "no") == "no":
        opt.dist = "load"              # --tx alone would run one ordinary, undistributed session
    specs = []
    for s in opt.tx:
        head, star, rest = s.partition("*")
        specs += [rest] * int(head) if star and head.isdigit() else [s]
    if getattr(opt, "maxworkerrestart", None) is None:
        opt.maxworkerrestart = str(4 * len(specs))      # crashed workers are replaced, within bounds
    if opt.litmus_ssh_keepalive > 0:
        opt.tx = [_ssh_keepalive(s, opt.litmus_ssh_keepalive) for s in opt.tx]
    remote = [s for s in specs if "popen" not in s.split("//") or "chdir=" in s]
    try:
        rsync = getattr(opt, "rsyncdir", None) or config.getini("rsyncdirs")
    except ValueError:                  # no xdist ini options
        rsync = None
    if remote and not rsync:
        # xdist hands the command line's paths to remote workers relative to an rsync root, and
        # fails ("arg . not relative to an rsync root") when there is none: fuzz items come from
        # the plugin, not from files, so the paths are dropped
        if opt.litmus or config.getini("litmus_paths"):
            raise pytest.UsageError(
                "scopefuzz: --litmus files with remote xdist workers (--tx ssh=... or chdir=) need "
                "the files on each host: add --rsyncdir DIR (or fuzz without --litmus)")
        import dataclasses
        args = tuple(a for a in config.invocation_params.args
                     if a.startswith("-") or not os.path.exists(a.split("::")[0]))
        config.invocation_params = dataclasses.replace(config.invocation_params, args=args)
    return None


# ------------------------------------------------------------- xdist: each worker's host and place

_PLACES = pytest.StashKey[dict]()


def spec_host(spec) -> str:
    """The host an execnet gateway spec runs on: the ssh target without user and options, the
    socket's host, or this machine's name for ``popen``."""
    if getattr(spec, "ssh", None):
        return spec.ssh.split()[-1].rpartition("@")[2]
    if getattr(spec, "socket", None):
        return spec.socket.rpartition(":")[0] or spec.socket
    return os.uname().nodename


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Tell each xdist worker its host, its index among that host's workers and their count (for
    per-host device lists and simulator threads); a restarted worker takes the dead one's index."""
    places = node.config.stash.get(_PLACES, None)
    if places is None:
        import execnet
        from xdist.workermanage import parse_tx_spec_config
        count: dict[str, int] = {}
        for s in parse_tx_spec_config(node.config):
            h = spec_host(execnet.XSpec(s))
            count[h] = count.get(h, 0) + 1
        places = node.config.stash[_PLACES] = {"count": count, "taken": {}}
    host = spec_host(node.gateway.spec)
    taken = places["taken"].setdefault(host, {})
    k = min(set(range(len(taken) + 1)) - set(taken.values()))
    taken[node.gateway.id] = k
    node.workerinput["scopefuzz_host"] = host
    node.workerinput["scopefuzz_local"] = k
    node.workerinput["scopefuzz_local_count"] = places["count"].get(host, 1)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    places = node.config.stash.get(_PLACES, None)
    if places is not None:
        places["taken"].get(node.workerinput.get("scopefuzz_host"), {}).pop(node.gateway.id, None)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "litmus: a litmus test collected from a *.litmus file")
    if enabled(config):
        implementation(config)


@pytest.fixture(scope="session")
def litmus_backend(pytestconfig):
    """The backend this worker uses (its own device under --litmus-devices)."""
    b = implementation(pytestconfig).session(pytestconfig).backend()
    if b is None:
        pytest.fail("--litmus-backend=none: no backend to run on")
    return b


@pytest.fixture(scope="session")
def litmus_oracle(pytestconfig):
    """``check(test_or_path)`` -> the oracle's Result under --litmus-model."""
    return implementation(pytestconfig).oracle_checker(pytestconfig)

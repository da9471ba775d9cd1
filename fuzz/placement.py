"""Where a pytest process runs and which backend it uses: the xdist worker's number and host
(``workerinput``), the host's devices (``SCOPEFUZZ_DEVICES``, the ini map ``litmus_devices``) and
so the backend name of this process (:func:`backend_spec`).

Read by the plugin (fuzz/pytest_plugin.py) and by the controller's gatherer (fuzz/gather.py),
which the plugin imports: kept apart so that neither imports the other (no import circle,
tests/test_layers.py).
"""

from __future__ import annotations

import os

import pytest


def worker_index() -> int:
    """0 for the controller / a run without xdist, K for xdist worker gwK (xdist sets
    ``PYTEST_XDIST_WORKER`` in each worker before its configuration is read)."""
    wid = os.environ.get("PYTEST_XDIST_WORKER", "")
    if wid.startswith("gw") and wid[2:].isdigit():
        return int(wid[2:])
    return 0


def host_place(config) -> tuple[str, int, int]:
    """(this worker's host as the controller names it, its index among that host's workers, their
    count), from ``workerinput``; (this machine's name, 0, 1) outside xdist."""
    wi = getattr(config, "workerinput", None) or {}
    return (wi.get("scopefuzz_host", os.uname().nodename), int(wi.get("scopefuzz_local", 0)),
            max(1, int(wi.get("scopefuzz_local_count", 1))))


def _device_list(text: str, where: str) -> list[str]:
    items = [d.strip() for d in text.split(",") if d.strip()]
    if not items:
        raise pytest.UsageError(f"{where} is empty")
    return items


def host_devices(config, host: str) -> list[str] | None:
    """This host's devices: ``SCOPEFUZZ_DEVICES`` in its environment, else its line of the ini
    map ``litmus_devices`` (``HOST = B1,B2``; ``* = ...`` for any other host), else None."""
    env = os.environ.get("SCOPEFUZZ_DEVICES")
    if env is not None:
        return _device_list(env, "SCOPEFUZZ_DEVICES")
    names = {host, os.uname().nodename}
    default = None
    for n, line in enumerate(config.getini("litmus_devices"), 1):
        key, sep, value = line.partition("=")
        if not sep:
            raise pytest.UsageError(f"ini litmus_devices line {n}: {line!r}: expected HOST = B1,B2")
        key = key.strip()
        if key in names:
            return _device_list(value, f"ini litmus_devices entry for {key}")
        if key == "*":
            default = _device_list(value, "ini litmus_devices entry for *")
    return default


def backend_spec(config) -> str:
    """The backend this process uses: its own entry of --litmus-devices (by global worker number),
    else of its host's devices (by its number on the host), else --litmus-backend."""
    devices = config.getoption("--litmus-devices")
    if devices:
        items = _device_list(devices, "--litmus-devices")
        return items[worker_index() % len(items)]
    host, local, _ = host_place(config)
    items = host_devices(config, host)
    if items:
        return items[local % len(items)]
    return config.getoption("--litmus-backend")

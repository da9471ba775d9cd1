"""A wall-clock limit for one oracle computation (``--timeout`` of ``check``, ``run``, ``explain`` and
the pytest plugin's ``--litmus-timeout``).

The oracle's search runs in numba-compiled loops that a Python signal cannot interrupt, so a
limited call runs in a forked child process (sharing the parent's compiled code and caches as they
are) and is killed when the limit passes: :class:`Timeout` is raised, never a verdict. The result or
the exception travels back through a pipe (both must pickle). Before the first fork the parent
checks one tiny test itself (:func:`warm_up`), so that the numba code every child needs is compiled or
loaded once, not once per child.
"""

from __future__ import annotations

import functools
import os
import signal
from typing import Any, Callable

from litmus.dialect import get as get_dialect


class Timeout(Exception):
    """The computation ran past its limit and was stopped (one line)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"timed out after {seconds:g} s (no verdict)")


def _child(conn, fn, args) -> None:
    try:
        out = ("ok", fn(*args))
    except BaseException as e:          # noqa: BLE001 - everything goes back to the parent
        out = ("err", e)
    try:
        conn.send(out)
    except Exception as e:              # an unpicklable result or exception: say what it was
        conn.send(("err", RuntimeError(f"{type(out[1]).__name__}: {out[1]}")))
    finally:
        conn.close()
        os._exit(0)


#: the AMDGPU dialect's sample (:attr:`litmus.dialect.Dialect.sample`, the one home of warm-up
#: programs), checked under its default model before the first fork; the name stays for the
#: campaign's warm-up (fuzz/campaign.py)
WARM_UP_TEST = get_dialect("AMDGPU").sample


@functools.lru_cache(maxsize=None)
def warm_up() -> None:
    """Run the oracle once in this process (compiles or loads its numba code; errors ignored)."""
    try:
        from litmus import parse
        from .check import check
        check(parse(WARM_UP_TEST, "<warm-up AMDGPU>"))
    except Exception:
        pass


def call_with_timeout(fn: Callable[..., Any], seconds: float | None, *args) -> Any:
    """``fn(*args)``, or :class:`Timeout` once ``seconds`` have passed (None or 0: no limit, run
    in this process)."""
    if not seconds:
        return fn(*args)
    warm_up()
    import multiprocessing          # here: a check without --timeout never needs it
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(seconds):
            raise Timeout(seconds)
        try:
            kind, value = parent.recv()
        except EOFError:
            raise RuntimeError(f"the oracle's process died (exit status {proc.exitcode})") from None
    finally:
        if proc.is_alive():
            os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        parent.close()
    if kind == "err":
        raise value
    return value

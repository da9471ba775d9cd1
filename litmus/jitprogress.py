"""What numba is compiling, and how far along it is, on stderr while it compiles.

A first run (an empty numba cache: a fresh clone, a ``pip install``, a source change that dropped
the cache, see :mod:`litmus.jitcache`) compiles the compiled functions it calls before it can
answer: seconds to minutes, with nothing else on the screen. :func:`announce` makes the
functions of a package (a module name prefix) say so while they compile:

- a first line the moment the first of them starts compiling: what (``the oracle (model
  rc11)``), how many functions that compile involves, and that it happens once;
- a progress line ``k of n functions, S s (the function now compiling)`` at least every
  :data:`EVERY` seconds (on a terminal: one line rewritten every second);
- a last line when the compile that started it ends (``compiled ... in S s``).

Loading from the cache says nothing: numba raises its ``numba:compile`` event for compilations
only. ``n`` is worked out when a compile starts: the compiled functions the entry point calls,
directly or through others (read from the code's global names: what numba types, it compiles),
that are not in the cache yet and not compiled before in this process; functions inlined at
their call sites (``inline="always"``) are not compiled on their own and are not counted. A count
that turns out short (a function compiled for a second signature) grows as it goes.

:func:`label` names what a compile is for (``model rc11``); :func:`group` reports several
compiles in a row (a share of the search's callees compiled ahead) as one; :func:`compiled` is
the number of functions of a package compiled so far in this process (what a test or ``scopefuzz warm`` checks
after loading from a cache another process filled: 0).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import types

#: seconds between progress lines when stderr is not a terminal
EVERY = 10.0

_LOCK = threading.RLock()
_PACKAGES: dict = {}            # module prefix -> what ("the oracle")
_LABELS: dict = {}              # module prefix -> what for ("model rc11"), or absent
_COUNTS: dict = {}              # module prefix -> functions compiled in this process
_STATE = None                   # the listener (one per process)


def _package_of(module: str) -> str | None:
    for p in _PACKAGES:
        if module == p or module.startswith(p + "."):
            return p
    return None


def _is_dispatcher(v) -> bool:
    return hasattr(v, "py_func") and hasattr(v, "targetoptions") and hasattr(v, "overloads")


def _inlined(d) -> bool:
    return d.targetoptions.get("inline") == "always"


def _names(code: types.CodeType) -> set:
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.update(c.co_names)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def reachable(entry) -> list:
    """The compiled functions ``entry`` (a numba dispatcher) calls, directly or through others,
    itself included: the dispatchers its code names as globals (or as attributes of modules it
    names), transitively. Numba types a function's whole body, so it compiles all of them."""
    seen = {id(entry): entry}
    todo = [entry]
    while todo:
        d = todo.pop()
        f = getattr(d, "py_func", None)
        if f is None:
            continue
        names = _names(f.__code__)
        g = f.__globals__
        found = []
        for n in names:
            v = g.get(n)
            if isinstance(v, types.ModuleType):
                found.extend(getattr(v, m, None) for m in names)
            else:
                found.append(v)
        for v in found:
            if _is_dispatcher(v) and id(v) not in seen:
                seen[id(v)] = v
                todo.append(v)
    return list(seen.values())


def _cached(d) -> bool:
    """Has numba's cache an index for ``d`` (some signature of it)? False when unknown."""
    try:
        return os.path.exists(d._cache._cache_file._index_path)
    except AttributeError:
        return False


def uncached(entries) -> bool:
    """Has any of ``entries`` (numba dispatchers) no index in numba's cache (it would compile)?"""
    return any(not _cached(d) for d in entries)


def _functions(k: int) -> str:
    return f"{k} function" + ("" if k == 1 else "s")


def _name(d) -> str:
    f = d.py_func
    return f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}"


class _Progress:
    """The ``numba:compile`` listener and the thread that prints progress while it is busy."""

    def __init__(self):
        self.depth = 0              # nesting of compiles of announced packages
        self.top = None             # package of the outermost compile in progress
        self.t0 = 0.0
        self.planned: dict = {}     # id -> dispatcher: functions to compile (n)
        self.done: dict = {}        # id -> dispatcher: compiled in this process (k)
        self.stack: list = []       # names of the functions compiling now, outermost first
        self.last = 0.0             # when the last line was printed
        self.said: set = set()      # packages whose first line was printed
        self.wake = threading.Event()
        self.thread = None
        self.tty = False
        self.group = None           # (package, entry dispatchers) of the group() in progress
        self.grouped = False        # the group's compile has begun (it holds one depth level)

    # -- numba's events
    def on_start(self, ev):
        disp = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
        package = _package_of(module)
        with _LOCK:
            self.stack.append(_name(disp) if package else None)
            if package is None:
                return
            if self.depth == 0:
                entries = [disp]
                if self.group is not None and self.group[0] == package:
                    entries += self.group[1]
                    self.grouped = True
                    self.depth += 1         # held until the group ends: one compile
                self._begin(package, disp, entries)
            elif id(disp) not in self.planned and not _inlined(disp):
                self.planned[id(disp)] = disp
            self.depth += 1

    def on_end(self, ev):
        disp = (ev.data or {}).get("dispatcher")
        with _LOCK:
            name = self.stack.pop() if self.stack else None
            if name is None:
                return
            self.depth -= 1
            if not _inlined(disp) and id(disp) not in self.done:
                self.done[id(disp)] = disp
                package = _package_of(disp.py_func.__module__)
                _COUNTS[package] = _COUNTS.get(package, 0) + 1
            if self.depth == 0:
                self._finish()

    # -- lines
    def _what(self, package) -> str:
        lab = _LABELS.get(package)
        return f"{_PACKAGES[package]} ({lab})" if lab else _PACKAGES[package]

    def _k_n(self):
        k = sum(1 for i in self.planned if i in self.done)
        return k, max(len(self.planned), k)

    def _begin(self, package, disp, entries):
        self.top = package
        self.t0 = time.monotonic()
        self.planned = {i: d for i, d in self.planned.items() if i not in self.done}
        for e in entries:
            for d in reachable(e):
                if id(d) not in self.done and not _inlined(d) and (d is disp or not _cached(d)):
                    self.planned[id(d)] = d
        self.tty = _isatty()
        if package not in self.said:
            self.said.add(package)
            caching = _CACHING[0]
            when = ("first run only; `scopefuzz warm` compiles everything ahead" if caching()
                    else "every run: no writable cache directory")
            where = " into numba's cache" if caching() else ""
            self._line(f"scopefuzz: compiling {self._what(package)}{where} "
                       f"({_functions(len(self.planned))}, {when})", final=True)
        else:
            self._progress()
        if self.thread is None:
            self.thread = threading.Thread(target=self._beat, name="scopefuzz-jit-progress",
                                           daemon=True)
            self.thread.start()
        self.wake.set()

    def _progress(self, final=False):
        k, n = self._k_n()
        now = self.stack[-1] if self.stack and self.stack[-1] else ""
        self._line(f"scopefuzz: compiling {self._what(self.top)}: {k} of {n} functions, "
                   f"{time.monotonic() - self.t0:.0f} s" + (f" ({now})" if now else ""), final)

    def _finish(self):
        k, n = self._k_n()
        self._line(f"scopefuzz: compiled {self._what(self.top)}: {_functions(k)} in "
                   f"{time.monotonic() - self.t0:.1f} s", final=True)
        self.top = None

    def _line(self, text, final=False):
        self.last = time.monotonic()
        try:
            if self.tty and not final:
                sys.stderr.write("\r" + text + "\x1b[K")
            else:
                sys.stderr.write(("\r\x1b[K" if self.tty else "") + text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    def _beat(self):
        while True:
            self.wake.wait()
            time.sleep(1.0)
            with _LOCK:
                if self.top is None:
                    self.wake.clear()
                    continue
                if time.monotonic() - self.last >= (1.0 if self.tty else EVERY):
                    self._progress()


def _isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


#: whether compiled code goes to an on-disk cache: a callable handed over by
#: :func:`litmus.jitcache.announce_compiles` (this module does not import the cache's module)
_CACHING = [lambda: True]


def announce(package: str, what: str, caching=None) -> None:
    """From now on, compiles of ``package``'s functions (a module name prefix) in this process
    are reported on stderr as ``WHAT`` (see the module docstring); ``caching()`` says whether
    they go to an on-disk cache (for the wording of the first line)."""
    global _STATE
    if caching is not None:
        _CACHING[0] = caching
    with _LOCK:
        if package in _PACKAGES:
            return
        _PACKAGES[package] = what
        if _STATE is not None:
            return
        from numba.core import event

        state = _Progress()

        class _Listener(event.Listener):
            def on_start(self, ev):
                state.on_start(ev)

            def on_end(self, ev):
                state.on_end(ev)

        event.register("numba:compile", _Listener())
        _STATE = state


@contextlib.contextmanager
def group(package: str, entries):
    """Compiles of ``entries`` (dispatchers of ``package``, compiled one after the other in the
    block, e.g. with explicit signatures) are reported as one compile: one first line counting
    all of them and what they call (those not in the cache), ``k of n`` across the lot, one
    ``compiled`` line when the block ends. Loads from the cache say nothing, as always."""
    state = _STATE
    if state is None:
        yield
        return
    with _LOCK:
        state.group = (package, list(entries))
    try:
        yield
    finally:
        with _LOCK:
            state.group = None
            if state.grouped:
                state.grouped = False
                state.depth -= 1
                if state.depth == 0:
                    state._finish()


def label(package: str, text: str | None) -> None:
    """Name what ``package``'s next compiles are for (``model rc11``; None: nothing)."""
    with _LOCK:
        if text:
            _LABELS[package] = text
        else:
            _LABELS.pop(package, None)


def compiled(package: str) -> int:
    """How many of ``package``'s functions this process compiled (not loaded from the cache)."""
    return _COUNTS.get(package, 0)

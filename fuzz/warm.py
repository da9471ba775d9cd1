"""``scopefuzz warm``: compile (or load) every compiled function of the oracle and the simulator
into numba's on-disk cache, so that no later run compiles (``make setup`` runs it); and the same,
for only what one command uses, ahead of a campaign (:func:`compile_ahead`).

The compiled code comes in *parts* with little code in common (:data:`PARTS`: the oracle's
search, its AMDGPU builder, its search over more than 64 events, symmetric programs, the
simulator). Numba compiles in the process that calls a function, one function at a time, so
``--jobs N`` compiles up to N parts at once, each in a process of its own (``scopefuzz warm
--part NAME``) writing into the shared cache (numba writes each cache file whole, under a
temporary name, so concurrent writers and readers are safe). This process then runs the full
warm-up (:func:`oracle.warmup.warm`, :func:`hw.sim.warmup.warm`), which loads what the parts
compiled, compiles whatever none of them covered (an explanation's own code), and says how many
functions it compiled itself: 0 when the cache was filled ahead. Each process shows its
compiles as they go (:mod:`litmus.jitprogress`); this one says when each part is done (k of n).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from litmus.jitcache import cores
from litmus.jitprogress import compiled, uncached
from oracle.warmup import compile_here_then_wait, share_cached, warm as warm_oracle

#: part -> (what, "module:function" compiling or loading it; the oracle's are in oracle/warmup.py)
PARTS = {
    "search": ("the oracle's search (every model's check)", "oracle.warmup:part_search"),
    "amdgpu": ("the oracle's AMDGPU builder", "oracle.warmup:part_amdgpu"),
    "wide": ("the oracle's search over more than 64 events", "oracle.warmup:part_wide"),
    "symmetry": ("the oracle's symmetric-program closure", "oracle.warmup:part_symmetry"),
    "sim": ("the simulator", "hw.sim.warmup:warm"),
    # a campaign's helper process (compile_ahead), not in `warm`'s list (PARTS_ALL): the
    # simulator's randomized runs only; a share of the search's callees; what explanations call
    "sim-run": ("the simulator's randomized runs", "hw.sim.warmup:warm_run"),
    "search-helper": ("a share of the oracle's search", "oracle.warmup:part_search_helper"),
    "explain": ("the oracle's explanations", "oracle.warmup:part_explain"),
}

#: the parts ``scopefuzz warm`` compiles (``sim`` covers ``sim-run``)
PARTS_ALL = ["search", "amdgpu", "wide", "symmetry", "sim"]


#: part -> its compiled entry points ("module:name"): a part whose entry points all have an
#: index in numba's cache loads in this process instead of starting one of its own
ENTRIES = {
    "search": ["oracle.explore:search_one_word"],
    "amdgpu": ["oracle.models.amdgpu.static:derive"],
    "wide": ["oracle.explore:search_words"],
    "symmetry": ["oracle.symmetry:_close"],
    "sim": ["hw.sim.kernel:run_random", "hw.sim.kernel:run_exhaustive"],
    "sim-run": ["hw.sim.kernel:run_random"],
    "search-helper": ["oracle.explore:_eval_prefix", "oracle.explore:_eval_upper"],
    "explain": ["oracle.engine:eval_rows_one_word"],      # (compile_ahead asks for its signatures)
}


def uncached_parts(names: list[str]) -> list[str]:
    """The parts of ``names`` with an entry point numba's cache has no index for."""
    import pkgutil
    return [n for n in names if uncached([pkgutil.resolve_name(e) for e in ENTRIES[n]])]


def run_part(name: str) -> None:
    """Compile (or load) one part in this process."""
    import pkgutil
    pkgutil.resolve_name(PARTS[name][1])()


def _say(text: str) -> None:
    print(f"scopefuzz warm: {text}", file=sys.stderr, flush=True)


def compile_parts(names: list[str], jobs: int, say=_say) -> list[str]:
    """Compile ``names`` (parts of :data:`PARTS`), up to ``jobs`` at a time, each in a process of
    its own (this interpreter, this environment: the same numba cache); returns the parts whose
    process failed (their compiled code then compiles in this process when used). Says when each
    is done: ``part k of n done``."""
    todo = list(names)
    running: dict = {}
    failed = []
    n, k = len(names), 0
    t0 = time.monotonic()
    while todo or running:
        while todo and len(running) < max(1, jobs):
            name = todo.pop(0)
            running[name] = subprocess.Popen(
                [sys.executable, "-m", "fuzz.cli", "warm", "--part", name],
                stdin=subprocess.DEVNULL, env=os.environ.copy())
        done = None
        while done is None:
            for name, proc in running.items():
                if proc.poll() is not None:
                    done = name
                    break
            else:
                time.sleep(0.2)
        proc = running.pop(done)
        k += 1
        if proc.returncode != 0:
            failed.append(done)
            say(f"part {k} of {n} failed: {PARTS[done][0]} (exit {proc.returncode}); it "
                f"compiles here instead")
        else:
            say(f"part {k} of {n} done: {PARTS[done][0]} ({time.monotonic() - t0:.0f} s)")
    return failed


def default_jobs() -> int:
    """Processes for ``warm``: one per core, and no more than there are parts."""
    return max(1, min(cores(), len(PARTS_ALL)))


def compile_ahead(sim: bool, say=None, model: str | None = None):
    """Before a campaign (or a ``pytest --litmus`` session) on a cold numba cache: start one
    helper process (``scopefuzz warm --part ... --tell``) and share the compiling with it, so
    that both cores work and the search, the longest compile, starts sooner:

    - when the oracle's search is not in the cache, its callees are compiled in two halves at
      once, ``oracle.warmup.search_share("here")`` in this process (then ``model``'s builder,
      when named) and ``"helper"`` in the helper; this function returns when both halves are in
      the cache (the helper says ``done search-helper`` on its stdout), so that the caller's
      first check compiles only ``explore`` and the search's entry point, loading the rest;
    - the helper then compiles what explanations call (``"explain"``, when not cached: after a
      ``check`` compiled the search, that alone) and, when ``sim``, the simulator's randomized
      runs, while the caller compiles the search.

    Returns a function that waits for the helper (call it once the caller's own compiling is
    done; it returns at once when nothing was started). Any failure here only means that the
    caller compiles that code itself when it first uses it."""
    search = bool(uncached_parts(["search"]))
    parts = (["search-helper"] if search else []) + \
        ([] if share_cached("explain") else ["explain"]) + \
        (uncached_parts(["sim-run"]) if sim else [])
    if not parts:
        return lambda: None
    say = say or (lambda text: print(f"scopefuzz: {text}", file=sys.stderr, flush=True))
    argv = [sys.executable, "-m", "fuzz.cli", "warm", "--tell"]
    for p in parts:
        argv += ["--part", p]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                env=os.environ.copy(), text=True)
    except OSError:
        return lambda: None
    say(f"compiling {' and '.join(PARTS[p][0] for p in parts)} in a helper process "
        f"(pid {proc.pid}), into numba's cache" + (", the rest of the search here" if search
                                                    else ""))
    if search:
        compile_here_then_wait(proc, model)

    def wait():
        try:
            proc.stdout.read()
        except (OSError, ValueError):
            pass
        proc.wait()
    return wait


def cmd_warm(args) -> int:
    if args.part:
        failed = 0
        for name in args.part:          # in order; one failing does not stop the next
            try:
                run_part(name)
            except Exception as e:
                failed += 1
                print(f"scopefuzz warm: part {name} failed: {type(e).__name__}: {e}",
                      file=sys.stderr, flush=True)
            if args.tell:
                print(f"done {name}", flush=True)
        return 1 if failed else 0
    parts = [p for p in PARTS_ALL if not (args.oracle_only and p == "sim")]
    jobs = args.jobs if args.jobs is not None else default_jobs()
    t0 = time.perf_counter()
    ahead = uncached_parts(parts) if jobs >= 2 else []
    if len(ahead) >= 2:
        _say(f"compiling {len(ahead)} parts on {min(jobs, len(ahead))} processes: "
             f"{', '.join(ahead)}")
        compile_parts(ahead, jobs)
    else:
        jobs = 1                    # one part or none to compile: here, with its progress
    t1 = time.perf_counter()
    models = warm_oracle()
    t2 = time.perf_counter()
    here = compiled("oracle")
    _say(f"the oracle ({', '.join(models)}): {t2 - t1:.1f} s here"
         + (f", {here} function(s) compiled here" if here else ", all loaded from the cache")
         + (f" (parts: {t1 - t0:.1f} s)" if jobs >= 2 else ""))
    if not args.oracle_only:
        from hw.sim.warmup import warm as warm_sim
        warm_sim()
        here = compiled("hw.sim")
        _say(f"the simulator: {time.perf_counter() - t2:.1f} s here"
             + (f", {here} function(s) compiled here" if here else ", loaded from the cache"))
    return 0


def register(sub) -> None:
    p = sub.add_parser("warm", help="compile the oracle and the simulator once (make setup)",
                       description="Compile (or load from numba's on-disk cache) every compiled "
                                   "function of the oracle and the simulator, so that the next "
                                   "runs start at once. make setup runs it.")
    p.add_argument("--oracle-only", action="store_true", help="the oracle only")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="compile up to N parts at once, each in a process of its own "
                        "(default: one per core; 1: all in this process)")
    p.add_argument("--part", choices=sorted(PARTS), action="append", default=None,
                   help=argparse_hidden())
    p.add_argument("--tell", action="store_true", help=argparse_hidden())
    p.set_defaults(func=cmd_warm)


def argparse_hidden():
    import argparse
    return argparse.SUPPRESS

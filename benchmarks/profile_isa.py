"""Where an ``isa`` campaign's time goes, per program: CPU of this process by phase, and CPU of
the clang-22 / llvm-objdump-22 child processes.

Run: ``.venv/bin/python benchmarks/profile_isa.py [--backend isa:gfx942] [--seed 3]
[--programs 300] [--warm]``. The campaign runs in this process (``--jobs 1``) from an empty
compile cache (a fresh temporary ``SCOPEFUZZ_ISA_CACHE``) unless ``--warm``.

Each phase is a function of the pipeline wrapped to add its CPU time (``time.process_time``,
so the other processes of a loaded machine do not inflate it; the thread's own CPU, except the
simulator's, whose numba kernel runs its chunks on a thread pool: process CPU) to the phase's
account,
*exclusive* of the phases it calls (``interp`` inside ``build`` counts as ``interp``). Inside a
finding's minimization and record (``Campaign._finding``) every phase is counted apart, as
``minimize/<phase>``. Child CPU (``RUSAGE_CHILDREN``) is counted per compile call and charged to
``clang+objdump (one test)`` when a test compiles alone and to
``minimize/clang+objdump (batch)`` for the minimizer's batches of variants; the rest of the
children's CPU is the campaign's ``clang+objdump (batch)`` (compiled in a background thread
while the previous batch runs). The number of sources compiled is shown per compile phase.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzz import campaign as camp  # noqa: E402
from fuzz import journal as jr  # noqa: E402
from fuzz.strategies import parse_features  # noqa: E402
from hw.isa import disasm, interp, machine, source, toolchain, translate  # noqa: E402
from hw.sim import backend as simb  # noqa: E402
from hw.sim import kernel  # noqa: E402

_acct: dict[str, float] = {}
_calls: dict[str, int] = {}
_compiled: dict[str, int] = {}      # sources compiled, per phase
_stack = threading.local()


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _wrap(owner, attr: str, phase: str, child: str | None = None):
    """Replace ``owner.attr`` by a wrapper charging its exclusive CPU time to ``phase``."""
    fn = getattr(owner, attr)

    def wrapper(*a, **k):
        main = threading.current_thread() is threading.main_thread()
        st = getattr(_stack, "s", None)
        if st is None:
            st = _stack.s = []
        inside = any(p == "minimize" for p, _ in st)
        name = f"minimize/{phase}" if inside and phase != "minimize" else phase
        frame = [name, 0.0]
        st.append(frame)
        clock = time.process_time if phase == "simulator iterations" else time.thread_time
        t0 = clock()
        c0 = _children() if child and main else 0.0
        try:
            out = fn(*a, **k)
            if attr == "compile_batch" and out:
                cname = f"minimize/{child}" if inside else child
                _compiled[cname] = _compiled.get(cname, 0) + out
            return out
        finally:
            dt = clock() - t0
            st.pop()
            _acct[name] = _acct.get(name, 0.0) + dt - frame[1]
            _calls[name] = _calls.get(name, 0) + 1
            if st:
                st[-1][1] += dt
            if child and main and (inside or attr != "compile_batch"):
                cname = (f"minimize/{child}" if inside else child)
                _acct[cname] = _acct.get(cname, 0.0) + _children() - c0
    setattr(owner, attr, wrapper)


class _CountingSubprocess:
    """``toolchain.subprocess`` with ``run`` counted: a test compiled alone (compile_source runs
    clang-22 with ``subprocess.run``; a batch uses ``Popen``)."""

    def __getattr__(self, name):
        return getattr(subprocess, name)

    @staticmethod
    def run(args, *a, **k):
        if args and args[0] == toolchain.CLANG:
            st = getattr(_stack, "s", None) or []
            inside = any(p == "minimize" for p, _ in st)
            cname = "minimize/clang+objdump (one test)" if inside else "clang+objdump (one test)"
            _compiled[cname] = _compiled.get(cname, 0) + 1
        return subprocess.run(args, *a, **k)


def instrument() -> None:
    toolchain.subprocess = _CountingSubprocess()
    _wrap(camp.Campaign, "_finding", "minimize")
    _wrap(camp, "draw_program", "draw")
    _wrap(source, "generate", "source")
    _wrap(toolchain, "compile_source", "compile (in-process)", "clang+objdump (one test)")
    _wrap(toolchain, "compile_batch", "compile (in-process)", "clang+objdump (batch)")
    _wrap(disasm, "parse", "disasm parse")
    _wrap(interp.Thread, "run", "interp")
    _wrap(translate, "rows", "translate")
    _wrap(machine, "machine", "machine layout")
    _wrap(machine, "lower", "machine layout")
    _wrap(kernel, "run_random", "simulator iterations")
    _wrap(simb.SimBackend, "_histogram", "simulator iterations")
    from oracle import judge
    for m in ("__init__", "_call"):
        _wrap(judge.Judge, m, "oracle")
    _wrap(camp, "compare", "oracle")          # the histogram's outcomes against the model
    _wrap(jr.Journal, "append", "journal")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="isa:gfx942")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--features", default=None)
    ap.add_argument("--warm", action="store_true", help="keep the user's compile cache")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.warm:
            os.environ["SCOPEFUZZ_ISA_CACHE"] = os.path.join(tmp, "cache")
            toolchain.cache_dir.cache_clear()
        instrument()
        cfg = camp.Config(backend=args.backend, out=os.path.join(tmp, "camp"), seed=args.seed,
                          programs=args.programs, features=parse_features(args.features))
        c = camp.Campaign(cfg)
        _ = c.backend, c.checker
        c.check_backend()
        c.open()
        c._warm_up()
        c.journal.close()
        c._lock_file.close()
        _acct.clear()
        _calls.clear()
        _compiled.clear()
        import shutil
        shutil.rmtree(cfg.out)
        c = camp.Campaign(cfg)
        p0, ch0, w0 = time.process_time(), _children(), time.perf_counter()
        s = c.run()
        proc, child, wall = time.process_time() - p0, _children() - ch0, time.perf_counter() - w0
    n = max(s.programs, 1)
    print(f"{args.backend} seed {args.seed}: {s.programs} programs ({s.executed} executed, "
          f"{s.refused} refused, {s.errors} errors, {s.findings} findings) in {wall:.1f} s wall "
          f"({s.programs / wall:.1f} programs/s; load average {os.getloadavg()[0]:.1f})")
    print(f"CPU: this process {proc:.2f} s ({1000 * proc / n:.1f} ms/program), child processes "
          f"{child:.2f} s ({1000 * child / n:.1f} ms/program)")
    print(f"{'phase':<44} {'s':>8} {'ms/program':>11} {'calls':>7} {'compiled':>9}")
    _acct["clang+objdump (batch)"] = child - sum(v for k, v in _acct.items()
                                                 if "clang+objdump" in k
                                                 and k != "clang+objdump (batch)")
    rest = proc - sum(v for k, v in _acct.items() if "clang+objdump" not in k)
    rows = sorted(_acct.items(), key=lambda kv: -kv[1]) + [("(other, this process)", rest)]
    for k, v in rows:
        print(f"{k:<44} {v:>8.2f} {1000 * v / n:>11.1f} {_calls.get(k, ''):>7} "
              f"{_compiled.get(k, ''):>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

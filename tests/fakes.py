"""Test doubles for the campaign loop: an SC interleaving oracle and a backend with stale reads.

The fuzzer's loop, minimizer, journal and reports are exercised without the real oracle and
simulator (which live in ``oracle/`` and ``hw/sim/``):

- :func:`sc_check` enumerates every interleaving of a (small) program under sequential consistency
  and returns the oracle's ``Result`` (model ``sc``: ``verdict``, ``states``, ``allows``);
  async loads copy at once, fences, marks, waits and barriers are no-ops;
- :class:`StaleReadBackend` runs random interleavings and, with probability ``stale``, lets a load
  of a location another thread writes return that location's initial value: a "bug" the SC oracle
  forbids in MP/SB/CoRR-like programs and allows elsewhere. ``stale=0`` is a correct backend.

Both only know the AMDGPU instruction set's data flow; they are not memory models.
"""

from __future__ import annotations

import os
import random
import sys
import textwrap

from hw.backend import Backend, BackendError, Histogram
from litmus import Test
from litmus.ir import Instr
from litmus.outcome import verdict
from litmus.rmw import OP_CODES, apply_rmw
from oracle import Result

def _mem_key(test: Test, tid: int, loc: str):
    return (loc, test.instance(tid, "wg")) if test.is_lds(loc) else (loc,)


def _step(test: Test, tid: int, ins: Instr, mem: dict, regs: dict, read=None) -> None:
    """Execute one instruction; ``read(tid, loc, key)`` may override a load's value."""
    b = ins.base
    if b in ("ld", "st", "rmw", "cas"):
        key = _mem_key(test, tid, ins.loc)
        cur = mem.get(key, test.location(ins.loc).init)
        if b == "ld":
            regs[(tid, ins.reg)] = read(tid, ins.loc, key, cur) if read else cur
        elif b == "st":
            mem[key] = ins.args[0]
        elif b == "rmw":
            regs[(tid, ins.reg)] = cur
            mem[key] = apply_rmw(OP_CODES[ins.op], cur, ins.args[0])
        else:
            regs[(tid, ins.reg)] = cur
            if cur == ins.args[0]:
                mem[key] = ins.args[1]
    elif b == "async.ld":
        src = mem.get(_mem_key(test, tid, ins.loc), test.location(ins.loc).init)
        mem[_mem_key(test, tid, ins.lds)] = src


def _outcome(test: Test, mem: dict, regs: dict) -> tuple[int, ...]:
    out = []
    for tid in range(len(test.threads)):
        for r in test.registers(tid):
            out.append(regs.get((tid, r), test.register_init(tid, r)))
    for loc in test.globals:
        out.append(mem.get((loc.name,), loc.init))
    return tuple(out)


class FakeOracleError(Exception):
    pass


def sc_check(test: Test, model: str | None = None, max_states: int = 200_000) -> Result:
    """All SC outcomes of ``test`` (every interleaving), as the oracle's ``Result``."""
    keys = test.observables()
    outcomes: set[tuple] = set()
    seen: set = set()
    n = len(test.threads)
    stack = [((0,) * n, (), ())]
    while stack:
        pcs, mem_t, regs_t = stack.pop()
        if (pcs, mem_t, regs_t) in seen:
            continue
        seen.add((pcs, mem_t, regs_t))
        if len(seen) > max_states:
            raise FakeOracleError(f"{test.name}: more than {max_states} SC states")
        done = True
        for t in range(n):
            if pcs[t] < len(test.threads[t].code):
                done = False
                mem, regs = dict(mem_t), dict(regs_t)
                _step(test, t, test.threads[t].code[pcs[t]], mem, regs)
                npcs = pcs[:t] + (pcs[t] + 1,) + pcs[t + 1:]
                stack.append((npcs, tuple(sorted(mem.items())), tuple(sorted(regs.items()))))
        if done:
            outcomes.add(_outcome(test, dict(mem_t), dict(regs_t)))
    states = [dict(zip(keys, o)) for o in sorted(outcomes)]
    return Result("sc", verdict(test.condition, states), states,
                  candidates=len(seen), consistent=len(states))


class StaleReadBackend(Backend):
    """Random interleavings; a load of a location some other thread writes may see its init value."""

    def __init__(self, stale: float = 0.3, fail_on: str | None = None):
        self.stale = stale
        self.fail_on = fail_on          # a test name prefix this backend refuses (error paths)
        self.name = f"stale:{stale}"

    def run(self, test: Test, iterations: int, seed: int = 0) -> Histogram:
        if self.fail_on and test.name.startswith(self.fail_on):
            raise BackendError(f"{test.name}: refused by the fake backend")
        rng = random.Random(seed)
        hist = Histogram(test.observables(), params={"stale": self.stale})
        writers: dict[str, set[int]] = {}
        for t, _, ins in test.instructions():
            if ins.writes and ins.loc:
                writers.setdefault(ins.loc, set()).add(t)

        def read(tid, loc, key, cur):
            if writers.get(loc, set()) - {tid} and rng.random() < self.stale:
                return test.location(loc).init
            return cur

        n = len(test.threads)
        for _ in range(iterations):
            pcs = [0] * n
            mem: dict = {}
            regs: dict = {}
            live = [t for t in range(n) if test.threads[t].code]
            while live:
                t = live[rng.randrange(len(live))]
                _step(test, t, test.threads[t].code[pcs[t]], mem, regs, read)
                pcs[t] += 1
                if pcs[t] == len(test.threads[t].code):
                    live.remove(t)
            hist.add(_outcome(test, mem, regs))
        return hist


def make_backend(spec: str | None) -> StaleReadBackend:
    """Backend factory for ``hw.FAMILIES`` registration in tests (``"stale": "fakes:make_backend"``):
    ``stale`` or ``stale:0.3``."""
    return StaleReadBackend(float(spec) if spec else 0.3)


_RUNNER = textwrap.dedent("""
    import sys
    sys.path[:0] = [{root!r}, {root!r} + "/tests"]
    import hw
    from fuzz import campaign
    from fakes import sc_check
    hw.FAMILIES["stale"] = "fakes:make_backend"
    campaign.default_checker = lambda: sc_check
    if __name__ == "__main__":       # spawned workers import this file (as __mp_main__) too
        from fuzz.cli import main
        sys.exit(main(sys.argv[1:]))
""")


def fuzz_cli(tmp_path, *args) -> list[str]:
    """The command line of ``scopefuzz fuzz`` against the stale-read backend and the SC oracle:
    a runner script registers both (in the parent and in every worker process it spawns)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / "runner.py"
    script.write_text(_RUNNER.format(root=root))
    return [sys.executable, str(script), "fuzz", "--backend", "stale:0.3", "--features",
            "atomics,plain,fences,rmw", "--iterations", "150", "--quiet", *args]

"""The compilers-in-the-loop campaign (``scopefuzz fuzz --compile SPEC``, issue 29).

Programs 0, 1, ... of a seed (:func:`fuzz.cuda_strategies.draw`) are compiled by a real compiler
(:mod:`hw.ptxc`, its compile cache), read back and judged (:func:`fuzz.compilers.judge`). A
counterexample is minimized (fewer threads and ops, weaker orders, narrower scopes, while the
compiled program still escapes the source model and the source stays race-free), deduplicated
on its minimized text and written to ``OUT/findings/<id>/``: ``finding.json`` (spec, command,
version, extra outcomes, source, PTX, read-back) and ``finding.md`` (both executions and the
marked PTX, :func:`fuzz.compilers.explain_counterexample`). ``OUT/compilers.json`` holds the
counts (holds, skipped(racy), refused, errors, counterexamples) and programs/s.
Not resumable: a campaign starts from program 0 (the programs are deterministic per seed, so a
rerun with the same seed reproduces it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field

import hw
import hw.ptxc as ptxc
from litmus import parse
from oracle import OracleError

from .compilers import explain_counterexample, judge
from .cuda_strategies import Prog, draw, render, smaller

RESULT = "compilers.json"


@dataclass
class Stats:
    programs: int = 0
    holds: int = 0
    racy: int = 0
    refused: int = 0
    errors: int = 0
    counterexamples: int = 0
    baseline_counterexamples: int = 0   # with a mutant: the un-mutated PTX escapes too
    cached: int = 0
    seconds: float = 0.0
    found: list = field(default_factory=list)
    error_samples: list = field(default_factory=list)

    def as_json(self, cfg: dict) -> dict:
        d = dataclasses.asdict(self)
        d["seconds"] = round(self.seconds, 1)
        d["programs_per_s"] = round(self.programs / self.seconds, 2) if self.seconds else 0
        return dict(cfg, **d)


class CompilerCampaign:
    def __init__(self, out: str, compiler, seed: int = 0, seconds: float | None = 60.0,
                 programs: int | None = None, mutant: str | None = None,
                 minimize_seconds: float = 10.0, progress=None, stop_at_first: bool = False):
        self.out, self.compiler, self.seed = out, compiler, seed
        self.seconds, self.programs, self.mutant = seconds, programs, mutant
        self.mutate = None
        if mutant:
            from hw.ptxc.mutants import get
            self.mutate = get(mutant)
        self.minimize_seconds, self.progress = minimize_seconds, progress
        self.stop_at_first = stop_at_first
        self.first_found_s: float | None = None

    def config(self) -> dict:
        return {"compiler": self.compiler.spec(), "ptx_mutant": self.mutant, "seed": self.seed,
                "seconds_limit": self.seconds, "programs_limit": self.programs}

    def verdict(self, prog: Prog):
        """(status, test, compiled, verdict) of one program; status holds / racy / refused /
        error / counterexample."""
        test = parse(render(prog), f"{prog.name}.litmus")
        try:
            why = ptxc.refusal(test, self.compiler)
            if why:
                return "refused", test, None, why
            compiled = ptxc.compile_test(test, self.compiler, self.mutate)
            v = judge(test, compiled.test)
        except hw.BackendRefused as e:
            return "refused", test, None, str(e)
        except (hw.BackendError, OracleError) as e:
            return "error", test, None, str(e).splitlines()[0] if str(e) else type(e).__name__
        status = "racy" if v.status == "skipped" else v.status
        return status, test, compiled, v

    def _baseline_fails(self, prog: Prog) -> bool:
        mutate, self.mutate = self.mutate, None
        try:
            return self.verdict(prog)[0] == "counterexample"
        finally:
            self.mutate = mutate

    def minimize(self, prog: Prog) -> Prog:
        t0 = time.monotonic()
        changed = True
        while changed and time.monotonic() - t0 < self.minimize_seconds:
            changed = False
            for cand in smaller(prog):
                if time.monotonic() - t0 >= self.minimize_seconds:
                    break
                if self.verdict(cand)[0] == "counterexample":
                    prog, changed = cand, True
                    break
        return prog

    def run(self) -> Stats:
        os.makedirs(os.path.join(self.out, "findings"), exist_ok=True)
        st, seen = Stats(), set()
        t0 = time.monotonic()
        i = 0
        while True:
            if self.programs is not None and i >= self.programs:
                break
            if self.seconds is not None and time.monotonic() - t0 >= self.seconds:
                break
            prog = draw(self.seed, i)
            i += 1
            st.programs += 1
            status, _, compiled, v = self.verdict(prog)
            if compiled is not None and compiled.cached:
                st.cached += 1
            if status == "holds":
                st.holds += 1
            elif status == "racy":
                st.racy += 1
            elif status == "refused":
                st.refused += 1
            elif status == "error":
                st.errors += 1
                if len(st.error_samples) < 10:
                    st.error_samples.append(f"{prog.name}: {v}")
            else:
                if self.mutate is not None and self._baseline_fails(prog):
                    # the compiler's own PTX already escapes: not the planted bug's finding
                    st.baseline_counterexamples += 1
                    if self.stop_at_first:
                        continue
                    self._record(prog, st, seen)
                    continue
                if self.first_found_s is None:
                    self.first_found_s = time.monotonic() - t0
                if self.stop_at_first:
                    st.counterexamples += 1
                    break
                self._record(prog, st, seen)
            if self.progress and st.programs % 10 == 0:
                self.progress(st, time.monotonic() - t0)
        st.seconds = time.monotonic() - t0
        self._write(st)
        return st

    def _record(self, prog: Prog, st: Stats, seen: set) -> None:
        small = self.minimize(prog)
        key = render(dataclasses.replace(small, name="cx"))
        if key in seen:
            return
        seen.add(key)
        status, test, compiled, v = self.verdict(small)
        if status != "counterexample":     # minimized into something else: keep the original
            small = prog
            status, test, compiled, v = self.verdict(prog)
        st.counterexamples += 1
        fid = f"{st.counterexamples:03d}"
        d = os.path.join(self.out, "findings", fid)
        os.makedirs(d, exist_ok=True)
        text = explain_counterexample(test, compiled, v)
        rec = {"id": fid, "from": prog.name, "compiler": compiled.compiler.spec(),
               "ptx_mutant": self.mutant, "command": compiled.command,
               "version": compiled.version, "source_model": v.source_model, "extra": v.extra,
               "source": render(small), "kernel": compiled.source, "ptx": compiled.ptx}
        with open(os.path.join(d, "finding.json"), "w", encoding="utf-8") as f:
            json.dump(rec, f, indent=1)
        with open(os.path.join(d, "finding.md"), "w", encoding="utf-8") as f:
            f.write(f"# Finding {fid}: {compiled.compiler.spec()}"
                    f"{' with PTX mutant ' + self.mutant if self.mutant else ''}\n\n"
                    f"Minimized from `{prog.name}` (seed {self.seed}).\n\n## Source (CUDA dialect)\n\n"
                    f"```\n{render(small)}```\n\n## Kernel given to the compiler\n\n"
                    f"```\n{compiled.source}\n```\n\n## Check\n\n```\n{text}```\n")
        st.found.append({"dir": d, "from": prog.name, "extra": v.extra})
        self._write(st)

    def _write(self, st: Stats) -> None:
        tmp = os.path.join(self.out, RESULT + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(st.as_json(self.config()), f, indent=1)
        os.replace(tmp, os.path.join(self.out, RESULT))

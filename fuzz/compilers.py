"""Compilers in the loop (issue 29): does a compiled program stay inside its source model?

A C / OPENCL / CUDA litmus test is compiled to PTX by a real compiler and read back into the PTX
litmus dialect (:mod:`hw.ptxc`, ``Compiled.test``). The compiler is *sound* for the test when
every outcome the PTX model allows for the compiled program is allowed by the source model for
the source (Geeson & Smith, CGO 2024, carried to scoped GPU atomics; docs/compilers.md). A
source with a data race (verdict Undef under its model) says nothing: it is *skipped*.

The source model of each dialect is :data:`SOURCE_MODEL` (why each, docs/compilers.md): C ->
``c11`` (PTX allows load buffering of relaxed accesses; RC11's po|rf acyclicity forbids it, so
the standard mapping is not sound against RC11 and every LB test would be a false
counterexample), OPENCL -> ``opencl``, CUDA -> ``opencl`` (scoped C++ with block = work-group,
device = device).

Outcomes are compared on the source's observables only: the read-back has registers of its own
(hw/ptxc INTERFACE: ``r<base+k>``), and locations keep their names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import hw
import hw.ptxc as ptxc
from litmus import parse_file
from litmus.dialects import litmus_files
from litmus.ir import Test
from litmus.lexer import ParseError
from oracle import OracleError, check, explain
from oracle.states import matches_free

#: source dialect -> the model the compiled program must refine
SOURCE_MODEL = {"C": "c11", "OPENCL": "opencl", "CUDA": "opencl"}
#: search budget per oracle call (as the weakening campaign's)
BUDGET = 300_000


@dataclass
class CompilerVerdict:
    """One compiled test judged: ``status`` is ``holds``, ``counterexample`` (``extra``: the
    PTX outcomes, projected on the source's observables, that the source model forbids) or
    ``skipped`` (``why``: racy source)."""

    status: str
    extra: list = field(default_factory=list)
    why: str = ""
    source_model: str = ""


def project(state: dict, keys) -> dict:
    """A PTX outcome restricted to the source's observable keys (absent keys are left out)."""
    return {k: state[k] for k in keys if k in state}


def _allows(result, outcome: dict) -> bool:
    """Does the source model allow ``outcome``? Source observables the read-back does not store
    (C temporaries, a CAS's expected variable) are free: any value matches."""
    states = result.states
    if hasattr(states, "allows"):
        return states.allows(outcome, absent="free")
    return any(matches_free(s, outcome) for s in states)


def judge(source: Test, compiled_test: Test, source_model: str | None = None,
          budget: int | None = BUDGET) -> CompilerVerdict:
    """Every outcome of ``compiled_test`` under ``ptx`` must be one the source model allows for
    ``source``. OracleError (budget, too many fence.sc orders) propagates to the caller."""
    model = source_model or SOURCE_MODEL.get(source.dialect)
    if model is None:
        raise ValueError(f"no source model for dialect {source.dialect!r}")
    mine = check(source, model, budget=budget, name_ub=False)
    if mine.verdict == "Undef" or "racy" in mine.flags:
        # a data race (c11/rc11/opencl flag `racy`) or other UB: the compiler may do anything
        return CompilerVerdict("skipped", why="racy", source_model=model)
    theirs = check(compiled_test, "ptx", budget=budget)
    keys = source.observables()
    extra, seen = [], set()
    for s in theirs.states:
        p = project(dict(s), keys)
        k = tuple(sorted(p.items()))
        if k in seen:
            continue
        seen.add(k)
        if not _allows(mine, p):
            extra.append(p)
    return CompilerVerdict("counterexample" if extra else "holds", extra, source_model=model)


def origin_lines(compiled) -> list[str]:
    """The read-back program's rows with the PTX line/text and source line that carry them."""
    out = []
    for tid, rows in enumerate(compiled.origin):
        out.append(f"P{tid}:")
        for i, (pline, ptext, sline) in enumerate(rows):
            ins = compiled.test.threads[tid].code[i] if i < len(compiled.test.threads[tid].code) \
                else None
            src = f"source line {sline}" if sline is not None else "no source line"
            out.append(f"  {_row(ins):28s} <- ptx {pline}: "
                       f"{ptext.strip()}   ({src})")
    return out


def _row(ins) -> str:
    """A compact spelling of one read-back row (base.order.scope reg loc args)."""
    if ins is None:
        return "?"
    head = ".".join(x for x in (ins.base, ins.op, ins.order, ins.scope) if x)
    rest = " ".join(str(x) for x in (ins.reg, ins.loc) if x is not None)
    args = ",".join(str(a) for a in ins.args or ())
    return " ".join(x for x in (head, rest, args) if x)


def explain_counterexample(source: Test, compiled, verdict: CompilerVerdict) -> str:
    """Both sides of a counterexample: the PTX execution giving the first extra outcome, the
    source model's reasons to forbid it, the marked PTX rows, the compiler command/version."""
    outcome = verdict.extra[0]
    parts = [f"compiler: {compiled.compiler.spec()}", f"command: {' && '.join(compiled.command)}",
             f"version: {compiled.version}",
             f"{len(verdict.extra)} PTX outcome(s) the source model ({verdict.source_model}) "
             f"forbids; the first:", "  " + ", ".join(f"{k}={v}" for k, v in outcome.items()), ""]
    try:
        parts += ["--- ptx: an execution giving it", explain(compiled.test, outcome, "ptx").text()]
    except (OracleError, ValueError) as e:
        parts += [f"--- ptx: (no explanation: {e})"]
    try:
        parts += [f"--- {verdict.source_model}: why it is forbidden",
                  explain(source, outcome, verdict.source_model).text()]
    except (OracleError, ValueError) as e:
        parts += [f"--- {verdict.source_model}: (no explanation: {e})"]
    parts += ["--- read-back rows and the PTX that carries them"] + origin_lines(compiled)
    return "\n".join(parts) + "\n"


# --- `scopefuzz run --compile SPEC FILE|DIR` ------------------------------------------------------

def run_corpus(files, spec: str, as_json: bool = False, source_model: str | None = None,
               mutate=None, write=print) -> int:
    """Compile and judge every test of ``files``; one line per test (holds / counterexample /
    skipped(racy) / refused / error). Exit 1 on a counterexample, 2 on a bad spec, else 0."""
    import json


    try:
        comp = ptxc.parse_spec(spec)
    except hw.BackendError as e:
        write(f"error: {e}")
        return 2
    why = ptxc.available(comp)
    if why:
        write(f"error: {comp.spec()} is not available: {why}")
        return 2
    found = False
    for path in litmus_files(files):
        rec = {"file": path, "compiler": comp.spec()}
        try:
            test = parse_file(path)
            rec["name"] = test.name
            refused = ptxc.refusal(test, comp)
            if refused:
                raise hw.BackendRefused(refused)
            compiled = ptxc.compile_test(test, comp, mutate)
            v = judge(test, compiled.test, source_model)
            rec.update(status=v.status, source_model=v.source_model)
            if v.status == "skipped":
                rec["why"] = v.why
            if v.status == "counterexample":
                found = True
                rec["extra"] = v.extra
                rec["explanation"] = explain_counterexample(test, compiled, v)
        except hw.BackendRefused as e:
            rec.update(status="refused", why=str(e))
        except (ParseError, hw.BackendError, OracleError, ValueError) as e:
            rec.update(status="error", why=str(e).splitlines()[0] if str(e) else type(e).__name__)
        if as_json:
            write(json.dumps(rec, sort_keys=True))
            continue
        line = f"{rec.get('name', path)}  {rec['status']}"
        if rec["status"] == "skipped":
            line = f"{rec.get('name', path)}  skipped({rec['why']})"
        elif rec["status"] in ("refused", "error"):
            line += f"  ({rec['why']})"
        elif rec["status"] == "counterexample":
            line += "  " + "; ".join(", ".join(f"{k}={x}" for k, x in e.items())
                                     for e in rec["extra"])
        write(line)
        if rec["status"] == "counterexample":
            write(rec["explanation"])
    return 1 if found else 0

"""The GPU check's plan: everything that needs the compilers and the models, made without a GPU.

``gpu-check prepare`` (fuzz/gpu_check.py) compiles a corpus with each front end (one batched
compiler run per front end, :func:`hw.ptxc.compile_many`), writes each compiled program's GPU
harness (:mod:`hw.gpu.harness`) and, per program, the allowed outcomes of both models
projected on what the GPU observes (:func:`hw.gpu.place.keys`: each role's observed
registers and the locations' final values):

- ``ptx_states``: the PTX model's allowed outcomes of the *read-back* program (what the compiled
  code may do on a GPU that follows the PTX model);
- ``source_states``: the source model's (:data:`fuzz.compilers.SOURCE_MODEL`) allowed outcomes
  of the source (None for a racy source: it allows anything).

A state's value ``None`` is undef or a key the model's state does not have: it matches any value.
Each entry also stores what the run needs of the test (``shape``: the layout's roles and CTAs,
``inits``, ``loc_idx``), so the lent GPU runs the plan with numpy and CuPy only
(:mod:`fuzz.gpu_check` imports :mod:`hw.gpu`, not hw/ptxc, the oracle or numba): its image has no
clang-22. The plan is one JSON file.
"""

from __future__ import annotations

import datetime as _dt
import json

import hw
from hw import BackendError
from hw.gpu.harness import harness
from litmus import parse
from litmus.dialects import litmus_files
from litmus.ir import UNDEF
from litmus.lexer import ParseError

from .cuda_strategies import draw, render

PLAN_VERSION = 1
#: the front ends a plan compiles by default (the lent machine is an H200: sm_90)
DEFAULT_COMPILERS = ("clang-cuda:sm_90,O2", "clang-ocl:sm_90,O2", "nvcc-libcu:sm_90,O2",
                     "nvcc-builtins:sm_90,O2")
DEFAULT_CORPORA = ("corpora/cuda", "corpora/opencl")
#: the campaign sample: programs 0..N-1 of this seed of fuzz.cuda_strategies
SAMPLE_SEED = 29
SAMPLE_PROGRAMS = 40


def corpus(paths, sample: int = SAMPLE_PROGRAMS, seed: int = SAMPLE_SEED) -> list[tuple[str, str]]:
    """(label, litmus text) of every C/OPENCL/CUDA test under ``paths`` and of ``sample``
    campaign programs of ``seed`` (deterministic)."""
    from fuzz.compilers import SOURCE_MODEL

    out = []
    for path in litmus_files(paths):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        head = text.lstrip().split(None, 1)[0] if text.strip() else ""
        if head in SOURCE_MODEL:                  # a dialect the compilers take as a source
            out.append((path, text))
    for i in range(sample):
        out.append((f"campaign:seed={seed}:{i}", render(draw(seed, i))))
    return out


def _project(states, keys: list[str]) -> list[list]:
    seen, out = set(), []
    for s in states:
        s = dict(s)
        row = tuple(None if (k not in s or s[k] == UNDEF) else int(s[k]) for k in keys)
        if row not in seen:
            seen.add(row)
            out.append(list(row))
    return sorted(out, key=lambda r: [(-1 << 40) if v is None else v for v in r])


def entry(label: str, text: str, test, compiled, kernel: str) -> dict:
    """One ready plan entry (or an ``error`` entry naming why the models could not judge it)."""
    from fuzz.compilers import SOURCE_MODEL, judge
    from hw.gpu import place as gpu_place
    from hw.ptxc.layout import make_layout
    from oracle import OracleError, check


    rec = {"file": label, "name": test.name, "compiler": compiled.compiler.spec(),
           "command": compiled.command[0], "version": compiled.version}
    lay = make_layout(test)
    why = gpu_place.refusal(test, lay)
    if why is not None:
        return {**rec, "status": "refused", "why": why}
    try:
        rec["harness"] = harness(compiled.ptx, len(test.locations), kernel)
    except BackendError as e:
        return {**rec, "status": "refused", "why": str(e)}
    keys, loc_idx = gpu_place.keys(lay, test)
    model = SOURCE_MODEL[test.dialect]
    try:
        v = judge(test, compiled.test, model)
        ptx = check(compiled.test, "ptx", budget=300_000)
        src = None if v.status == "skipped" else \
            check(test, model, budget=300_000, name_ub=False)
    except (OracleError, ValueError) as e:
        return {**rec, "status": "error", "why": str(e).splitlines()[0] if str(e) else
                type(e).__name__}
    rec.update(status="ready", source=text, keys=keys, source_model=model,
               shape=gpu_place.Shape.of(lay).to_json(),
               inits=[loc.init for loc in test.locations], loc_idx=loc_idx,
               static=v.status, static_extra=v.extra,
               ptx_states=_project(ptx.states, keys),
               source_states=None if src is None else _project(src.states, keys))
    return rec


def prepare(paths=DEFAULT_CORPORA, compilers=DEFAULT_COMPILERS, sample: int = SAMPLE_PROGRAMS,
            seed: int = SAMPLE_SEED, write=print, ptxas: bool = False) -> dict:
    """The plan of ``paths`` + the campaign sample, compiled with each of ``compilers``.
    ``ptxas``: assemble every harness with ``ptxas -arch=sm_90`` (the lent GPU's) when ptxas is
    here; one it rejects becomes an ``error`` entry naming ptxas's first error line."""
    from hw.ptxc.toolchain import ptxas_check
    import hw.ptxc as ptxc

    items = []
    for label, text in corpus(paths, sample, seed):
        try:
            items.append((label, text, parse(text, label if ":" not in label else "b.litmus")))
        except ParseError as e:
            items.append((label, text, e))
    entries = []
    for spec in compilers:
        comp = ptxc.parse_spec(spec)
        why = ptxc.available(comp)
        if why:
            entries += [{"file": lb, "compiler": comp.spec(), "status": "refused",
                         "why": f"{comp.spec()} is not available: {why}"} for lb, _, _ in items]
            continue
        ok = [(lb, tx, t) for lb, tx, t in items if not isinstance(t, Exception)]
        results = ptxc.compile_many([t for _, _, t in ok], comp)
        j = 0
        for (lb, tx, t), res in zip(ok, results):
            batch_index = None
            if ptxc.refusal(t, comp) is None:
                batch_index, j = j, j + 1
            if isinstance(res, hw.BackendRefused):
                entries.append({"file": lb, "name": t.name, "compiler": comp.spec(),
                                "status": "refused", "why": str(res)})
                continue
            if isinstance(res, Exception):
                entries.append({"file": lb, "name": t.name, "compiler": comp.spec(),
                                "status": "error", "why": str(res).splitlines()[0]})
                continue
            kernel = f"t{batch_index}_litmus"
            if f".entry {kernel}(" not in res.ptx:
                kernel = "litmus"                    # the batch failed: compiled alone
            rec = entry(lb, tx, t, res, kernel)
            if ptxas and rec["status"] == "ready":
                err = ptxas_check(rec["harness"], 90)
                if err:
                    rec = {**rec, "status": "error", "why": f"ptxas rejects the harness: {err}"}
                    del rec["harness"]
            entries.append(rec)
        ready = sum(1 for e in entries if e["compiler"] == comp.spec() and
                    e["status"] == "ready")
        write(f"prepared {comp.spec()}: {ready} of {len(items)} programs ready")
    for lb, _, t in items:
        if isinstance(t, Exception):
            entries.append({"file": lb, "compiler": "-", "status": "error",
                            "why": str(t).splitlines()[0]})
    return {"version": PLAN_VERSION,
            "made": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "compilers": list(compilers), "paths": list(paths), "sample": sample, "seed": seed,
            "entries": entries}


def save(plan: dict, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(plan, f, indent=1, sort_keys=True)
        f.write("\n")


def load(path: str) -> dict:
    """The plan at ``path``; ValueError (one line) when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})") from None
    if not isinstance(plan, dict) or plan.get("version") != PLAN_VERSION:
        raise ValueError(f"{path}: not a gpu-check plan of version {PLAN_VERSION}")
    return plan


__all__ = ["DEFAULT_COMPILERS", "DEFAULT_CORPORA", "corpus", "entry", "load", "prepare", "save"]

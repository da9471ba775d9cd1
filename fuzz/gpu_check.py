"""``make gpu-check``: the compiled kernels of a corpus run on an NVIDIA GPU, judged by both models.

    python -m fuzz.gpu_check prepare [--plan P] [--compiler SPEC]... [--sample N] [--ptxas] [PATH...]
    python -m fuzz.gpu_check run     [--plan P] [--json J] [--seconds S] [--limit L]
    python -m fuzz.gpu_check check   (run; prepare first when the plan is missing)

``prepare`` needs the compilers and the oracle, no GPU (fuzz/gpu_plan.py). ``run`` needs a CUDA GPU
and CuPy and nothing else of the kind (no compiler, no oracle): it loads each ready entry's harness
(hw/gpu/harness.py), launches it with fresh placements, stress and shuffles
(hw/gpu/place.py, hw/gpu/run.py) for its share of ``--seconds``, judges the histogram
(fuzz/gpu_verdict.py), prints one table row per entry and writes every row, with the histogram,
to ``--json``.

Exit status: 0 nothing forbidden seen; 1 the GPU showed an outcome the PTX model forbids for a
compiled program (a finding), or an instance left an output word unwritten or a program could not
be run (its row says why: the harness is wrong);
2 unusable: no GPU or no CuPy (one line saying which, before anything is compiled), a missing or
damaged plan, bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import gpu_plan
from .gpu_verdict import judge as judge_gpu

DEFAULT_PLAN = "out/gpu-plan.json"
DEFAULT_JSON = "out/gpu-check.json"
#: total launch seconds of a run (module loads and the table come on top: the whole run stays
#: under 8 minutes on the lent H200 for a plan of about 240 entries)
DEFAULT_SECONDS = 300.0
#: wall seconds for the whole run (scripts/gpu_check.sh kills it at 470 s as a backstop)
DEFAULT_LIMIT = 420.0


def _args(argv):
    ap = argparse.ArgumentParser(prog="gpu_check", description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=("prepare", "run", "check"))
    ap.add_argument("paths", nargs="*", help="corpus files or folders (prepare; default "
                    + ", ".join(gpu_plan.DEFAULT_CORPORA) + ")")
    ap.add_argument("--plan", default=DEFAULT_PLAN)
    ap.add_argument("--json", default=DEFAULT_JSON, dest="json_out")
    ap.add_argument("--compiler", action="append", default=None,
                    help="front end spec (repeatable; default: the four at sm_90,O2)")
    ap.add_argument("--sample", type=int, default=gpu_plan.SAMPLE_PROGRAMS,
                    help="campaign programs in the plan (fixed seed)")
    ap.add_argument("--ptxas", action="store_true",
                    help="prepare: assemble every harness with ptxas -arch=sm_90 (when present)")
    ap.add_argument("--seconds", type=float, default=DEFAULT_SECONDS,
                    help="launch seconds for the whole run, split evenly over the entries")
    ap.add_argument("--limit", type=float, default=DEFAULT_LIMIT,
                    help="wall seconds for the whole run, module loads included: each entry's "
                         "share shrinks to keep to it, and entries past it are not run")
    ap.add_argument("--launches", type=int, default=500, help="most launches per entry")
    ap.add_argument("--threads", type=int, default=256, help="threads per CTA")
    ap.add_argument("--blocks", type=int, default=0, help="CTAs per launch (0: 2 per SM)")
    ap.add_argument("--stress", type=int, default=64,
                    help="store/load rounds of each stress thread (0: no stress)")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_intermixed_args(argv)


def do_prepare(a, write=print) -> int:
    paths = a.paths or list(gpu_plan.DEFAULT_CORPORA)
    for p in paths:
        if not os.path.exists(p):
            write(f"gpu-check: {p}: no such file or folder")
            return 2
    plan = gpu_plan.prepare(paths, tuple(a.compiler or gpu_plan.DEFAULT_COMPILERS), a.sample,
                            write=write, ptxas=a.ptxas)
    gpu_plan.save(plan, a.plan)
    ready = sum(1 for e in plan["entries"] if e["status"] == "ready")
    write(f"gpu-check: plan {a.plan}: {ready} of {len(plan['entries'])} entries ready")
    return 0


def _line(ex: BaseException) -> str:
    text = str(ex).strip()
    return f"{type(ex).__name__}: {text.splitlines()[0]}" if text else type(ex).__name__


def summary(results: list[dict]) -> list[str]:
    """Per compiler: programs run, instances, PTX-allowed outcomes reached, forbidden counts;
    then each program with a forbidden or unwritten outcome (the end of the output is what a
    lent machine's reply carries)."""
    out = ["", "per compiler: programs, instances, PTX outcomes reached/allowed, "
               "ptx-forbidden, source-forbidden, unwritten"]
    by: dict[str, list[dict]] = {}
    for r in results:
        by.setdefault(str(r.get("compiler")), []).append(r)
    for comp, rs in by.items():
        ran = [r for r in rs if r.get("status") in ("ok", "finding")]
        c = lambda key: sum(r["counts"][key] for r in ran)      # noqa: E731
        out.append(f"  {comp}: {len(ran)} of {len(rs)} run, "
                   f"{sum(r['instances'] for r in ran)} instances, "
                   f"{sum(r['reached'] for r in ran)}/{sum(r['ptx_allowed'] for r in ran)}, "
                   f"{c('ptx-forbidden') + c('both-forbidden')}, "
                   f"{c('source-forbidden') + c('both-forbidden')}, "
                   f"{sum(r['unwritten'] for r in ran)}")
    bad = [r for r in results if r.get("status") == "finding"]
    for r in bad[:20]:
        worst = [h for h in r["histogram"] if h["class"] != "allowed"]
        what = (f"{worst[0]['class']} {worst[0]['outcome']} x{worst[0]['count']}" if worst
                else f"{r['unwritten']} unwritten")
        out.append(f"FINDING {r['name']} ({r['compiler']}): {what}")
    if len(bad) > 20:
        out.append(f"... {len(bad) - 20} more in the JSON")
    return out


def _save(path: str, doc: dict) -> None:
    """Write the JSON whole (a temporary file renamed over it): after every program, so a run
    killed by the script's timeout (a kernel that never ends) keeps what it had."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def _row_text(cols, widths):
    return "  ".join(str(c).ljust(w) for c, w in zip(cols, widths))


def do_run(a, write=print) -> int:
    from hw.gpu import run as gpu_run

    why = gpu_run.unavailable()
    if why is not None:
        write(f"gpu-check: no GPU here: {why}")
        return 2
    try:
        plan = gpu_plan.load(a.plan)
    except ValueError as e:
        write(f"gpu-check: {e}")
        return 2
    from hw.gpu.place import Shape

    ready = [e for e in plan["entries"] if e["status"] == "ready"]
    if not ready:
        write(f"gpu-check: {a.plan} has no ready entry")
        return 2
    sms = gpu_run.multiprocessors()
    blocks = a.blocks or 2 * sms
    share = a.seconds / len(ready)
    device = gpu_run.device_name()
    write(f"gpu-check: {len(ready)} programs on {device} ({sms} SMs), {blocks} CTAs x "
          f"{a.threads} threads per launch, {share:.2f} s each")
    results, findings, t_start = [], 0, time.monotonic()
    head = ("test", "compiler", "static", "instances", "outcomes", "PTX reached", "ptx-forb",
            "src-forb", "unwritten")
    widths = (34, 22, 14, 10, 8, 11, 8, 8, 9)
    write(_row_text(head, widths))
    for k, e in enumerate(ready):
        rec = {k2: e.get(k2) for k2 in ("file", "name", "compiler", "command", "version",
                                        "static", "source_model", "keys")}
        left = a.limit - (time.monotonic() - t_start)
        if left <= 0:
            rec.update(status="not-run", why=f"past --limit {a.limit:.0f} s")
            results.append(rec)
            continue
        # keep to the limit: a share of what is left (loads take time too), never above --seconds
        budget = min(share, 0.8 * left / (len(ready) - k))
        try:
            runner = gpu_run.GpuRunner(e["harness"])
            hist, unwritten = runner.run(Shape.from_json(e["shape"]), e["inits"], e["loc_idx"],
                                         e["keys"], a.launches, blocks, a.threads, a.seed + k,
                                         stress_iters=a.stress, seconds=budget)
        except Exception as ex:         # noqa: BLE001 (one program's failure -- a launch, the
            # device's memory, a damaged entry -- is its row; device time is too scarce to lose
            # the other programs' results to it)
            why = _line(ex)
            rec.update(status="error", why=why)
            results.append(rec)
            findings += 1
            write(_row_text((str(e.get("name", e.get("file")))[:34], e.get("compiler"), "error",
                             "-", "-", "-", "-", "-", why), widths))
            continue
        v = judge_gpu(e["keys"], hist.counts, e["ptx_states"], e["source_states"])
        bad = v.finding or unwritten > 0
        findings += bad
        rec.update(status="finding" if bad else "ok", instances=v.total, unwritten=unwritten,
                   reached=v.reached, ptx_allowed=v.allowed, seconds=round(hist.seconds, 3),
                   params=hist.params,
                   counts={c: v.count(c) for c in ("allowed", "ptx-forbidden",
                                                   "source-forbidden", "both-forbidden")},
                   histogram=[{"outcome": o, "count": n, "class": c} for o, n, c in v.rows])
        results.append(rec)
        _save(a.json_out, {"device": device, "plan": a.plan, "plan_made": plan.get("made"),
                           "complete": False, "results": results})
        write(_row_text((e["name"][:34], e["compiler"], e["static"], v.total, len(v.rows),
                         f"{v.reached}/{v.allowed}",
                         v.count("ptx-forbidden") + v.count("both-forbidden"),
                         v.count("source-forbidden") + v.count("both-forbidden"), unwritten),
                        widths))
    wall = time.monotonic() - t_start
    for line in summary(results):
        write(line)
    _save(a.json_out, {"device": device, "plan": a.plan, "plan_made": plan.get("made"),
                       "seconds": round(wall, 1), "complete": True, "results": results})
    skipped = sum(1 for r in results if r["status"] == "not-run")
    write(f"gpu-check: {len(results) - skipped} programs in {wall:.0f} s"
          + (f" ({skipped} not run: past --limit)" if skipped else "")
          + f", {findings} with a forbidden or unwritten outcome or an error; {a.json_out} "
          f"written")
    return 1 if findings else 0


def main(argv=None, write=print) -> int:
    a = _args(argv)
    if a.action == "prepare":
        return do_prepare(a, write)
    if a.action == "check":
        from hw.gpu import run as gpu_run

        why = gpu_run.unavailable()
        if why is not None:
            write(f"gpu-check: no GPU here: {why}")
            return 2
        if not os.path.exists(a.plan):
            rc = do_prepare(a, write)
            if rc:
                return rc
    return do_run(a, write)


if __name__ == "__main__":
    sys.exit(main())

"""``scopefuzz fuzz``, ``scopefuzz report`` and ``scopefuzz merge`` (DESIGN.md command-line contract)."""

from __future__ import annotations

import os
import sys
import time

from .ptx_strategies import PTX_FEATURES
from .strategies import FEATURES, FeatureError


#: exit statuses of ``fuzz`` (0, 1 and 2 are DESIGN.md's contract; the others say why a campaign
#: could not be trusted)
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_STORAGE = 3    # the campaign directory could not be written (read-only, not a dir, disk full)
EXIT_ERRORS = 4     # most programs errored (oracle, backend or size limit): nothing was tested

EXIT_HELP = """exit status: 0 no finding; 1 findings; 2 unusable arguments or campaign directory;
3 the campaign directory could not be written (what was written is intact: --resume continues);
4 most programs errored (oracle or backend errors): the campaign tested next to nothing"""


def _finite(name: str, value, low: float, strict: bool) -> None:
    """Reject nan, infinities and values below ``low`` (or equal to it when ``strict``)."""
    import math
    if value is None:
        return
    if not math.isfinite(value) or value < low or (strict and value == low):
        rel = ">" if strict else ">="
        raise ValueError(f"bad {name} {value}: must be a finite number {rel} {low:g}")


def validate_fuzz_args(args) -> None:
    """Option checks of ``fuzz`` (one-line ValueError each)."""
    _finite("--time", args.time, 0, strict=True)
    _finite("--minimize-seconds", args.minimize_seconds, 0, strict=False)
    if args.programs is not None and args.programs < 0:
        raise ValueError(f"bad --programs {args.programs}: must be >= 0")
    if args.iterations < 1:
        raise ValueError(f"bad --iterations {args.iterations}: must be >= 1")
    if args.stop_after is not None and args.stop_after < 1:
        raise ValueError(f"bad --stop-after {args.stop_after}: must be >= 1")
    if args.seed < 0:
        raise ValueError(f"bad --seed {args.seed}: must be >= 0")
    if args.forms_per_bucket is not None and args.forms_per_bucket < 1:
        raise ValueError(f"bad --forms-per-bucket {args.forms_per_bucket}: must be >= 1")


def known_files(args) -> tuple:
    """The known-bugs files of ``fuzz --known [FILE]`` (fuzz/known.py ``default_known_for``
    without FILE), each loaded once here so that a bad file fails before DIR is touched."""
    from .known import default_known_for, load_known
    if args.known is None:
        return ()
    known = (default_known_for(args.backend or args.devices, getattr(args, "compile", None))
             if args.known == "default" else (args.known,))
    for k in known:
        load_known(k)
    return known


def errors_dominate(stats) -> bool:
    """More than half of the campaign's programs errored."""
    return stats.programs > 0 and 2 * stats.errors > stats.programs


def weakening_pair(source_dialects, target_dialects) -> bool:
    """Whether a model reading ``source_dialects`` and one reading ``target_dialects`` can be
    compared by the strict-weakening campaign: some source dialect's record maps its programs
    (``Dialect.mapped_to``, e.g. Tile IR -> PTX) to a dialect the target model reads."""
    from litmus.dialect import get as dialect

    return any(dialect(d).mapped_to and dialect(d).mapped_to in target_dialects
               for d in source_dialects)


def cmd_weakening(args) -> int:
    """``fuzz --model M --against N``: the strict-weakening campaign (fuzz/weakening.py)."""
    from oracle import OracleError
    from oracle.registry import get
    from .weakening_campaign import (CampaignError, ParallelWeakeningCampaign, WeakeningCampaign,
                                     WeakeningProgress, weakening_config)
    model = args.model or "tileir"
    try:
        for name in (model, args.against):
            get(name)
    except OracleError as e:
        print(f"scopefuzz fuzz: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not weakening_pair(get(model).dialects, get(args.against).dialects):
        print(f"scopefuzz fuzz: --against compares a TILEIR model with a PTX model through the "
              f"Tile IR -> PTX mapping (got --model {model} --against {args.against})",
              file=sys.stderr)
        return EXIT_USAGE
    if args.backend is not None:
        print("scopefuzz fuzz: --against compares two models; it takes no --backend",
              file=sys.stderr)
        return EXIT_USAGE

    cfg = weakening_config(args.out, model, args.against, args.seed,
                           seconds=args.time if (args.time is not None or args.programs is not None)
                           else 60.0, programs=args.programs,
                           minimize_seconds=args.minimize_seconds, resume=args.resume)
    progress = None if args.quiet else WeakeningProgress()
    try:
        jobs = _compile_jobs(args)          # default 1; a resumed campaign keeps its count
        if jobs == 1:
            st = WeakeningCampaign(cfg, progress=progress).run()
        else:
            st = ParallelWeakeningCampaign(cfg, jobs, progress=progress).run()
    except CampaignError as e:
        print(f"scopefuzz fuzz: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"scopefuzz fuzz: {storage_message(args.out, e)}", file=sys.stderr)
        return EXIT_STORAGE
    if not args.quiet:
        print(file=sys.stderr)
    print(f"{args.out}: {st.programs} programs, {st.race_free} race-free, {st.racy} racy, "
          f"{st.over_budget} over budget, {st.counterexamples} counterexample(s), "
          f"{st.programs / max(st.seconds, 1e-9):.2f} programs/s", file=sys.stderr)
    if args.report:
        rc, paths = write_report(args.out, "scopefuzz fuzz: report")
        if paths is None:
            return rc
        print(f"report: {paths[0]}", file=sys.stderr)
    return EXIT_FINDINGS if st.counterexamples else EXIT_OK


def cmd_compilers(args) -> int:
    """``fuzz --compile SPEC``: the compilers-in-the-loop campaign (fuzz/compilers_campaign.py),
    run by the main campaign machinery: journal, ``--resume``, ``--jobs``, findings, buckets."""
    import hw
    from .campaign import CampaignError, parse_shard
    from .known import KnownFileError
    from .compilers_campaign import (CompileConfig, CompilerCampaign, ParallelCompilerCampaign,
                                     backend_name, default_source)
    from .progress import Progress
    try:
        backend = backend_name(args.compile, args.ptx_mutant)
        source = args.source or default_source(args.compile)
        known = known_files(args)            # a bad file fails here, before DIR is touched
        cfg = CompileConfig(backend=backend, out=args.out, seed=args.seed, programs=args.programs,
                            time=args.time if (args.time is not None or args.programs is not None)
                            else 60.0, features=frozenset({source}), resume=args.resume,
                            shard=parse_shard(args.shard),
                            minimize_seconds=args.minimize_seconds, max_findings=args.stop_after,
                            known=known, forms_per_bucket=args.forms_per_bucket)
        jobs = _compile_jobs(args)
        progress = None if args.quiet else Progress()
        t0 = time.monotonic()
        if jobs == 1:
            stats = CompilerCampaign(cfg, progress=progress).run()
        else:
            stats = ParallelCompilerCampaign(cfg, jobs, progress=progress).run()
        secs = time.monotonic() - t0
    except (hw.BackendError, CampaignError, ValueError, KnownFileError) as e:
        print(f"scopefuzz fuzz: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"scopefuzz fuzz: {storage_message(args.out, e)}; what was written is intact "
              "(--resume continues)", file=sys.stderr)
        return EXIT_STORAGE
    print(f"{args.out}: {compile_summary(args.out, stats, known, secs)}", file=sys.stderr)
    if args.report:
        rc, paths = write_report(args.out, "scopefuzz fuzz: report", list(known) or None)
        if paths is None:
            return rc
        print(f"report: {paths[0]}", file=sys.stderr)
    if stats.findings:
        return EXIT_FINDINGS
    if errors_dominate(stats):
        print(f"scopefuzz fuzz: {stats.errors} of {stats.programs} programs errored: the campaign "
              f"tested next to nothing (exit {EXIT_ERRORS})", file=sys.stderr)
        return EXIT_ERRORS
    return EXIT_OK


def compile_summary(directory: str, stats, known=(), seconds: float | None = None) -> str:
    """The summary line of a compiler campaign: programs, judged, findings in buckets (known
    ones counted), racy, errors, refused, programs/s of campaign time."""
    from .buckets import group
    from .findings import load_finding_records
    from .known import load_known, mark_known
    fs = load_finding_records(directory, on_bad=lambda m: None)
    groups = mark_known(group(fs), load_known(list(known)) if known else None)
    nk = sum(1 for g in groups if g.get("known"))
    # over the campaign's active time (every session; the slowest shard's), as the report: a
    # resumed session's count includes the programs journaled before it
    span = stats.active or seconds
    rate = f", {stats.programs / span:.2f} programs/s" if span else ""
    return (f"{stats.programs} programs ({stats.executed} compiled and judged), "
            f"{len(fs)} finding(s) in {len(groups)} bucket(s)"
            + (f" ({nk} known)" if nk else "")
            + f", {stats.undef} racy (skipped), {stats.errors} errors "
            f"({stats.budget} over the oracle's search budget), {stats.refused} refused{rate}")


def _compile_jobs(args) -> int:
    """Workers of a compiler campaign: ``--jobs`` (default 1: a compiler run already takes a
    core), or the count a resumed campaign was started with."""
    from .campaign import CampaignError
    from .layout import read_meta
    jobs = args.jobs
    if jobs is not None and jobs < 1:
        raise CampaignError(f"bad --jobs {jobs}: must be >= 1")
    meta = read_meta(args.out, CampaignError) if args.resume else None
    if meta is not None:
        started = meta.get("jobs", 1)
        if jobs is not None and jobs != started:
            raise CampaignError(f"{args.out}: --resume with --jobs {jobs}, but the campaign was "
                                f"started with --jobs {started}")
        jobs = started
    return jobs or 1


def cmd_fuzz(args) -> int:
    try:
        validate_fuzz_args(args)      # both kinds of campaign
    except ValueError as e:
        print(f"scopefuzz fuzz: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.against is not None:
        return cmd_weakening(args)
    if getattr(args, "compile", None):
        return cmd_compilers(args)
    if args.backend is None:
        print("scopefuzz fuzz: --backend is required (or --against for a model comparison)",
              file=sys.stderr)
        return EXIT_USAGE
    from .campaign import Campaign, CampaignError, Config, parse_shard, program_family
    from .known import KnownFileError
    from .progress import Progress
    try:
        known = known_files(args)
        cfg = Config(backend=args.backend, out=args.out, seed=args.seed,
                     programs=args.programs,
                     time=args.time if (args.time is not None or args.programs is not None)
                     else 60.0,
                     features=program_family(args.model).parse_features(args.features),
                     shard=parse_shard(args.shard),
                     iterations=args.iterations, resume=args.resume,
                     minimize_seconds=args.minimize_seconds, baseline=args.baseline,
                     max_findings=args.stop_after, model=args.model, known=known,
                     forms_per_bucket=args.forms_per_bucket)
        jobs, devices = _jobs(args)
        progress = None if args.quiet else Progress()
        if jobs == 1:
            if devices:
                cfg.backend = devices[0]
            stats = Campaign(cfg, progress=progress).run()
        else:
            from .workers import ParallelCampaign
            stats = ParallelCampaign(cfg, jobs, devices, progress=progress).run()
    except (CampaignError, FeatureError, ValueError, KnownFileError) as e:
        print(f"scopefuzz fuzz: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:      # this process's or a worker's (fuzz.workers re-raises it here)
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            print(f"scopefuzz fuzz: {args.out}: is a file, not a campaign directory (give "
                  "--out a directory, new or holding a campaign)", file=sys.stderr)
            return EXIT_STORAGE
        print(f"scopefuzz fuzz: {storage_message(args.out, e)}; what was written is intact "
              "(--resume continues)", file=sys.stderr)
        return EXIT_STORAGE
    print(f"{args.out}: {stats.programs} programs ({stats.executed} executed), "
          f"{stats.findings} finding(s){bucket_count_text(args.out, known)}, {stats.undef} undef, "
          f"{stats.errors} errors "
          f"({stats.budget} over the oracle's search budget), {stats.refused} refused, "
          f"{stats.unconfirmed} unconfirmed", file=sys.stderr)
    if args.report:
        rc, paths = write_report(args.out, "scopefuzz fuzz: report", list(known) or None)
        if paths is None:
            return rc
        print(f"report: {paths[0]}", file=sys.stderr)
    if stats.findings:
        return EXIT_FINDINGS
    if errors_dominate(stats):
        print(f"scopefuzz fuzz: {stats.errors} of {stats.programs} programs errored (see the "
              "journal's error lines or the report's Errors section): the campaign tested next "
              f"to nothing (exit {EXIT_ERRORS})", file=sys.stderr)
        return EXIT_ERRORS
    return EXIT_OK


def bucket_count_text(directory: str, known=()) -> str:
    """`` in B bucket(s)`` of a campaign's findings (fuzz/buckets.py), "" when it has none;
    with ``known`` (known-bugs files) `` (K known)`` when some are, and the programs counted in
    a bucket without being minimized (``--known``, ``--forms-per-bucket``)."""
    from .buckets import group
    from .findings import load_finding_records
    from .known import load_known_files, mark_known
    fs = load_finding_records(directory, on_bad=lambda m: None)
    if not fs:
        return ""
    groups = mark_known(group(fs), load_known_files(known) if known else None)
    nk = sum(1 for g in groups if g.get("known"))
    counted = sum(1 for r in fs for s in r.sources if s.get("counted"))
    return (f" in {len(groups)} bucket(s)" + (f" ({nk} known)" if nk else "")
            + (f", {counted} more counted in their bucket without minimizing" if counted else ""))


def storage_message(where: str, e: OSError) -> str:
    """One line for a file-system error: the path and the reason, no traceback."""
    path = e.filename or where
    return f"cannot write {path}: {e.strerror or e}"


def _jobs(args) -> tuple[int, list[str] | None]:
    """(workers, devices) from ``--jobs``/``--devices``; a resumed campaign keeps its worker count."""
    from .campaign import CampaignError
    from .layout import read_meta
    from .workers import default_jobs
    devices = None
    if args.devices is not None:
        devices = [d.strip() for d in args.devices.split(",") if d.strip()]
        if not devices:
            raise CampaignError("bad --devices: empty list")
    jobs = args.jobs
    if jobs is not None and jobs < 1:
        raise CampaignError(f"bad --jobs {jobs}: must be >= 1")
    meta = read_meta(args.out, CampaignError) if args.resume else None
    if meta is not None:
        started = meta.get("jobs", 1)
        if jobs is None:
            jobs = started
        elif jobs != started:
            raise CampaignError(f"{args.out}: --resume with --jobs {jobs}, but the campaign was "
                                f"started with --jobs {started}")
    return (jobs if jobs is not None else default_jobs(args.backend, devices)), devices


def write_report(directory: str, who: str,
                 known_file: str | None = None) -> tuple[int, tuple[str, str] | None]:
    """Build the report of ``directory``: (0, (html, md)), or (exit status, None) after one line
    on stderr prefixed by ``who`` (2: not a campaign or a bad ``known_file``; 3: it could not be
    written)."""
    from .known import KnownFileError, load_known
    from .report import ReportError, build_report
    try:
        known = load_known(known_file) if known_file else None
        return EXIT_OK, build_report(directory, known=known)
    except (ReportError, KnownFileError) as e:
        print(f"{who}: {e}", file=sys.stderr)
        return EXIT_USAGE, None
    except OSError as e:
        print(f"{who}: {storage_message(directory, e)}", file=sys.stderr)
        return EXIT_STORAGE, None


def cmd_report(args) -> int:
    if args.upstream:
        from .upstream import cmd_upstream
        return cmd_upstream(args.upstream)
    if args.dir is None:
        print("scopefuzz report: give DIR (or --upstream FINDING_DIR)", file=sys.stderr)
        return EXIT_USAGE
    known = args.known
    if known == "default":
        from .known import default_known_paths
        known = default_known_paths()
    rc, paths = write_report(args.dir, "scopefuzz report", known)
    if paths is None:
        return rc
    print(paths[0])
    print(paths[1])
    return 0


def cmd_merge(args) -> int:
    from .merge import MergeError, merge
    try:
        counts = merge(args.out, args.dirs)
    except MergeError as e:
        print(f"scopefuzz merge: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"scopefuzz merge: {storage_message(args.out, e)}", file=sys.stderr)
        return EXIT_STORAGE
    print(f"{args.out}: {counts['parts']} parts, {counts['programs']} programs, "
          f"{counts['findings']} finding(s){bucket_count_text(args.out)}; {counts['budget']} "
          "programs over the oracle's search "
          f"budget")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "fuzz", help="a fuzz campaign: draw programs, oracle, run, compare (exit 1 if findings)",
        epilog=EXIT_HELP,
        description="Draw programs (Hypothesis-style strategies, deterministic per --seed), compute "
                    "what the model allows, run them on the backend and record every forbidden "
                    "outcome: confirmed, minimized with the backend in the loop, deduplicated, "
                    "written to OUT/findings/<id>/. Resumable (--resume) and shardable (--shard).")
    p.add_argument("--backend",
                   help="sim, sim:MUTANT, opencl, opencl:P:D, isa:TARGET[:MUTANT]")
    p.add_argument("--against", default=None, metavar="MODEL",
                   help="test the strict-weakening property instead of a backend: every outcome "
                        "MODEL (a PTX model) allows for the lowered program of a race-free Tile IR "
                        "program is allowed by --model (docs/tileir.md); writes OUT/weakening.json, "
                        "OUT/counterexamples/, OUT/findings/ and the journal (--resume, --jobs "
                        "N: default 1, report)")
    p.add_argument("--compile", default=None, metavar="COMPILER[:sm_XX,Oo]",
                   help="compilers in the loop: compile drawn programs with a real compiler "
                        "(clang-cuda, clang-ocl, nvcc-libcu, nvcc-builtins), read the PTX back, "
                        "record programs whose PTX outcomes escape the source model "
                        "(docs/compilers.md); a campaign like the others: OUT/journal.jsonl, "
                        "OUT/findings/, --resume, --jobs, report")
    p.add_argument("--ptx-mutant", default=None, metavar="NAME",
                   help="with --compile: plant a compiler bug in the PTX (hw/ptxc/mutants.py)")
    p.add_argument("--source", default=None, choices=("cuda", "c", "opencl"),
                   help="with --compile: the source dialect of the drawn programs (default: the "
                        "front end's own: opencl for clang-ocl, cuda for the others)")
    p.add_argument("--known", default=None, metavar="FILE", nargs="?", const="default",
                   help="known bugs (JSON, fuzz/known.py): a finding whose bucket (as found, "
                        "before minimization) is a known bug's is counted in that bucket, not "
                        "minimized (the first is published as found; with --compile it is "
                        "minimized); without FILE: hw/isa/known-clang22.json for isa:, "
                        "hw/ptxc/known-clang22-nvptx.json with --compile, both otherwise")
    p.add_argument("--forms-per-bucket", type=int, default=None, metavar="N",
                   help="once N programs of a bucket (as found) have been minimized in this "
                        "campaign (at most N forms), later findings in it are counted there, "
                        "not minimized (default: no limit, every finding is minimized)")
    lim = p.add_mutually_exclusive_group()
    lim.add_argument("--time", type=float, metavar="S",
                     help="seconds of campaign (default 60 when --programs is not given)")
    lim.add_argument("--programs", type=int, metavar="N",
                     help="programs 0..N-1 of the campaign (a shard takes its share)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="campaign", metavar="DIR")
    p.add_argument("--model", default=None, metavar="M",
                   help="the oracle's model; its dialect decides the programs drawn: ptx, ptx60 "
                        "draw PTX programs (default: AMDGPU programs, model amdgpu); with "
                        "--against: the TILEIR model whose strict weakening is tested (default "
                        "tileir; variants tileir-nochain, tileir-patterns, tileir-cause, "
                        "tileir-casnowrite)")
    p.add_argument("--features", default=None,
                   help="comma-separated subset of: " + " ".join(FEATURES)
                        + " (default all; 'all,-async' removes one); with --model ptx: "
                        + " ".join(PTX_FEATURES))
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="run only programs i with i %% N == K-1 (disjoint seeds)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes, each running shard j/N of the campaign into "
                        "DIR/shard-KofN/ (default: one per core; one per device for opencl; one "
                        "for --compile and --against; a resumed campaign keeps its count)")
    p.add_argument("--devices", default=None, metavar="B1,B2,...",
                   help="one backend per worker: worker j takes entry j mod the list's length "
                        "(e.g. opencl:0:0,opencl:0:1); overrides --backend")
    p.add_argument("--iterations", type=int, default=1000,
                   help="backend iterations per program run (default 1000)")
    p.add_argument("--minimize-seconds", type=float, default=60.0,
                   help="time limit of one minimization (default 60)")
    p.add_argument("--baseline", default=None, metavar="B",
                   help="reference backend (e.g. sim for sim:MUTANT): minimized findings must stay "
                        "clean on it; findings it shows too are marked")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop after N new findings (with --baseline: findings clean on it; "
                        "with --known: not a known bug's)")
    p.add_argument("--report", action="store_true", help="build OUT/report.html at the end")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_fuzz)

    r = sub.add_parser("report", help="(re)build DIR/report.html and DIR/report.md",
                       description="Write DIR/report.html (inline SVG) and DIR/report.md for a "
                                   "campaign directory: findings, histograms, explanations, "
                                   "throughput, coverage, timeline.")
    r.add_argument("dir", metavar="DIR", nargs="?")
    r.add_argument("--known", metavar="FILE", nargs="?", const="default", default=None,
                   help="known bugs (JSON, docs/fuzzing.md): their buckets are reported apart "
                        "from the new ones; without FILE: the maintained list of clang-22's "
                        "known AMDGPU bugs (hw/isa/known-clang22.json)")
    r.add_argument("--upstream", metavar="FINDING_DIR", default=None,
                   help="write FINDING_DIR/upstream.md, an LLVM issue for an isa finding: "
                        "reduced LLVM IR and OpenCL reproducers with their commands, the "
                        "marked instructions, the AMDGPUUsage rule, the histogram")
    r.set_defaults(func=cmd_report)

    m = sub.add_parser("merge", help="join campaign directories (shards) into OUT",
                       description="Merge the journals and findings of campaign directories "
                                   "(e.g. shards run on several machines) into a new OUT.")
    m.add_argument("out", metavar="OUT")
    m.add_argument("dirs", nargs="+", metavar="DIR")
    m.set_defaults(func=cmd_merge)

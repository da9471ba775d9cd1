"""``scopefuzz fuzz``, ``scopefuzz report`` and ``scopefuzz merge`` (DESIGN.md command-line contract)."""

from __future__ import annotations

import sys

from .ptx_strategies import PTX_FEATURES
from .strategies import FEATURES, FeatureError


def cmd_fuzz(args) -> int:
    from .campaign import Campaign, CampaignError, Config, parse_shard, program_kind
    from .progress import Progress
    try:
        if args.time is not None and args.time <= 0:
            raise CampaignError(f"bad --time {args.time}: must be > 0 seconds")
        if args.programs is not None and args.programs < 0:
            raise CampaignError(f"bad --programs {args.programs}: must be >= 0")
        if args.iterations < 1:
            raise CampaignError(f"bad --iterations {args.iterations}: must be >= 1")
        cfg = Config(backend=args.backend, out=args.out, seed=args.seed,
                     programs=args.programs,
                     time=args.time if (args.time is not None or args.programs is not None)
                     else 60.0,
                     features=program_kind(args.model)[2](args.features),
                     shard=parse_shard(args.shard),
                     iterations=args.iterations, resume=args.resume,
                     minimize_seconds=args.minimize_seconds, baseline=args.baseline,
                     max_findings=args.stop_after, model=args.model)
        camp = Campaign(cfg, progress=None if args.quiet else Progress())
        stats = camp.run()
    except (CampaignError, FeatureError) as e:
        print(f"scopefuzz fuzz: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {stats.programs} programs, {stats.findings} finding(s), "
          f"{stats.undef} undef, {stats.errors} errors, {stats.unconfirmed} unconfirmed",
          file=sys.stderr)
    if args.report:
        from .report import build_report
        page, _ = build_report(args.out)
        print(f"report: {page}", file=sys.stderr)
    return 1 if stats.findings else 0


def cmd_report(args) -> int:
    from .report import ReportError, build_report
    try:
        page, md = build_report(args.dir)
    except ReportError as e:
        print(f"scopefuzz report: {e}", file=sys.stderr)
        return 2
    print(page)
    print(md)
    return 0


def cmd_merge(args) -> int:
    from .merge import MergeError, merge
    try:
        counts = merge(args.out, args.dirs)
    except MergeError as e:
        print(f"scopefuzz merge: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {counts['parts']} parts, {counts['programs']} programs, "
          f"{counts['findings']} finding(s)")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "fuzz", help="a fuzz campaign: draw programs, oracle, run, compare (exit 1 if findings)",
        description="Draw programs (Hypothesis-style strategies, deterministic per --seed), compute "
                    "what the model allows, run them on the backend and record every forbidden "
                    "outcome: confirmed, minimized with the backend in the loop, deduplicated, "
                    "written to OUT/findings/<id>/. Resumable (--resume) and shardable (--shard).")
    p.add_argument("--backend", required=True, help="sim, sim:MUTANT, opencl, opencl:P:D")
    lim = p.add_mutually_exclusive_group()
    lim.add_argument("--time", type=float, metavar="S",
                     help="seconds of campaign (default 60 when --programs is not given)")
    lim.add_argument("--programs", type=int, metavar="N",
                     help="programs 0..N-1 of the campaign (a shard takes its share)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="campaign", metavar="DIR")
    p.add_argument("--model", default=None, metavar="M",
                   help="the oracle's model; its dialect decides the programs drawn: ptx, ptx60 "
                        "draw PTX programs (default: AMDGPU programs, model amdgpu)")
    p.add_argument("--features", default=None,
                   help="comma-separated subset of: " + " ".join(FEATURES)
                        + " (default all; 'all,-async' removes one); with --model ptx: "
                        + " ".join(PTX_FEATURES))
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="run only programs i with i %% N == K-1 (disjoint seeds)")
    p.add_argument("--iterations", type=int, default=1000,
                   help="backend iterations per program run (default 1000)")
    p.add_argument("--minimize-seconds", type=float, default=60.0,
                   help="time limit of one minimization (default 60)")
    p.add_argument("--baseline", default=None, metavar="B",
                   help="reference backend (e.g. sim for sim:MUTANT): minimized findings must stay "
                        "clean on it; findings it shows too are marked")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop after N new findings (with --baseline: findings clean on it)")
    p.add_argument("--report", action="store_true", help="build OUT/report.html at the end")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_fuzz)

    r = sub.add_parser("report", help="(re)build DIR/report.html and DIR/report.md",
                       description="Write DIR/report.html (inline SVG) and DIR/report.md for a "
                                   "campaign directory: findings, histograms, explanations, "
                                   "throughput, coverage, timeline.")
    r.add_argument("dir", metavar="DIR")
    r.set_defaults(func=cmd_report)

    m = sub.add_parser("merge", help="join campaign directories (shards) into OUT",
                       description="Merge the journals and findings of campaign directories "
                                   "(e.g. shards run on several machines) into a new OUT.")
    m.add_argument("out", metavar="OUT")
    m.add_argument("dirs", nargs="+", metavar="DIR")
    m.set_defaults(func=cmd_merge)

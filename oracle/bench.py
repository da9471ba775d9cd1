"""The oracle's ``scopefuzz bench`` section: oracle tests/s and time per large program."""

def run(args):
    from benchmarks.bench_oracle import figures
    return figures(quick=getattr(args, "quick", False))

"""``scopefuzz mutants``: list the simulator's mutants (backend names ``sim:MUTANT``), then the
``isa`` backend's (``isa:TARGET:MUTANT``, edits of the compiled code)."""

from __future__ import annotations

from .mutants import MUTANTS


def cmd_mutants(args) -> int:
    width = max(len(n) for n in MUTANTS)
    for m in MUTANTS.values():
        tags = ",".join(filter(None, [m.profile, *m.options]))   # where the mechanism exists
        where = f"  [{tags}]" if tags else ""
        print(f"sim:{m.name:<{width}}  {m.summary}{where}")
        if args.verbose:
            print(f"  {'':<{width}}  {m.mechanism}")
    from ..isa.commands import mutant_lines
    print("\n".join(mutant_lines(args.verbose)))
    return 0


def register(sub) -> None:
    p = sub.add_parser("mutants", help="list the mutants (backends sim:MUTANT, isa:TARGET:MUTANT)",
                       description="Each mutant is a named bug injected into the simulator, "
                                   "modelled on a real failure mechanism.")
    p.add_argument("-v", "--verbose", action="store_true", help="also print the mechanism")
    p.set_defaults(func=cmd_mutants)

"""Printer for the OPENCL dialect: the C dialect's printer (litmus/dialects/c/printer.py) with what
OpenCL C 2.0 adds, each spelled as the front end (:mod:`.parse`) reads it:

- the placement ``P0@wg W, dev D``;
- parameters with their address space and atomicity from ``Test.meta``: a location in the
  ``global``/``local`` region is declared ``global``/``local`` (both regions: one thread
  declares it ``global``, another ``local``; none: no qualifier), and ``int*`` when it is
  non-atomic, ``atomic_int*`` otherwise; a location that some thread declares without using it
  is declared again in the first thread (or threads) the regions need;
- the memory scope as the last argument of every ``_explicit`` call
  (``memory_scope_work_item`` ... ``memory_scope_all_svm_devices``), always written;
- fences ``atomic_work_item_fence(FLAGS, ORDER, SCOPE)`` and barriers ``Bn: barrier(FLAGS);``
  (``work_group_barrier(FLAGS, SCOPE)`` when the scope is not the work-group).
"""

from __future__ import annotations

from ...dialect import PrintError
from ...ir import Instr, Test
from ...scopes import Placement
from ..c.printer import CPrinter, Unspellable
from .parse import FLAGS, SCOPES, parse_opencl

SCOPE_NAMES = {v: k for k, v in SCOPES.items()}
FLAG_NAMES = {v: k for k, v in FLAGS.items()}


def _flags(ins: Instr) -> str:
    for a in ins.attrs:
        if a.startswith("flags="):
            names = [f for f in a[len("flags="):].split(",") if f]
            if any(f not in FLAG_NAMES for f in names):
                raise Unspellable(f"fence flags {a!r}")
            return " | ".join(FLAG_NAMES[f] for f in names) or "0"
    raise Unspellable(f"{ins.base} without its flags")


class OpenCLPrinter(CPrinter):
    DIALECT = "OPENCL"
    parse = staticmethod(parse_opencl)
    SCOPE_NAMES = SCOPE_NAMES

    def placement(self, p: Placement) -> str:
        if p != Placement(wg=p.wg, agent=p.agent) or p.wg is None:
            raise Unspellable(f"placement {p} (OPENCL threads have a work-group and a device)")
        return f"@wg {p.wg}, dev {p.agent}"

    def scope_arg(self, scope: str | None) -> str:
        if scope not in self.SCOPE_NAMES:
            raise Unspellable(f"scope {scope!r}")
        return f", {self.SCOPE_NAMES[scope]}"

    def fence(self, ins: Instr) -> str:
        if len(ins.attrs) != 1:
            raise Unspellable(f"fence [{' '.join(ins.attrs)}]")
        return (f"atomic_work_item_fence({_flags(ins)}, {self.order(ins.order)}"
                f"{self.scope_arg(ins.scope)});")

    def barrier(self, entry: Instr, exit_: Instr) -> str:
        attrs = tuple(a for a in entry.attrs if a != "fence=entry")
        ident = next((a[3:] for a in attrs if a.startswith("id=")), None)
        if not (entry.order == "rel" and exit_.order == "acq" and entry.scope == exit_.scope
                and entry.attrs[:1] == ("fence=entry",) and exit_.attrs[:1] == ("fence=exit",)
                and exit_.attrs[1:] == attrs and len(attrs) == 2 and ident is not None
                and ident.isdigit() and attrs[0] == f"id={ident}"):
            raise Unspellable(f"barrier [{' '.join(entry.attrs)}] / [{' '.join(exit_.attrs)}]")
        if entry.scope == "wg":
            return f"B{ident}: barrier({_flags(entry)});"
        return f"B{ident}: work_group_barrier({_flags(entry)}{self.scope_arg(entry.scope)});"

    # -- parameters from Test.meta ---------------------------------------------------------------
    def _meta(self, test: Test) -> tuple[dict[str, tuple[str, ...]], set[str]]:
        meta = dict(test.meta)
        if set(meta) - {"regions", "nonatomic"}:
            raise Unspellable(f"meta {sorted(set(meta) - {'regions', 'nonatomic'})}")
        regions = {}
        for loc, rs in meta.get("regions", ()):
            regions.setdefault(self.base_of(loc), set()).add(tuple(rs))
        if any(len(v) != 1 for v in regions.values()):
            raise Unspellable("an array whose elements are in different regions")
        nonatomic = {self.base_of(loc) for loc in meta.get("nonatomic", ())}
        return {b: v.pop() for b, v in regions.items()}, nonatomic

    def param_types(self, test: Test) -> dict[str, str]:
        regions, nonatomic = self._meta(test)
        self.regions = regions
        return {b: ("int*" if b in nonatomic else "atomic_int*") for b in self.bases}

    def extra_params(self, test: Test, params: list[list[str]]) -> list[list[str]]:
        """Every location of ``Test.meta``'s regions declared by enough threads (a location in
        two regions by two), and the region each declaration names (:attr:`spaces`)."""
        declared = {b for ps in params for b in ps}
        for b in set(self.regions) - declared:
            params[0].append(b)
        n = len(params)
        for b, rs in self.regions.items():
            users = [t for t in range(n) if b in params[t]]
            for t in range(n):
                if len(users) >= len(rs):
                    break
                if t not in users:
                    params[t].append(b)
                    users.append(t)
            if len(users) < len(rs):
                raise Unspellable(f"location {b!r} in {len(rs)} regions with fewer threads")
        order = {b: k for k, b in enumerate(self.bases)}
        params = [sorted(ps, key=order.__getitem__) for ps in params]
        self.spaces: dict[tuple[int, str], str] = {}
        for b, rs in self.regions.items():
            users = [t for t in range(n) if b in params[t]]
            for k, t in enumerate(users):
                self.spaces[(t, b)] = rs[min(k, len(rs) - 1)] if rs else ""
        for t, ps in enumerate(params):
            for b in ps:
                if (t, b) not in self.spaces:
                    raise Unspellable(f"location {b!r} named by P{t} but in no region")
        return params

    def param(self, tid: int, base: str, ptype: str) -> str:
        space = self.spaces[(tid, base)]
        return f"{space + ' ' if space else ''}{ptype} {base}"


_PRINTER = OpenCLPrinter()


def format_opencl(test: Test) -> str:
    """The test in the OPENCL dialect (module doc); PrintError for what it cannot spell."""
    return _PRINTER.format(test)


__all__ = ["OpenCLPrinter", "PrintError", "format_opencl"]

"""Front end for litmus tests in Dat3M's ``PTX`` dialect (the PTXv6_0 / PTXv7_5 conformance suites).

Shape (the Dat3M table frame, :mod:`litmus.dat3m_table`)::

    PTX name                                    (also ptx)
    "documentation"
    { x=0; P1:r0=0;                             (locations, registers)
      y @ generic aliases x;                    (a virtual alias: another generic address of x)
      s @ surface aliases y; }                  (a surface/texture/constant view of address y)
     P0@cta 0,gpu 0       | P1@cta 1,gpu 0       ;
     st.weak x, 1         | ld.acquire.gpu r0, y ;
     st.release.gpu y, 1  | ld.weak r1, x        ;
    exists (P1:r0 == 1 /\\ P1:r1 == 0)           (or ~exists, forall; filter; register comparisons)

Placements ``P0@cta C,gpu G`` (and optionally ``cluster K``): ids are hierarchical (a CTA inside
its cluster inside its GPU); a left-out ``cta`` is a CTA of the thread's own.

Instructions (PTX ISA "Parallel Synchronization and Communication Instructions", with the
Dat3M spellings; modifiers in any order):

- ``ld``/``st`` ``.weak`` (the default), ``.relaxed.SCOPE``, ``.acquire.SCOPE`` (loads),
  ``.release.SCOPE`` (stores), ``.volatile`` (relaxed at system scope, PTX ISA 8.4.2); through
  a proxy: ``tld`` (texture), ``suld`` (surface), ``cold`` (constant) loads, ``sust`` stores;
- ``atom[.SEM][.SCOPE].OP rD, x, v`` (``suatom`` through the surface proxy), ``OP`` one of
  ``add sub and or xor min max inc dec exch``, and ``atom[.SEM][.SCOPE].cas rD, x, e, v``;
  ``red[.SEM][.SCOPE].OP x, v`` (``sured``). SEM is ``relaxed`` (the default), ``acquire``,
  ``release`` or ``acq_rel``; SCOPE ``cta``, ``cluster``, ``gpu`` (the default) or ``sys``;
- ``fence.sc.SCOPE``, ``fence.acq_rel.SCOPE`` (also ``fence.SCOPE``), ``fence.acquire.SCOPE``,
  ``fence.release.SCOPE``; ``membar.cta|gl|sys`` (= ``fence.sc.cta|gpu|sys`` on sm_70+);
  ``fence.proxy.alias``, ``fence.proxy.surface|texture|constant``;
- ``bar[.cta].sync INST[, ID[, COUNT]]`` and ``bar[.cta].arrive INST[, ID[, COUNT]]``: Dat3M's
  barrier form, INST naming the dynamic instance, ID the barrier (a constant or a register) and
  COUNT the number of threads that complete it;
- ``ld rK, v`` (a register move), ``add|sub|mul|div|and|or|xor rK, a, b``; labels ``LC00:``,
  ``goto``, ``beq|bne|blt|bgt|ble|bge a, b, LCnn``.

Lowering to :class:`~litmus.ir.Instr`: scopes become the program model's words (``cta`` →
``wg``, ``cluster`` → ``cluster``, ``gpu`` → ``agent``, ``sys`` → ``sys``; placement ``cta`` →
workgroup, ``gpu`` → agent). A weak access is ``access="plain"``; a strong one ``access="atom"``
with ``order`` ``rlx``/``acq``/``rel``; ``atom``/``red`` are ``rmw``/``cas`` with the order of
their ``.sem`` (``red`` carries the attr ``red``: its read is no read operation, PTX ISA table
"Operation types"; a ``cas`` carries ``cmov``: it writes back what it read when the comparison
fails, PTX ISA ``atom`` semantics ``*a = (*a == b) ? c : *a``). ``loc`` is the *physical*
location; an access through a name other than its location carries ``via=NAME@KIND`` (the name
written and its declared kind) and, when its generic virtual address is not the location's,
``vloc=ADDRESS``; an access through another proxy carries ``proxy=surface|texture|constant``.
Fences are ``fence`` (orders ``sc``, ``acq_rel``, ``acq``, ``rel``), proxy fences ``fence`` with
``proxy=...`` / ``proxy=alias`` and no order; barriers ``cbar`` with ``inst=``, ``id=``,
``quorum=`` and ``arrive``. Every malformed input is a ParseError at file:line:col.
"""

from __future__ import annotations

import dataclasses

from ...cfg import expr_text
from ...dat3m_table import REGISTER, TableParser
from ...ir import Instr, Location, Test, cas_default_fail
from ...lexer import Token, parse_int
from ...scopes import Placement

HEADERS = ("PTX", "ptx")
#: PTX scope -> the program model's scope word
SCOPES = {"cta": "wg", "cluster": "cluster", "gpu": "agent", "sys": "sys"}
PTX_SCOPE = {v: k for k, v in SCOPES.items()}
#: membar levels (sm_70+: membar.LEVEL = fence.sc.SCOPE)
MEMBAR = {"cta": "wg", "gl": "agent", "sys": "sys"}
SEMS = {"weak": None, "relaxed": "rlx", "acquire": "acq", "release": "rel", "acq_rel": "acq_rel",
        "sc": "sc", "volatile": "volatile"}
#: mnemonic -> (kind, proxy)
LOADS = {"ld": "generic", "tld": "texture", "suld": "surface", "cold": "constant"}
STORES = {"st": "generic", "sust": "surface"}
ATOMS = {"atom": "generic", "suatom": "surface"}
REDS = {"red": "generic", "sured": "surface"}
PROXIES = ("generic", "surface", "texture", "constant")
RMW_OPS = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "min": "min",
           "max": "max", "inc": "inc", "dec": "dec", "exch": "xchg"}
LOCAL_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and": "&", "or": "|", "xor": "^"}
#: ignored modifiers of the PTX ISA's own syntax: state space and data type
IGNORED = {"global", "u32", "s32", "b32", "u64", "s64", "b64"}


@dataclasses.dataclass(frozen=True)
class Alias:
    """A declared alias ``NAME @ KIND aliases TARGET``: its physical location and its generic
    virtual address (itself for a generic alias, the target's address for a proxy view)."""

    name: str
    kind: str
    location: str
    address: str


class _PTXParser(TableParser):
    HEADERS = HEADERS
    DIALECT = "PTX"
    HEADER_ROW_HINT = "P0@cta 0,gpu 0 | ..."

    def __init__(self, text: str, path: str):
        super().__init__(text, path)
        self.alias: dict[str, Alias] = {}

    # -- the init block ----------------------------------------------------------------------------
    def init_block(self):
        reg_init = []
        seen = set()
        for item in self.items():
            first = item[0]
            reg = self.register_item(item, seen)
            if reg is not None:
                reg_init.append(reg)
                continue
            if first.kind != "id" or REGISTER.match(first.text):
                raise self.err(first.pos, f"expected a location name, got {first.text!r}")
            if first.text in self.locs or first.text in self.alias:
                raise self.err(first.pos, f"location {first.text!r} declared twice")
            if len(item) > 1 and item[1].text == "@":
                self.alias_item(item)
                continue
            value = 0
            if len(item) > 1:
                if len(item) > 2 and item[1].text == "=" and \
                        (item[2].text == "&" or item[2].kind == "id"):
                    raise self.err(item[2].pos, "locations holding addresses are not supported")
                if item[1].text != "=" or len(item) != 3:
                    raise self.err(item[1].pos, f"expected '{first.text} = value' or "
                                                f"'{first.text} @ generic aliases x'")
                value = parse_int(self.src, item[2], "initial value")
            self.locs[first.text] = Location(first.text, value)
        return reg_init

    def alias_item(self, item: list[Token]) -> None:
        """``NAME @ KIND aliases TARGET``."""
        name = item[0]
        if len(item) != 5 or item[3].text != "aliases":
            raise self.err(item[1].pos, f"expected '{name.text} @ generic|surface|texture|"
                                        f"constant aliases x'")
        kind, target = item[2], item[4]
        if kind.text not in PROXIES:
            raise self.err(kind.pos, f"unknown proxy {kind.text!r} (expected one of "
                                     f"{', '.join(PROXIES)})")
        if target.text in self.locs:
            loc, address = target.text, target.text
        elif target.text in self.alias:
            a = self.alias[target.text]
            loc, address = a.location, a.address
        else:
            raise self.err(target.pos, f"alias of undeclared location {target.text!r}")
        self.alias[name.text] = Alias(name.text, kind.text, loc,
                                      name.text if kind.text == "generic" else address)

    # -- the header row ----------------------------------------------------------------------------
    def header_row(self) -> list[Placement]:
        out = []
        for i, cell in self.header_cells():
            levels: dict[str, int] = {}
            k = 0
            while k < len(cell):
                lv = cell[k]
                if lv.text not in ("cta", "cluster", "gpu"):
                    raise self.err(lv.pos, f"bad placement: unknown level {lv.text!r} "
                                           "(expected cta, cluster or gpu)")
                if lv.text in levels:
                    raise self.err(lv.pos, f"bad placement: {lv.text} given twice")
                if k + 1 >= len(cell):
                    raise self.err(lv.pos, f"bad placement: missing id after {lv.text!r}")
                levels[lv.text] = parse_int(self.src, cell[k + 1], f"{lv.text} id")
                k += 2
                if k < len(cell):
                    if cell[k].text != ",":
                        raise self.err(cell[k].pos, "bad placement: expected ','")
                    k += 1
            out.append(Placement(wave=None, wg=levels.get("cta"),
                                 cluster=levels.get("cluster", 0), agent=levels.get("gpu", 0)))
        return out

    # -- operands ----------------------------------------------------------------------------------
    def location(self, t: Token) -> tuple[str, tuple[str, ...]]:
        """The physical location a name accesses and the attrs of an access through it."""
        if t.text == "[":
            raise self.err(t.pos, "write the location without brackets")
        if t.kind != "id" or REGISTER.match(t.text):
            raise self.err(t.pos, f"expected a location, got {t.text!r}")
        a = self.alias.get(t.text)
        if a is not None:
            attrs = (f"via={a.name}@{a.kind}",)
            if a.address != a.location:
                attrs += (f"vloc={a.address}",)
            return a.location, attrs
        if t.text not in self.locs:              # like Dat3M: undeclared locations start at 0
            self.locs[t.text] = Location(t.text, 0)
        return t.text, ()

    def address(self, toks: list[Token]) -> Token:
        """A location operand, ``x`` or ``[x]``."""
        if len(toks) == 3 and toks[0].text == "[" and toks[2].text == "]":
            return toks[1]
        if len(toks) != 1:
            raise self.err(toks[0].pos, "expected a location")
        return toks[0]

    def split(self, toks: list[Token], what: str) -> list[list[Token]]:
        """Operands separated by ',' (a location may be written ``[x]``)."""
        out: list[list[Token]] = [[]]
        for t in toks:
            if t.text == ",":
                if not out[-1]:
                    raise self.err(t.pos, f"missing operand before ',' in {what}")
                out.append([])
            else:
                out[-1].append(t)
        if not out[-1]:
            raise self.err(toks[-1].pos if toks else self.cell_pos,
                           f"missing operand in {what}")
        return out

    def nops(self, toks: list[Token], n: int, what: str) -> list[list[Token]]:
        ops = self.split(toks, what) if toks else []
        if len(ops) != n:
            raise self.err(toks[0].pos if toks else self.cell_pos,
                           f"{what} takes {n} operand(s), got {len(ops)}")
        return ops

    def scalar(self, toks: list[Token]):
        if len(toks) != 1:
            raise self.err(toks[0].pos, "expected a register or an integer")
        return self.value(toks[0])

    def operand_attrs(self, key: str, v) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """An int operand goes to ``args``; a register to ``key=rK``."""
        return ((v,), ()) if isinstance(v, int) else ((), (f"{key}={v}",))

    # -- instructions ------------------------------------------------------------------------------
    def instr(self, cell: list[Token]) -> Instr:
        first = cell[0]
        self.cell_pos = first.pos
        flow = self.control(cell)
        if flow is not None:
            return flow
        if first.kind != "id":
            raise self.err(first.pos, f"expected an instruction, got {first.text!r}")
        head, mods, ops = self.mnemonic(cell)
        h = head.text
        mods = [m for m in mods if m.text not in IGNORED]
        if h in LOCAL_OPS and not mods:
            r, a, b = (self.scalar(o) for o in self.nops(ops, 3, h))
            if not isinstance(r, str):
                raise self.err(ops[0].pos, f"expected a register rK, got {r!r}")
            return Instr("assign", reg=r, attrs=(f"val={expr_text((LOCAL_OPS[h], a, b))}",))
        if h in LOADS and not mods and len(ops) == 3 and \
                (ops[2].kind == "int" or REGISTER.match(ops[2].text)):
            # Dat3M's register move: ld rK, value
            r, v = self.nops(ops, 2, h)
            return Instr("assign", reg=self.register(r[0]),
                         attrs=(f"val={expr_text(self.scalar(v))}",))
        if h in LOADS or h in STORES:
            return self.access(head, mods, ops)
        if h in ATOMS or h in REDS:
            return self.atomic(head, mods, ops)
        if h in ("fence", "membar"):
            return self.fence(head, mods, ops)
        if h in ("bar", "barrier"):
            return self.barrier(head, mods, ops)
        raise self.err(first.pos, f"unknown instruction {h!r}")

    def sem_scope(self, head: Token, mods: list[Token], allowed: tuple[str, ...]):
        """(sem word or None, scope word or None, other modifiers) of an instruction."""
        sem = scope = None
        rest = []
        for m in mods:
            if m.text in SEMS:
                if sem is not None:
                    raise self.err(m.pos, f"two memory orders (.{sem} and .{m.text})")
                if m.text not in allowed:
                    raise self.err(m.pos, f"{head.text} cannot be .{m.text} (allowed: "
                                          f"{', '.join('.' + a for a in allowed)})")
                sem = m.text
            elif m.text in SCOPES:
                if scope is not None:
                    raise self.err(m.pos, f"two scopes (.{scope} and .{m.text})")
                scope = m.text
            else:
                rest.append(m)
        return sem, scope, rest

    def access(self, head: Token, mods: list[Token], ops: list[Token]) -> Instr:
        h = head.text
        load = h in LOADS
        proxy = LOADS[h] if load else STORES[h]
        allowed = ("weak", "relaxed", "acquire" if load else "release", "volatile")
        sem, scope, rest = self.sem_scope(head, mods, allowed)
        if rest:
            raise self.err(rest[0].pos, f"unknown modifier {rest[0].text!r} for {h!r}")
        if sem in (None, "weak", "volatile") and scope is not None:
            what = sem or "weak"
            raise self.err(next(m.pos for m in mods if m.text == scope),
                           f"a {what} {h} takes no scope")
        if sem in ("relaxed", "acquire", "release") and scope is None:
            raise self.err(head.pos, f"{h}.{sem} needs a scope (.cta, .cluster, .gpu or .sys)")
        if proxy != "generic" and sem not in (None, "weak"):
            raise self.err(head.pos, f"{h} (the {proxy} proxy) is weak only")
        attrs: tuple[str, ...] = () if proxy == "generic" else (f"proxy={proxy}",)
        if sem == "volatile":
            access, order, sc, attrs = "atom", "rlx", "sys", attrs + ("volatile",)
        elif sem in (None, "weak"):
            access, order, sc = "plain", None, None
        else:
            access, order, sc = "atom", SEMS[sem], SCOPES[scope]
        if load:
            r, x = self.nops(ops, 2, h)
            loc, va = self.location(self.address(x))
            return Instr("ld", access=access, order=order, scope=sc, reg=self.register(r[0]),
                         loc=loc, attrs=va + attrs)
        x, v = self.nops(ops, 2, h)
        loc, va = self.location(self.address(x))
        args, vattr = self.operand_attrs("val", self.scalar(v))
        return Instr("st", access=access, order=order, scope=sc, loc=loc, args=args,
                     attrs=va + attrs + vattr)

    def atomic(self, head: Token, mods: list[Token], ops: list[Token]) -> Instr:
        h = head.text
        red = h in REDS
        proxy = REDS[h] if red else ATOMS[h]
        sem, scope, rest = self.sem_scope(head, mods, ("relaxed", "acquire", "release",
                                                       "acq_rel"))
        opm = [m for m in rest if m.text in RMW_OPS or m.text == "cas"]
        if not opm:
            raise self.err(head.pos, f"{h} needs an operation (.add .sub .and .or .xor .min "
                                     f".max .inc .dec .exch{'' if red else ' .cas'})")
        for m in rest:
            if m is not opm[0]:
                raise self.err(m.pos, f"unknown modifier {m.text!r} for {h!r}" if m not in opm
                                      else f"two operations (.{opm[0].text} and .{m.text})")
        op = opm[0].text
        order = SEMS[sem or "relaxed"]
        sc = SCOPES[scope or "gpu"]
        attrs: tuple[str, ...] = () if proxy == "generic" else (f"proxy={proxy}",)
        if red:
            if op == "cas":
                raise self.err(opm[0].pos, "red has no .cas (use atom)")
            x, v = self.nops(ops, 2, h)
            loc, va = self.location(self.address(x))
            args, vattr = self.operand_attrs("val", self.scalar(v))
            return Instr("rmw", access="atom", order=order, scope=sc, op=RMW_OPS[op], loc=loc,
                         args=args, attrs=va + attrs + vattr + ("red",))
        if op == "cas":
            r, x, e, v = self.nops(ops, 4, f"{h}.cas")
            loc, va = self.location(self.address(x))
            ev, vv = self.scalar(e), self.scalar(v)
            if isinstance(ev, int) and isinstance(vv, int):
                args, extra = (ev, vv), ()
            else:
                args, extra = (), (f"exp={expr_text(ev)}", f"val={expr_text(vv)}")
            return Instr("cas", access="atom", order=order, fail_order=cas_default_fail(order),
                         scope=sc, reg=self.register(r[0]), loc=loc, args=args,
                         attrs=va + attrs + extra + ("cmov",))
        r, x, v = self.nops(ops, 3, h)
        loc, va = self.location(self.address(x))
        args, vattr = self.operand_attrs("val", self.scalar(v))
        return Instr("rmw", access="atom", order=order, scope=sc, op=RMW_OPS[op],
                     reg=self.register(r[0]), loc=loc, args=args, attrs=va + attrs + vattr)

    def fence(self, head: Token, mods: list[Token], ops: list[Token]) -> Instr:
        if ops:
            raise self.err(ops[0].pos, f"{head.text} takes no operands")
        words = [m.text for m in mods]
        if head.text == "membar":
            if len(mods) != 1 or words[0] not in MEMBAR:
                pos = mods[0].pos if mods else head.pos
                raise self.err(pos, "expected membar.cta, membar.gl or membar.sys")
            return Instr("fence", order="sc", scope=MEMBAR[words[0]], attrs=("membar",))
        if words and words[0] == "proxy":
            if len(mods) != 2 or words[1] not in ("alias", "surface", "texture", "constant"):
                pos = mods[1].pos if len(mods) > 1 else mods[0].pos
                raise self.err(pos, "expected fence.proxy.alias, .surface, .texture or "
                                    ".constant")
            return Instr("fence", attrs=(f"proxy={words[1]}",))
        sem, scope, rest = self.sem_scope(head, mods, ("sc", "acq_rel", "acquire", "release"))
        if rest:
            raise self.err(rest[0].pos, f"unknown modifier {rest[0].text!r} for fence")
        if scope is None:
            raise self.err(head.pos, "a fence needs a scope (.cta, .cluster, .gpu or .sys)")
        return Instr("fence", order=SEMS[sem or "acq_rel"], scope=SCOPES[scope])

    def barrier(self, head: Token, mods: list[Token], ops: list[Token]) -> Instr:
        words = [m.text for m in mods]
        if words and words[0] == "cta":
            words = words[1:]
        if words not in (["sync"], ["arrive"]):
            raise self.err(mods[0].pos if mods else head.pos,
                           "expected bar.cta.sync or bar.cta.arrive")
        parts = self.split(ops, f"bar.cta.{words[0]}") if ops else []
        if not 1 <= len(parts) <= 3:
            raise self.err(ops[0].pos if ops else head.pos,
                           f"bar.cta.{words[0]} takes 1 to 3 operands (INSTANCE[, ID[, COUNT]])")
        inst = self.scalar(parts[0])
        if not isinstance(inst, int):
            raise self.err(parts[0][0].pos, "the barrier instance must be an integer")
        attrs = (f"inst={inst}",)
        if len(parts) > 1:
            attrs += (f"id={expr_text(self.scalar(parts[1]))}",)
        if len(parts) > 2:
            q = self.scalar(parts[2])
            if not isinstance(q, int) or q < 1:
                raise self.err(parts[2][0].pos, "the thread count must be a positive integer")
            attrs += (f"quorum={q}",)
        if words[0] == "arrive":
            attrs += ("arrive",)
        return Instr("cbar", scope="wg", attrs=attrs)


def parse_ptx(text: str, path: str = "<string>") -> Test:
    """Parse a test in the PTX dialect; raises :class:`ParseError` (``path:line:col: reason``)."""
    test = _PTXParser(text, path).parse()
    return dataclasses.replace(test, dialect="PTX")

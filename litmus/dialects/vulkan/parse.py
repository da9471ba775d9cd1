"""Front end for litmus tests in the Dat3M ``Vulkan`` dialect (the VULKAN conformance suite).

Shape::

    Vulkan name                                 (also VULKAN, vulkan)
    "documentation"
    { P1:r0=0; x=0; y aliases x; }              (registers, locations, aliases of a location)
    { ssw 0 1; }                                (optional: system-synchronizes-with thread pairs)
     P0@sg 0, wg 0, qf 0   | P1@sg 1, wg 0, qf 0 ;
     st.av.dv.sc0 x, 1     | ld.atom.acq.wg.sc0.semsc0 r0, y ;
     ...
    filter (P1:r0 == 1)                         (optional)
    exists (P1:r0 == 1)                         (or ~exists, forall; may be left out after filter)

Instructions (one per cell; modifiers in any order): ``ld`` / ``st`` with ``atom`` (atomic),
``av``/``vis`` (non-atomic, made available / visible at the scope), ``nonpriv``, an order
(``acq`` ``rel`` ``acq_rel``), a scope (``sg`` ``wg`` ``qf`` ``dv``), a storage class ``sc0``..``sc3``,
storage-class semantics ``semsc0``..``semsc3``, ``semav``, ``semvis``; ``rmw`` (operation ``add``
``sub`` ``mul`` ``div`` ``and`` ``or`` ``xor``, exchange when left out); ``membar`` (a memory
barrier); ``cbar INST[, ID[, QUORUM]]`` (a control barrier: INST names the dynamic instance, ID and
QUORUM make it a named barrier that completes once QUORUM threads reach it); ``avdevice``,
``visdevice``; labels ``LC00:``, ``goto LC00``, ``beq|bne|blt|bgt|ble|bge a, b, LC01``;
``add|sub|mul|div|and|or|xor rK, a, b``.

Lowering to :class:`~litmus.ir.Instr`: ``scope`` keeps the Vulkan word; ``attrs`` holds the storage
class, semantics flags, ``nonpriv`` (atomic, av and vis accesses are non-private too), ``vloc=NAME``
when an access goes through an alias, and the cbar's ``inst=``, ``id=``, ``quorum=``. Placement:
``sg`` → wave, ``wg`` → workgroup, ``qf`` → agent. ``ssw`` pairs and the ``filter`` go into
``Test.meta`` (``("ssw", ((0, 1), ...))``, ``("filter", prop)``). A condition comparing two registers
of one thread (``P0:r1 == P0:r2``) becomes an ``assign`` of the comparison at the end of that
thread and an atom on its result register ``_cN``.
"""

from __future__ import annotations

from ...cfg import expr_text
from ...dat3m_table import REGISTER, TableParser
from ...ir import Instr, Location, Test
from ...lexer import Token, parse_int
from ...scopes import Placement

HEADERS = ("Vulkan", "VULKAN", "vulkan")
SCOPES = ("sg", "wg", "qf", "dv")
ORDERS = ("acq", "rel", "acq_rel")
STORAGE = ("sc0", "sc1", "sc2", "sc3")
SEMSC = ("semsc0", "semsc1", "semsc2", "semsc3")
RMW_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "and": "and", "or": "or",
           "xor": "xor"}
LOCAL_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and": "&", "or": "|", "xor": "^"}


class _VParser(TableParser):
    HEADERS = HEADERS
    DIALECT = "Vulkan"
    HEADER_ROW_HINT = "P0@sg 0, wg 0, qf 0 | ..."

    def __init__(self, text: str, path: str):
        super().__init__(text, path)
        self.alias: dict[str, str] = {}
        self.ssw: list = []

    # -- blocks ----------------------------------------------------------------------------------
    def init_block(self):
        reg_init = []
        seen_regs = set()
        for item in self.items():
            first = item[0]
            reg = self.register_item(item, seen_regs)
            if reg is not None:
                reg_init.append(reg)
                continue
            if first.kind != "id" or REGISTER.match(first.text):
                raise self.err(first.pos, f"expected a location name, got {first.text!r}")
            if len(item) == 3 and item[1].text == "aliases":
                target = item[2]
                if target.text not in self.locs:
                    raise self.err(target.pos, f"alias of undeclared location {target.text!r}")
                if first.text in self.locs or first.text in self.alias:
                    raise self.err(first.pos, f"location {first.text!r} declared twice")
                self.alias[first.text] = target.text
                continue
            value = 0
            if len(item) > 1:
                if item[1].text != "=" or len(item) != 3:
                    raise self.err(item[1].pos, f"expected '{first.text} = value' or "
                                                f"'{first.text} aliases y'")
                value = parse_int(self.src, item[2], "initial value")
            if first.text in self.locs or first.text in self.alias:
                raise self.err(first.pos, f"location {first.text!r} declared twice")
            self.locs[first.text] = Location(first.text, value)
        return reg_init

    def extra_blocks(self) -> None:
        """The optional ``{ ssw i j; ... }`` block."""
        if self.peek().text != "{":
            return
        for item in self.items():
            if item[0].text != "ssw" or len(item) != 3:
                raise self.err(item[0].pos, "expected 'ssw <thread> <thread>'")
            a = parse_int(self.src, item[1], "thread id")
            b = parse_int(self.src, item[2], "thread id")
            self.ssw.append((a, b, item[0].pos))

    def check_threads(self, n: int) -> None:
        for a, b, pos in self.ssw:
            if a >= n or b >= n:
                raise self.err(pos, f"ssw names thread P{max(a, b)}, but the test has {n}")

    def extra_meta(self) -> tuple[list, list]:
        if not self.ssw:
            return [], []
        return ([("ssw", tuple((a, b) for a, b, _ in self.ssw))],
                ["ssw=" + ",".join(f"{a}>{b}" for a, b, _ in self.ssw)])

    def header_row(self) -> list[Placement]:
        out = []
        for i, cell in self.header_cells():
            levels = {}
            k = 0
            while k < len(cell):
                lv = cell[k]
                if lv.text not in ("sg", "wg", "qf"):
                    raise self.err(lv.pos, f"bad placement: unknown level {lv.text!r} "
                                           "(expected sg, wg or qf)")
                if k + 1 >= len(cell):
                    raise self.err(lv.pos, f"bad placement: missing id after {lv.text!r}")
                levels[lv.text] = parse_int(self.src, cell[k + 1], f"{lv.text} id")
                k += 2
                if k < len(cell):
                    if cell[k].text != ",":
                        raise self.err(cell[k].pos, "bad placement: expected ','")
                    k += 1
            out.append(Placement(wave=levels.get("sg", i), wg=levels.get("wg", 0),
                                 agent=levels.get("qf", 0)))
        return out

    # -- operands --------------------------------------------------------------------------------
    def location(self, t: Token) -> tuple[str, tuple[str, ...]]:
        if t.kind != "id" or REGISTER.match(t.text):
            raise self.err(t.pos, f"expected a location, got {t.text!r}")
        if t.text in self.alias:
            return self.alias[t.text], (f"vloc={t.text}",)
        if t.text not in self.locs:              # like Dat3M: undeclared locations start at 0
            self.locs[t.text] = Location(t.text, 0)
        return t.text, ()

    # -- instructions (operands: value/register from TableParser) ---------------------------------
    def location(self, t: Token) -> tuple[str, tuple[str, ...]]:
        if t.kind != "id" or REGISTER.match(t.text):
            raise self.err(t.pos, f"expected a location, got {t.text!r}")
        if t.text in self.alias:
            return self.alias[t.text], (f"vloc={t.text}",)
        if t.text not in self.locs:              # like Dat3M: undeclared locations start at 0
            self.locs[t.text] = Location(t.text, 0)
        return t.text, ()

    def instr(self, cell: list[Token]) -> Instr:
        first = cell[0]
        self.cell_pos = first.pos
        flow = self.control(cell)
        if flow is not None:
            return flow
        if first.kind != "id":
            raise self.err(first.pos, f"expected an instruction, got {first.text!r}")
        _, mods, ops = self.mnemonic(cell)
        head = first.text
        if head in ("avdevice", "visdevice"):
            self.operands(ops, 0, head)
            if mods:
                raise self.err(mods[0].pos, f"{head} takes no modifiers")
            return Instr(head)
        if head in LOCAL_OPS and not mods:
            r, a, b = self.operands(ops, 3, head)
            return Instr("assign", reg=self.register(r),
                         attrs=(f"val={expr_text((LOCAL_OPS[head], self.value(a), self.value(b)))}",))
        if head not in ("ld", "st", "rmw", "membar", "cbar"):
            raise self.err(first.pos, f"unknown instruction {head!r}")
        f = {"atom": False, "av": False, "vis": False, "nonpriv": False, "order": None,
             "scope": None, "sc": None, "semsc": [], "semav": False, "semvis": False, "op": None}
        for t in mods:
            m = t.text
            if m in ("atom", "av", "vis", "nonpriv", "semav", "semvis"):
                key = m
                if f[key]:
                    raise self.err(t.pos, f"duplicate modifier {m!r}")
                f[key] = True
            elif m in ORDERS:
                if f["order"]:
                    raise self.err(t.pos, f"two memory orders ({f['order']} and {m})")
                f["order"] = m
            elif m in SCOPES:
                if f["scope"]:
                    raise self.err(t.pos, f"two scopes ({f['scope']} and {m})")
                f["scope"] = m
            elif m in STORAGE:
                if f["sc"]:
                    raise self.err(t.pos, f"two storage classes ({f['sc']} and {m})")
                f["sc"] = m
            elif m in SEMSC:
                if m in f["semsc"]:
                    raise self.err(t.pos, f"duplicate modifier {m!r}")
                f["semsc"].append(m)
            elif m in RMW_OPS and head == "rmw":
                if f["op"]:
                    raise self.err(t.pos, "two rmw operations")
                f["op"] = RMW_OPS[m]
            else:
                raise self.err(t.pos, f"unknown modifier {m!r} for {head!r}")

        def reject(keys, why):
            for key in keys:
                if f[key]:
                    pos = next(t.pos for t in mods if t.text == key or
                               (key == "order" and t.text in ORDERS) or
                               (key == "sc" and t.text in STORAGE) or
                               (key == "scope" and t.text in SCOPES) or
                               (key == "semsc" and t.text in SEMSC))
                    raise self.err(pos, f"{head}: {why}")

        sems = tuple(sorted(f["semsc"])) + (("semav",) if f["semav"] else ()) + \
            (("semvis",) if f["semvis"] else ())
        if head in ("ld", "st", "rmw"):
            if f["sc"] is None:
                raise self.err(first.pos, f"{head} needs a storage class (sc0 .. sc3)")
            if head == "rmw" and not f["atom"]:
                raise self.err(first.pos, "rmw must be atomic (rmw.atom...)")
            if f["atom"]:
                reject(["av", "vis", "nonpriv"], "an atomic access takes no av/vis/nonpriv")
                if f["scope"] is None:
                    raise self.err(first.pos, f"an atomic {head} needs a scope (sg wg qf dv)")
            else:
                reject(["order"], "a non-atomic access takes no memory order")
                reject(["semsc", "semav", "semvis"], "a non-atomic access takes no semantics")
                if head == "ld":
                    reject(["av"], "a load cannot be 'av' (use vis)")
                if head == "st":
                    reject(["vis"], "a store cannot be 'vis' (use av)")
                if (f["av"] or f["vis"]) and f["scope"] is None:
                    raise self.err(first.pos, f"{head}.av/.vis needs a scope (sg wg qf dv)")
                if not (f["av"] or f["vis"]) and f["scope"]:
                    reject(["scope"], "a plain access takes no scope")
            if f["order"] and f["order"] != "rel" and head == "st":
                reject(["order"], "a store can only be 'rel'")
            if f["order"] and f["order"] != "acq" and head == "ld":
                reject(["order"], "a load can only be 'acq'")
            access = "atom" if f["atom"] else ("av" if f["av"] else
                                               ("vis" if f["vis"] else "plain"))
            nonpriv = f["atom"] or f["av"] or f["vis"] or f["nonpriv"]
            attrs = (f["sc"],) + sems + (("nonpriv",) if nonpriv else ())
            if head == "ld":
                r, x = self.operands(ops, 2, "ld")
                loc, va = self.location(x)
                return Instr("ld", access=access, order=f["order"], scope=f["scope"],
                             reg=self.register(r), loc=loc, attrs=attrs + va)
            if head == "st":
                x, v = self.operands(ops, 2, "st")
                loc, va = self.location(x)
                val = self.value(v)
                if isinstance(val, int):
                    return Instr("st", access=access, order=f["order"], scope=f["scope"], loc=loc,
                                 args=(val,), attrs=attrs + va)
                return Instr("st", access=access, order=f["order"], scope=f["scope"], loc=loc,
                             attrs=attrs + va + (f"val={val}",))
            r, x, v = self.operands(ops, 3, "rmw")
            loc, va = self.location(x)
            val = self.value(v)
            extra = () if isinstance(val, int) else (f"val={val}",)
            return Instr("rmw", access="atom", order=f["order"] or "rlx", scope=f["scope"],
                         op=f["op"] or "xchg", reg=self.register(r), loc=loc,
                         args=(val,) if isinstance(val, int) else (), attrs=attrs + va + extra)
        reject(["atom", "av", "vis", "nonpriv", "sc"], "a barrier takes no access modifiers")
        if f["scope"] is None:
            raise self.err(first.pos, f"{head} needs a scope (sg wg qf dv)")
        if head == "membar":
            if f["order"] is None:
                raise self.err(first.pos, "membar needs an order (acq, rel or acq_rel)")
            self.operands(ops, 0, "membar") if ops else None
            return Instr("fence", order=f["order"], scope=f["scope"], attrs=sems)
        # cbar INST[, ID[, QUORUM]]
        vals = self.operands(ops, (1, 2, 3), "cbar")
        if vals[0].kind != "int":
            raise self.err(vals[0].pos, f"expected a barrier instance number, got "
                                        f"{vals[0].text!r}")
        attrs = sems + (f"inst={vals[0].text}",)
        if len(vals) > 1:
            attrs += (f"id={self.value(vals[1])}",)
        if len(vals) > 2:
            q = self.value(vals[2])
            if not isinstance(q, int) or q < 1:
                raise self.err(vals[2].pos, "the quorum must be a positive integer")
            attrs += (f"quorum={q}",)
        return Instr("cbar", order=f["order"], scope=f["scope"], attrs=attrs)


def parse_vulkan(text: str, path: str = "<string>") -> Test:
    """Parse a test in the Vulkan dialect; raises :class:`ParseError` (``path:line:col: reason``)."""
    return _VParser(text, path).parse()

"""The litmus program model shared by the oracle, the backends and the fuzzer (LITMUS.md).

A :class:`Test` is a set of straight-line threads over declared global and LDS locations, with a
placement of each thread in the scope tree and a final condition. Instructions are normalized when
built: defaults (order ``rlx``, scope ``sys``, the cas failure order) are filled in, so two tests
that mean the same thing compare equal whatever spelling the file used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from .fields import Fields, fields_of
from .scopes import Placement, instance
from . import scopes as _scopes

#: Instruction bases (the mnemonic before its modifiers).
BASES = ("ld", "st", "rmw", "cas", "fence", "async.ld", "async.mark", "async.wait", "barrier",
         "bar.signal", "bar.wait", "bar.init", "bar.join", "bar.leave")
#: Control-flow and register bases of the C/Vulkan front ends only (litmus/cfg.py).
CFG_BASES = ("label", "branch", "goto", "assign", "cbar", "avdevice", "visdevice")

#: Access kinds of ``ld``/``st``: plain, atomic, load-visible / store-available, volatile.
ACCESSES = ("plain", "atom", "vis", "av", "vol")

ORDERS = ("rlx", "acq", "rel", "acq_rel", "sc")
ORDER_RANK = {"rlx": 0, "acq": 1, "rel": 1, "acq_rel": 2, "sc": 3}
RMW_OPS = ("add", "sub", "xchg", "and", "or", "xor", "max", "min")

#: Orders allowed per instruction form.
LOAD_ORDERS = ("rlx", "acq", "sc")
STORE_ORDERS = ("rlx", "rel", "sc")
RMW_ORDERS = ORDERS
CAS_FAIL_ORDERS = ("rlx", "acq", "sc")
FENCE_ORDERS = ("acq", "rel", "acq_rel", "sc")

#: Barrier ids: -1 workgroup, -3 cluster, 1..16 named.
WORKGROUP_BARRIER = -1
CLUSTER_BARRIER = -3
NAMED_BARRIERS = tuple(range(1, 17))
BARRIER_IDS = (WORKGROUP_BARRIER, CLUSTER_BARRIER) + NAMED_BARRIERS

UNDEF = "undef"
"""Marker for an undefined value in an outcome (stands for any value, independently per position)."""


def is_acquire(order: str | None) -> bool:
    return order in ("acq", "acq_rel", "sc")


def is_release(order: str | None) -> bool:
    return order in ("rel", "acq_rel", "sc")


def cas_default_fail(order: str) -> str:
    """The cas failure order when left out: the success order without its release part."""
    return {"rlx": "rlx", "acq": "acq", "rel": "rlx", "acq_rel": "acq", "sc": "sc"}[order]


@dataclass(frozen=True)
class Instr:
    """One instruction, normalized.

    ``base`` is one of :data:`BASES`. Fields that do not apply are ``None``/``False``/``()``:

    - ``access``: for ``ld``/``st`` one of :data:`ACCESSES`; ``atom`` for ``rmw``/``cas``.
    - ``order``: the memory order of atomics and fences (success order for cas).
    - ``fail_order``: the failure order of a cas.
    - ``scope``: the scope of atomics, fences, ``ld.vis``/``st.av`` (``sys`` when left out).
    - ``noav``: the ``amdgcn-av none`` MMRA.
    - ``op``: the rmw operation.
    - ``reg``: the destination register (``rK``) of loads, rmw and cas.
    - ``loc``: the location accessed (for ``async.ld``, the global source).
    - ``lds``: the LDS destination of ``async.ld``.
    - ``args``: integer operands: the stored value, rmw operand, cas (expected, desired),
      ``async.wait`` count, barrier id (and expected count of ``bar.init``).
    """

    base: str
    access: str | None = None
    order: str | None = None
    fail_order: str | None = None
    scope: str | None = None
    noav: bool = False
    op: str | None = None
    reg: str | None = None
    loc: str | None = None
    lds: str | None = None
    args: tuple[int, ...] = ()
    attrs: tuple[str, ...] = ()   # dialect-specific attributes; typed view: .fields (litmus/fields.py)

    @property
    def fields(self) -> Fields:
        """The typed reading of :attr:`attrs` (:mod:`litmus.fields`): ``ins.fields.proxy``,
        ``ins.fields.quorum`` ... instead of slicing ``key=value`` strings."""
        return fields_of(self.attrs)

    # -- classification helpers used by every consumer -------------------------------------------
    @property
    def is_load(self) -> bool:
        return self.base == "ld"

    @property
    def is_store(self) -> bool:
        return self.base == "st"

    @property
    def is_rmw(self) -> bool:
        return self.base in ("rmw", "cas")

    @property
    def is_atomic(self) -> bool:
        return self.access == "atom"

    @property
    def is_memory_access(self) -> bool:
        return self.base in ("ld", "st", "rmw", "cas")

    @property
    def reads(self) -> bool:
        return self.base in ("ld", "rmw", "cas")

    @property
    def writes(self) -> bool:
        return self.base in ("st", "rmw", "cas")

    @property
    def is_barrier(self) -> bool:
        return self.base == "barrier" or self.base.startswith("bar.")

    @property
    def is_async(self) -> bool:
        return self.base.startswith("async.")

    @property
    def kind(self) -> str:
        """A short coverage label: ``ld.atom``, ``st.av``, ``rmw``, ``fence``, ``bar.signal`` ..."""
        if self.base in ("ld", "st"):
            return self.base if self.access == "plain" else f"{self.base}.{self.access}"
        return self.base

    @property
    def value(self) -> int | None:
        """The value written by a store or the operand of an rmw."""
        if self.base in ("st", "rmw"):
            return self.args[0]
        return None

    @property
    def barrier_id(self) -> int | None:
        if self.base == "barrier":
            return WORKGROUP_BARRIER
        if self.base in ("bar.signal", "bar.wait", "bar.init", "bar.join"):
            return self.args[0]
        return None

    def registers(self) -> tuple[str, ...]:
        return (self.reg,) if self.reg is not None else ()

    def locations(self) -> tuple[str, ...]:
        out = []
        if self.loc is not None:
            out.append(self.loc)
        if self.lds is not None:
            out.append(self.lds)
        return tuple(out)

    def replace(self, **changes) -> "Instr":
        from dataclasses import replace
        return replace(self, **changes)


@dataclass(frozen=True)
class Location:
    """A declared memory location: global (one copy) or LDS (one copy per workgroup)."""

    name: str
    init: int = 0
    lds: bool = False


@dataclass(frozen=True)
class Thread:
    """A thread: its placement and its straight-line code (``None`` rows are empty cells)."""

    placement: Placement
    code: tuple[Instr, ...]

    def registers(self) -> list[str]:
        """Registers written by this thread, in order of first write."""
        seen: list[str] = []
        for ins in self.code:
            for r in ins.registers():
                if r not in seen:
                    seen.append(r)
        return seen


# --- the final condition ------------------------------------------------------------------------

@dataclass(frozen=True)
class Atom:
    """``Pn:rK == v`` (thread set) or ``x == v`` (thread None): ``op`` is ``==`` or ``!=``."""

    thread: int | None
    name: str
    op: str
    value: int

    @property
    def key(self) -> str:
        """The observable this atom talks about, as an outcome key."""
        return self.name if self.thread is None else f"P{self.thread}:{self.name}"


@dataclass(frozen=True)
class Not:
    arg: "Prop"


@dataclass(frozen=True)
class And:
    args: tuple["Prop", ...]


@dataclass(frozen=True)
class Or:
    args: tuple["Prop", ...]


@dataclass(frozen=True)
class Const:
    value: bool


Prop = Atom | Not | And | Or | Const


@dataclass(frozen=True)
class Condition:
    """The final condition: ``quantifier`` is ``exists``, ``~exists`` or ``forall``."""

    quantifier: str
    prop: Prop


def prop_atoms(prop: Prop) -> Iterator[Atom]:
    if isinstance(prop, Atom):
        yield prop
    elif isinstance(prop, Not):
        yield from prop_atoms(prop.arg)
    elif isinstance(prop, (And, Or)):
        for a in prop.args:
            yield from prop_atoms(a)


# --- the test -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Test:
    """A litmus test in the AMDGPU dialect's program model.

    ``locations`` keep declaration order; ``reg_init`` maps ``(thread, register)`` to its initial
    value (registers left out start at 0). ``dialect`` records the header word of the source file.
    """

    __test__ = False   # not a pytest test class

    #: the printer :meth:`_repr_pretty_` uses, installed by litmus.dialects (the IR does not
    #: import the printers, which import the IR)
    text_of = None

    def _repr_pretty_(self, p, cycle) -> None:
        """How Hypothesis (its falsifying examples) and IPython print a test: as litmus text in
        its dialect, or the dataclass repr for one no printer can print."""
        if cycle:
            p.text("Test(...)")
            return
        try:
            text = "\n" + type(self).text_of(self)
        except (TypeError, ValueError):          # no printer installed / PrintError
            text = repr(self)
        p.text(text)

    name: str
    locations: tuple[Location, ...]
    threads: tuple[Thread, ...]
    condition: Condition
    doc: tuple[str, ...] = ()
    reg_init: tuple[tuple[int, str, int], ...] = ()
    dialect: str = "AMDGPU"
    meta: tuple[tuple[str, object], ...] = field(default=(), compare=False)

    # -- lookups ---------------------------------------------------------------------------------
    def location(self, name: str) -> Location:
        for loc in self.locations:
            if loc.name == name:
                return loc
        raise KeyError(name)

    @property
    def globals(self) -> list[Location]:
        return [loc for loc in self.locations if not loc.lds]

    @property
    def lds_locations(self) -> list[Location]:
        return [loc for loc in self.locations if loc.lds]

    def is_lds(self, name: str) -> bool:
        return self.location(name).lds

    def register_init(self, tid: int, reg: str) -> int:
        for t, r, v in self.reg_init:
            if t == tid and r == reg:
                return v
        return 0

    def registers(self, tid: int) -> list[str]:
        """Every register of thread ``tid``: written by its code or given an initial value,
        sorted by number."""
        regs: dict = {}
        for ins in self.threads[tid].code:
            if type(ins) is Instr:          # (one register at most: no call, no tuple)
                if ins.reg is not None:
                    regs[ins.reg] = None
            else:
                regs.update(dict.fromkeys(ins.registers()))
        for t, r, _ in self.reg_init:
            if t == tid:
                regs[r] = None
        return sorted(regs, key=_reg_number) if len(regs) > 1 else list(regs)

    def observables(self) -> list[str]:
        """Outcome keys: every register of every thread (``P1:r0``), then every global location."""
        keys = [f"P{tid}:{r}" for tid in range(len(self.threads)) for r in self.registers(tid)]
        keys += [loc.name for loc in self.locations if not loc.lds]
        return keys

    # -- scopes ----------------------------------------------------------------------------------
    def instance(self, tid: int, scope: str) -> tuple:
        """The scope instance of thread ``tid`` at ``scope``."""
        return instance(self.threads[tid].placement, tid, scope)

    def contains(self, tid_x: int, scope_x: str, tid_t: int) -> bool:
        """Does thread ``tid_x``'s instance of ``scope_x`` contain thread ``tid_t``?"""
        return self.instance(tid_x, scope_x) == self.instance(tid_t, scope_x)

    def inclusive(self, tid_a: int, scope_a: str, tid_b: int, scope_b: str) -> bool:
        """Inclusive scopes of an operation of ``tid_a`` at ``scope_a`` and one of ``tid_b``."""
        return _scopes.inclusive(self.threads[tid_a].placement, tid_a, scope_a,
                                 self.threads[tid_b].placement, tid_b, scope_b)

    def same(self, tid_a: int, tid_b: int, scope: str) -> bool:
        """Are two threads in the same instance of ``scope``?"""
        return self.instance(tid_a, scope) == self.instance(tid_b, scope)

    def waves_in_workgroup(self, tid: int) -> int:
        """Number of distinct waves in the workgroup of thread ``tid`` (the barrier's count)."""
        wg = self.instance(tid, "wg")
        return len({self.instance(t, "wave") for t in range(len(self.threads))
                    if self.instance(t, "wg") == wg})

    def workgroups_in_cluster(self, tid: int) -> int:
        cl = self.instance(tid, "cluster")
        return len({self.instance(t, "wg") for t in range(len(self.threads))
                    if self.instance(t, "cluster") == cl})

    # -- sizes -----------------------------------------------------------------------------------
    def instructions(self) -> Iterator[tuple[int, int, Instr]]:
        """(thread, index, instruction) for every instruction in program order."""
        for tid, th in enumerate(self.threads):
            for i, ins in enumerate(th.code):
                yield tid, i, ins

    @property
    def size(self) -> int:
        return sum(len(th.code) for th in self.threads)


def _reg_number(reg: str) -> tuple[int, str]:
    digits = reg[1:]
    return (int(digits), reg) if digits.isdigit() else (1 << 30, reg)


"""Typed instruction fields (issue 34): what the dialect front ends keep in ``Instr.attrs`` as
``key=value`` strings, read once into a :class:`Fields` record with a type per field.

``attrs`` stay the storage (they keep instructions hashable and equal exactly when their files
mean the same; every consumer outside litmus/ still reads them), so this is the compatibility
path: new code reads ``ins.fields.proxy`` rather than slicing ``"proxy=..."`` out of the
strings, and builds attrs with :meth:`Fields.to_attrs`. :func:`fields_of` is cached per attrs
tuple, so a read costs a dictionary lookup.

The keys, by the dialect that writes them (litmus/cfg.py documents the control-flow ones):

==============  ======================  =========================================================
field           attrs spelling          meaning
==============  ======================  =========================================================
``val``         ``val=EXPR``            stored value / operand / assigned value, not a constant
``exp``         ``exp=EXPR``            expected value of a cas
``cond``        ``cond=EXPR``           a branch's condition
``target``      ``target=L``            a branch's or goto's label
``label``       ``label=L``             a label row (``_meta``: the Dat3M table's extra blocks)
``arr``/``off`` ``arr=NAME:LEN``,       an address dependency: element ``NAME[off]`` of an array
                ``off=EXPR``
``unseq``       ``unseq=ID:SIDE`` ...   C operands: (operator id, side) pairs
``proxy``       ``proxy=KIND``          PTX: the proxy of an access, or a proxy fence's kind
``via``         ``via=NAME@KIND``       PTX: the alias an access went through, and its kind
``vloc``        ``vloc=NAME``           PTX/Vulkan: the alias (or generic address) named
``inst``        ``inst=N``              PTX/Vulkan control barrier: its dynamic instance, as
                                        written (``00`` and ``0`` are two instances' names)
``barrier``     ``id=V``                control barrier id (an integer, or a register)
``quorum``      ``quorum=N``            Vulkan/PTX named barrier: threads that complete it
``fence``       ``fence=entry|exit``    OpenCL barrier: its entry or exit fence
``regions``     ``flags=A,B``           OpenCL/CUDA fence and barrier flags (``global``, ``local``)
``storage``     ``sc0`` .. ``sc3``      Vulkan storage class
``sems``        ``semsc0`` .. ``semvis`` Vulkan storage-class semantics, ``semav``, ``semvis``
``marks``       bare words              ``volatile red membar arrive cmov nonpriv``
``meta``        ``ssw=``, ``filter=``   marks of the ``_meta`` label (Dat3M table extra blocks)
``other``       anything else           kept verbatim (nothing is dropped)
==============  ======================  =========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

#: the bare words of :attr:`Fields.marks`
MARKS = ("volatile", "red", "membar", "arrive", "cmov", "nonpriv")
STORAGE = ("sc0", "sc1", "sc2", "sc3")
SEMS = ("semsc0", "semsc1", "semsc2", "semsc3", "semav", "semvis")
_TEXT = {"val": "val", "exp": "exp", "cond": "cond", "target": "target", "label": "label",
         "off": "off", "proxy": "proxy", "vloc": "vloc", "fence": "fence", "inst": "inst"}


@dataclass(frozen=True)
class Fields:
    """The typed reading of one instruction's attrs (module doc: the table of keys)."""

    val: str | None = None
    exp: str | None = None
    cond: str | None = None
    target: str | None = None
    label: str | None = None
    arr: tuple[str, int] | None = None
    off: str | None = None
    unseq: tuple[tuple[int, int], ...] = ()
    proxy: str | None = None
    via: tuple[str, str] | None = None
    vloc: str | None = None
    inst: str | None = None
    barrier: int | str | None = None
    quorum: int | None = None
    fence: str | None = None
    regions: tuple[str, ...] | None = None
    storage: str | None = None
    sems: tuple[str, ...] = ()
    marks: frozenset[str] = frozenset()
    meta: tuple[str, ...] = ()
    other: tuple[str, ...] = ()

    def has(self, mark: str) -> bool:
        """Is the bare word ``mark`` (:data:`MARKS`) among the attrs?"""
        return mark in self.marks

    def to_attrs(self) -> tuple[str, ...]:
        """The attrs strings these fields stand for, in a fixed order (the front ends' own
        orders differ; :func:`fields_of` reads any order)."""
        out: list[str] = []
        for name, key in _TEXT.items():
            v = getattr(self, name)
            if v is not None:
                out.append(f"{key}={v}")
        if self.arr is not None:
            out.append(f"arr={self.arr[0]}:{self.arr[1]}")
        out += [f"unseq={g}:{s}" for g, s in self.unseq]
        if self.via is not None:
            out.append(f"via={self.via[0]}@{self.via[1]}")
        for key, v in (("id", self.barrier), ("quorum", self.quorum)):
            if v is not None:
                out.append(f"{key}={v}")
        if self.regions is not None:
            out.append(f"flags={','.join(self.regions)}")
        if self.storage is not None:
            out.append(self.storage)
        out += list(self.sems)
        out += [m for m in MARKS if m in self.marks]
        return tuple(out) + self.meta + self.other


def _int_or_text(v: str) -> int | str:
    try:
        return int(v)
    except ValueError:
        return v


@lru_cache(maxsize=8192)
def fields_of(attrs: tuple[str, ...]) -> Fields:
    """The typed fields of an attrs tuple (cached: instructions share few distinct tuples)."""
    if not attrs:
        return _EMPTY
    kw: dict = {}
    unseq, sems, marks, meta, other = [], [], set(), [], []
    for a in attrs:
        key, eq, v = a.partition("=")
        if not eq:
            if a in MARKS:
                marks.add(a)
            elif a in STORAGE and "storage" not in kw:
                kw["storage"] = a
            elif a in SEMS:
                sems.append(a)
            else:
                other.append(a)
        elif key in _TEXT and key not in kw:
            kw[key] = v
        elif key == "arr" and "arr" not in kw and v.rpartition(":")[2].isdigit():
            name, _, n = v.rpartition(":")
            kw["arr"] = (name, int(n))
        elif key == "unseq":
            g, _, s = v.partition(":")
            unseq.append((int(g), int(s)))
        elif key == "via" and "via" not in kw and "@" in v:
            name, _, kind = v.partition("@")
            kw["via"] = (name, kind)
        elif key == "quorum" and key not in kw and v.lstrip("-").isdigit():
            kw[key] = int(v)
        elif key == "id" and "barrier" not in kw:
            kw["barrier"] = _int_or_text(v)
        elif key == "flags" and "regions" not in kw:
            kw["regions"] = tuple(v.split(",")) if v else ()
        elif key in ("ssw", "filter"):
            meta.append(a)
        else:
            other.append(a)
    return Fields(unseq=tuple(unseq), sems=tuple(sems), marks=frozenset(marks), meta=tuple(meta),
                  other=tuple(other), **kw)


_EMPTY = Fields()

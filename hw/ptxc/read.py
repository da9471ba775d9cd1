"""The PTX reader: each role's PTX back into the PTX litmus dialect (litmus/parse_ptx.py).

For role k the reader takes the kernel that runs it (``litmus`` in the switch layout, ``P<k>``
per role; calls to functions the module defines are inlined, an external call is an error),
and

1. **evaluates it abstractly** (:func:`_analyse`): a fixpoint over the control-flow graph that
   gives every register, parameter slot (``.param``) and local-memory word (``.local``, the
   ``__local_depot`` stack of an -O0 build) a value per program point: a constant, an address
   (kernel parameter / local symbol + byte offset) or *dynamic* (depends on a value read from
   memory). The special registers (``%tid.x``, ``%ctaid.x``, ``%ntid.x`` ...) are the role's
   constants (:meth:`hw.ptxc.layout.Layout.specials`), so the role switch folds away and only
   the role's own code is reachable;
2. **emits** the reachable instructions in PTX order (:func:`_emit`): memory instructions as the
   dialect's (location = the parameter the address came from), dynamic values as dialect
   registers (``r<base+k>``, moves and ``add/sub/mul/div/and/or/xor``), dynamic predicates as 0/1
   registers set by a branch (``setp`` immediately consumed by its only ``bra`` becomes one
   ``beq/bne/blt/...``), guarded instructions wrapped in a branch around them, ``selp``/``min``/
   ``max`` as branches, jumps as ``goto``/labels ``LC<n>``. A store of value v to ``out[k*R+j]``
   becomes ``ld rJ, v`` for the role's j-th observed register ``rJ`` (same name as the source).

PTX ISA defaults the reader applies (PTX ISA 8.x, chapter 9.7 "Instructions"):

=====================================  =========================================================
PTX                                    read as (dialect)
=====================================  =========================================================
``ld``/``st`` without ``.sem``         ``.weak`` (9.7.9.8 ld, 9.7.9.10 st: "weak by default")
``ld/st.relaxed|acquire|release``      ``.gpu`` scope when none is given (8.5; as ``atom``)
without scope
``ld/st.volatile``                     ``ld/st.volatile`` = relaxed ``.sys`` (8.4.2 "volatile")
``ld/st.mmio.relaxed.sys``             ``.relaxed.sys`` (the dialect has no mmio; mmio adds
                                       only "exactly once" to a relaxed.sys access, 9.7.9.8)
``atom``/``red`` without ``.sem``      ``.relaxed`` (9.7.13.5 atom, 9.7.13.6 red)
``atom``/``red`` without scope         ``.gpu`` (9.7.13.5, 9.7.13.6)
``fence.SCOPE`` without ``.sem``       ``fence.acq_rel.SCOPE`` (9.7.13.4 membar/fence)
``membar.cta|gl|sys``                  ``fence.sc.cta|gpu|sys`` (9.7.13.4: "membar is a synonym
                                       for fence.sc" on sm_70+)
``.global``/generic/``.shared`` space  ignored: a location is the address it names (every
                                       litmus location is one word in one state space)
cache operators ``.ca .cg .cs .lu``,   ignored (performance hints; no memory-model meaning)
``.L1::``/``.L2::`` hints
``bar.sync``/``barrier.sync``/         ``bar.cta.sync K``, K counting the role's barriers
``bar.cta.sync``                       (the k-th static barrier of each role meets)
=====================================  =========================================================

Values are the dialect's unbounded integers: the reader does not wrap 32-bit arithmetic of
*dynamic* values and compares signed (the litmus values are small and non-negative); constants
are folded with the instruction's width. Refused with a one-line error ``ptx line N: ...``: an
instruction the reader does not know (named), a non-constant address, a vector or float access,
``ld.global.nc``/``ldu``, an external call.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from litmus import Test
from litmus.parse_ptx import parse_ptx
from litmus.printer import format_prop

from ..backend import BackendError
from .layout import Layout
from .ptx_text import Decl, Function, Label, Stmt, parse_module

DYN = ("d",)
SEMS = ("weak", "relaxed", "acquire", "release", "acq_rel", "volatile", "sc", "mmio")
SCOPES = ("cta", "cluster", "gpu", "sys")
SPACES = ("global", "shared", "local", "generic", "param", "const", "shared::cta",
          "shared::cluster")
TYPES = re.compile(r"[busf](8|16|32|64)\Z|pred\Z")
HINTS = re.compile(r"(ca|cg|cs|lu|wb|wt|L1::.*|L2::.*|unified)\Z")
CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<",
       "ls": "<=", "hi": ">", "hs": ">="}
BRANCH = {"==": "beq", "!=": "bne", "<": "blt", "<=": "ble", ">": "bgt", ">=": "bge"}
NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
ATOM_OPS = {"add": "add", "inc": "inc", "dec": "dec", "exch": "exch", "and": "and", "or": "or",
            "xor": "xor", "min": "min", "max": "max", "cas": "cas"}
ALU = {"mov", "add", "sub", "mul", "mad", "neg", "not", "and", "or", "xor", "shl", "shr", "cvt",
       "cvta", "selp", "setp", "min", "max", "div", "rem", "abs"}
#: external functions that do not return: a call ends the thread
NORETURN = {"__assertfail", "__trap"}
SPECIAL = re.compile(r"%(tid|ntid|ctaid|nctaid)\.[xyz]\Z|%laneid\Z")
INT = re.compile(r"-?(0[xX][0-9a-fA-F]+|\d+)U?\Z")
ADDR = re.compile(r"\[\s*([^\]+\-\s]+)\s*(?:([+-])\s*(-?\w+))?\s*\]\Z")


def _err(st, msg: str) -> BackendError:
    return BackendError(f"ptx line {st.line}: {msg}")


@dataclass
class Read:
    """One role's read-back: its dialect cells and, per cell, its origin."""

    cells: list[str]
    origin: list[tuple[int, str, int | None]]


# --- inlining -------------------------------------------------------------------------------------

def _flatten(funcs: dict[str, Function], kernel: str,
             resolved: dict | None = None) -> tuple[list, dict[str, int]]:
    """The kernel's statements with module calls inlined; kernel parameter name -> index.
    ``resolved``: call site (the PTX lines of the call chain) -> the function an indirect call
    there was found to call (:func:`read_roles`); an unresolved one stays a ``callind``."""
    if kernel not in funcs:
        raise BackendError(f"the PTX has no kernel {kernel!r}")
    f = funcs[kernel]
    params = {p: i for i, p in enumerate(f.params)}
    out: list = []
    counter = [0]
    _inline(funcs, f, {}, "", out, counter, 0, resolved or {}, ())
    return out, params


def _rename(text: str, names: dict[str, str], suffix: str, labels: set[str]) -> str:
    if not suffix and not names:
        return text

    def sub(m):
        w = m.group(0)
        if w in names:
            return names[w]
        if suffix and ((w.startswith("%") and not SPECIAL.match(w)) or w in labels):
            return w + suffix
        return w
    return re.sub(r"%?[A-Za-z_$][\w$]*(?:\.[xyz](?![\w]))?", sub, text)


def _inline(funcs, f: Function, names: dict[str, str], suffix: str, out: list, counter: list,
            depth: int, resolved: dict, chain: tuple) -> None:
    if depth > 8:
        raise BackendError(f"ptx: calls nested too deep at {f.name}")
    end = f"$ret{suffix}" if depth else None
    local_params: dict[str, str] = dict(names)
    labels = {it.name for it in f.body if isinstance(it, Label)}
    for item in f.body:
        if isinstance(item, Label):
            out.append(Label(item.line, item.name + suffix))
            continue
        if isinstance(item, Decl):
            words = item.text.split()
            if words[0] == ".param" and depth >= 0:
                nm = re.sub(r"\[.*", "", words[-1])
                local_params[nm] = f"{nm}{suffix}#{counter[0]}"
            if words[0] == ".branchtargets":
                item = Decl(item.line, _rename(item.text, {}, suffix, labels))
            out.append(item)
            continue
        st = item
        if st.op == "call":
            counter[0] += 1
            cid = counter[0]
            ops = list(st.operands)
            rets: list[str] = []
            if ops and ops[0].startswith("("):
                rets = [x.strip() for x in ops.pop(0)[1:-1].split(",") if x.strip()]
            callee = ops[0] if ops else ""
            args = [x.strip() for x in ops[1][1:-1].split(",") if x.strip()] if len(ops) > 1 \
                else []
            g = funcs.get(callee)
            if g is None and callee in NORETURN:
                # a failed assertion ends the thread (nvcc -O0 keeps libcu++'s checks)
                out.append(Stmt(st.line, st.text, st.guard, "trap", (), (), st.src_line))
                continue
            site = chain + (st.line,)
            if g is None and callee.startswith("%"):
                # a call through a register (nvcc -O0 passes libcu++'s helpers as function
                # pointers): inlined once the value analysis knows its target; until then a
                # `callind` that is an error only where it is reached (read_roles)
                target = resolved.get(site)
                if target is None:
                    out.append(Stmt(st.line, st.text, st.guard, "callind",
                                    ("site=" + ",".join(map(str, site)),),
                                    (_rename(callee, local_params, suffix, labels),),
                                    st.src_line))
                    continue
                g = funcs[target]
                if st.guard is not None:
                    raise _err(st, f"a guarded indirect call through {callee} is not read")
            if g is None:
                raise _err(st, f"call to a function the PTX does not define: {callee!r}")
            sub = {}
            for formal, actual in zip(g.params, args):
                sub[formal] = local_params.get(actual, actual)
            for formal, actual in zip(g.rets, rets):
                sub[formal] = local_params.get(actual, actual)
            _inline(funcs, g, sub, f"{suffix}@{cid}", out, counter, depth + 1, resolved, site)
            continue
        text = _rename(st.text, local_params, suffix, labels)
        if text != st.text:
            from .ptx_text import _stmt
            st = dataclasses.replace(_stmt(st.line, text, st.src_line), text=st.text)
        if end is not None and st.op == "ret":
            st = Stmt(st.line, st.text, st.guard, "bra", ("uni",), (end,), st.src_line)
        out.append(st)
    if end is not None:
        out.append(Label(0, end))


# --- values -----------------------------------------------------------------------------------

def _width(mods) -> tuple[int, bool]:
    for m in reversed(mods):
        mm = re.fullmatch(r"([busf])(8|16|32|64)", m)
        if mm:
            return int(mm.group(2)), mm.group(1) == "s"
    return 64, False


def _wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def _int(text: str) -> int | None:
    if INT.match(text):
        return int(text.rstrip("U"), 0)
    return None


class _Role:
    def __init__(self, code: list, params: dict[str, int], specials: dict[str, int],
                 symbols: set[str], functions: frozenset = frozenset()):
        self.code = code
        self.params = params
        self.specials = specials
        self.symbols = symbols
        #: the module's functions: ``mov.u64 %rd, NAME`` is a constant function address
        self.functions = functions
        self.labels = {it.name: i for i, it in enumerate(code) if isinstance(it, Label)}
        #: jump tables: ``NAME: .branchtargets L0, L1, ...`` (the targets of ``brx.idx``)
        self.tables: dict[str, list[str]] = {}
        for i, it in enumerate(code[:-1]):
            nxt = code[i + 1]
            if isinstance(it, Label) and isinstance(nxt, Decl) and \
                    nxt.text.startswith(".branchtargets"):
                self.tables[it.name] = [t.strip() for t in
                                        nxt.text[len(".branchtargets"):].split(",")]

    def brx_target(self, st, state) -> int:
        """The code index ``brx.idx INDEX, TABLE`` jumps to (its index must be a role constant)."""
        idx = self.val(st.operands[0], state, st)
        table = self.tables.get(st.operands[1])
        if table is None:
            raise _err(st, f"brx.idx to unknown table {st.operands[1]!r}")
        if idx == DYN or idx[0] != "c":
            raise _err(st, "brx.idx on a loaded value is not read")
        if not 0 <= idx[1] < len(table):
            raise _err(st, f"brx.idx index {idx[1]} outside its table")
        return self.labels[table[idx[1]]]

    # value of an operand in a state
    def val(self, op: str, state: dict, st) -> tuple:
        if op.startswith("%") or op.startswith("$"):
            if op in self.specials:
                return ("c", self.specials[op])
            if SPECIAL.match(op) or op.startswith(("%smid", "%warpid", "%clock", "%globaltimer")):
                raise _err(st, f"special register {op} is not a role constant")
            return state.get(op, DYN)
        n = _int(op)
        if n is not None:
            return ("c", n)
        if op in self.symbols:
            return ("a", ("sym", op), 0)
        if op in self.functions:
            return ("a", ("func", op), 0)
        if op in self.params:
            return ("a", ("param", self.params[op]), 0)
        if "#" in op or "@" in op or op.startswith("param") or op.startswith("retval"):
            return state.get("$" + op, DYN)
        raise _err(st, f"unknown operand {op!r}")

    def address(self, op: str, state: dict, st) -> tuple:
        """The (base, offset) an address operand ``[a+off]`` names (error unless static)."""
        m = ADDR.match(op)
        if m is None:
            raise _err(st, f"expected an address operand, got {op!r}")
        base, sign, off = m.group(1), m.group(2), m.group(3)
        if base in self.params and st.op == "ld" and "param" in st.mods:
            return ("param", self.params[base]), 0
        if not base.startswith("%") and base not in self.symbols and _int(base) is None:
            return ("slot", base), 0                    # a .param slot of a call sequence
        v = self.val(base, state, st)
        k = int(off, 0) if off else 0
        if sign == "-":
            k = -k
        if v[0] != "a":
            raise _err(st, f"address {op!r} is not a fixed location (depends on a loaded "
                           f"value or is not an address)")
        return v[1], v[2] + k


def _join(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        if k not in out:
            out[k] = v
        elif out[k] != v:
            out[k] = DYN
    return out


def _cell_of(base, off) -> str:
    return f"$mem:{base[1]}:{off}"


def _transfer(role: _Role, st: Stmt, state: dict) -> dict:
    """The state after ``st`` (guarded instructions: the join of doing and not doing it)."""
    if st.guard is not None and st.op != "bra":
        g = role.val(st.guard.lstrip("!"), state, st)
        if g != DYN:
            taken = bool(g[1]) != st.guard.startswith("!")
            return _exec(role, st, state) if taken else state
        return _join(state, _exec(role, st, state))
    return _exec(role, st, state)


class _Tracked(dict):
    """A state copy that records the cells an instruction writes."""

    def __init__(self, state: dict):
        super().__init__(state)
        self.written: set[str] = set()

    def __setitem__(self, key, value):
        self.written.add(key)
        super().__setitem__(key, value)


def _exec(role: _Role, st: Stmt, state: dict) -> dict:
    op = st.op
    s = _Tracked(state)
    ops = st.operands
    if op in ("ld", "ldu"):
        if "param" in st.mods:
            base, off = role.address(ops[1], state, st)
            if base[0] == "param":
                s[ops[0]] = ("a", base, off)
            else:
                s[ops[0]] = state.get("$" + base[1], DYN)
            return s
        base, off = role.address(ops[1], state, st)
        if base[0] == "sym" or "local" in st.mods:
            s[ops[0]] = state.get(_cell_of(base, off), DYN)
        else:
            s[ops[0]] = DYN
        return s
    if op == "st":
        if "param" in st.mods:
            base, off = role.address(ops[0], state, st)
            s["$" + base[1]] = role.val(ops[1], state, st)
            return s
        base, off = role.address(ops[0], state, st)
        if base[0] == "sym" or "local" in st.mods:
            s[_cell_of(base, off)] = role.val(ops[1], state, st)
        return s
    if op == "atom":
        s[ops[0]] = DYN
        return s
    if op in ALU:
        d = ops[0]
        if op == "setp":
            dests = d.split("|")
            r = _alu(role, st, state)
            s[dests[0]] = r
            if len(dests) > 1:
                s[dests[1]] = ("c", 1 - r[1]) if r != DYN else DYN
            return s
        s[d] = _alu(role, st, state)
        return s
    return s


def _alu(role: _Role, st: Stmt, state: dict) -> tuple:
    op = st.op
    ops = st.operands
    vals = [role.val(o, state, st) for o in ops[1:]]
    bits, signed = _width(st.mods)
    if op in ("mov", "cvt", "cvta"):
        return vals[0]
    if op == "add" and len(vals) == 2:
        a, b = vals
        if a[0] == "a" and b[0] == "c":
            return ("a", a[1], a[2] + b[1])
        if b[0] == "a" and a[0] == "c":
            return ("a", b[1], b[2] + a[1])
    if op == "sub" and vals[0][0] == "a" and vals[1][0] == "c":
        return ("a", vals[0][1], vals[0][2] - vals[1][1])
    if op == "mad" and vals[2][0] == "a" and vals[0][0] == "c" and vals[1][0] == "c":
        return ("a", vals[2][1], vals[2][2] + vals[0][1] * vals[1][1])
    if any(v[0] == "a" for v in vals):
        if op == "setp" and all(v[0] == "a" for v in vals[:2]):
            pass
        else:
            raise _err(st, f"{op} on an address is not followed by the reader")
    if any(v == DYN for v in vals):
        if op == "setp" and len(vals) == 3 and vals[2] != DYN:
            comb = [m for m in st.mods if m in ("and", "or", "xor")]
            if comb and comb[0] == "and" and vals[2][1] == 0:
                return ("c", 0)
            if comb and comb[0] == "or" and vals[2][1] == 1:
                return ("c", 1)
        return DYN
    x = [v[1] if v[0] == "c" else v for v in vals]
    if op == "setp":
        cmp = next(CMP[m] for m in st.mods if m in CMP)
        r = int(eval(f"x[0] {cmp} x[1]")) if all(isinstance(v, int) for v in x[:2]) \
            else int((x[0] == x[1]) == (cmp == "=="))
        comb = [m for m in st.mods if m in ("and", "or", "xor")]
        if comb:
            r = {"and": r & x[2], "or": r | x[2], "xor": r ^ x[2]}[comb[0]]
        return ("c", r)
    if op == "selp":
        return ("c", x[0] if x[2] else x[1])
    wide = "wide" in st.mods
    hi = "hi" in st.mods
    r = {"add": lambda: x[0] + x[1], "sub": lambda: x[0] - x[1],
         "mul": lambda: x[0] * x[1], "mad": lambda: x[0] * x[1] + x[2],
         "neg": lambda: -x[0], "not": lambda: ~x[0], "and": lambda: x[0] & x[1],
         "or": lambda: x[0] | x[1], "xor": lambda: x[0] ^ x[1], "shl": lambda: x[0] << x[1],
         "shr": lambda: x[0] >> x[1], "min": lambda: min(x[0], x[1]),
         "max": lambda: max(x[0], x[1]), "abs": lambda: abs(x[0]),
         "div": lambda: int(x[0] / x[1]) if x[1] else 0,
         "rem": lambda: x[0] - int(x[0] / x[1]) * x[1] if x[1] else 0}[op]()
    if hi:
        r >>= bits
    if op == "not" and "pred" in st.mods:
        return ("c", 1 - x[0])
    return ("c", _wrap(r, bits * 2 if wide else bits, signed))


def _succs(role: _Role, i: int, state: dict) -> list[int]:
    it = role.code[i]
    nxt = [i + 1] if i + 1 < len(role.code) else []
    if isinstance(it, (Label, Decl)):
        return nxt
    if it.op in ("ret", "exit", "trap"):
        if it.guard is not None:
            g = role.val(it.guard.lstrip("!"), state, it)
            if g != DYN:
                return [] if bool(g[1]) != it.guard.startswith("!") else nxt
            return nxt
        return []
    if it.op == "bra":
        tgt = it.operands[0]
        if tgt not in role.labels:
            raise _err(it, f"branch to unknown label {tgt!r}")
        t = role.labels[tgt]
        if it.guard is None:
            return [t]
        g = role.val(it.guard.lstrip("!"), state, it)
        if g == DYN:
            return nxt + [t]
        return [t] if bool(g[1]) != it.guard.startswith("!") else nxt
    if it.op == "brx":
        if it.guard is not None:
            raise _err(it, "a guarded brx.idx is not read")
        return [role.brx_target(it, state)]
    return nxt


def _analyse(role: _Role) -> dict[int, dict]:
    """In-state of every reachable instruction index."""
    ins: dict[int, dict] = {0: {}} if role.code else {}
    work = [0] if role.code else []
    steps = 0
    while work:
        steps += 1
        if steps > 200000:
            raise BackendError("ptx: the reader's value analysis does not converge")
        i = work.pop()
        st = role.code[i]
        state = ins[i]
        out = _transfer(role, st, state) if isinstance(st, Stmt) else state
        for j in _succs(role, i, state):
            old = ins.get(j)
            new = out if old is None else _join(old, out)
            if old is None or new != old:
                ins[j] = new
                work.append(j)
    return ins


# --- emission -----------------------------------------------------------------------------------

class _Emitter:
    def __init__(self, role: _Role, states: dict[int, dict], lay: Layout, k: int, base: int,
                 loc_names: list[str]):
        self.role, self.states, self.lay, self.k = role, states, lay, k
        self.base = base
        self.loc_names = loc_names
        self.regs: dict[str, str] = {}
        self.cells: list[str] = []
        self.origin: list[tuple[int, str, int | None]] = []
        self.nlabel = 0
        self.label_of: dict[str, str] = {}
        self.nbar = 0
        self.dynamic = self._dynamic_cells()
        self.uses = self._uses()

    def _dynamic_cells(self) -> set[str]:
        """Cells whose value is not one constant at every reachable definition."""
        seen: dict[str, tuple] = {}
        dyn: set[str] = set()
        for i, state in self.states.items():
            st = self.role.code[i]
            if not isinstance(st, Stmt):
                continue
            after = _exec(self.role, st, state)
            for c in after.written:
                v = after[c]
                if st.guard is not None and self.role.val(st.guard.lstrip("!"), state, st) == DYN:
                    v = DYN                    # written on one path only: a register
                if v == DYN or (c in seen and seen[c] != v):
                    dyn.add(c)
                seen.setdefault(c, v)
        for c, v in seen.items():
            if v[0] == "a":
                dyn.discard(c)
        return dyn

    def _uses(self) -> dict[str, int]:
        n: dict[str, int] = {}
        for i in self.states:
            st = self.role.code[i]
            if isinstance(st, Stmt):
                for o in st.operands[(0 if st.op in ("st", "red", "bra") else 1):]:
                    for w in re.findall(r"%[\w.@]+", o):
                        n[w] = n.get(w, 0) + 1
                if st.guard:
                    w = st.guard.lstrip("!")
                    n[w] = n.get(w, 0) + 1
        return n

    def reg(self, cell: str) -> str:
        if cell not in self.regs:
            self.regs[cell] = f"r{self.base + len(self.regs)}"
        return self.regs[cell]

    def fresh_label(self) -> str:
        self.nlabel += 1
        return f"LC{self.nlabel:02d}"

    def label(self, name: str) -> str:
        if name not in self.label_of:
            self.label_of[name] = self.fresh_label()
        return self.label_of[name]

    def put(self, text: str, st) -> None:
        self.cells.append(text)
        src = st.src_line if isinstance(st, Stmt) else None
        if isinstance(st, Label):
            # an inlined callee's label carries its call suffix; a synthetic one has line 0
            text = st.name.split("@")[0] + ":"
            line = 0 if text.startswith("$ret") else st.line
        else:
            text, line = st.text, st.line
        self.origin.append((line, text, src))

    def opnd(self, o: str, state: dict, st) -> str:
        v = self.role.val(o, state, st)
        if v[0] == "c":
            return str(v[1])
        if v[0] == "a":
            raise _err(st, f"an address ({o}) used as a value")
        key = o if o.startswith("%") else "$" + o
        return self.reg(key)

    def cell_opnd(self, cell: str, state: dict, st) -> str:
        v = state.get(cell, DYN)
        if v[0] == "c":
            return str(v[1])
        return self.reg(cell)

    def run(self) -> Read:
        code = self.role.code
        order = sorted(self.states)
        targets = set()
        for i in order:
            st = code[i]
            if isinstance(st, Stmt) and st.op == "bra":
                succ = _succs(self.role, i, self.states[i])
                if len(succ) == 2 or (succ and succ[0] != i + 1):
                    targets.add(st.operands[0])
            if isinstance(st, Stmt) and st.op == "brx":
                targets.add(code[self.role.brx_target(st, self.states[i])].name)
        self.pending = None
        for n, i in enumerate(order):
            st = code[i]
            state = self.states[i]
            if isinstance(st, Label):
                if st.name in targets:
                    self.flush()
                    self.put(f"{self.label(st.name)}:", st)
                continue
            if isinstance(st, Decl):
                if st.text.split()[0] in (".shared", ".global", ".const"):
                    raise _err(st, f"declaration {st.text!r}: the reader follows parameters "
                                   f"and .local memory only")
                continue
            if self.pending is not None:
                p = self.pending[0]
                if st.op == "bra" and st.guard is not None and st.guard.lstrip("!") == p and \
                        self.role.val(p, state, st) == DYN:
                    _, cmp, a, b, _, _ = self.pending
                    self.pending = None
                    if st.guard.startswith("!"):
                        cmp = NEGATE[cmp]
                    self.put(f"{BRANCH[cmp]} {a}, {b}, {self.label(st.operands[0])}", st)
                    continue
                if st.op in ("st", "red", "bra", "fence", "membar", "bar", "barrier") or \
                        st.guard is not None or \
                        st.operands[0].split("|")[0] in (self.pending[5]) or \
                        any(p in re.findall(r"%[\w.@]+", o) for o in st.operands):
                    self.flush()
            if self.defer(st, state):
                continue
            self.stmt(st, state, i)
        self.flush()
        if "$end" in self.label_of:
            self.put(f"{self.label_end()}:", Label(0, "end"))
        _peephole(self.cells, self.origin)
        return Read(self.cells, self.origin)

    def defer(self, st, state) -> bool:
        """Hold back ``setp p, a, b`` whose only use is a ``@p bra`` (see :meth:`flush`)."""
        if not (st.op == "setp" and st.guard is None and len(st.operands) == 3):
            return False
        p = st.operands[0]
        if "|" in p or self.uses.get(p, 0) != 1 or p not in self.dynamic:
            return False
        cmp = next(CMP[m] for m in st.mods if m in CMP)
        a = self.opnd(st.operands[1], state, st)
        b = self.opnd(st.operands[2], state, st)
        self.pending = (p, cmp, a, b, st, st.operands[1:3])
        return True

    def flush(self) -> None:
        """Emit a held-back ``setp`` as a 0/1 register (its ``bra`` did not follow directly)."""
        if self.pending is None:
            return
        p, cmp, a, b, st, _ = self.pending
        self.pending = None
        r = self.reg(p)
        lab = self.fresh_label()
        self.put(f"ld {r}, 1", st)
        self.put(f"{BRANCH[cmp]} {a}, {b}, {lab}", st)
        self.put(f"ld {r}, 0", st)
        self.put(f"{lab}:", st)

    def label_end(self) -> str:
        return self.label("$end")

    def stmt(self, st: Stmt, state: dict, i: int) -> None:
        if st.op == "brx":
            self.put(f"goto {self.label(self.role.code[self.role.brx_target(st, state)].name)}",
                     st)
            return
        if st.op == "bra":
            succ = _succs(self.role, i, state)
            tgt = self.role.labels[st.operands[0]]
            if len(succ) == 2:
                g = st.guard.lstrip("!")
                b = "beq" if st.guard.startswith("!") else "bne"
                self.put(f"{b} {self.reg(g)}, 0, {self.label(st.operands[0])}", st)
            elif succ == [tgt] and tgt != i + 1:
                self.put(f"goto {self.label(st.operands[0])}", st)
            return
        if st.op in ("ret", "exit", "trap"):
            if st.guard is not None:
                g = self.role.val(st.guard.lstrip("!"), state, st)
                if g == DYN:
                    b = "beq" if st.guard.startswith("!") else "bne"
                    self.put(f"{b} {self.reg(st.guard.lstrip('!'))}, 0, {self.label_end()}", st)
                    return
            self.put(f"goto {self.label_end()}", st)
            return
        skip = None
        if st.guard is not None:
            g = self.role.val(st.guard.lstrip("!"), state, st)
            if g != DYN:
                if bool(g[1]) == st.guard.startswith("!"):
                    return                                   # never executed
            else:
                skip = self.fresh_label()
                b = "bne" if st.guard.startswith("!") else "beq"
                self.put(f"{b} {self.reg(st.guard.lstrip('!'))}, 0, {skip}", st)
        self.body(st, state)
        if skip is not None:
            self.put(f"{skip}:", st)

    # -- one instruction ------------------------------------------------------------------------
    def body(self, st: Stmt, state: dict) -> None:
        op = st.op
        if op in ALU:
            return self.alu(st, state)
        if op in ("ld", "ldu", "st"):
            return self.access(st, state)
        if op in ("atom", "red"):
            return self.atomic(st, state)
        if op in ("fence", "membar"):
            return self.fence(st)
        if op in ("bar", "barrier"):
            mods = [m for m in st.mods if m not in ("cta", "aligned")]
            if mods != ["sync"]:
                raise _err(st, f"unknown instruction {st.text.split()[0]!r} (only "
                               f"bar.sync/barrier.sync are read)")
            self.put(f"bar.cta.sync {self.nbar}", st)
            self.nbar += 1
            return
        raise _err(st, f"unknown instruction {st.text.split()[0]!r}")

    def dest(self, d: str) -> str | None:
        """The dialect register for a destination cell (None when it stays a constant)."""
        return self.reg(d) if d in self.dynamic else None

    def alu(self, st: Stmt, state: dict) -> None:
        op = st.op
        ops = st.operands
        if op == "setp":
            dests = ops[0].split("|")
            if all(d not in self.dynamic for d in dests):
                return
            cmp = next(CMP[m] for m in st.mods if m in CMP)
            a, b = (self.opnd(o, state, st) for o in ops[1:3])
            r = self.reg(dests[0])
            lab = self.fresh_label()
            self.put(f"ld {r}, 1", st)
            self.put(f"{BRANCH[cmp]} {a}, {b}, {lab}", st)
            self.put(f"ld {r}, 0", st)
            self.put(f"{lab}:", st)
            comb = [m for m in st.mods if m in ("and", "or", "xor")]
            if comb:
                self.put(f"{comb[0]} {r}, {r}, {self.opnd(ops[3], state, st)}", st)
            if len(dests) > 1:
                self.put(f"xor {self.reg(dests[1])}, {r}, 1", st)
            return
        d = self.dest(ops[0])
        if d is None:
            return
        v = self.role.val(ops[0], _exec(self.role, st, state), st)
        if v[0] == "c":
            self.put(f"ld {d}, {v[1]}", st)
            return
        x = [self.opnd(o, state, st) for o in ops[1:]]
        if op in ("mov", "cvt", "cvta"):
            self.put(f"ld {d}, {x[0]}", st)
        elif op in ("add", "sub", "and", "or", "xor", "div"):
            self.put(f"{op} {d}, {x[0]}, {x[1]}", st)
        elif op == "mul":
            self.put(f"mul {d}, {x[0]}, {x[1]}", st)
        elif op == "mad":
            t = self.reg(ops[0] + "$t")
            self.put(f"mul {t}, {x[0]}, {x[1]}", st)
            self.put(f"add {d}, {t}, {x[2]}", st)
        elif op == "neg":
            self.put(f"sub {d}, 0, {x[0]}", st)
        elif op == "not":
            self.put(f"xor {d}, {x[0]}, {1 if 'pred' in st.mods else -1}", st)
        elif op in ("shl", "shr") and _int(x[1]) is not None:
            self.put(f"{'mul' if op == 'shl' else 'div'} {d}, {x[0]}, {1 << int(x[1])}", st)
        elif op == "rem":
            t = self.reg(ops[0] + "$t")
            self.put(f"div {t}, {x[0]}, {x[1]}", st)
            self.put(f"mul {t}, {t}, {x[1]}", st)
            self.put(f"sub {d}, {x[0]}, {t}", st)
        elif op == "selp":
            lab = self.fresh_label()
            p = ops[3]
            self.put(f"ld {d}, {x[0]}", st)
            self.put(f"bne {self.opnd(p, state, st)}, 0, {lab}", st)
            self.put(f"ld {d}, {x[1]}", st)
            self.put(f"{lab}:", st)
        elif op in ("min", "max"):
            lab = self.fresh_label()
            self.put(f"ld {d}, {x[0]}", st)
            self.put(f"{'ble' if op == 'min' else 'bge'} {x[0]}, {x[1]}, {lab}", st)
            self.put(f"ld {d}, {x[1]}", st)
            self.put(f"{lab}:", st)
        elif op == "abs":
            lab = self.fresh_label()
            self.put(f"ld {d}, {x[0]}", st)
            self.put(f"bge {x[0]}, 0, {lab}", st)
            self.put(f"sub {d}, 0, {x[0]}", st)
            self.put(f"{lab}:", st)
        else:
            raise _err(st, f"{st.text.split()[0]} of a loaded value is not read")

    def location(self, base, off: int, st) -> tuple[str, int | None]:
        """(location name, out word index or None) for a global address."""
        if base[0] != "param":
            raise _err(st, f"access to {base[1]!r}: not a location parameter")
        i = base[1]
        if i < len(self.loc_names):
            if off != 0:
                raise _err(st, f"access at offset {off} of location {self.loc_names[i]!r}")
            return self.loc_names[i], None
        if off % 4:
            raise _err(st, f"unaligned output word at byte offset {off}")
        return "", off // 4

    def sem(self, st: Stmt, allowed: tuple[str, ...], default: str,
            default_scope: str | None) -> str:
        sem = scope = None
        for m in st.mods:
            if m in SEMS:
                if m == "mmio":
                    continue
                sem = m
            elif m in SCOPES:
                scope = m
            elif m in ("nc",) or st.op == "ldu":
                raise _err(st, f"unknown instruction {st.text.split()[0]!r} (non-coherent "
                               f"loads are not read)")
            elif re.fullmatch(r"v[248]", m):
                raise _err(st, f"vector access {st.text.split()[0]!r} is not read")
            elif re.fullmatch(r"f(16|32|64)", m):
                raise _err(st, f"float access {st.text.split()[0]!r} is not read")
            elif m in SPACES or TYPES.match(m) or HINTS.match(m) or m in ATOM_OPS or \
                    m in ("noftz",):
                continue
            else:
                raise _err(st, f"unknown modifier .{m} in {st.text.split()[0]!r}")
        sem = sem or default
        if sem not in allowed:
            raise _err(st, f"{st.op}.{sem} is not read")
        if sem in ("weak", "volatile"):
            return f".{sem}"
        return f".{sem}.{scope or default_scope}"

    def access(self, st: Stmt, state: dict) -> None:
        ops = st.operands
        load = st.op != "st"
        vec = [m for m in st.mods if re.fullmatch(r"v[248]", m)]
        if vec and not load and "param" not in st.mods and "local" not in st.mods:
            # a vector store: only to the output array (the compiler merged adjacent out[] words)
            base, off = self.role.address(ops[0], state, st)
            if base[0] == "param" and base[1] >= len(self.loc_names):
                vals = [v.strip() for v in ops[1].strip("{}").split(",")]
                width = _width(st.mods)[0] // 8
                for n, v in enumerate(vals):
                    self.out_word(st, (off + n * width) // 4, self.opnd(v, state, st))
                return
        if "param" in st.mods:
            if load:
                d = self.dest(ops[0])
                if d is not None:
                    base, _ = self.role.address(ops[1], state, st)
                    if base[0] == "param":
                        raise _err(st, "a kernel parameter read as a value")
                    self.put(f"ld {d}, {self.cell_opnd('$' + base[1], state, st)}", st)
            else:
                base, _ = self.role.address(ops[0], state, st)
                cell = "$" + base[1]
                if cell in self.dynamic:
                    self.put(f"ld {self.reg(cell)}, {self.opnd(ops[1], state, st)}", st)
            return
        base, off = self.role.address(ops[1] if load else ops[0], state, st)
        if base[0] == "sym" or "local" in st.mods:
            cell = _cell_of(base, off)
            if load:
                d = self.dest(ops[0])
                if d is not None:
                    self.put(f"ld {d}, {self.cell_opnd(cell, state, st)}", st)
            elif cell in self.dynamic:
                self.put(f"ld {self.reg(cell)}, {self.opnd(ops[1], state, st)}", st)
            return
        q = self.sem(st, ("weak", "relaxed", "acquire" if load else "release", "volatile"),
                     "weak", "gpu")
        loc, word = self.location(base, off, st)
        if load:
            if word is not None:
                raise _err(st, "a load from the output array")
            self.put(f"ld{q} {self.reg(ops[0])}, {loc}", st)
            return
        v = self.opnd(ops[1], state, st)
        if word is not None:
            self.out_word(st, word, v)
            return
        self.put(f"st{q} {loc}, {v}", st)

    def out_word(self, st: Stmt, word: int, v: str) -> None:
        """A store of ``v`` to ``out[word]``: the role's observed register of that word."""
        role = self.lay.roles[self.k]
        j = word - self.k * self.lay.stride
        if not 0 <= j < len(role.observed):
            raise _err(st, f"store to output word {word}, not one of P{self.k}'s")
        self.put(f"ld {role.observed[j]}, {v}", st)

    def atomic(self, st: Stmt, state: dict) -> None:
        ops = st.operands
        red = st.op == "red"
        q = self.sem(st, ("relaxed", "acquire", "release", "acq_rel"), "relaxed", "gpu")
        opm = [m for m in st.mods if m in ATOM_OPS]
        if not opm:
            raise _err(st, f"unknown instruction {st.text.split()[0]!r} (no operation)")
        aop = ATOM_OPS[opm[0]]
        base, off = self.role.address(ops[0] if red else ops[1], state, st)
        loc, word = self.location(base, off, st)
        if word is not None:
            raise _err(st, "an atomic on the output array")
        if red:
            self.put(f"red{q}.{aop} {loc}, {self.opnd(ops[1], state, st)}", st)
            return
        d = self.reg(ops[0]) if ops[0] != "_" else self.reg(f"_sink{len(self.cells)}")
        rest = ", ".join(self.opnd(o, state, st) for o in ops[2:])
        self.put(f"atom{q}.{aop} {d}, {loc}, {rest}", st)

    def fence(self, st: Stmt) -> None:
        mods = list(st.mods)
        if st.op == "membar":
            if mods not in (["cta"], ["gl"], ["sys"]):
                raise _err(st, f"unknown instruction {st.text.split()[0]!r}")
            self.put(f"membar.{mods[0]}", st)
            return
        if mods and mods[0] == "proxy":
            if mods[1:] != ["alias"]:
                raise _err(st, f"unknown instruction {st.text.split()[0]!r}")
            self.put("fence.proxy.alias", st)
            return
        sem = [m for m in mods if m in ("sc", "acq_rel", "acquire", "release")]
        scope = [m for m in mods if m in SCOPES]
        if len(sem) + len(scope) != len(mods) or len(sem) > 1 or len(scope) != 1:
            raise _err(st, f"unknown instruction {st.text.split()[0]!r}")
        self.put(f"fence.{sem[0] if sem else 'acq_rel'}.{scope[0]}", st)


def _peephole(cells: list[str], origin: list) -> None:
    """Drop ``goto L`` directly before ``L:`` (the folded role switch leaves them) and labels no
    jump names, in place (origins kept in step)."""
    changed = True
    while changed:
        changed = False
        for i, c in enumerate(cells):
            if c.startswith("goto "):
                j = i + 1
                while j < len(cells) and cells[j].endswith(":"):
                    if cells[j] == c[5:] + ":":
                        del cells[i], origin[i]
                        changed = True
                        break
                    j += 1
                if changed:
                    break
        used = set()
        for c in cells:
            if not c.endswith(":"):
                used.add(c.split()[-1].split(",")[-1].strip())
        for i in range(len(cells) - 1, -1, -1):
            if cells[i].endswith(":") and cells[i][:-1] not in used:
                del cells[i], origin[i]
                changed = True


# --- the whole test ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _module(ptx: str, source_name: str) -> dict:
    """:func:`parse_module`, remembered for the last few texts: a campaign's batch is one PTX
    module holding every program's kernels, and each program's read-back reads its own kernels
    out of it (parsing the whole batch once per program made a warm batch quadratic). The
    parsed statements are frozen and :func:`_flatten` only reads them."""
    return parse_module(ptx, source_name)


def read_roles(ptx: str, source_name: str, kernels: dict[int, str], lay: Layout,
               loc_names: list[str], base: int) -> list[Read]:
    """Each role's read-back cells (k -> its kernel's name)."""
    funcs = _module(ptx, source_name)
    functions = frozenset(funcs)
    out = []
    for k in range(len(lay.roles)):
        resolved: dict = {}
        while True:
            code, params = _flatten(funcs, kernels[k], resolved)
            symbols = set()
            for it in code:
                if isinstance(it, Decl) and it.text.split()[0] == ".local":
                    symbols.add(re.sub(r"\[.*", "", it.text.split()[-1]))
            role = _Role(code, params, lay.specials(k), symbols, functions)
            states = _analyse(role)
            if not _resolve_calls(role, states, resolved):
                break
        out.append(_Emitter(role, states, lay, k, base, loc_names).run())
    return out


def _resolve_calls(role: _Role, states: dict, resolved: dict) -> bool:
    """Targets of the reachable indirect calls (``callind``) whose register holds a constant
    function address: added to ``resolved`` (True: inline them and analyse again). A reachable
    one whose target is not such a constant is an error naming it; an unreachable one (nvcc
    -O0's ``__cuda_is_local`` paths, constant false on global memory) is dropped with its dead
    code."""
    new = False
    for i, st in enumerate(role.code):
        if not (isinstance(st, Stmt) and st.op == "callind") or i not in states:
            continue
        v = role.val(st.operands[0], states[i], st)
        if v == DYN or v[0] != "a" or v[1][0] != "func" or v[2] != 0:
            raise _err(st, f"indirect call through {st.operands[0].split('@')[0]} is not read: "
                           f"its target is not a constant function address")
        site = tuple(int(x) for x in st.mods[0][len("site="):].split(","))
        if len(resolved) > 64:
            raise _err(st, "more than 64 indirect calls resolved: not followed further")
        resolved[site] = v[1][1]
        new = True
    return new


def litmus_text(source: Test, lay: Layout, reads: list[Read]) -> str:
    """The read-back test as PTX-dialect text (same locations, threads, condition)."""
    lines = [f"PTX {source.name}"]
    # every observed register is declared with its source initial value, so a role whose PTX
    # never stores one (a mutant, a role with no code) still names it
    regs = [f"P{tid}:{r}={source.register_init(tid, r)};" for tid, role in enumerate(lay.roles)
            for r in role.observed]
    lines += ["{", *[f"{loc.name}={loc.init};" for loc in source.locations], *regs, "}"]
    head = []
    for tid, th in enumerate(source.threads):
        p = th.placement
        cluster = f"cluster {p.cluster}," if p.cluster else ""
        head.append(f"P{tid}@cta {lay.roles[tid].cta},{cluster}gpu {p.agent}")
    cols = [r.cells for r in reads]
    table = [head]
    for i in range(max((len(c) for c in cols), default=0)):
        table.append([c[i] if i < len(c) else "" for c in cols])
    widths = [max(len(row[c]) for row in table) for c in range(len(cols))]
    for row in table:
        lines.append(" " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " ;")
    lines.append(f"{source.condition.quantifier} ({format_prop(source.condition.prop, 'top')})")
    return "\n".join(lines) + "\n"


def read_back(source: Test, text: str) -> Test:
    """Parse the read-back text (a reader bug shows as a ParseError: reported as one line)."""
    try:
        return parse_ptx(text, f"<{source.name} read back>")
    except Exception as e:                        # ParseError: the reader emitted bad text
        raise BackendError(f"read-back does not parse: {str(e).splitlines()[0]}") from None

"""A small value interpreter for one thread of a compiled kernel.

The thread is lane ``k = lid mod wave size`` of its wave (work-item id ``lid``) and the only
active lane the interpreter follows (exec = 1 << k); the kernels :mod:`hw.isa.source` writes keep
each thread's code apart, so the other lanes of the wave (other threads of the test, when several
share a wave) never execute a memory instruction together with it. The interpreter executes the scalar and vector ALU
instructions needed to know, statically, every address, every value stored or compared and
every branch: moves, adds (with carries), shifts, logic, min/max, compares, selects, lane
counts (``v_mbcnt``, ``s_bcnt1``), ``readfirstlane``, exec-mask save/restore and the branches
on exec, SCC and VCC — the code of the atomic optimizer and of divergent role selection.

Values: a concrete 32-bit int; ``Sym(k)`` — the result of the thread's k-th memory read, known
only when the simulator runs (it may be moved, passed through identities such as ``x + 0`` or
``max(x, INT_MIN)``, and stored to an output slot, nothing else); ``Ptr`` — a half of the address
of the test's memory ``m`` or of the kernel-argument segment; ``Unknown(why)`` — anything else,
an error only where it matters (an address, a stored value, a branch).

The result is a list of :class:`Event` — memory accesses, waits, cache maintenance and barriers
in program order, each naming the instruction that produced it. An instruction the interpreter
does not know is an error naming it; nothing is skipped silently (the no-op list is explicit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..backend import BackendError
from .disasm import Instr, Kernel, Part
from .targets import Target

M32 = 0xFFFFFFFF
MAX_STEPS = 200_000


class TranslateError(BackendError):
    """Machine code the isa backend cannot execute (one line naming the instruction)."""


@dataclass(frozen=True)
class Sym:
    """The value returned by the thread's memory read number ``k`` (a simulator register)."""

    k: int

    def __repr__(self) -> str:
        return f"<load {self.k}>"


@dataclass(frozen=True)
class Ptr:
    """Low (``hi=False``) or high half of ``region`` + ``off`` (region "m": the test's memory;
    "kernarg": the kernel-argument segment)."""

    region: str
    off: int = 0
    hi: bool = False


@dataclass(frozen=True)
class Unknown:
    why: str


@dataclass(frozen=True)
class Event:
    """One effect of the thread on the memory system, in program order.

    ``kind``: ``load``/``store``/``rmw``/``cas`` (global vector memory), ``sload`` (scalar
    memory), ``lload``/``lstore``/``lrmw``/``lcas`` (LDS), ``dma`` (global -> LDS copy),
    ``pload``/``pstore`` (the thread's private memory, -O0), ``wait``, ``cache`` (invalidate /
    writeback), ``barrier``."""

    index: int                       # instruction index in the kernel
    kind: str
    addr: int | None = None          # byte offset in "m" (global) or LDS byte address
    lds: int | None = None           # LDS byte address of a DMA
    dst: Sym | None = None
    value: object = None             # stored value / rmw operand / cas desired value
    expected: int | None = None      # cas compare value
    op: str | None = None            # rmw op, cache instruction, barrier arrive/wait
    mods: tuple[str, ...] = ()
    counter: str | None = None       # the counter the access is tracked on
    waits: tuple[tuple[str, int], ...] = ()
    bar: int | None = None
    rtn: bool = True                 # atomics: returns the old value


_REG = re.compile(r"^([sva])(\d+)$")
_RANGE = re.compile(r"^([sva])\[(\d+):(\d+)\]$")
_FLOATS = {"0.5": 0x3F000000, "-0.5": 0xBF000000, "1.0": 0x3F800000, "-1.0": 0xBF800000,
           "2.0": 0x40000000, "-2.0": 0xC0000000, "4.0": 0x40800000, "-4.0": 0xC0800000,
           "0.15915494": 0x3E22F983}
_WAITCNT = re.compile(r"^(vmcnt|expcnt|lgkmcnt|vscnt)\((\d+)\)$")

#: hardware registers the -O0 prologue writes (scratch set-up) that no code here depends on
SPECIAL_REGS = frozenset({"flat_scratch_lo", "flat_scratch_hi", "flat_scratch", "xnack_mask_lo",
                          "xnack_mask_hi"})

#: instructions with no effect on the memory system or on the values the interpreter tracks
NOPS = frozenset({"s_nop", "s_delay_alu", "s_clause", "s_setreg_imm32_b32", "s_setprio",
                  "s_sleep", "s_wait_alu", "s_waitcnt_depctr", "s_code_end", "s_set_vgpr_msb",
                  "s_wait_xcnt", "s_wait_expcnt", "s_wait_samplecnt", "s_wait_bvhcnt",
                  "s_waitcnt_expcnt", "s_dcache_wb", "s_inst_prefetch", "s_wait_idle",
                  "s_singleuse_vdst", "s_denorm_mode", "s_round_mode", "s_setkill",
                  "s_ttracedata", "s_version"})

RMW_OPS = {"add": "add", "sub": "sub", "swap": "xchg", "and": "and", "or": "or", "xor": "xor",
           "smax": "max", "smin": "min", "max": "max", "min": "min", "wrxchg": "xchg",
           "storexchg": "xchg"}
INT_MIN = 0x80000000


def _sx(v: int, bits: int = 32) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _literal(tok: str) -> int | None:
    t = tok
    if t.startswith("lit(") and t.endswith(")"):
        t = t[4:-1]
    if t.startswith("lit64(") and t.endswith(")"):
        t = t[6:-1]
    try:
        return int(t, 0) & 0xFFFFFFFFFFFFFFFF
    except ValueError:
        pass
    if t in _FLOATS:
        return _FLOATS[t]
    return None


@dataclass
class _State:
    sgpr: dict = field(default_factory=dict)
    vgpr: dict = field(default_factory=dict)
    agpr: dict = field(default_factory=dict)    # accumulation registers (-O0 spills)
    exec: int = 1
    vcc: list = field(default_factory=lambda: [Unknown("vcc not set"), Unknown("vcc not set")])
    scc: object = Unknown("scc not set")
    m0: object = Unknown("m0 not set")


class Thread:
    """Interpret ``kernel`` as the thread with work-item id ``lid``.

    ``kernarg``: dword index -> value of the kernel-argument segment; ``sym_base``: the number
    of the thread's first loaded value (threads of one wave share one numbering)."""

    def __init__(self, kernel: Kernel, target: Target, lid: int, kernarg: dict, name: str,
                 sym_base: int = 0):
        self.k = kernel
        self.t = target
        self.name = name
        self.kernarg = kernarg
        self.st = _State()
        self.st.vgpr[0] = lid          # v0: work-item id x (packed ids: y = z = 0)
        self.st.vgpr[1] = 0
        self.st.vgpr[2] = 0
        self.events: list[Event] = []
        self.nsym = sym_base            # loaded values of the wave's earlier lanes come first
        self.path: list[int] = []      # indices of the executed instructions, in order
        self.stack: dict[int, object] = {}   # private memory (-O0), byte address -> dword
        self.xlanes: dict[str, dict[int, object]] = {}   # VGPR -> lane -> value, other lanes
        self.special: dict[str, object] = {}
        self.ins: Instr | None = None
        self.w32 = target.waves == 32
        self.lane = lid % target.waves           # the thread's lane in its wave
        self.st.exec = 1 << self.lane

    # -- errors ----------------------------------------------------------------------------------
    def err(self, why: str) -> TranslateError:
        i = self.ins
        where = f"{self.k.name}+0x{i.addr - self.k.addr:x} `{i.text}`" if i else self.k.name
        return TranslateError(f"{self.name} {where}: {why}")

    # -- operands --------------------------------------------------------------------------------
    def _regs(self, tok: str, n: int):
        """(register file, kind letter, first register, count) of a register operand, or None."""
        m = _REG.match(tok)
        if m:
            first, count = int(m.group(2)), n
        else:
            m = _RANGE.match(tok)
            if not m:
                return None
            first, count = int(m.group(2)), int(m.group(3)) - int(m.group(2)) + 1
        st = self.st
        return {"s": st.sgpr, "v": st.vgpr, "a": st.agpr}[m.group(1)], m.group(1), first, count

    def read(self, tok: str, n: int = 1) -> list:
        st = self.st
        r = self._regs(tok, n)
        if r is not None:
            f, kind, first, count = r
            return [f.get(first + i, Unknown(f"{kind}{first + i} not set")) for i in range(count)]
        if tok in ("exec", "exec_lo", "exec_hi"):
            vals = [st.exec & M32, st.exec >> 32]
            return vals if tok == "exec" else [vals[tok == "exec_hi"]]
        if tok in ("vcc", "vcc_lo", "vcc_hi"):
            return list(st.vcc) if tok == "vcc" else [st.vcc[tok == "vcc_hi"]]
        if tok == "m0":
            return [st.m0]
        if tok == "scc":
            return [st.scc]
        if tok in ("null", "off"):
            return [0] * n
        if tok in ("src_private_base", "src_flat_scratch_base_lo"):
            # the private aperture (-O0 stack): its base is the high half; lane 0's offset 0
            return [0, Ptr("private", 0, hi=True)][:n] if n == 2 else [0]
        if tok in SPECIAL_REGS:
            return [self.special.get(tok, Unknown(tok))] * n
        if tok.startswith("-") and tok[1:].startswith(("s", "v")) and not tok[1:2].isdigit():
            raise self.err(f"negated operand {tok}")
        lit = _literal(tok)
        if lit is not None:
            return [lit & M32, lit >> 32][:n] if n == 2 else [lit & M32]
        return [Unknown(f"operand {tok}")] * n

    def write(self, tok: str, vals: list) -> None:
        st = self.st
        r = self._regs(tok, len(vals))
        if r is not None:
            for i, v in enumerate(vals):
                r[0][r[2] + i] = v
            return
        if tok in ("exec", "exec_lo", "exec_hi"):
            cur = [st.exec & M32, st.exec >> 32]
            if tok == "exec":
                cur = list(vals)
            else:
                cur[tok == "exec_hi"] = vals[0]
            if any(not isinstance(v, int) for v in cur):
                raise self.err("exec mask depends on a value the interpreter cannot know")
            st.exec = cur[0] | (cur[1] << 32)
            return
        if tok in ("vcc", "vcc_lo", "vcc_hi"):
            if tok == "vcc":
                st.vcc = list(vals)
            else:
                st.vcc[tok == "vcc_hi"] = vals[0]
            return
        if tok == "m0":
            st.m0 = vals[0]
            return
        if tok == "null":
            return
        if tok in SPECIAL_REGS:              # set up by -O0 prologues; nothing reads them
            self.special[tok] = vals[0]
            return
        raise self.err(f"cannot write operand {tok}")

    def conc(self, v, what: str) -> int:
        if isinstance(v, int):
            return v
        if isinstance(v, Unknown):
            raise self.err(f"{what} is not known statically ({v.why})")
        raise self.err(f"{what} depends on a value loaded from memory ({v!r})")

    def mask(self, tok: str) -> int:
        """A lane mask operand (SGPR pair, vcc, exec; 32-bit on wave32), as an int."""
        vals = self.read(tok, 1 if self.w32 else 2)
        vals = [self.conc(v, f"lane mask {tok}") for v in vals]
        return vals[0] | ((vals[1] << 32) if len(vals) > 1 else 0)

    # -- value arithmetic ------------------------------------------------------------------------
    def alu(self, op: str, a, b):
        """32-bit ``op`` on two values (identities pass a loaded value through)."""
        if isinstance(a, int) and isinstance(b, int):
            return _ALU[op](a & M32, b & M32) & M32
        for x, y in ((a, b), (b, a)):
            if isinstance(x, (Sym, Unknown)) and isinstance(y, int):
                if _identity(op, y, x is a):
                    return x
        if op in ("add", "sub") and isinstance(a, Ptr) and isinstance(b, int) and not a.hi:
            return Ptr(a.region, a.off + (_sx(b) if op == "add" else -_sx(b)))
        if op == "add" and isinstance(b, Ptr) and isinstance(a, int) and not b.hi:
            return Ptr(b.region, b.off + _sx(a))
        if isinstance(a, Ptr) and a.hi and isinstance(b, int) and b == 0 and op in ("add", "sub"):
            return a
        if isinstance(b, Ptr) and b.hi and isinstance(a, int) and a == 0 and op == "add":
            return b
        return Unknown(f"{op}({a!r}, {b!r})")

    def lane0(self) -> bool:
        """Is the thread's lane active?"""
        return bool(self.st.exec >> self.lane & 1)

    def mybit(self, m: int) -> int:
        return m >> self.lane & 1

    # -- the run ---------------------------------------------------------------------------------
    def run(self) -> list[Event]:
        code = self.k.code
        pc = 0
        steps = 0
        while True:
            if pc >= len(code):
                raise self.err("ran past the end of the kernel without s_endpgm")
            self.ins = ins = code[pc]
            self.path.append(ins.index)
            steps += 1
            if steps > MAX_STEPS:
                raise self.err(f"more than {MAX_STEPS} instructions executed (a loop whose exit "
                               "depends on memory?)")
            nxt = self.step(ins)
            if nxt == "end":
                return self.events
            pc = pc + 1 if nxt is None else self.k.at(nxt)

    def step(self, ins: Instr):
        if len(ins.parts) > 1:
            return self.dual(ins)
        p = ins.parts[0]
        mn = p.mnemonic
        base = re.sub(r"_e(32|64)$", "", mn)
        if mn in NOPS or base in NOPS:
            return None
        if mn == "s_endpgm":
            return "end"
        if mn.startswith("s_cbranch_") or mn == "s_branch":
            return self.branch(ins, mn)
        if mn.startswith(("s_waitcnt", "s_wait_")):
            return self.wait(p)
        if mn.startswith(("s_barrier", "s_cluster_barrier")):
            return self.barrier(p)
        if mn.startswith(("s_load_", "s_buffer_load")):
            return self.smem(p)
        if mn.startswith(("global_", "buffer_", "flat_", "scratch_")):
            return self.vmem(ins, p)
        if mn.startswith("ds_"):
            return self.lds(p)
        if mn.startswith("s_"):
            return self.salu(p, base)
        if mn.startswith("v_"):
            self.valu([p])
            return None
        raise self.err(f"unknown instruction {mn}")

    def dual(self, ins: Instr):
        parts = [Part("v_" + p.mnemonic[len("v_dual_"):], p.ops, p.mods) for p in ins.parts]
        self.valu(parts)
        return None

    # -- control flow ----------------------------------------------------------------------------
    def branch(self, ins: Instr, mn: str):
        st = self.st
        if ins.target is None:
            raise self.err("branch without a target")
        cond = mn[len("s_cbranch_"):] if mn != "s_branch" else "always"
        if cond == "always":
            take = True
        elif cond in ("execz", "execnz"):
            take = (st.exec == 0) == (cond == "execz")
        elif cond in ("scc0", "scc1"):
            take = self.conc(st.scc, "SCC") == (1 if cond == "scc1" else 0)
        elif cond in ("vccz", "vccnz"):
            v = self.mask("vcc")
            take = (v == 0) == (cond == "vccz")
        else:
            raise self.err(f"unknown instruction {mn}")
        return ins.target if take else None

    # -- scalar ALU ------------------------------------------------------------------------------
    #: GFX12 names of the scalar adds and subtracts
    GFX12_SALU = {"s_add_co_i32": "s_add_i32", "s_add_co_u32": "s_add_u32",
                  "s_add_co_ci_u32": "s_addc_u32", "s_sub_co_i32": "s_sub_i32",
                  "s_sub_co_u32": "s_sub_u32", "s_sub_co_ci_u32": "s_subb_u32"}

    def salu(self, p: Part, base: str):
        st = self.st
        mn = self.GFX12_SALU.get(base, base)
        o = p.ops
        w = 2 if mn.endswith("_b64") or mn.endswith("_u64") else 1
        if mn in ("s_mov_b32", "s_mov_b64", "s_movk_i32"):
            v = self.read(o[1], w)
            if mn == "s_movk_i32":
                v = [_sx(self.conc(v[0], "s_movk immediate"), 16) & M32]
            self.write(o[0], v)
            return None
        if mn in ("s_cmov_b32", "s_cmov_b64", "s_cmovk_i32"):
            if self.conc(st.scc, "SCC"):
                self.write(o[0], self.read(o[1], w))
            return None
        if mn in ("s_cselect_b32", "s_cselect_b64"):
            self.write(o[0], self.read(o[1] if self.conc(st.scc, "SCC") else o[2], w))
            return None
        if mn in ("s_getpc_b64", "s_sext_i32_i8", "s_sext_i32_i16", "s_getreg_b32"):
            self.write(o[0], [Unknown(mn)] * w)
            return None
        if mn in ("s_setpc_b64", "s_swappc_b64", "s_call_b64", "s_trap", "s_sethalt",
                  "s_rfe_b64"):
            raise self.err(f"{mn}: calls and traps are not supported (compile at -O2)")
        if mn in ("s_bcnt1_i32_b32", "s_bcnt1_i32_b64"):
            m = self.mask_of(o[1], 2 if mn.endswith("b64") else 1)
            r = bin(m).count("1")
            self.write(o[0], [r])
            st.scc = int(r != 0)
            return None
        if mn in ("s_not_b32", "s_not_b64"):
            vals = [self.conc(v, mn) for v in self.read(o[1], w)]
            r = [(~v) & M32 for v in vals]
            self.write(o[0], r)
            st.scc = int(any(r))
            return None
        if mn in ("s_addk_i32", "s_addk_co_i32", "s_mulk_i32"):
            k = _sx(self.conc(self.read(o[1])[0], mn), 16) & M32
            a = self.read(o[0])[0]
            self.write(o[0], [self.alu("mul" if mn == "s_mulk_i32" else "add", a, k)])
            if isinstance(a, int) and mn != "s_mulk_i32":
                st.scc = int(_sx(a) + _sx(k) != _sx(a + k))
            return None
        if mn in ("s_ff1_i32_b32", "s_ff1_i32_b64", "s_ctz_i32_b32", "s_ctz_i32_b64"):
            m = self.mask_of(o[1], 2 if mn.endswith("b64") else 1)
            self.write(o[0], [((m & -m).bit_length() - 1) & M32 if m else M32])
            return None
        if mn in ("s_add_nc_u64", "s_add_u64"):
            self.write(o[0], self._add64(self.read(o[1], 2), self.read(o[2], 2)))
            return None
        if mn.endswith("_saveexec_b32") or mn.endswith("_saveexec_b64"):
            return self.saveexec(p, mn)
        m = re.match(r"^s_cmp_(eq|lg|gt|ge|lt|le)_(u32|i32|u64)$", mn)
        if m:
            a, b = self.read(o[0], 2 if m.group(2) == "u64" else 1), \
                self.read(o[1], 2 if m.group(2) == "u64" else 1)
            if all(isinstance(x, int) for x in a + b):
                x = sum(v << (32 * i) for i, v in enumerate(a))
                y = sum(v << (32 * i) for i, v in enumerate(b))
                if m.group(2) == "i32":
                    x, y = _sx(x), _sx(y)
                st.scc = int(_CMP[m.group(1)](x, y))
            else:
                st.scc = Unknown(f"{mn} of {a!r}, {b!r}")
            return None
        m = re.match(r"^s_(add|addc|sub|subb|mul|lshl|lshr|ashr|and|or|xor|andn2|orn2|nand|nor|"
                     r"xnor|and_not1|or_not1|min|max)_(u32|i32|b32|b64)$", mn)
        if m:
            op = {"and_not1": "andn2", "or_not1": "orn2"}.get(m.group(1), m.group(1))
            if w == 2 and op in ("and", "or", "xor", "andn2", "orn2", "nand", "nor", "xnor"):
                a, b = self.read(o[1], 2), self.read(o[2], 2)
                r = [self.alu(op, a[i], b[i]) for i in range(2)]
                self.write(o[0], r)
                st.scc = int(any(r)) if all(isinstance(x, int) for x in r) else \
                    Unknown(f"{mn} result")
                return None
            if w == 2 and op in ("lshl", "lshr"):
                a = self.read(o[1], 2)
                s = self.conc(self.read(o[2])[0], "shift") & 63
                if all(isinstance(x, int) for x in a):
                    v = a[0] | (a[1] << 32)
                    v = (v << s if op == "lshl" else v >> s) & 0xFFFFFFFFFFFFFFFF
                    self.write(o[0], [v & M32, v >> 32])
                    st.scc = int(v != 0)
                else:
                    self.write(o[0], [Unknown(mn)] * 2)
                return None
            a, b = self.read(o[1])[0], self.read(o[2])[0]
            if op in ("addc", "subb"):
                if not isinstance(st.scc, int):     # an unknown carry: an unknown result
                    self.write(o[0], [Unknown(f"{mn} with an unknown carry")])
                    st.scc = Unknown(f"{mn} carry")
                    return None
                c = st.scc
                r = self.alu("add" if op == "addc" else "sub", a, b)
                if isinstance(r, int):
                    full = (a + b + c) if op == "addc" else (a - b - c)
                    self.write(o[0], [full & M32])
                    st.scc = int(full > M32 or full < 0)
                else:
                    if c:
                        r = Unknown(f"{mn} with carry")
                    self.write(o[0], [r])
                    st.scc = 0
                return None
            r = self.alu(op, a, b)
            self.write(o[0], [r])
            if isinstance(a, int) and isinstance(b, int):
                if op == "add":
                    st.scc = int((a + b) > M32) if m.group(2) == "u32" else \
                        int(_sx(a) + _sx(b) != _sx(a + b))
                elif op == "sub":
                    st.scc = int(b > a) if m.group(2) == "u32" else \
                        int(_sx(a) - _sx(b) != _sx(a - b))
                else:
                    st.scc = int(r != 0)
            else:
                st.scc = 0 if isinstance(r, Ptr) else Unknown(f"{mn} result")
            return None
        raise self.err(f"unknown instruction {p.mnemonic}")

    def mask_of(self, tok: str, n: int) -> int:
        vals = [self.conc(v, f"mask {tok}") for v in self.read(tok, n)]
        return vals[0] | ((vals[1] << 32) if n > 1 else 0)

    def saveexec(self, p: Part, mn: str):
        st = self.st
        n = 2 if mn.endswith("b64") else 1
        op = mn[2:mn.index("_saveexec")]
        src = self.mask_of(p.ops[1], n)
        old = st.exec
        full = (1 << (32 * n)) - 1
        new = {"and": old & src, "or": old | src, "xor": old ^ src,
               "andn2": src & ~old, "and_not1": src & ~old, "orn2": src | (~old & full),
               "or_not1": src | (~old & full), "andn1": ~src & old, "and_not0": ~src & old}
        if op not in new:
            raise self.err(f"unknown instruction {mn}")
        self.write(p.ops[0], [old & M32] + ([old >> 32] if n == 2 else []))
        st.exec = new[op] & full
        st.scc = int(st.exec != 0)
        return None

    # -- vector ALU (lane 0) ---------------------------------------------------------------------
    def valu(self, parts: list[Part]) -> None:
        writes = []
        for p in parts:
            writes += self.valu_one(p)
        for tok, vals, always in writes:
            if always or self.lane0():
                self.write(tok, vals)

    def valu_one(self, p: Part) -> list:
        """Returns [(operand, values, write even when lane 0 is inactive)]."""
        mn = re.sub(r"_e(32|64)$", "", p.mnemonic)
        o = p.ops
        if p.mods and any(m.startswith(("dpp", "row_", "quad_perm", "op_sel:")) for m in p.mods) \
                and mn != "v_pk_mov_b32":
            raise self.err(f"{p.mnemonic} with {' '.join(p.mods)}: DPP/SDWA forms are not "
                           "supported")
        if mn in ("v_mov_b32", "v_mov_b64", "v_mov_b32_sdwa", "v_accvgpr_write_b32",
                  "v_accvgpr_read_b32", "v_accvgpr_mov_b32"):
            w = 2 if mn == "v_mov_b64" else 1
            if w == 1 and o[1] in self.xlanes:     # a whole-register copy (-O0 spill)
                self.xlanes[o[0]] = dict(self.xlanes[o[1]])
            return [(o[0], self.read(o[1], w), False)]
        if mn == "v_pk_mov_b32":
            s0, s1 = self.read(o[1], 2), self.read(o[2], 2)
            sel = p.mod("op_sel") or "[0,0]"
            a, b = [int(x) for x in sel.strip("[]").split(",")]
            return [(o[0], [s0[a], s1[b]], False)]
        if mn == "v_readfirstlane_b32":
            return [(o[0], self.read(o[1]), True)]
        if mn == "v_readlane_b32":
            lane = self.conc(self.read(o[2])[0], "lane")
            v = self.read(o[1])[0] if lane == self.lane else \
                self.xlanes.get(o[1], {}).get(lane, Unknown(f"{o[1]} lane {lane}"))
            return [(o[0], [v], True)]
        if mn == "v_writelane_b32":
            # other lanes only serve as storage (-O0 spills SGPRs into VGPR lanes)
            lane = self.conc(self.read(o[2])[0], "lane")
            if lane == self.lane:
                return [(o[0], self.read(o[1]), True)]
            self.xlanes.setdefault(o[0], {})[lane] = self.read(o[1])[0]
            return []
        if mn in ("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"):
            # the number of mask bits below the thread's lane (lo: lanes 0-31, hi: 32-63) + acc
            m = self.conc(self.read(o[1])[0], f"{mn} mask")
            below = (1 << self.lane) - 1
            below = below & M32 if mn.endswith("lo_u32_b32") else below >> 32
            return [(o[0], [self.alu("add", bin(m & below).count("1"), self.read(o[2])[0])],
                     False)]
        if mn == "v_bcnt_u32_b32":
            a = self.read(o[1])[0]
            b = self.read(o[2])[0]
            if isinstance(a, int):
                return [(o[0], [self.alu("add", bin(a).count("1"), b)], False)]
            return [(o[0], [Unknown(mn)], False)]
        if mn == "v_cndmask_b32":
            m = self.mask(o[3]) if len(o) > 3 else self.mask("vcc_lo" if self.w32 else "vcc")
            return [(o[0], self.read(o[2] if self.mybit(m) else o[1]), False)]
        m = re.match(r"^v_cmpx?_(eq|ne|lg|lt|le|gt|ge|t|f)_(u32|i32|u64|i64)$", mn)
        if m:
            return self.vcmp(p, m.group(1), m.group(2), mn.startswith("v_cmpx"))
        m = re.match(r"^v_(add|sub|subrev)_co_u32$", mn)
        if m:
            a, b = self.read(o[2])[0], self.read(o[3])[0]
            if m.group(1) == "subrev":
                a, b = b, a
            op = "add" if m.group(1) == "add" else "sub"
            r = self.alu(op, a, b)
            carry = 0
            if isinstance(a, int) and isinstance(b, int):
                carry = int(a + b > M32) if op == "add" else int(b > a)
            elif not isinstance(r, Ptr):
                carry = Unknown("carry")
            return [(o[0], [r], False), (o[1], self._lanemask(carry), False)]
        m = re.match(r"^v_(addc|subb|subbrev)_co_u32$|^v_(add|sub|subrev)_co_ci_u32$", mn)
        if m:
            a, b = self.read(o[2])[0], self.read(o[3])[0]
            cin = self.mybit(self.mask(o[4]) if len(o) > 4 else self.mask("vcc"))
            kind = m.group(1) or m.group(2)
            if kind in ("subbrev", "subrev"):
                a, b = b, a
            op = "add" if kind in ("addc", "add") else "sub"
            r = self.alu(op, a, b)
            carry = 0
            if isinstance(a, int) and isinstance(b, int):
                full = a + b + cin if op == "add" else a - b - cin
                r = full & M32
                carry = int(full > M32 or full < 0)
            elif cin:
                r = Unknown(f"{mn} with carry")
            return [(o[0], [r], False), (o[1], self._lanemask(carry), False)]
        if mn in ("v_lshl_add_u64", "v_add_u64", "v_add_nc_u64"):
            a = self.read(o[1], 2)
            if mn == "v_lshl_add_u64":
                s = self.conc(self.read(o[2])[0], "shift")
                c = self.read(o[3], 2)
                if s != 0:
                    return [(o[0], [Unknown(mn)] * 2, False)]
            else:
                c = self.read(o[2], 2)
            return [(o[0], self._add64(a, c), False)]
        if mn in ("v_lshlrev_b64", "v_lshrrev_b64"):
            s = self.conc(self.read(o[1])[0], "shift") & 63
            a = self.read(o[2], 2)
            if s == 0:
                return [(o[0], a, False)]
            if all(isinstance(x, int) for x in a):
                v = a[0] | (a[1] << 32)
                v = (v << s if mn == "v_lshlrev_b64" else v >> s) & 0xFFFFFFFFFFFFFFFF
                return [(o[0], [v & M32, v >> 32], False)]
            return [(o[0], [Unknown(mn)] * 2, False)]
        if mn in ("v_lshl_add_u32", "v_add_lshl_u32", "v_lshl_or_b32", "v_and_or_b32",
                  "v_or3_b32", "v_xad_u32", "v_add3_u32"):
            a, b, c = (self.read(x)[0] for x in o[1:4])
            first, second = {"v_lshl_add_u32": ("lshl", "add"), "v_add_lshl_u32": ("add", "lshl"),
                             "v_lshl_or_b32": ("lshl", "or"), "v_and_or_b32": ("and", "or"),
                             "v_or3_b32": ("or", "or"), "v_xad_u32": ("xor", "add"),
                             "v_add3_u32": ("add", "add")}[mn]
            return [(o[0], [self.alu(second, self.alu(first, a, b), c)], False)]
        m = re.match(r"^v_(add|sub|subrev|mul_lo|mul|and|or|xor|lshlrev|lshrrev|ashrrev|max|min|"
                     r"add_nc|sub_nc|subrev_nc)_(u32|i32|b32|u32_u24|i32_i24|u16)$", mn)
        if m:
            op = m.group(1).replace("_nc", "")
            a, b = self.read(o[1])[0], self.read(o[2])[0]
            if op in ("subrev", "lshlrev", "lshrrev", "ashrrev"):
                a, b = b, a
                op = {"subrev": "sub", "lshlrev": "lshl", "lshrrev": "lshr",
                      "ashrrev": "ashr"}[op]
            if op == "mul_lo":
                op = "mul"
            if op in ("max", "min"):
                op = op + ("_i" if m.group(2) == "i32" else "_u")
            if m.group(2) in ("u32_u24", "i32_i24") and isinstance(a, int) and isinstance(b, int):
                a, b = a & 0xFFFFFF, b & 0xFFFFFF
            return [(o[0], [self.alu(op, a, b)], False)]
        if mn in ("v_bitop3_b32", "v_bitop2_b32"):
            # GFX12.5 truth-table logic: bit i of the result is bit (S0[i]<<2 | S1[i]<<1 |
            # S2[i]) of the bitop3 table; bitop2 has S2 = 0 (clang-22 emits a | b as
            # v_bitop2 ... bitop3:0x54 and a & ~b as v_bitop3 a, b, a bitop3:0x30)
            table = int(p.mod("bitop3") or "0", 0)
            srcs = [self.read(x)[0] for x in o[1:4]] + ([0] if mn == "v_bitop2_b32" else [])
            if not all(isinstance(x, int) for x in srcs):
                return [(o[0], [self._bitop_sym(table, srcs)], False)]
            a, b, c = srcs
            r = 0
            for i in range(32):
                idx = ((a >> i & 1) << 2) | ((b >> i & 1) << 1) | (c >> i & 1)
                r |= ((table >> idx) & 1) << i
            return [(o[0], [r], False)]
        if mn == "v_alignbit_b32":
            a, b, c = (self.read(x)[0] for x in o[1:4])
            if all(isinstance(x, int) for x in (a, b, c)):
                return [(o[0], [(((a << 32) | b) >> (c & 31)) & M32], False)]
            return [(o[0], [Unknown(mn)], False)]
        if mn in ("v_not_b32", "v_bfrev_b32"):
            a = self.read(o[1])[0]
            if isinstance(a, int):
                r = (~a) & M32 if mn == "v_not_b32" else int(f"{a:032b}"[::-1], 2)
            else:
                r = Unknown(f"{mn}({a!r})")
            return [(o[0], [r], False)]
        raise self.err(f"unknown instruction {p.mnemonic}")

    @staticmethod
    def _bitop_sym(table: int, srcs: list):
        """A bitop3 of one loaded value and constants: that value when the table passes it
        through unchanged at every bit (e.g. x | 0), else Unknown."""
        syms = [j for j, x in enumerate(srcs) if not isinstance(x, int)]
        if len(syms) != 1 or not isinstance(srcs[syms[0]], Sym):
            return Unknown(f"bitop3 0x{table:02x} of {srcs!r}")
        j = syms[0]
        for i in range(32):
            for bit in (0, 1):
                bits = [bit if k == j else (srcs[k] >> i) & 1 for k in range(3)]
                if (table >> (bits[0] << 2 | bits[1] << 1 | bits[2])) & 1 != bit:
                    return Unknown(f"bitop3 0x{table:02x} of {srcs!r}")
        return srcs[j]

    def _lanemask(self, bit) -> list:
        """A lane mask with ``bit`` in the thread's lane (an unknown bit: an unknown mask)."""
        if not isinstance(bit, int):
            return [bit] if self.w32 else [bit, bit]
        m = (bit & 1) << self.lane
        return [m] if self.w32 else [m & M32, m >> 32]

    def _add64(self, a: list, c: list) -> list:
        if all(isinstance(x, int) for x in a + c):
            v = (a[0] | (a[1] << 32)) + (c[0] | (c[1] << 32))
            return [v & M32, (v >> 32) & M32]
        for p, q in ((a, c), (c, a)):
            if isinstance(p[0], Ptr) and all(isinstance(x, int) for x in q) and \
                    q[1] == (M32 if _sx(q[0]) < 0 else 0):
                return [Ptr(p[0].region, p[0].off + _sx(q[0])), p[1]]
            # a private-aperture address (offset, aperture high half) plus a small offset
            if isinstance(p[0], int) and isinstance(p[1], Ptr) and p[1].hi and \
                    all(isinstance(x, int) for x in q) and q[1] == 0 and p[0] + q[0] <= M32:
                return [p[0] + q[0], p[1]]
        return [Unknown("64-bit add"), Unknown("64-bit add")]

    def vcmp(self, p: Part, cond: str, ty: str, cmpx: bool) -> list:
        o = p.ops
        # e32: v_cmp_eq_u32 vcc, a, b / e64: v_cmp_eq_u32 s[0:1], a, b / cmpx (GFX10+): a, b
        if cmpx and len(o) == 2:
            dst, a_tok, b_tok = None, o[0], o[1]
        else:
            dst, a_tok, b_tok = o[0], o[1], o[2]
        w = 2 if ty.endswith("64") else 1
        a, b = self.read(a_tok, w), self.read(b_tok, w)
        if all(isinstance(x, int) for x in a + b):
            x = sum(v << (32 * i) for i, v in enumerate(a))
            y = sum(v << (32 * i) for i, v in enumerate(b))
            if ty.startswith("i"):
                x, y = _sx(x, 32 * w), _sx(y, 32 * w)
            bit = int(_CMP[cond](x, y)) & int(self.lane0())
        elif cond in ("t", "f"):
            bit = int(cond == "t") & int(self.lane0())
        elif any(isinstance(x, Sym) for x in a + b):
            bit = Unknown(f"it compares a value loaded from memory ({a!r}, {b!r})")
        else:
            bit = Unknown(f"compare of {a!r} and {b!r}")
        out = []
        if dst is not None:
            out.append((dst, self._lanemask(bit), True))
        if cmpx:
            out.append(("exec_lo" if self.w32 else "exec", self._lanemask(bit), True))
        return out

    # -- memory ----------------------------------------------------------------------------------
    def fresh(self) -> Sym:
        s = Sym(self.nsym)
        self.nsym += 1
        return s

    def address(self, vaddr: str, saddr: str | None, offset: int) -> int:
        """Byte offset in the test's memory ``m`` of a global access."""
        if saddr is None or saddr == "off":
            lo, hi = self.read(vaddr, 2)
            base, extra = lo, 0
        else:
            lo, hi = self.read(saddr, 2)
            extra = self.conc(self.read(vaddr)[0], f"address offset {vaddr}")
            base = lo
        if not (isinstance(base, Ptr) and base.region == "m" and isinstance(hi, Ptr)
                and hi.hi):
            raise self.err(f"address is not the test's memory plus a constant ({base!r})")
        return base.off + _sx(extra) + offset

    def vmem(self, ins: Instr, p: Part):
        mn = p.mnemonic
        o = p.ops
        off = int(p.mod("offset") or 0)
        cache = self._cache_op(mn)
        if cache:
            self.events.append(Event(ins.index, "cache", op=cache, mods=p.mods))
            return None
        if not self.lane0():
            # the thread's lane is off in EXEC (another role's code that the compiler did not
            # branch around with s_cbranch_execz, as clang-22 does for short blocks on GFX11+):
            # a vector memory instruction accesses memory only for its active lanes
            return None
        if mn.startswith(("flat_", "scratch_")) or re.match(r"^buffer_(load|store)_dword", mn):
            return self.private(ins, p)
        if not mn.startswith("global_"):
            raise self.err(f"unknown instruction {mn} (only global_* memory instructions are "
                           "expected for __global pointers)")
        m = re.match(r"^global_(load|store)_(dword|b32|lds_dword|async_to_lds_b32)$", mn)
        if m and (m.group(2) == "lds_dword" or (m.group(1) == "load" and p.has("lds"))):
            # LDS DMA: gfx942 global_load_lds_dword, gfx90a global_load_dword ... lds;
            # the LDS address is M0 (+ the offset), lane 0's slot
            ldsaddr = self.conc(self.st.m0, "M0 (LDS address of the DMA)")
            g = self.address(o[0], o[1] if len(o) > 1 else None, off)
            self.events.append(Event(ins.index, "dma", addr=g, lds=(ldsaddr + off) & 0xFFFF,
                                     mods=p.mods, counter="vm"))
            return None
        if m and m.group(2) == "async_to_lds_b32":
            ldsaddr = self.conc(self.read(o[0])[0], "LDS address of the DMA")
            g = self.address(o[1], o[2] if len(o) > 2 else None, off)
            self.events.append(Event(ins.index, "dma", addr=g, lds=ldsaddr + off, mods=p.mods,
                                     counter="async"))
            return None
        if m and m.group(1) == "load":
            g = self.address(o[1], o[2] if len(o) > 2 else None, off)
            s = self.fresh()
            self.write(o[0], [s])
            self.events.append(Event(ins.index, "load", addr=g, dst=s, mods=p.mods,
                                     counter="load"))
            return None
        if m and m.group(1) == "store":
            g = self.address(o[0], o[2] if len(o) > 2 else None, off)
            v = self.read(o[1])[0]
            self.events.append(Event(ins.index, "store", addr=g, value=v, mods=p.mods,
                                     counter="store"))
            return None
        m = re.match(r"^global_atomic_([a-z0-9]+?)(_u32|_i32|_b32)?$", mn)
        if m:
            kind = m.group(1)
            rtn = len(o) == 4          # vdst, vaddr, vdata, saddr|off
            if rtn:
                dst_tok, o = o[0], o[1:]
            else:
                dst_tok = None
            g = self.address(o[0], o[2] if len(o) > 2 else None, off)
            s = self.fresh() if rtn else None
            cnt = "load" if rtn else "store"
            if kind == "cmpswap":
                new, cmp = self.read(o[1], 2)
                ev = Event(ins.index, "cas", addr=g, dst=s, value=new,
                           expected=self.conc(cmp, "cmpswap compare value"), mods=p.mods,
                           counter=cnt, rtn=rtn)
            elif kind in RMW_OPS:
                ev = Event(ins.index, "rmw", addr=g, dst=s, value=self.read(o[1])[0],
                           op=RMW_OPS[kind], mods=p.mods, counter=cnt, rtn=rtn)
            else:
                raise self.err(f"unknown instruction {mn}")
            if dst_tok is not None:
                self.write(dst_tok, [s])
            self.events.append(ev)
            return None
        raise self.err(f"unknown instruction {mn}")

    def private(self, ins: Instr, p: Part):
        """-O0 code keeps variables in the thread's private memory (the stack): ``scratch_*``
        at a frame offset, or ``flat_*`` through the private aperture. Their values live in the
        interpreter (they may be loaded values or pointers); each access is also a ``pload``/
        ``pstore`` event, a memory operation on the thread's own scratch location in the
        simulator, so the wait counters count it as the hardware does."""
        mn, o = p.mnemonic, p.ops
        m = re.match(r"^(flat|scratch|buffer)_(load|store)_(dword|dwordx2|b32|b64)$", mn)
        if not m:
            raise self.err(f"unknown instruction {mn}")
        n = 2 if m.group(3) in ("dwordx2", "b64") else 1
        off = int(p.mod("offset") or 0)
        load = m.group(2) == "load"
        if m.group(1) == "flat":
            lo, hi = self.read(o[1] if load else o[0], 2)
            if not (isinstance(hi, Ptr) and hi.region == "private" and isinstance(lo, int)):
                raise self.err(f"flat access that is not to private memory ({lo!r}, {hi!r})")
            addr = lo + off
        elif m.group(1) == "buffer":    # gfx90a scratch: buffer_* v, vaddr|off, s[rsrc], soffset
            addr = off + self.conc(self.read(o[3])[0], "scratch offset")
            if p.has("offen"):
                addr += self.conc(self.read(o[1])[0], "scratch address")
        else:           # scratch_load v, vaddr|off, saddr|off / scratch_store vaddr|off, v, saddr
            a_tok, s_tok = (o[1], o[2]) if load else (o[0], o[2])
            addr = off
            for tok in (a_tok, s_tok):
                if tok != "off":
                    addr += self.conc(self.read(tok)[0], "scratch address")
        cnt = "load" if load else "store"
        if load:
            self.write(o[0], [self.stack.get(addr + 4 * i, Unknown("uninitialized private "
                                                                     "memory"))
                              for i in range(n)])
            self.events.append(Event(ins.index, "pload", addr=addr, counter=cnt))
        else:
            for i, v in enumerate(self.read(o[0] if m.group(1) == "buffer" else o[1], n)):
                self.stack[addr + 4 * i] = v
            self.events.append(Event(ins.index, "pstore", addr=addr, counter=cnt))
        return None

    def _cache_op(self, mn: str) -> str | None:
        if mn in ("buffer_wbl2", "buffer_inv", "buffer_wbinvl1_vol", "buffer_wbinvl1",
                  "buffer_invl2", "buffer_gl0_inv", "buffer_gl1_inv", "global_inv",
                  "global_wb", "global_wbinv"):
            return mn
        return None

    def lds(self, p: Part):
        mn = p.mnemonic
        o = p.ops
        off = int(p.mod("offset") or 0)
        if not self.lane0():
            return None                  # LDS instructions too act only for active lanes
        idx = self.ins.index
        m = re.match(r"^ds_(read|load)_b32$", mn)
        if m:
            a = self.conc(self.read(o[1])[0], "LDS address") + off
            s = self.fresh()
            self.write(o[0], [s])
            self.events.append(Event(idx, "lload", addr=a, dst=s, counter="lgkm"))
            return None
        if mn in ("ds_write_b32", "ds_store_b32"):
            a = self.conc(self.read(o[0])[0], "LDS address") + off
            self.events.append(Event(idx, "lstore", addr=a, value=self.read(o[1])[0],
                                     counter="lgkm"))
            return None
        m = re.match(r"^ds_(cmpst|cmpstore)(_rtn)?_b32$", mn)
        if m:
            rtn = bool(m.group(2))
            ops = o[1:] if rtn else o
            a = self.conc(self.read(ops[0])[0], "LDS address") + off
            d0, d1 = self.read(ops[1])[0], self.read(ops[2])[0]
            cmp, new = (d0, d1) if m.group(1) == "cmpst" else (d1, d0)
            s = self.fresh() if rtn else None
            if rtn:
                self.write(o[0], [s])
            self.events.append(Event(idx, "lcas", addr=a, dst=s, value=new,
                                     expected=self.conc(cmp, "LDS cmpst compare value"),
                                     counter="lgkm", rtn=rtn))
            return None
        m = re.match(r"^ds_([a-z]+)(_rtn)?_(u32|i32|b32)$", mn)
        if m and m.group(1) in RMW_OPS and not (m.group(1) in ("max", "min")
                                                 and m.group(3) == "u32"):
            rtn = bool(m.group(2))
            ops = o[1:] if rtn else o
            a = self.conc(self.read(ops[0])[0], "LDS address") + off
            v = self.read(ops[1])[0]            # read the sources before writing vdst
            s = self.fresh() if rtn else None
            if rtn:
                self.write(o[0], [s])
            self.events.append(Event(idx, "lrmw", addr=a, dst=s, value=v,
                                     op=RMW_OPS[m.group(1)], counter="lgkm", rtn=rtn))
            return None
        raise self.err(f"unknown instruction {mn}")

    def smem(self, p: Part):
        mn = p.mnemonic
        o = p.ops
        m = re.match(r"^s_load_(dword|dwordx(\d+)|b(\d+))$", mn)
        if not m:
            raise self.err(f"unknown instruction {mn}")
        n = int(m.group(2)) if m.group(2) else (int(m.group(3)) // 32 if m.group(3) else 1)
        base = self.read(o[1], 2)
        off = 0
        if len(o) > 2:
            off = self.conc(self.read(o[2])[0], "scalar load offset")
        off += int(p.mod("offset") or 0)
        lo = base[0]
        if isinstance(lo, Unknown) or (isinstance(lo, Ptr) and lo.region == "kernarg"):
            # the kernel-argument segment (an entry SGPR pair)
            vals = [self.kernarg.get((off // 4) + i, Unknown(f"kernel argument dword "
                                                             f"{off // 4 + i}"))
                    for i in range(n)]
            self.write(o[0], vals)
            return None
        if not (isinstance(lo, Ptr) and lo.region == "m"):
            raise self.err(f"scalar load from an address that is not the test's memory ({lo!r})")
        if n != 1:
            raise self.err(f"{mn}: a multi-dword scalar load of test memory")
        s = self.fresh()
        self.write(o[0], [s])
        self.events.append(Event(self.ins.index, "sload", addr=lo.off + off, dst=s,
                                 counter="km" if self.t.family == "gfx12" else "lgkm"))
        return None

    # -- waits and barriers ------------------------------------------------------------------------
    def wait(self, p: Part):
        mn = p.mnemonic
        if mn in NOPS:
            return None
        waits: list[tuple[str, int]] = []
        if mn == "s_waitcnt":
            for tok in p.ops:
                m = _WAITCNT.match(tok)
                if not m:
                    v = _literal(tok)
                    if v is None:
                        raise self.err(f"cannot read s_waitcnt operand {tok!r}")
                    raise self.err("raw s_waitcnt immediate (objdump names the fields)")
                if m.group(1) != "expcnt":
                    waits.append((m.group(1), int(m.group(2))))
        elif mn in ("s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt"):
            if p.ops[0] != "null":
                raise self.err(f"{mn} with a register operand")
            waits.append((mn[len("s_waitcnt_"):], self.conc(self.read(p.ops[1])[0], mn)))
        elif mn.startswith("s_wait_"):
            names = mn[len("s_wait_"):].split("_")
            v = self.conc(self.read(p.ops[0])[0], mn)
            if len(names) == 1:
                waits.append((names[0], v))
            elif len(names) == 2 and names[1] == "dscnt":
                # combined forms: the first counter in bits [13:8], dscnt in bits [5:0]
                waits += [(names[0], (v >> 8) & 0x3F), ("dscnt", v & 0x3F)]
            else:
                raise self.err(f"unknown instruction {mn}")
        else:
            raise self.err(f"unknown instruction {mn}")
        if waits:
            self.events.append(Event(self.ins.index, "wait", waits=tuple(waits)))
        return None

    def barrier(self, p: Part):
        mn = p.mnemonic
        idx = self.ins.index
        if mn == "s_barrier":
            self.events.append(Event(idx, "barrier", op="arrive", bar=-1))
            self.events.append(Event(idx, "barrier", op="wait", bar=-1))
            return None
        if mn in ("s_barrier_signal", "s_barrier_wait", "s_barrier_signal_isfirst"):
            bid = _sx(self.conc(self.read(p.ops[0])[0], "barrier id"), 16) \
                if p.ops else -1
            if bid > 0 or bid not in (-1, -3):
                raise self.err(f"barrier id {bid}: only the workgroup (-1) and cluster (-3) "
                               "barriers are supported")
            if mn == "s_barrier_signal_isfirst":
                self.st.scc = Unknown("s_barrier_signal_isfirst")
            self.events.append(Event(idx, "barrier", op="wait" if mn == "s_barrier_wait"
                                     else "arrive", bar=bid))
            return None
        raise self.err(f"unknown instruction {mn}")


def _identity(op: str, c: int, sym_is_left: bool) -> bool:
    """Is ``x op c`` (or ``c op x``) just x?"""
    c &= M32
    if op in ("add", "or", "xor"):
        return c == 0
    if op == "sub":
        return c == 0 and sym_is_left
    if op in ("lshl", "lshr", "ashr"):
        return c == 0 and sym_is_left
    if op == "and":
        return c == M32
    if op == "mul":
        return c == 1
    if op == "max_i":
        return c == INT_MIN
    if op == "min_i":
        return c == 0x7FFFFFFF
    if op == "max_u":
        return c == 0
    if op == "min_u":
        return c == M32
    return False


_ALU = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "andn2": lambda a, b: a & ~b,
    "orn2": lambda a, b: a | (~b & M32),
    "nand": lambda a, b: ~(a & b),
    "nor": lambda a, b: ~(a | b),
    "xnor": lambda a, b: ~(a ^ b),
    "lshl": lambda a, b: a << (b & 31),
    "lshr": lambda a, b: a >> (b & 31),
    "ashr": lambda a, b: _sx(a) >> (b & 31),
    "max_i": lambda a, b: max(_sx(a), _sx(b)),
    "min_i": lambda a, b: min(_sx(a), _sx(b)),
    "max_u": max,
    "min_u": min,
    "max": lambda a, b: max(_sx(a), _sx(b)),
    "min": lambda a, b: min(_sx(a), _sx(b)),
}

_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lg": lambda a, b: a != b,
        "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b, "t": lambda a, b: True, "f": lambda a, b: False}

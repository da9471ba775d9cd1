"""Parse ``llvm-objdump -d`` output of AMDGPU code into instructions.

Each instruction keeps its address, mnemonic, operands, modifiers (``offset:16``, ``sc0``,
``scope:SCOPE_DEV`` ...), the branch target objdump names (``<wg0+0x40>``) and its text as
printed. VOPD pairs (``v_dual_mov_b32 v1, 0 :: v_dual_mov_b32 v2, s1``) become one instruction
with two ``parts``. Only kernel symbols are kept: clang also emits a callable clone
``__clang_ocl_kern_imp_NAME`` of each kernel, which the kernel never calls at -O2.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ..backend import BackendError


class DisasmError(BackendError):
    """Disassembly that cannot be read (one line)."""


#: words that are instruction modifiers, not operands
MOD_WORDS = frozenset({"glc", "slc", "dlc", "scc", "sc0", "sc1", "nt", "nv", "lds", "gds",
                       "offen", "idxen", "addr64", "tfe", "lwe", "unorm", "clamp", "high"})
MOD_PREFIXES = ("offset:", "offset0:", "offset1:", "th:", "scope:", "format:", "dpp", "row_",
                "bank_mask:", "row_mask:", "bound_ctrl", "op_sel:", "op_sel_hi:", "neg_lo:",
                "neg_hi:", "byte_sel:", "wait_exp:", "wait_va_vdst:", "wait_vm_vsrc:", "mul:",
                "div:", "quad_perm:", "bitop3:")


@dataclass(frozen=True)
class Part:
    """One operation: mnemonic, operands, modifiers."""

    mnemonic: str
    ops: tuple[str, ...]
    mods: tuple[str, ...]

    def mod(self, prefix: str) -> str | None:
        """The value of a ``prefix:VALUE`` modifier, or None."""
        for m in self.mods:
            if m.startswith(prefix + ":"):
                return m.split(":", 1)[1]
        return None

    def has(self, word: str) -> bool:
        return word in self.mods


@dataclass(frozen=True)
class Instr:
    """One machine instruction of a kernel (``index`` = position in the kernel)."""

    index: int
    addr: int
    text: str
    parts: tuple[Part, ...]
    target: int | None = None      # branch target address

    @property
    def mnemonic(self) -> str:
        return self.parts[0].mnemonic

    @property
    def ops(self) -> tuple[str, ...]:
        return self.parts[0].ops

    @property
    def mods(self) -> tuple[str, ...]:
        return self.parts[0].mods


@dataclass
class Kernel:
    name: str
    addr: int
    code: list[Instr] = field(default_factory=list)

    def at(self, addr: int) -> int:
        """Index of the instruction at ``addr``."""
        for ins in self.code:
            if ins.addr == addr:
                return ins.index
        raise DisasmError(f"{self.name}: branch to 0x{addr:x}, which starts no instruction")


_SYM = re.compile(r"^([0-9a-fA-F]+) <([^>]+)>:\s*$")
_LINE = re.compile(r"^\s+(\S.*?)\s*//\s*([0-9a-fA-F]+):(.*)$")
_TARGET = re.compile(r"<([^>+]+)\+0x([0-9a-fA-F]+)>")


def _split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside () and []."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and (ch == sep or (sep == " " and ch.isspace())):
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def _is_mod(tok: str) -> bool:
    return tok in MOD_WORDS or tok.startswith(MOD_PREFIXES)


@functools.lru_cache(maxsize=1 << 16)
def parse_part(text: str) -> Part:
    """One operation's text -> :class:`Part` (memoized: the same instruction text recurs in
    every listing, and a Part is immutable)."""
    text = text.strip()
    mnemonic, _, rest = text.partition(" ")
    ops: list[str] = []
    mods: list[str] = []
    args = _split_top(rest, ",") if rest.strip() else []
    for i, a in enumerate(args):
        toks = _split_top(a, " ")
        for tok in toks:
            (mods if _is_mod(tok) else ops).append(tok)
    return Part(mnemonic, tuple(ops), tuple(mods))


def parse(text: str, keep=None) -> dict[str, Kernel]:
    """Kernels of an objdump listing (``keep``: names to keep; default every symbol not starting
    with ``__clang_ocl_kern_imp_``)."""
    kernels: dict[str, Kernel] = {}
    cur: Kernel | None = None
    addrs: dict[str, int] = {}
    pending = []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _SYM.match(line)
        if m:
            name = m.group(2)
            addrs[name] = int(m.group(1), 16)
            wanted = name in keep if keep is not None else \
                not name.startswith("__clang_ocl_kern_imp_")
            cur = Kernel(name, addrs[name]) if wanted else None
            if cur is not None:
                kernels[name] = cur
            continue
        if cur is None:
            continue
        m = _LINE.match(line)
        if not m:
            continue
        asm, addr, tail = m.group(1), int(m.group(2), 16), m.group(3)
        parts = tuple(parse_part(p) for p in asm.split("::"))
        t = _TARGET.search(tail)
        ins = Instr(len(cur.code), addr, asm.strip(), parts, None)
        if t:
            pending.append((cur, ins.index, t.group(1), int(t.group(2), 16), lineno))
        cur.code.append(ins)
    for k, idx, sym, off, lineno in pending:
        if sym not in addrs:
            raise DisasmError(f"objdump line {lineno}: branch to unknown symbol {sym!r}")
        old = k.code[idx]
        k.code[idx] = Instr(old.index, old.addr, old.text, old.parts, addrs[sym] + off)
    return kernels

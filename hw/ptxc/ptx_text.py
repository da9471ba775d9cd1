"""PTX module text -> functions of statements (labels, guarded instructions), with line numbers.

Only the structure the reader needs: ``.entry``/``.func`` definitions with their parameter
names (and a ``.func``'s return parameters), each body as a list of :class:`Stmt` (an instruction
with its guard, opcode, modifiers and operands) and :class:`Label`, with the 1-based line of the
PTX text it starts on and the source line of the last ``.loc`` before it (when the PTX has line
tables and the ``.loc`` names the compiled source file). Declarations inside a body (``.reg``,
``.param``, ``.local``, ``.shared``) are kept as :class:`Decl`; ``{``/``}`` blocks (a call
sequence) are flattened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..backend import BackendError

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HEAD = re.compile(r"\.(entry|func)\s*(\((?P<ret>[^)]*)\))?\s*(?P<name>[A-Za-z_$%][\w$%]*)\s*"
                   r"\((?P<params>[^)]*)\)", re.S)
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'\.file\s+(\d+)\s+"([^"]*)"')
_LABEL = re.compile(r"([A-Za-z_$%][\w$%]*)\s*:")


@dataclass(frozen=True)
class Stmt:
    line: int
    text: str
    guard: str | None          # "%p1" or "!%p1"
    op: str                    # the opcode (before the first '.')
    mods: tuple[str, ...]      # its dotted modifiers, in order
    operands: tuple[str, ...]  # top-level comma-separated operands, stripped
    src_line: int | None = None


@dataclass(frozen=True)
class Label:
    line: int
    name: str


@dataclass(frozen=True)
class Decl:
    line: int
    text: str


@dataclass
class Function:
    name: str
    kind: str                   # "entry" or "func"
    params: list[str]
    rets: list[str]
    body: list = field(default_factory=list)
    line: int = 0


def _names(decl: str) -> list[str]:
    out = []
    for part in _split(decl):
        words = part.split()
        if words:
            out.append(re.sub(r"\[.*", "", words[-1]))
    return out


def _split(text: str) -> list[str]:
    """Split on top-level commas (not inside [], (), {})."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_module(text: str, source_name: str) -> dict[str, Function]:
    """The functions defined in ``text`` (declarations without a body are left out)."""
    clean = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    files: dict[str, str] = {m.group(1): m.group(2) for m in _FILE.finditer(clean)}
    main = {k for k, v in files.items() if v.endswith(source_name)}
    funcs: dict[str, Function] = {}
    pos = 0
    n = len(clean)
    while True:
        m = _HEAD.search(clean, pos)
        if m is None:
            break
        k = m.end()
        while k < n and clean[k] in " \t\r\n":
            k += 1
        # skip performance directives (.maxntid ...) up to the body or the ';' of a declaration
        while k < n and clean[k] not in "{;":
            k += 1
        if k >= n or clean[k] == ";":
            pos = k + 1
            continue
        f = Function(m.group("name"), m.group(1), _names(m.group("params")),
                     _names(m.group("ret") or ""), line=clean.count("\n", 0, m.start()) + 1)
        pos = _body(clean, k + 1, f, main)
        funcs[f.name] = f
    return funcs


def _body(clean: str, k: int, f: Function, main: set[str]) -> int:
    depth = 1
    line = clean.count("\n", 0, k) + 1
    src: int | None = None
    n = len(clean)
    while k < n:
        ch = clean[k]
        if ch == "\n":
            line += 1
            k += 1
            continue
        if ch in " \t\r":
            k += 1
            continue
        if ch == "{":
            depth += 1
            k += 1
            continue
        if ch == "}":
            depth -= 1
            k += 1
            if depth == 0:
                return k
            continue
        start_line = line
        if re.match(r"\.(loc|file)\s", clean[k:k + 6]):
            end = clean.find("\n", k)
            end = n if end < 0 else end
            lm = _LOC.match(clean, k, end)
            if lm is not None:
                pairs = [(lm.group(1), int(lm.group(2)))] + \
                    [(a, int(b)) for a, b, _ in _INLINED.findall(lm.group(4))]
                src = next((ln for fid, ln in pairs if fid in main and ln > 0), None)
            k = end
            continue
        lm = _LABEL.match(clean, k)
        if lm is not None:
            f.body.append(Label(start_line, lm.group(1)))
            k = lm.end()
            continue
        end = clean.find(";", k)
        if end < 0:
            raise BackendError(f"ptx line {start_line}: statement without ';'")
        stmt = clean[k:end]
        line += stmt.count("\n")
        k = end + 1
        text = " ".join(stmt.split())
        if text.startswith("."):
            f.body.append(Decl(start_line, text))
            continue
        f.body.append(_stmt(start_line, text, src))
    raise BackendError(f"ptx line {line}: function {f.name} has no closing '}}'")


def _stmt(line: int, text: str, src: int | None) -> Stmt:
    guard = None
    rest = text
    if rest.startswith("@"):
        g, _, rest = rest.partition(" ")
        guard = g[1:]
        rest = rest.strip()
    head, _, ops = rest.partition(" ")
    parts = head.split(".")
    return Stmt(line, text, guard, parts[0], tuple(parts[1:]), tuple(_split(ops.strip())), src)

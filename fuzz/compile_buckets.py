"""Buckets of compiler findings (``fuzz --compile``, issue 29): one row per compiler bug.

A compiler finding is a source program whose compiled PTX has an outcome the source model forbids.
Its cause is, almost always, one PTX instruction that does not carry the order or the scope of the
source operation it was compiled from. The signature names it from the PTX side:

- for each source atomic operation (load, store, atomicrmw, cmpxchg, fence) the read-back rows of
  the PTX lines compiled from its source line (``Compiled.origin``: PTX line, text, source line;
  the source line of each source row is :class:`hw.ptxc.emit_common.Emitted`'s ``lines``); PTX
  without line information (clang-ocl) is aligned with the source in program order instead
  (:func:`_align`);
- what those rows carry: acquire (an acquire/acq_rel/sc access or fence), release, sc (a
  ``fence.sc`` or an sc access), atomicity (a strong access, not ``.weak``) and the scope of
  the access (the narrowest of its rows) or of the fence (the widest);
- an operation is *weakened* when its rows carry less than the source asks for: an order lost,
  atomicity lost, the scope narrowed (block < device < system, i.e. ``.cta < .gpu < .sys``), or
  no row at all (a fence compiled away).

The signature is ``ptxc FAMILY: SOURCE-KIND -> `PTX INSTRUCTION``` per weakened operation (sorted,
deduplicated), where the PTX instruction is the access's opcode with its type and RMW operation
folded away (``atom.global.add.u32`` and ``atom.global.or.b32`` are both ``atom.global.<op>``)
and a note of the qualifiers it lacks (``no .sem``, ``no scope``: PTX ISA 9.7.13.4 reads them as
``.relaxed`` and ``.gpu``). What was lost (which order, which scope) is kept beside the
signature (``lost``), not in it: clang-22's atomicrmw bug drops the order of an acquire RMW and
narrows the scope of a relaxed system RMW by emitting the same bare ``atom``, and is one bucket.
FAMILY is the compiler (``clang-22`` for clang-cuda and clang-ocl, one NVPTX back end; ``nvcc``).

When no instruction is weaker than its source operation (a compiler that reorders, or a reader
question), the bucket falls back to the source model's reason to forbid the outcome
(:func:`fuzz.buckets.signature` under the source model), prefixed ``ptxc FAMILY: no weakened
instruction;``.
"""

from __future__ import annotations

import re

from .buckets import bucket_id, signature

#: scope words of the source IR and of the read-back -> rank (narrow to wide)
SCOPE_RANK = {"thread": 0, "wg": 1, "cta": 1, "cluster": 2, "agent": 3, "gpu": 3, "sys": 4}
#: the CUDA name of each rank (how a finding is read by a CUDA user)
SCOPE_NAME = {0: "thread", 1: "block", 2: "cluster", 3: "device", 4: "system"}
_ACQ = ("acq", "acq_rel", "sc")
_REL = ("rel", "acq_rel", "sc")
#: the LLVM IR name of each source operation kind
KIND_NAME = {"ld": "load", "st": "store", "rmw": "atomicrmw", "cas": "cmpxchg", "fence": "fence"}
#: PTX opcode parts folded away: types and the RMW operation
_TYPE = re.compile(r"[bsuf]\d+|v[248]")
_RMW_OPS = {"add", "sub", "or", "and", "xor", "exch", "min", "max", "inc", "dec"}
_SEMS = {"relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile", "mmio"}
_SCOPES = {"cta", "cluster", "gpu", "sys"}


def family(compiler_name: str) -> str:
    """The compiler behind a front end: one bucket for a bug both clang front ends show."""
    return "clang-22" if compiler_name.startswith("clang") else "nvcc"


def ptx_instruction(text: str) -> str:
    """The PTX opcode of one instruction, its type and RMW operation folded away and the
    qualifiers it lacks noted: ``atom.global.add.u32 %r1, [%rd1], 1`` ->
    ``atom.global.<op> (no .sem, no scope)``."""
    words = text.strip().split()
    if not words:
        return "(empty)"
    op = words[0]
    if op.startswith("@"):                   # a predicate guard
        op = words[1] if len(words) > 1 else op
    parts = op.rstrip(";").split(".")
    head, quals = parts[0], parts[1:]
    kept = []
    for q in quals:
        if _TYPE.fullmatch(q):
            continue
        kept.append("<op>" if head in ("atom", "red") and q in _RMW_OPS else q)
    out = ".".join([head] + kept)
    if head in ("ld", "st", "atom", "red"):
        missing = []
        if not _SEMS & set(quals):
            missing.append("no .sem")
        if not _SCOPES & set(quals):
            missing.append("no scope")
        if missing:
            out += f" ({', '.join(missing)})"
    return out


def _source_ops(test, lines):
    """(thread, row, instruction, kernel line) of each source atomic operation and fence."""
    for tid, th in enumerate(test.threads):
        for k, ins in enumerate(th.code):
            if ins.base not in KIND_NAME:
                continue
            if ins.base != "fence" and ins.access != "atom":
                continue                     # plain accesses carry no order (race-free shapes)
            line = lines[tid][k] if tid < len(lines) and k < len(lines[tid]) else None
            if line is not None:
                yield tid, k, ins, line


def weakened(source, compiled, lines) -> list[dict]:
    """The source operations whose PTX carries less than they ask for: per operation a dict with
    ``thread``, ``kind``, ``source`` (order/scope), ``ptx`` (the carrying instruction's text and
    PTX line), ``instruction`` (:func:`ptx_instruction`) and ``lost``."""
    out = []
    aligned = {tid: _align(source, compiled, tid) for tid in range(len(source.threads))
               if not any(sl is not None for _, _, sl in compiled.origin[tid])}
    for tid, k, ins, line in _source_ops(source, lines):
        if tid in aligned:              # no line info in this PTX (clang-ocl): by alignment
            rows = aligned[tid].get(k, [])
        else:
            rows = [(pl, text, compiled.test.threads[tid].code[j])
                    for j, (pl, text, sl) in enumerate(compiled.origin[tid])
                    if sl == line and j < len(compiled.test.threads[tid].code)]
        mem = [r for r in rows if r[2].base in ("ld", "st", "rmw", "cas") and r[2].loc]
        fences = [r for r in rows if r[2].base == "fence"]
        orders = {r[2].order for r in rows}
        lost = []
        want = ins.order or "rlx"
        # a load has no release side and a store no acquire side (C11 7.17.3): seq_cst asks a
        # load for acquire + fence.sc, a store for release + fence.sc
        if want in _ACQ and ins.base != "st" and not orders & set(_ACQ):
            lost.append(f"{_order_name(want)} lost (no acquire)")
        if want in _REL and ins.base != "ld" and not orders & set(_REL):
            lost.append(f"{_order_name(want)} lost (no release)")
        if want == "sc" and "sc" not in orders:
            lost.append("seq_cst lost (no fence.sc)")
        carrier = None
        src_rank = SCOPE_RANK.get(ins.scope or "sys", 4)
        if ins.base == "fence":
            if not fences:
                lost = ["fence compiled away"]
            else:
                carrier = max(fences, key=lambda r: SCOPE_RANK.get(r[2].scope or "gpu", 3))
                rank = SCOPE_RANK.get(carrier[2].scope or "gpu", 3)
                if rank < src_rank:
                    lost.append(f"scope {SCOPE_NAME[src_rank]} narrowed to {SCOPE_NAME[rank]}")
        else:
            if not mem:
                lost = ["access compiled away"]
            else:
                carrier = min(mem, key=lambda r: SCOPE_RANK.get(r[2].scope or "gpu", 3))
                rank = SCOPE_RANK.get(carrier[2].scope or "gpu", 3)
                if rank < src_rank:
                    lost.append(f"scope {SCOPE_NAME[src_rank]} narrowed to {SCOPE_NAME[rank]}")
                if any(r[2].access != "atom" or r[2].order in (None, "weak") for r in mem):
                    weak = next(r for r in mem if r[2].access != "atom" or r[2].order in (None, "weak"))
                    carrier = weak
                    lost.append("atomicity lost (a weak access)")
        if not lost:
            continue
        kind = KIND_NAME[ins.base]
        out.append({"thread": tid, "kind": kind,
                    "source": f"{_order_name(want)} {SCOPE_NAME[src_rank]}",
                    "ptx": {"line": carrier[0], "text": carrier[1].strip()} if carrier else None,
                    "source_line": line,
                    "instruction": ptx_instruction(carrier[1]) if carrier else "(no instruction)",
                    "lost": lost})
    return out


def _align(source, compiled, tid: int) -> dict:
    """Source row -> its read-back rows, for PTX without line information (clang-ocl emits no
    ``.loc``): the thread's memory rows and fences in program order, each source access taking
    the next row of its kind on its location with the fences just before it (a seq_cst access's
    ``fence.sc``) and, unless a source fence follows (or a seq_cst op whose ``fence.sc`` it is),
    just after it; each source fence taking the
    fences at the current position (none: compiled away)."""
    code = compiled.test.threads[tid].code
    rows = [(pl, text, code[j]) for j, (pl, text, _) in enumerate(compiled.origin[tid])
            if j < len(code) and code[j].base in ("ld", "st", "rmw", "cas", "fence")]
    src = [(k, ins) for k, ins in enumerate(source.threads[tid].code)
           if ins.base in KIND_NAME and (ins.base == "fence" or ins.access == "atom")]
    out: dict = {}
    p = 0
    for n, (k, ins) in enumerate(src):
        if ins.base == "fence":
            q = p
            while q < len(rows) and rows[q][2].base == "fence":
                q += 1
            nxt = src[n + 1][1] if n + 1 < len(src) else None
            if (q - p >= 2 and rows[q - 1][2].order == "sc" and nxt is not None
                    and nxt.base != "fence" and nxt.order == "sc"):
                q -= 1                  # the last fence.sc is the next seq_cst access's own
            out[k], p = rows[p:q], q
            continue
        q = p
        while q < len(rows) and not (rows[q][2].base == ins.base and rows[q][2].loc == ins.loc):
            q += 1
        if q == len(rows):
            out[k] = []                 # not found: compiled away
            continue
        mine = [r for r in rows[p:q] if r[2].base == "fence"] + [rows[q]]
        q += 1
        nxt = src[n + 1][1] if n + 1 < len(src) else None
        while (q < len(rows) and rows[q][2].base == "fence"
               and (nxt is None or nxt.base != "fence")
               and not (rows[q][2].order == "sc" and nxt is not None and nxt.order == "sc")):
            mine.append(rows[q])        # a trailing fence, unless the next op's leading fence.sc
            q += 1
        out[k], p = mine, q
    return out


def _order_name(o: str | None) -> str:
    return {"rlx": "relaxed", "acq": "acquire", "rel": "release", "acq_rel": "acq_rel",
            "sc": "seq_cst", None: "relaxed"}.get(o, str(o))


def compiler_bucket(source, compiled, outcome: dict, source_model: str, lines) -> dict:
    """The bucket of one compiler finding (``kind`` ``ptx`` with the weakened operations, or
    ``model`` when none is weakened): ``{"kind", "signature", "id", "family", "weakened"...}``."""
    fam = family(compiled.compiler.name)
    ws = weakened(source, compiled, lines)
    if ws:
        sig = "; ".join(sorted({f"ptxc {fam}: {w['kind']} -> `{w['instruction']}`"
                                for w in ws}))
        return {"kind": "ptx", "signature": sig, "id": bucket_id(sig), "family": fam,
                "weakened": ws, "instruction": ws[0]["instruction"]}
    try:
        import oracle
        m = signature(source, outcome, lambda t, o: oracle.explain(t, o, source_model))
        sig = f"ptxc {fam}: no weakened instruction; {source_model} {m['signature']}"
    except Exception as e:               # the bucket stands alone, with the reason
        sig = f"ptxc {fam}: no weakened instruction; unexplained ({type(e).__name__})"
    return {"kind": "model", "signature": sig, "id": bucket_id(sig), "family": fam,
            "weakened": []}


def marked_rows(compiled, ws: list[dict], source_text_lines: list[str] | None = None) -> list[str]:
    """The read-back rows with their PTX and kernel line, the weakened operations' PTX marked
    ``<-- weaker than the source: LOST``."""
    bad = {(w["thread"], w["ptx"]["line"]): w for w in ws if w.get("ptx")}
    gone = {(w["thread"], w["source_line"]): w for w in ws if not w.get("ptx")}
    out = []
    for tid, rows in enumerate(compiled.origin):
        out.append(f"P{tid}:")
        for pl, text, sl in rows:
            mark = ""
            w = bad.get((tid, pl))
            if w is not None:
                mark = f"   <-- {w['kind']} {w['source']}: " + "; ".join(w["lost"])
            out.append(f"  ptx {pl:4d}: {text.strip():48s} (kernel line {sl}){mark}")
        for (t, sl), w in gone.items():
            if t == tid:
                src = ""
                if source_text_lines and 0 < sl <= len(source_text_lines):
                    src = ": " + source_text_lines[sl - 1].strip()
                out.append(f"  (kernel line {sl}{src})   <-- {w['kind']} {w['source']}: "
                           + "; ".join(w["lost"]))
    return out

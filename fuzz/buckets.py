"""Findings grouped by cause: each finding's *bucket* (``finding.json``'s ``bucket`` field).

A campaign on one bug finds it in many forms: the same stale read behind ``ld.acq``, ``cas.acq``
or ``rmw.xchg.acq``, mirrored threads, a fence instead of an ordered access. A user wants one row
per bug. The bucket is a signature of the *cause*, computed from the minimized test and the
oracle's explanation of its forbidden outcome (:func:`oracle.explain`):

- the model check the observed execution fails (``may-see``, ``coherence`` ...);
- the *culprit* accesses: for a ``may-see`` failure, the read that saw a value it may not see
  (a stale read); for a cycle, every access on the cycle;
- each culprit read in its *operation flavour*, not its spelling: ``ld.acq``, ``cas.acq``,
  ``rmw.xchg.acq`` and ``fence.acq`` are all an ``acquire``; plain loads of any access kind
  (``ld``, ``ld.vis``, ``async.ld``) are a ``plain read``;
- what should have made the value visible: the reading thread's nearest earlier acquire (or
  barrier wait) and, for each other thread that writes the location, its nearest later release
  (or barrier arrive), with their scopes and the scope the two threads share.

Thread, location and value names never enter the signature, so it is the same for every
renaming. Backends that know which machine instruction was at fault refine it:
:class:`hw.backend.CulpritBackend` (the ``isa`` backend names the compiled instruction, its
cache bits and the target family; ``kind`` is then ``isa``). The signature is a readable line,
the bucket's ``id`` a short hash of it.
"""

from __future__ import annotations

import hashlib

from litmus import Test, parse

from .finding import Finding
from litmus.scopes import SCOPES, instance

#: orders that make an instruction acquire / release
_ACQ = ("acq", "acq_rel", "sc")
_REL = ("rel", "acq_rel", "sc")


def flavour(ins) -> str:
    """The operation flavour of one instruction (spelling folded away)."""
    b = ins.base
    scope = f".{ins.scope}" if ins.scope else ""
    if b.startswith("bar"):
        return "barrier"
    o = ins.order
    if o in _ACQ and o in _REL:
        return f"acq_rel{scope}"
    if o in _ACQ:
        return f"acquire{scope}"
    if o in _REL:
        return f"release{scope}"
    if b == "fence":
        return f"fence{scope}"
    if ins.access == "atom" or b in ("rmw", "cas"):
        return f"atomic{scope}"
    if ins.is_load or "ld" in b:
        return "plain read"
    if ins.is_store or "st" in b:
        return "plain write"
    return b


def _is_acquire(ins) -> bool:
    return ins.order in _ACQ or ins.base in ("bar.wait", "bar.sync")


def _is_release(ins) -> bool:
    return ins.order in _REL or ins.base in ("bar.signal", "bar.arrive", "bar.sync")


def shared_scope(test: Test, a: int, b: int) -> str:
    """The narrowest scope whose instance holds both threads (``sys`` at the widest)."""
    pa, pb = test.threads[a].placement, test.threads[b].placement
    for s in SCOPES[1:]:                       # narrowest first (a thread is alone in its own)
        if s == "sys" or instance(pa, a, s) == instance(pb, b, s):
            return s
    return "sys"


def _acquire_before(test: Test, tid: int, k: int) -> str:
    code = test.threads[tid].code
    for j in range(k - 1, -1, -1):
        if _is_acquire(code[j]):
            return flavour(code[j])
    return "none"


def _release_after(code, k: int) -> str:
    for j in range(k + 1, len(code)):
        if _is_release(code[j]):
            return flavour(code[j])
    return "none"


def _writers(test: Test, tid: int, loc: str | None) -> list[tuple[int, int]]:
    """(thread, instruction) of the other threads' writes to ``loc`` (the value the read missed)."""
    out = []
    for t, th in enumerate(test.threads):
        if t == tid:
            continue
        for j, ins in enumerate(th.code):
            writes = ins.base in ("st", "rmw", "cas") or ins.base.startswith("st")
            if writes and loc is not None and loc in (ins.loc, ins.lds):
                out.append((t, j))
    return out


def stale_read_sig(test: Test, tid: int, k: int) -> str:
    """A stale read's cause: its flavour, the acquire before it, the releases after the writes
    it missed and the scope the threads share."""
    ins = test.threads[tid].code[k]
    loc = ins.loc
    if ins.base == "ld" and ins.loc and test.is_lds(ins.loc):
        # an LDS read filled by async.ld: the culprit is the async copy of the global
        for j in range(k - 1, -1, -1):
            src = test.threads[tid].code[j]
            if src.base == "async.ld" and src.lds == ins.loc:
                return stale_read_sig(test, tid, j)
    rel = sorted({f"{_release_after(test.threads[t].code, j)} (threads share "
                  f"{shared_scope(test, tid, t)})" for t, j in _writers(test, tid, loc)})
    return (f"{flavour(ins)} after {_acquire_before(test, tid, k)}; writer: "
            + (", ".join(rel) or "initial value"))


def culprits(ex) -> tuple[str, list[tuple[int, int]], list[str]]:
    """(failed check, culprit reads (thread, instruction), parts) of an explanation: of its
    candidate executions, the first that fails a check other than ``defined-read`` (an undefined
    value says nothing of the cause) or, failing that, the first."""
    items = [it for it in ex.items if it.cand.failed != "defined-read"] or ex.items
    if not items:
        return "no-candidate", [], []
    it = items[0]
    c = it.cand
    check = c.failed or "consistent"
    evs = c.pe.events
    reads: list[tuple[int, int]] = []
    parts: list[str] = []
    if check == "may-see":
        # the check's own pairs (write, read); the explanation also draws the hb paths behind
        # them, whose events are not the stale read
        for _, lab, r in it.edges:
            if lab != check:
                continue
            e = evs[r]
            if e.thread >= 0 and e.instr >= 0 and (e.thread, e.instr) not in reads:
                reads.append((e.thread, e.instr))
    else:
        seen = []
        for a, lab, b in it.edges:
            for x in (a, b):
                e = evs[x]
                if e.thread >= 0 and e.instr >= 0 and (e.thread, e.instr) not in seen:
                    seen.append((e.thread, e.instr))
            parts.append(lab)
        reads = seen
    return check, reads, parts


def signature(test: Test, outcome: dict, explainer=None) -> dict:
    """The model-level bucket of a finding: ``{"kind": "model", "check", "culprits",
    "signature", "id"}``."""
    if explainer is None:
        import oracle
        explainer = oracle.explain
    ex = explainer(test, outcome)         # under the test's default model (its dialect's)
    check, reads, parts = culprits(ex)
    if check == "may-see":
        what = sorted({stale_read_sig(test, t, k) for t, k in reads}) or ["(no read named)"]
    else:
        what = sorted({flavour(test.threads[t].code[k]) for t, k in reads})
        rels = sorted(set(parts))
        what = [" / ".join(what) + (f" via {', '.join(rels)}" if rels else "")]
    sig = f"{check}: " + "; ".join(what)
    return {"kind": "model", "check": check, "culprits": [list(x) for x in reads],
            "signature": sig, "id": bucket_id(sig)}


def bucket_id(sig: str) -> str:
    return hashlib.sha256(sig.encode()).hexdigest()[:12]


def bucket_of(record: dict, backend=None, explainer=None) -> dict:
    """A finding record's bucket: the model-level signature, refined by ``backend``'s
    ``culprit`` (when it has one) into the machine instruction at fault."""
    test = parse(record["test"])
    outcome = record["forbidden"][0]["outcome"]
    b = signature(test, outcome, explainer)
    culprit = getattr(backend, "culprit", None)
    if culprit is not None:
        try:
            c = culprit(test, [tuple(x) for x in b["culprits"]])
        except Exception as e:        # the model-level bucket still stands
            b["culprit_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            c = None
        if c:
            b["model_signature"] = b["signature"]
            b.update(kind=c["kind"], signature=c["signature"], instruction=c.get("instruction"),
                     family=c.get("family"))
            b["id"] = bucket_id(b["signature"])
    return b


def group(records: list[Finding]) -> list[dict]:
    """Findings grouped by bucket, oldest first: ``{"id", "signature", "kind", "findings":
    [Finding...], "count", "counted"}`` where ``count`` is the number of programs that led to
    them and ``counted`` how many of those were counted without being minimized (``fuzz
    --known`` / ``--forms-per-bucket``: sources marked ``counted``). A record without a bucket
    (written before buckets, or whose bucket is damaged) is its own group."""
    out: dict[str, dict] = {}
    for r in records:
        b = r.bucket
        if not isinstance(b.get("id"), str) or not isinstance(b.get("signature"), str):
            b = {"id": r.id, "signature": f"finding {r.id}", "kind": "none"}
        g = out.setdefault(b["id"], {"id": b["id"], "signature": b["signature"],
                                     "kind": b.get("kind"), "findings": [], "count": 0,
                                     "counted": 0})
        g["findings"].append(r)
        g["count"] += len(r.sources) or 1
        g["counted"] += sum(1 for s in r.sources if s.get("counted"))
    return list(out.values())

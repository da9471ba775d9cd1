"""A GPU histogram judged against the two models of a plan entry (fuzz/gpu_plan.py).

Each observed outcome (a row of the GPU's histogram over the entry's ``keys``) is classified by
whether the PTX model allows it for the read-back program (``ptx_states``) and whether the
source model allows it for the source (``source_states``; None: a racy source allows all):

==================  =========  ============  ==============================================
class               PTX model  source model  meaning
==================  =========  ============  ==============================================
``allowed``         allows     allows        nothing to report
``ptx-forbidden``   forbids    allows        the GPU broke the PTX model on the compiled code
                                             (a hardware/driver finding, or the reader read
                                             the PTX wrong): a finding
``source-forbidden`` allows    forbids       the compiler's bug, seen on hardware (the static
                                             check reports it too: ``static`` counterexample)
``both-forbidden``  forbids    forbids       both of the above at once: a finding
==================  =========  ============  ==============================================

Coverage is how many of the PTX model's allowed outcomes the GPU showed (a state with undef
positions is reached by any outcome that matches it). Pure Python: runs on the lent machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CLASSES = ("allowed", "ptx-forbidden", "source-forbidden", "both-forbidden")


def matches(state, row) -> bool:
    """Does allowed ``state`` (None: any value) match concrete ``row``?"""
    return all(s is None or s == v for s, v in zip(state, row))


def classify(row, ptx_states, source_states) -> str:
    ptx_ok = any(matches(s, row) for s in ptx_states)
    src_ok = source_states is None or any(matches(s, row) for s in source_states)
    if ptx_ok:
        return "allowed" if src_ok else "source-forbidden"
    return "ptx-forbidden" if src_ok else "both-forbidden"


@dataclass
class GpuVerdict:
    """One entry's histogram judged: rows (outcome, count, class), coverage, totals."""

    rows: list = field(default_factory=list)      # (outcome dict, count, class)
    reached: int = 0
    allowed: int = 0

    @property
    def total(self) -> int:
        return sum(n for _, n, _ in self.rows)

    def count(self, cls: str) -> int:
        return sum(n for _, n, c in self.rows if c == cls)

    @property
    def finding(self) -> bool:
        """Did the GPU show an outcome the PTX model forbids for the compiled program?"""
        return any(c in ("ptx-forbidden", "both-forbidden") for _, _, c in self.rows)


def judge(keys, counts, ptx_states, source_states) -> GpuVerdict:
    """``counts``: {outcome tuple over ``keys``: count} (a :class:`hw.Histogram`'s counts)."""
    v = GpuVerdict()
    for row, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        v.rows.append((dict(zip(keys, row)), n, classify(row, ptx_states, source_states)))
    seen = list(counts)
    v.allowed = len(ptx_states)
    v.reached = sum(1 for s in ptx_states if any(matches(s, r) for r in seen))
    return v


__all__ = ["CLASSES", "GpuVerdict", "classify", "judge", "matches"]

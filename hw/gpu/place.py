"""Where each instance of a compiled litmus test runs in one GPU launch, and where its words are.

One launch of the harness (:mod:`hw.gpu.harness`) is ``blocks`` CTAs of ``threads``
threads. :func:`place` draws, per launch, with numpy only (no GPU):

- **Instances.** Every CTA holds ``k`` instances of every *source CTA* (the layout's groups of
  roles that the test places in one block / work-group); ``ninst = blocks * k``. Instance ``i``'s
  group ``g`` runs in real CTA ``(a[i] + d[g]) mod blocks``, with ``a`` a random balanced
  assignment and ``d`` distinct random shifts, so roles the source puts in one CTA share a real
  CTA and roles it puts in different CTAs never do (scopes keep their meaning), and which
  instances meet in a CTA changes every launch (GPUHarbor's workgroup shuffle).
- **Threads.** Inside a CTA the threads are permuted at random before slots are handed out, so a
  role lands on any warp and lane (thread shuffle); a thread with no role is a stress thread
  (``iters`` store/load rounds on one of ``lines`` scratch lines, MC Mutants' memory stress)
  or idle (``iters`` 0).
- **Locations.** Every (instance, location) gets its own word, ``stride`` words apart, at a
  random permutation of the slots (memory-location shuffling: the words of one instance are not
  neighbours, and which instances share a cache line changes per launch).

The record of each launched thread is :data:`hw.gpu.harness.FIELDS` and one byte offset per
location; the role threads' records reproduce the layout's ``tid.x``/``ctaid.x``/``ntid.x``, so
the compiled role switch selects the role (tests/test_gpu_check.py checks all of this). A
``layout`` here is hw/ptxc's ``Layout`` or a :class:`Shape` read from a plan (same attributes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from litmus import Test

from .harness import FIELDS

#: an ``out`` word no role wrote (checked after every launch)
POISON = -0x2152411       # 0xFDEADBEEF's low bits, negative: no litmus value


@dataclass(frozen=True)
class Slot:
    """One role's place in the source layout (hw/ptxc/layout.py ``Role``): its CTA, its
    ``tid.x`` in it, its switch case and its observed registers."""

    tid: int
    cta: int
    pos: int
    gid: int
    observed: tuple[str, ...]


@dataclass(frozen=True)
class Shape:
    """What the placement needs of a layout (hw/ptxc/layout.py ``Layout``), in a form a plan
    stores as JSON: the roles, the CTA size and count of the switch, ``out`` words per role."""

    roles: tuple[Slot, ...]
    ntid: int
    nctas: int
    stride: int

    @classmethod
    def of(cls, layout) -> "Shape":
        return cls(tuple(Slot(r.tid, r.cta, r.pos, r.gid, tuple(r.observed))
                         for r in layout.roles), layout.ntid, layout.nctas, layout.stride)

    def to_json(self) -> dict:
        return {"roles": [[r.tid, r.cta, r.pos, r.gid, list(r.observed)] for r in self.roles],
                "ntid": self.ntid, "nctas": self.nctas, "stride": self.stride}

    @classmethod
    def from_json(cls, d: dict) -> "Shape":
        return cls(tuple(Slot(t, c, p, g, tuple(o)) for t, c, p, g, o in d["roles"]),
                   d["ntid"], d["nctas"], d["stride"])


def refusal(test: Test, layout) -> str | None:
    """Why one GPU cannot run ``test`` as its placement says (None when it can)."""
    agents = {th.placement.agent for th in test.threads}
    if len(agents) > 1:
        return (f"threads on {len(agents)} GPUs (system-scope multi-GPU placement): one GPU "
                f"here")
    for _, _, ins in test.instructions():
        if ins.scope == "cluster":
            return "cluster scope: the harness launches without thread-block clusters"
    if any(loc.lds for loc in test.locations):
        return "shared-memory locations"
    return None


@dataclass
class Launch:
    """One launch's placement: the per-thread records and where each instance's words are."""

    records: np.ndarray        # (blocks * threads, width) int32
    loc_word: np.ndarray       # (ninst, nlocs) word index of each instance's location
    role_thread: np.ndarray    # (ninst, nroles) real thread index of each role
    ninst: int
    loc_words: int             # size of the location buffer in words
    out_words: int             # size of the output buffer in words
    blocks: int
    threads: int


def groups(layout) -> list[list[int]]:
    """The roles of each source CTA, CTA by CTA."""
    out: list[list[int]] = [[] for _ in range(layout.nctas)]
    for r in layout.roles:
        out[r.cta].append(r.tid)
    return out


def instances_per_cta(layout, threads: int, testing: float) -> int:
    """How many instances of each source CTA one real CTA holds (``testing``: the share of a
    CTA's threads that run roles, the rest stress)."""
    per = sum(len(g) for g in groups(layout))
    return max(1, int(threads * testing) // per)


def place(layout, nlocs: int, blocks: int, threads: int, rng: np.random.Generator,
          testing: float = 0.5, stride: int = 16, iters: int = 64, lines: int = 8,
          line_words: int = 32) -> Launch:
    """Draw one launch's placement (see the module docstring)."""
    gs = groups(layout)
    if blocks < len(gs):
        raise ValueError(f"{len(gs)} source CTAs need at least as many real CTAs, got {blocks}")
    k = instances_per_cta(layout, threads, testing)
    if k * sum(len(g) for g in gs) > threads:
        raise ValueError(f"a CTA of {threads} threads cannot hold the test's roles")
    ninst = blocks * k
    nroles = len(layout.roles)
    width = len(FIELDS) + max(nlocs, 1)
    rec = np.zeros((blocks * threads, width), dtype=np.int32)
    rec[:, 0] = -1                                         # no role: stress or idle
    rec[:, 3] = iters
    rec[:, 4] = rng.integers(0, max(lines, 1), blocks * threads) * line_words * 4
    a = rng.permutation(ninst) // k                        # balanced: k instances per CTA
    shifts = rng.choice(blocks, size=len(gs), replace=False)
    perm = np.argsort(rng.random((blocks, threads)), axis=1)   # thread shuffle per CTA
    role_thread = np.zeros((ninst, nroles), dtype=np.int64)
    region = 0
    for g, members in enumerate(gs):
        cta = (a + shifts[g]) % blocks
        order = np.argsort(cta, kind="stable")
        rank = np.empty(ninst, dtype=np.int64)
        rank[order] = np.arange(ninst) - np.searchsorted(cta[order], cta[order], side="left")
        for m, tid in enumerate(members):
            local = region + rank * len(members) + m
            role_thread[:, tid] = cta * threads + perm[cta, local]
        region += k * len(members)
    nslots = ninst * max(nlocs, 1)
    loc_word = (rng.permutation(nslots).reshape(ninst, max(nlocs, 1))[:, :nlocs]) * stride
    loc_words = nslots * stride
    if loc_words * 4 >= 2 ** 31:
        raise ValueError("location buffer past 2 GiB: fewer instances or a smaller stride")
    out_stride = nroles * layout.stride
    for r in layout.roles:
        t = role_thread[:, r.tid]
        rec[t, 0] = r.pos
        rec[t, 1] = r.cta
        rec[t, 2] = layout.ntid
        rec[t, 3] = np.arange(ninst) * out_stride * 4
        if nlocs:
            rec[t, 4:4 + nlocs] = loc_word * 4
    return Launch(rec, loc_word, role_thread, ninst, loc_words, ninst * out_stride, blocks,
                  threads)


def outcomes(layout, launch: Launch, out: np.ndarray, locs: np.ndarray,
             observed_locs: list[int]) -> tuple[np.ndarray, int]:
    """The outcome rows of one launch (columns: each role's observed registers in order, then
    the final value of each location of ``observed_locs``) and how many instances left an
    ``out`` word unwritten (their rows are dropped: poisoned output is never counted)."""
    out = out.reshape(launch.ninst, len(layout.roles) * layout.stride)
    cols = [r.tid * layout.stride + j for r in layout.roles for j in range(len(r.observed))]
    regs = out[:, cols]
    bad = (regs == POISON).any(axis=1) if cols else np.zeros(launch.ninst, dtype=bool)
    finals = locs[launch.loc_word[:, observed_locs]] if observed_locs else \
        np.zeros((launch.ninst, 0), dtype=locs.dtype)
    rows = np.concatenate([regs, finals], axis=1)
    return rows[~bad], int(bad.sum())


def keys(layout, test: Test) -> tuple[list[str], list[int]]:
    """The outcome keys the GPU observes (``P<k>:r<N>`` of each observed register, then each
    global location's final value) and the indices of those locations."""
    regs = [f"P{r.tid}:{name}" for r in layout.roles for name in r.observed]
    idx = [i for i, loc in enumerate(test.locations) if not loc.lds]
    return regs + [test.locations[i].name for i in idx], idx


__all__ = ["Launch", "POISON", "Shape", "Slot", "groups", "instances_per_cta", "keys", "outcomes", "place",
           "refusal"]

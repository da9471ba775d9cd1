"""Mutants: named bugs injected into the simulator's lowering or micro-ops.

Each models a real failure mechanism of a compiler's memory legalizer / waitcnt insertion or of
the hardware, documented with where it comes from. A mutant may name the target profile and
options under which its mechanism exists (``profile``/``options``); ``sim:MUTANT`` runs with
those unless the name overrides them (``sim:MUTANT@gfx90a``). ``corpora/mutants/`` holds, for
every mutant, a litmus test that kills it: an outcome the model forbids that ``sim:MUTANT``
shows and ``sim`` (same profile and options) never shows.

A mutant is data: its :class:`Edits` record says which changes to the correct code sequences it
makes, by named switches that :mod:`hw.sim.lower` consults (and, through the micro-op fields they
set, the kernel). Adding a mutant whose mechanism the switches already express is one entry in
:data:`MUTANTS` plus its killer test in ``corpora/mutants/``; a new kind of change is one new
switch here and the place in the lowering that honours it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .uops import CNT_LGKM, CNT_LOAD, INV1, INV2, WAIT, WB2

#: micro-ops a mutant may leave out of a release or acquire sequence, by name
DROPPABLE = {
    "wait.vmem": lambda u: u[0] == WAIT and u[1] != CNT_LGKM,   # vmcnt / loadcnt / storecnt waits
    "wait.loadcnt": lambda u: u[0] == WAIT and u[1] == CNT_LOAD,
    "wait.lgkmcnt": lambda u: u[0] == WAIT and u[1] == CNT_LGKM,
    "wb.l2": lambda u: u[0] == WB2,
    "inv.l1": lambda u: u[0] == INV1,
    "inv.l2": lambda u: u[0] == INV2,
}


@dataclass(frozen=True)
class Edits:
    """The changes a mutant makes to the correct lowering; the defaults change nothing."""

    #: micro-ops (names in :data:`DROPPABLE`) left out of every release / acquire sequence
    release_drops: frozenset[str] = frozenset()
    acquire_drops: frozenset[str] = frozenset()
    #: ``.noav`` also drops the waits of its release/acquire, not only the cache maintenance
    noav_drops_order: bool = False
    #: a seq_cst load leaves out its leading full wait
    sc_load_no_wait: bool = False
    #: system-scope atomics access the L2 level (SLC taken for an L2 bypass), not system level
    sys_atomics_at_l2: bool = False
    #: atomic / store-available stores at agent scope or wider are acknowledged by the nearer
    #: cache (GST ``noack``): waits do not cover them
    near_store_ack: bool = False
    #: a global rmw becomes a load, a wait and a store of the computed value (GLD, WAIT, GSTR)
    rmw_split: bool = False
    #: a strong cas may fail although the value matched (GCAS ``weak``)
    cas_spurious: bool = False
    #: a cas's acquire sequence runs on its success path only (SKIPNE over it on failure)
    cas_acquire_on_success_only: bool = False
    #: ``async.wait N`` completes one mark too few (counts N + this many marks as pending)
    asyncmark_extra_marks: int = 0
    #: ``async.wait`` waits on a counter that does not track the DMA (lgkmcnt / loadcnt, k = 0)
    asyncwait_wrong_counter: bool = False
    #: ``s_barrier`` without its leading memory waits where BackOffBarrier is missing
    barrier_no_waits: bool = False
    #: a named-barrier wait waits on its operand, not on the last joined barrier (BARWAIT flag)
    named_wait_on_operand: bool = False
    #: every wave of a workgroup arrives at the cluster barrier (BARRIVE per-wave flag)
    cluster_arrive_per_wave: bool = False
    #: in tgsplit mode workgroup scope is lowered as wavefront scope
    tgsplit_wg_as_wave: bool = False

    def __post_init__(self):
        for name in self.release_drops | self.acquire_drops:
            if name not in DROPPABLE:
                raise ValueError(f"unknown droppable micro-op {name!r} "
                                 f"(known: {', '.join(DROPPABLE)})")


#: the correct lowering
NO_EDITS = Edits()


@dataclass(frozen=True)
class Mutant:
    name: str
    summary: str          # the one-line description `scopefuzz mutants` prints
    mechanism: str        # the real mechanism it models
    edits: Edits = field(default=NO_EDITS)   # what it changes in the lowering
    profile: str | None = None
    options: tuple[str, ...] = ()


MUTANTS: dict[str, Mutant] = {m.name: m for m in [
    Mutant("acq-no-inv",
           "acquire skips the L1 invalidate (buffer_wbinvl1_vol / buffer_inv / global_inv)",
           "the invalidate that makes later loads miss the non-coherent L1 is left out, so "
           "loads after an agent-scope acquire read stale lines",
           Edits(acquire_drops=frozenset({"inv.l1"}))),
    Mutant("acq-no-wait",
           "acquire invalidates L1 without first waiting (vmcnt/loadcnt) for the acquiring load",
           "the s_waitcnt vmcnt(0) between the atomic and the invalidate is dropped: later "
           "loads issue while the acquiring load is still in flight",
           Edits(acquire_drops=frozenset({"wait.vmem"}))),
    Mutant("rel-no-wait",
           "release without the vmcnt/storecnt/loadcnt wait before the releasing store",
           "SIMemoryLegalizer's wait before a release is omitted: earlier loads and stores are "
           "still in flight when the flag store leaves",
           Edits(release_drops=frozenset({"wait.vmem"}))),
    Mutant("rel-no-loadcnt",
           "GFX12 release waits for stores but not loads (s_wait_loadcnt 0 missing)",
           "GFX12 splits vmcnt into loadcnt/storecnt; a release that only waits storecnt lets "
           "an earlier load read a value written after the release (load buffering)",
           Edits(release_drops=frozenset({"wait.loadcnt"})),
           profile="gfx12"),
    Mutant("lds-rel-no-lgkm",
           "workgroup release without lgkmcnt(0): LDS stores still queued past the release",
           "LDS has several request queues, so LDS ops of different waves reorder; the "
           "lgkmcnt(0) at a workgroup release is what orders them before the flag",
           Edits(release_drops=frozenset({"wait.lgkmcnt"}))),
    Mutant("nc-rel-no-wbl2",
           "system release without buffer_wbl2: dirty NC lines stay in the agent's L2",
           "NC (remote coarse-grain) memory is not coherent across agents; a system release "
           "must write the L2 back (buffer_wbl2)",
           Edits(release_drops=frozenset({"wb.l2"})),
           profile="gfx90a", options=("mtype=NC",)),
    Mutant("sys-acq-no-invl2",
           "system acquire without buffer_invl2: stale NC lines survive in the agent's L2",
           "the NC L2 lines must be invalidated at a system acquire (buffer_invl2 / buffer_inv "
           "sc0 sc1), or another agent's written-back data is never seen",
           Edits(acquire_drops=frozenset({"inv.l2"})),
           profile="gfx90a", options=("mtype=NC",)),
    Mutant("slc-bypass",
           "system-scope atomics marked SLC as if it bypassed L2 (it is STREAM, not BYPASS)",
           "D39350: setting SLC on system atomics was proposed for CPU coherence; SLC only picks "
           "the STREAM policy, so the atomic still hits the non-coherent L2 on NC memory",
           Edits(sys_atomics_at_l2=True),
           profile="gfx90a", options=("mtype=NC",)),
    Mutant("sa-near-ack",
           "store-available at agent/system scope acknowledged by a nearer cache",
           "a store with a too-narrow SCOPE field is completed (storecnt/vmcnt decremented) by "
           "the L0/L1 before it reaches the L2, so a later release wait does not cover it",
           Edits(near_store_ack=True)),
    Mutant("noav-drops-order",
           ".noav also drops the ordering waits, not only the cache writeback/invalidate",
           "the amdgcn-av:none MMRA may suppress the cache maintenance of a release/acquire, "
           "but its s_waitcnt must stay; this mutant removes both",
           Edits(noav_drops_order=True)),
    Mutant("sc-load-no-wait",
           "seq_cst load without the full wait on earlier seq_cst operations",
           "a seq_cst load must wait for earlier seq_cst stores (vmcnt(0)) before issuing; "
           "without it store buffering is observable between seq_cst operations",
           Edits(sc_load_no_wait=True)),
    Mutant("rmw-split",
           "atomicrmw expanded to a non-atomic load, wait and store",
           "a target without the atomic instruction (e.g. no PCIe atomics) expands the rmw to a "
           "load / op / store sequence that is not atomic: updates are lost",
           Edits(rmw_split=True)),
    Mutant("cas-spurious",
           "strong cmpxchg lowered as a weak one that may fail spuriously",
           "an LL/SC-style or retry-less expansion of cmpxchg fails although the value matched; "
           "LLVM's strong cmpxchg must not",
           Edits(cas_spurious=True)),
    Mutant("cas-fail-no-acq",
           "a failed cmpxchg skips the acquire (the invalidate sits on the success path only)",
           "a failed cmpxchg is a load with the failure ordering (acquire by default for an "
           "acquire cas); an expansion that places the acquire sequence in the success block "
           "leaves the failure path reading stale L1 lines",
           Edits(cas_acquire_on_success_only=True)),
    Mutant("asyncmark-inline",
           "wait.asyncmark counts one mark too many (marks of an inlined callee counted)",
           "amdgpu-async-operations: a callee's marks are not the caller's; counting an inlined "
           "(or deleted) mark makes wait.asyncmark(N) complete one mark too few",
           Edits(asyncmark_extra_marks=1)),
    Mutant("asyncwait-no-dma",
           "wait.asyncmark lowered to a counter that does not track the LDS DMA",
           "on GFX1250 async LDS loads count on ASYNC_CNT; lowering the wait to s_wait_loadcnt "
           "(or lgkmcnt on GFX9) returns before the DMA has written LDS",
           Edits(asyncwait_wrong_counter=True),
           profile="gfx1250"),
    Mutant("barrier-no-waits",
           "s_barrier without vmcnt(0) lgkmcnt(0) on a target without BackOffBarrier",
           "without BackOffBarrier the s_barrier sequence starts with a full waitcnt, and a "
           "workgroup release fence right before it relies on (is merged into) those waits",
           Edits(barrier_no_waits=True),
           profile="gfx908"),
    Mutant("named-wait-operand",
           "named-barrier wait waits on its operand instead of the last joined barrier",
           "s_barrier_wait on a named barrier always waits on the last barrier the wave "
           "joined, whatever its operand; the mutant uses the operand",
           Edits(named_wait_on_operand=True)),
    Mutant("cluster-multi-arrive",
           "several waves per workgroup arrive at the cluster barrier",
           "only one wave per workgroup may arrive at barrier -3, on behalf of its workgroup; "
           "issuing the cluster signal from every wave of the workgroup (the isfirst guard of "
           "the cluster-barrier sequence dropped) counts the workgroup once per wave, so the "
           "barrier completes before the other workgroups arrive",
           Edits(cluster_arrive_per_wave=True),
           profile="gfx1250"),
    Mutant("tgsplit-wg-as-wave",
           "workgroup scope lowered as wavefront scope in tgsplit mode",
           "in tgsplit mode a workgroup's waves may be on different CUs, so workgroup scope "
           "needs glc/sc0, vmcnt(0) and the L1 invalidate; treating it as wavefront drops them",
           Edits(tgsplit_wg_as_wave=True),
           profile="gfx90a", options=("tgsplit",)),
]}

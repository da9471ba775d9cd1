"""Mutants: named bugs injected into the simulator's lowering or micro-ops.

Each models a real failure mechanism of a compiler's memory legalizer / waitcnt insertion or of
the hardware, documented with where it comes from. A mutant may name the target profile and
options under which its mechanism exists (``profile``/``options``); ``sim:MUTANT`` runs with
those unless the name overrides them (``sim:MUTANT@gfx90a``). ``corpora/mutants/`` holds, for
every mutant, a litmus test that kills it: an outcome the model forbids that ``sim:MUTANT``
shows and ``sim`` (same profile and options) never shows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    summary: str          # the one-line description `scopefuzz mutants` prints
    mechanism: str        # the real mechanism it models
    profile: str | None = None
    options: tuple[str, ...] = ()


MUTANTS: dict[str, Mutant] = {m.name: m for m in [
    Mutant("acq-no-inv",
           "acquire skips the L1 invalidate (buffer_wbinvl1_vol / buffer_inv / global_inv)",
           "the invalidate that makes later loads miss the non-coherent L1 is left out, so "
           "loads after an agent-scope acquire read stale lines"),
    Mutant("acq-no-wait",
           "acquire invalidates L1 without first waiting (vmcnt/loadcnt) for the acquiring load",
           "the s_waitcnt vmcnt(0) between the atomic and the invalidate is dropped: later "
           "loads issue while the acquiring load is still in flight"),
    Mutant("rel-no-wait",
           "release without the vmcnt/storecnt/loadcnt wait before the releasing store",
           "SIMemoryLegalizer's wait before a release is omitted: earlier loads and stores are "
           "still in flight when the flag store leaves"),
    Mutant("rel-no-loadcnt",
           "GFX12 release waits for stores but not loads (s_wait_loadcnt 0 missing)",
           "GFX12 splits vmcnt into loadcnt/storecnt; a release that only waits storecnt lets "
           "an earlier load read a value written after the release (load buffering)",
           profile="gfx12"),
    Mutant("lds-rel-no-lgkm",
           "workgroup release without lgkmcnt(0): LDS stores still queued past the release",
           "LDS has several request queues, so LDS ops of different waves reorder; the "
           "lgkmcnt(0) at a workgroup release is what orders them before the flag"),
    Mutant("nc-rel-no-wbl2",
           "system release without buffer_wbl2: dirty NC lines stay in the agent's L2",
           "NC (remote coarse-grain) memory is not coherent across agents; a system release "
           "must write the L2 back (buffer_wbl2)",
           profile="gfx90a", options=("mtype=NC",)),
    Mutant("sys-acq-no-invl2",
           "system acquire without buffer_invl2: stale NC lines survive in the agent's L2",
           "the NC L2 lines must be invalidated at a system acquire (buffer_invl2 / buffer_inv "
           "sc0 sc1), or another agent's written-back data is never seen",
           profile="gfx90a", options=("mtype=NC",)),
    Mutant("slc-bypass",
           "system-scope atomics marked SLC as if it bypassed L2 (it is STREAM, not BYPASS)",
           "D39350: setting SLC on system atomics was proposed for CPU coherence; SLC only picks "
           "the STREAM policy, so the atomic still hits the non-coherent L2 on NC memory",
           profile="gfx90a", options=("mtype=NC",)),
    Mutant("sa-near-ack",
           "store-available at agent/system scope acknowledged by a nearer cache",
           "a store with a too-narrow SCOPE field is completed (storecnt/vmcnt decremented) by "
           "the L0/L1 before it reaches the L2, so a later release wait does not cover it"),
    Mutant("noav-drops-order",
           ".noav also drops the ordering waits, not only the cache writeback/invalidate",
           "the amdgcn-av:none MMRA may suppress the cache maintenance of a release/acquire, "
           "but its s_waitcnt must stay; this mutant removes both"),
    Mutant("sc-load-no-wait",
           "seq_cst load without the full wait on earlier seq_cst operations",
           "a seq_cst load must wait for earlier seq_cst stores (vmcnt(0)) before issuing; "
           "without it store buffering is observable between seq_cst operations"),
    Mutant("rmw-split",
           "atomicrmw expanded to a non-atomic load, wait and store",
           "a target without the atomic instruction (e.g. no PCIe atomics) expands the rmw to a "
           "load / op / store sequence that is not atomic: updates are lost"),
    Mutant("cas-spurious",
           "strong cmpxchg lowered as a weak one that may fail spuriously",
           "an LL/SC-style or retry-less expansion of cmpxchg fails although the value matched; "
           "LLVM's strong cmpxchg must not"),
    Mutant("cas-fail-no-acq",
           "a failed cmpxchg skips the acquire (the invalidate sits on the success path only)",
           "a failed cmpxchg is a load with the failure ordering (acquire by default for an "
           "acquire cas); an expansion that places the acquire sequence in the success block "
           "leaves the failure path reading stale L1 lines"),
    Mutant("asyncmark-inline",
           "wait.asyncmark counts one mark too many (marks of an inlined callee counted)",
           "amdgpu-async-operations: a callee's marks are not the caller's; counting an inlined "
           "(or deleted) mark makes wait.asyncmark(N) complete one mark too few"),
    Mutant("asyncwait-no-dma",
           "wait.asyncmark lowered to a counter that does not track the LDS DMA",
           "on GFX1250 async LDS loads count on ASYNC_CNT; lowering the wait to s_wait_loadcnt "
           "(or lgkmcnt on GFX9) returns before the DMA has written LDS",
           profile="gfx1250"),
    Mutant("barrier-no-waits",
           "s_barrier without vmcnt(0) lgkmcnt(0) on a target without BackOffBarrier",
           "without BackOffBarrier the s_barrier sequence starts with a full waitcnt, and a "
           "workgroup release fence right before it relies on (is merged into) those waits",
           profile="gfx908"),
    Mutant("named-wait-operand",
           "named-barrier wait waits on its operand instead of the last joined barrier",
           "s_barrier_wait on a named barrier always waits on the last barrier the wave "
           "joined, whatever its operand; the mutant uses the operand"),
    Mutant("cluster-multi-arrive",
           "several waves per workgroup arrive at the cluster barrier",
           "only one wave per workgroup may arrive at barrier -3, on behalf of its workgroup; "
           "issuing the cluster signal from every wave of the workgroup (the isfirst guard of "
           "the cluster-barrier sequence dropped) counts the workgroup once per wave, so the "
           "barrier completes before the other workgroups arrive",
           profile="gfx1250"),
    Mutant("tgsplit-wg-as-wave",
           "workgroup scope lowered as wavefront scope in tgsplit mode",
           "in tgsplit mode a workgroup's waves may be on different CUs, so workgroup scope "
           "needs glc/sc0, vmcnt(0) and the L1 invalidate; treating it as wavefront drops them",
           profile="gfx90a", options=("tgsplit",)),
]}

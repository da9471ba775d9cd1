"""The glue to the simulator: a test's compiled code -> the simulator's lowered-program format.

:func:`build` compiles the test (:mod:`hw.isa.source`, :mod:`hw.isa.toolchain`), parses the
disassembly, interprets each thread (:mod:`hw.isa.interp`), applies a mutant, translates the
events to micro-ops (:mod:`hw.isa.translate`) and returns a :class:`hw.sim.lower.Machine` that
the simulator's existing entry points run, plus a :class:`Build` with everything a report shows.

The machine layout (workgroups, agents, clusters, barrier counts, LDS) is the one
:func:`hw.sim.lower.lower` computes for the target's simulator profile, with one simulator thread
per *wave* (threads that are lanes of one wave run as one instruction stream, as the hardware
runs them: :func:`wave_events`); on top of it:

- vector caches: one per workgroup, or one per wave where a workgroup may span several caches
  (tgsplit on GFX9; WGP mode on gfx1100/gfx1200, whose two CUs each have an L0);
- scalar caches (``s_load_*`` of test memory): one per workgroup (per wave in tgsplit), each in
  its own L1 slot, filled by scalar loads only, never invalidated by the vector L1 invalidates
  and never updated by vector stores, starting warm like the L1s (each line may hold the
  initial value);
- one extra global location per output slot: each thread stores its registers there at its end
  (``GSTR`` reads the register when the store issues, as the hardware reads the VGPR), and the
  register observables are those locations' final values;
- waits count the wave's own operations (``WAIT`` field c = 1), unless the target option
  ``cuwait`` asks for the CU-wide waits of the hand lowering;
- one extra global location per thread for its private memory (-O0 code's stack): its accesses
  occupy the wait counters as on the hardware; their values are the interpreter's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from litmus import Test

from ..sim.kernel import QMAX
from ..sim.lower import LoweringError, Machine, lower
from ..sim.profiles import PROFILES, with_options
from ..sim.uops import (DMA, GCAS, GLD, GRMW, GST, GSTR, LCAS, LLD, LRMW, LST, MT_RW, MTYPES,
                        NFIELDS, WAIT)
from . import disasm, interp, mutants, source, toolchain, translate
from .targets import Target

MEMORY_UOPS = (GLD, GST, GRMW, GCAS, GSTR, DMA, LLD, LST, LRMW, LCAS)


@dataclass
class ThreadCode:
    """One thread's compiled code and what it became."""

    tid: int
    kernel: disasm.Kernel
    lid: int
    events: list
    edits: list
    rows: list                         # (instruction index, micro-op row)
    executed: set = field(default_factory=set)   # instruction indices the thread executed
    wave: tuple = ()                   # (kernel, wave index): threads of one wave share it


@dataclass
class Build:
    """Everything about one compiled test (for the backend, reports and the cross-check)."""

    test: Test
    target: Target
    mutant: str | None
    source: source.Source
    compiled: toolchain.Compiled
    threads: list[ThreadCode]


def compile_test(test: Test, target: Target) -> tuple[source.Source, toolchain.Compiled,
                                                     dict[str, disasm.Kernel]]:
    src = source.generate(test, target)
    comp = toolchain.compile_source(src.text, target)
    kernels = disasm.parse(comp.disasm, keep=set(src.kernels))
    missing = [k for k in src.kernels if k not in kernels]
    if missing:
        raise disasm.DisasmError(f"kernel {missing[0]} not found in the disassembly")
    return src, comp, kernels


def build(test: Test, target: Target, mutant: str | None = None) -> Build:
    """Compile, interpret and translate every thread of ``test``."""
    src, comp, kernels = compile_test(test, target)
    kernarg = {0: interp.Ptr("m", 0), 1: interp.Ptr("m", 0, hi=True), 2: 0}
    threads = []
    sym_base: dict[tuple, int] = {}        # loaded values are numbered per wave
    for role in src.roles:
        k = kernels[role.kernel]
        wave = (role.kernel, role.lid // target.waves)
        th = interp.Thread(k, target, role.lid, kernarg, f"P{role.tid}",
                           sym_base.get(wave, 0))
        events = th.run()
        sym_base[wave] = th.nsym
        edits: list = []
        if mutant is not None:
            events, edits = mutants.apply(
                mutant, target, events, lambda ev: ev.addr is not None and ev.addr < src.out_base)
        threads.append(ThreadCode(role.tid, k, role.lid, events, edits, [], set(th.path), wave))
    return Build(test, target, mutant, src, comp, threads)


def wave_events(lanes: list[ThreadCode]) -> list:
    """The events of one wave: its threads' (lanes') events in the order the wave executes them.
    The lanes' code is kept apart (hw.isa.source), so each memory instruction belongs to one
    lane; the wave runs its basic blocks in layout order, so the lanes' events interleave by
    instruction position, each lane's own order kept. A wait, cache or barrier instruction of
    code the lanes share appears in each lane's events and is executed once."""
    if len(lanes) == 1:
        return list(lanes[0].events)
    heads = [0] * len(lanes)
    out = []
    while True:
        live = [i for i in range(len(lanes)) if heads[i] < len(lanes[i].events)]
        if not live:
            return out
        i = min(live, key=lambda j: (lanes[j].events[heads[j]].index, j))
        ev = lanes[i].events[heads[i]]
        heads[i] += 1
        for j in live:
            if j != i and heads[j] < len(lanes[j].events) and \
                    lanes[j].events[heads[j]].index == ev.index:
                if ev.kind not in ("wait", "cache", "barrier"):
                    raise translate.TranslateError(
                        f"P{lanes[i].tid} and P{lanes[j].tid}: instruction {ev.index} accesses "
                        "memory for both lanes")
                heads[j] += 1
        out.append(ev)


def machine(b: Build) -> Machine:
    """The simulator machine of a build: one simulator thread per wave."""
    test, target, src = b.test, b.target, b.source
    profile = with_options(PROFILES[target.profile],
                           (["tgsplit"] if target.tgsplit else []) + [f"mtype={target.mtype}"])
    try:
        base = lower(test, profile)
    except LoweringError as e:
        raise source.IsaRefused(str(e)) from None
    by_wave: dict[tuple, list[ThreadCode]] = {}
    for th in b.threads:
        by_wave.setdefault(th.wave, []).append(th)
    waves = list(by_wave.values())
    first = [w[0].tid for w in waves]          # the wave's placement is its first thread's
    W = len(waves)
    if target.wgp:
        tcu = np.arange(W, dtype=np.int64)
        ncu_v = W
    else:
        tcu, ncu_v = base.tcu[first].copy(), base.ncu
    G = len(test.globals)
    nout = len(src.outputs)
    stride, lstride = 4 * source.GLOBAL_STRIDE, 4 * source.LDS_STRIDE
    locs = translate.Locations(src, G, stride, lstride)
    listings, nregs, stored_all = [], [], {}
    for w, lanes in enumerate(waves):
        t0 = first[w]
        kslot = ncu_v + int(base.tcu[t0])
        pslot = G + nout + w                   # the wave's private memory (-O0 stack)
        nsym = max([e.dst.k + 1 for th in lanes for e in th.events if e.dst is not None] or [0])
        name = "/".join(f"P{th.tid}" for th in lanes)
        rows, stored, nreg = translate.rows(target, wave_events(lanes), locs, nsym, kslot, name,
                                            pslot)
        for th in lanes:                       # per thread too (listings, the cross-check)
            th.rows = rows if len(lanes) == 1 else \
                translate.rows(target, th.events, locs, nsym, kslot, f"P{th.tid}", pslot)[0]
        listings.append(rows)
        nregs.append(nreg)
        mine = {th.tid for th in lanes}
        for j, v in stored.items():
            owner = src.outputs[j][0]
            if owner not in mine:
                raise translate.TranslateError(f"{name} stores the output slot of P{owner}")
            stored_all[j] = v
    for j, (t, r) in enumerate(src.outputs):
        if j not in stored_all:
            raise translate.TranslateError(f"P{t}:{r} is never stored to its output slot")
    inflight = sum(1 for lst in listings for _, u in lst if u[0] in MEMORY_UOPS)
    if inflight > QMAX:
        raise source.IsaRefused(f"{inflight} memory micro-ops: more than the simulator's {QMAX} "
                                f"in-flight slots")
    L = max(1, max(len(x) for x in listings))
    prog = np.zeros((W, L, NFIELDS), np.int64)
    plen = np.zeros(W, np.int64)
    any_scalar = False
    for w, lst in enumerate(listings):
        plen[w] = len(lst)
        for j, (_, u) in enumerate(lst):
            prog[w, j, :len(u)] = u
            if u[0] == WAIT and not target.cuwait:
                prog[w, j, 3] = 1     # per-wave counters (hw.sim.kernel._wait_ok; one thread a wave)
            if u[0] == GLD and len(u) > 5 and u[5]:
                any_scalar = True
    ncu = ncu_v + (base.ncu if any_scalar else 0)
    R = max(1, max(nregs))
    reginit = np.zeros((W, R), np.int64)
    ginit = np.concatenate([np.asarray(base.ginit, np.int64), np.zeros(nout + W, np.int64)])
    gmt = np.concatenate([np.full(G, MTYPES[target.mtype], np.int64),
                          np.full(nout + W, MT_RW, np.int64)])
    tag, twg, tcl = base.tag[first].copy(), base.twg[first].copy(), base.tcl[first].copy()
    bexp0 = base.bexp0.copy()
    for g in set(int(x) for x in twg):         # the workgroup barrier counts waves
        bexp0[g * 17] = int(np.sum(twg == g))
    warm1, warm2 = set(), set()
    for w, lst in enumerate(listings):
        for _, u in lst:
            if u[0] in (GLD, DMA) and u[3] == 0 and u[2] < G:
                cache = u[5] - 1 if (u[0] == GLD and len(u) > 5 and u[5]) else int(tcu[w])
                warm1.add((cache, u[2]))
            if u[0] in (GLD, GST, GRMW, GCAS, GSTR, DMA) and u[2] < G and target.mtype == "NC":
                warm2.add((int(tag[w]), u[2]))
    kind, oa, ob = [], [], []
    gidx = {loc.name: i for i, loc in enumerate(test.globals)}
    slot = {f"P{t}:{r}": j for j, (t, r) in enumerate(src.outputs)}
    for key in base.observables:
        kind.append(1)
        oa.append(G + slot[key] if key in slot else gidx[key])
        ob.append(0)
    return replace(base, prog=prog, plen=plen, tcu=tcu, tag=tag, twg=twg, tcl=tcl, bexp0=bexp0,
                   gmt=gmt, ginit=ginit, reginit=reginit,
                   warm_l1=np.array(sorted(warm1), np.int64).reshape(-1, 2),
                   warm_l2=np.array(sorted(warm2), np.int64).reshape(-1, 2),
                   obs_kind=np.array(kind, np.int64), obs_a=np.array(oa, np.int64),
                   obs_b=np.array(ob, np.int64), ncu=ncu,
                   listing=[list(x) for x in listings])

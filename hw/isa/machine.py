"""The glue to the simulator: a test's compiled code -> the simulator's lowered-program format.

:func:`build` compiles the test (:mod:`hw.isa.source`, :mod:`hw.isa.toolchain`), parses the
disassembly, interprets each thread (:mod:`hw.isa.interp`), applies a mutant, translates the
events to micro-ops (:mod:`hw.isa.translate`) and returns a :class:`hw.sim.lower.Machine` that
the simulator's existing entry points run, plus a :class:`Build` with everything a report shows.

The machine layout (workgroups, agents, clusters, barrier counts, LDS) is the one
:func:`hw.sim.lower.lower` computes for the target's simulator profile; on top of it:

- vector caches: one per workgroup, or one per wave where a workgroup may span several caches
  (tgsplit on GFX9; WGP mode on gfx1100/gfx1200, whose two CUs each have an L0);
- scalar caches (``s_load_*`` of test memory): one per workgroup (per wave in tgsplit), each in
  its own L1 slot, filled by scalar loads only, never invalidated by the vector L1 invalidates
  and never updated by vector stores, starting warm like the L1s (each line may hold the
  initial value);
- one extra global location per output slot: each thread stores its registers there at its end
  (``GSTR`` reads the register when the store issues, as the hardware reads the VGPR), and the
  register observables are those locations' final values;
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
from ..sim.uops import DMA, GCAS, GLD, GRMW, GST, GSTR, LCAS, LLD, LRMW, LST, MT_RW, MTYPES, NFIELDS
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
    for role in src.roles:
        k = kernels[role.kernel]
        th = interp.Thread(k, target, role.lid, kernarg, f"P{role.tid}")
        events = th.run()
        edits: list = []
        if mutant is not None:
            events, edits = mutants.apply(
                mutant, target, events, lambda ev: ev.addr is not None and ev.addr < src.out_base)
        threads.append(ThreadCode(role.tid, k, role.lid, events, edits, [], set(th.path)))
    return Build(test, target, mutant, src, comp, threads)


def machine(b: Build) -> Machine:
    """The simulator machine of a build."""
    test, target, src = b.test, b.target, b.source
    profile = with_options(PROFILES[target.profile],
                           (["tgsplit"] if target.tgsplit else []) + [f"mtype={target.mtype}"])
    try:
        base = lower(test, profile)
    except LoweringError as e:
        raise source.IsaRefused(str(e)) from None
    T = len(test.threads)
    if target.wgp:
        waves: dict = {}
        tcu = np.array([waves.setdefault(test.instance(t, "wave"), len(waves))
                        for t in range(T)], np.int64)
        ncu_v = len(waves)
    else:
        tcu, ncu_v = base.tcu.copy(), base.ncu
    G = len(test.globals)
    nout = len(src.outputs)
    stride, lstride = 4 * source.GLOBAL_STRIDE, 4 * source.LDS_STRIDE
    locs = translate.Locations(src, G, stride, lstride)
    listings, nregs, stored_all = [], [], {}
    for th in b.threads:
        kslot = ncu_v + int(base.tcu[th.tid])
        pslot = G + nout + th.tid              # the thread's private memory (-O0 stack)
        rows, stored, nreg = translate.rows(target, th.events, locs,
                                            max([e.dst.k + 1 for e in th.events
                                                 if e.dst is not None] or [0]),
                                            kslot, f"P{th.tid}", pslot)
        th.rows = rows
        listings.append(rows)
        nregs.append(nreg)
        for j, v in stored.items():
            owner = src.outputs[j][0]
            if owner != th.tid:
                raise translate.TranslateError(f"P{th.tid} stores the output slot of P{owner}")
            stored_all[j] = v
    for j, (t, r) in enumerate(src.outputs):
        if j not in stored_all:
            raise translate.TranslateError(f"P{t}:{r} is never stored to its output slot")
    inflight = sum(1 for lst in listings for _, u in lst if u[0] in MEMORY_UOPS)
    if inflight > QMAX:
        raise source.IsaRefused(f"{inflight} memory micro-ops: more than the simulator's {QMAX} "
                                f"in-flight slots")
    L = max(1, max(len(x) for x in listings))
    prog = np.zeros((T, L, NFIELDS), np.int64)
    plen = np.zeros(T, np.int64)
    any_scalar = False
    for t, lst in enumerate(listings):
        plen[t] = len(lst)
        for j, (_, u) in enumerate(lst):
            prog[t, j, :len(u)] = u
            if u[0] == GLD and len(u) > 5 and u[5]:
                any_scalar = True
    ncu = ncu_v + (base.ncu if any_scalar else 0)
    R = max(1, max(nregs))
    reginit = np.zeros((T, R), np.int64)
    ginit = np.concatenate([np.asarray(base.ginit, np.int64), np.zeros(nout + T, np.int64)])
    gmt = np.concatenate([np.full(G, MTYPES[target.mtype], np.int64),
                          np.full(nout + T, MT_RW, np.int64)])
    warm1, warm2 = set(), set()
    for t, lst in enumerate(listings):
        for _, u in lst:
            if u[0] in (GLD, DMA) and u[3] == 0 and u[2] < G:
                cache = u[5] - 1 if (u[0] == GLD and len(u) > 5 and u[5]) else int(tcu[t])
                warm1.add((cache, u[2]))
            if u[0] in (GLD, GST, GRMW, GCAS, GSTR, DMA) and u[2] < G and target.mtype == "NC":
                warm2.add((int(base.tag[t]), u[2]))
    kind, oa, ob = [], [], []
    gidx = {loc.name: i for i, loc in enumerate(test.globals)}
    slot = {f"P{t}:{r}": j for j, (t, r) in enumerate(src.outputs)}
    for key in base.observables:
        kind.append(1)
        oa.append(G + slot[key] if key in slot else gidx[key])
        ob.append(0)
    return replace(base, prog=prog, plen=plen, tcu=tcu, gmt=gmt, ginit=ginit, reginit=reginit,
                   warm_l1=np.array(sorted(warm1), np.int64).reshape(-1, 2),
                   warm_l2=np.array(sorted(warm2), np.int64).reshape(-1, 2),
                   obs_kind=np.array(kind, np.int64), obs_a=np.array(oa, np.int64),
                   obs_b=np.array(ob, np.int64), ncu=ncu,
                   listing=[list(x) for x in listings])

"""Micro-operations of the simulated AMD GPU memory system (the kernel's instruction set).

The lowering (:mod:`hw.sim.lower`) turns each litmus instruction into a short sequence of these,
following LLVM's code-sequence tables for the target profile; the numba kernel
(:mod:`hw.sim.kernel`) executes them. A program is an int64 array ``[threads, length, NFIELDS]``;
field 0 is the opcode, the meaning of the others is listed per opcode below.
"""

from litmus.rmw import OP_CODES

NFIELDS = 8

# opcode                 a        b        c       d        e          f          g
NOP = 0
GLD = 1     # global load      reg      loc      level   counter  cache
GST = 2     # global store     -        loc      level   counter  value      noack
GRMW = 3    # global rmw       reg      loc      level   counter  operand    rmw-op
GCAS = 4    # global cas       reg      loc      level   counter  expected   desired    weak
GSTR = 5    # store f(reg)     reg      loc      level   counter  operand    rmw-op     (split rmw)
LLD = 6     # LDS load         reg      lds
LST = 7     # LDS store        -        lds                       value
LRMW = 8    # LDS rmw          reg      lds                       operand    rmw-op
LCAS = 9    # LDS cas          reg      lds                       expected   desired
DMA = 10    # async LDS DMA    lds      loc      level   counter
WAIT = 11   # s_waitcnt        counter  k   (in the kernel's program: counter bitmask, k)
INV1 = 12   # invalidate the CU's vector L1/L0 (buffer_wbinvl1_vol, buffer_inv sc0, global_inv)
INV2 = 13   # write back + invalidate the agent's non-coherent (NC) L2 lines (buffer_invl2)
WB2 = 14    # NC L2 writeback  -        -        -       counter  (in flight; buffer_wbl2, global_wb SYS)
BARRIVE = 15  # barrier arrive  id       once-per-wave (cluster; mutant)
BARWAIT = 16  # barrier wait    id       on-operand (named)
BARINIT = 17  # named init      id       expected
BARJOIN = 18  # named join      id
BARLEAVE = 19  # drop the last joined named barrier
SKIPNE = 20   # skip n ops     reg      value    n        (if reg != value; cas failure path)

# GLD field e ("cache"): 0 = the thread's CU L1 (what the lowering emits); c + 1 = use L1 slot c
# instead, for a cache that the vector stores and invalidates of the CU do not touch: the ``isa``
# backend places each CU's scalar cache (s_load_*) in such a slot (hw/isa/machine.py)

NAMES = {NOP: "nop", GLD: "gld", GST: "gst", GRMW: "grmw", GCAS: "gcas", GSTR: "gstr",
         LLD: "lld", LST: "lst", LRMW: "lrmw", LCAS: "lcas", DMA: "dma", WAIT: "wait",
         INV1: "inv.l1", INV2: "inv.l2", WB2: "wb.l2", BARRIVE: "bar.arrive",
         BARWAIT: "bar.wait", BARINIT: "bar.init", BARJOIN: "bar.join", BARLEAVE: "bar.leave",
         SKIPNE: "skip.ne"}

# counters (vmcnt / lgkmcnt on GFX9; loadcnt / storecnt / dscnt / asynccnt / kmcnt on GFX12)
CNT_VM = 0
CNT_LGKM = 1
CNT_LOAD = 2
CNT_STORE = 3
CNT_ASYNC = 4
CNT_KM = 5      # GFX12 kmcnt (scalar memory loads); only the isa backend's s_load_* use it
NCNT = 6
COUNTER_NAMES = {CNT_VM: "vmcnt", CNT_LGKM: "lgkmcnt", CNT_LOAD: "loadcnt",
                 CNT_STORE: "storecnt", CNT_ASYNC: "asynccnt", CNT_KM: "kmcnt"}

# cache levels of an access: 0 may hit the CU's L1/L0; 1 bypasses L1 (L2 / device scope);
# 2 system scope (also bypasses a non-coherent L2 for NC memory)
LEVEL_L1 = 0
LEVEL_L2 = 1
LEVEL_SYS = 2

# memory types (MTYPE) of a global location
MT_RW = 0
MT_NC = 1
MT_UC = 2
MT_CC = 3
MTYPES = {"RW": MT_RW, "NC": MT_NC, "UC": MT_UC, "CC": MT_CC}

#: rmw-op field of GRMW/LRMW/GSTR: the shared encoding of litmus/rmw.py
RMW_OPS = OP_CODES

#: barrier slots per thread: 0 workgroup barrier, 1..16 named, 17 cluster
SLOTS = 18
CLUSTER_SLOT = 17


def describe(row) -> str:
    """One micro-op as text (for debugging and ``docs/sim.md``)."""
    op = int(row[0])
    name = NAMES.get(op, f"op{op}")
    if op == WAIT:
        return f"s_waitcnt {COUNTER_NAMES[int(row[1])]}({int(row[2])})"
    return name + " " + ",".join(str(int(v)) for v in row[1:])

"""The static relations of an AMDGPU pre-execution, computed in numba from its event rows.

:mod:`oracle.models.amdgpu.builder` walks the instructions and writes one attribute row per event
(``oracle.events.C_*`` columns; ``C_KIND`` a bitmask of the per-instruction sets, ``C_RANK`` the
event's scope rank, ``C_AUX`` the read of an rmw write or the last completed mark of an
``async.wait``). :func:`derive` computes from those rows, in one compiled pass over at most 64
events, every set and relation the model and the search need (see the builder's docstring for
their meaning): ``po rmw loc int ext sin sinav incl same_S ini fin aso poa nrf cohord`` and the sets
``LDS UndefOK CohR CohA CohRmw Indep lvl_S``. Doing this per event in Python cost more than the
whole candidate search on corpora-sized tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from oracle.engine import ONE, ZERO64, bit
from oracle.events import C_AUX, C_INSTR, C_KIND, C_LOC, C_RANK, C_THREAD, C_WSRC

#: every set the builder provides, in mask order: the first 19 are decided per instruction (bit k
#: of C_KIND), the rest derived here
SETS = ("R", "W", "F", "IW", "FR", "A", "ACQ", "REL", "SC", "MA", "MV", "SA", "LV", "CO", "BARR",
        "BWAIT", "BOP", "ASYNC", "AWAIT",
        "LDS", "UndefOK", "CohR", "CohA", "CohRmw", "Indep",
        "lvl_thread", "lvl_wave", "lvl_wg", "lvl_cluster", "lvl_agent", "lvl_sys")
NKIND = 19
#: every relation the builder provides, in matrix order (``bxb`` is filled per barrier schedule)
RELS = ("po", "rmw", "loc", "int", "ext", "sin", "incl", "same_thread", "same_wave", "same_wg",
        "same_cluster", "same_agent", "ini", "fin", "aso", "nrf", "cohord", "bxb", "poa",
        "sinav")

S_R, S_W, S_IW, S_FR, S_A = 0, 1, 3, 4, 5
S_ASYNC, S_AWAIT = 17, 18
S_LDS, S_UNDEFOK, S_COHR, S_COHA, S_COHRMW, S_INDEP, S_LVL = 19, 20, 21, 22, 23, 24, 25
B_PO = 1 << 40                  # kind bit: the event is in program order
B_RMWW = 1 << 41                # kind bit: the write of an rmw (C_AUX is its read)
(R_PO, R_RMW, R_LOC, R_INT, R_EXT, R_SIN, R_INCL, R_SAME, R_INI, R_FIN, R_ASO, R_NRF,
 R_COHORD, R_POA, R_SINAV) = 0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16, 18, 19
R_WG = 2                        # scope rank of a workgroup (thread wave wg cluster agent sys)

_ONE, _ZERO = ONE, ZERO64


@njit(cache=True)
def derive(attrs, inst, lds_copy, nsets, nrels):
    """(set masks uint64[nsets], relations uint64[nrels, n]) of one pre-execution.

    ``inst[t, lv]`` is thread t's scope instance id at level lv (thread wave wg cluster agent
    sys); ``lds_copy[l]`` says location copy l is in LDS."""
    n = attrs.shape[0]
    nth = inst.shape[0]
    masks = np.zeros(nsets, np.uint64)
    rels = np.zeros((nrels, n), np.uint64)
    allm = ~_ZERO if n == 64 else (bit(n) - _ONE)
    thread = attrs[:, C_THREAD]
    loc = attrs[:, C_LOC]
    kind = attrs[:, C_KIND]
    instr = attrs[:, C_INSTR]
    # per-instruction sets, LDS, scope levels, thread masks
    tmask = np.zeros(max(nth, 1), np.uint64)
    pom = _ZERO
    for i in range(n):
        b = bit(i)
        k = kind[i]
        for s in range(NKIND):
            if (k >> s) & 1:
                masks[s] |= b
        if k & B_PO:
            pom |= b
        if loc[i] >= 0 and lds_copy[loc[i]]:
            masks[S_LDS] |= b
        for lv in range(attrs[i, C_RANK] + 1):
            masks[S_LVL + lv] |= b
        if thread[i] >= 0:
            tmask[thread[i]] |= b
    special = masks[S_IW] | masks[S_FR]
    # po: later po events of the same thread; rmw; loc; int/ext
    for i in range(n):
        b = bit(i)
        t = thread[i]
        if pom & b:
            for j in range(i + 1, n):
                if thread[j] == t and (pom & bit(j)):
                    rels[R_PO, i] |= bit(j)
        if kind[i] & B_RMWW:
            rels[R_RMW, attrs[i, C_AUX]] |= b
        if loc[i] >= 0:
            for j in range(n):
                if loc[j] == loc[i]:
                    rels[R_LOC, i] |= bit(j)
        if t >= 0:
            rels[R_INT, i] = tmask[t]
            rels[R_EXT, i] = allm & ~tmask[t]
        else:
            rels[R_EXT, i] = allm & ~b
    # scope instances: group[lv, t] = events of the threads in t's instance of level lv
    group = np.zeros((6, max(nth, 1)), np.uint64)
    for lv in range(6):
        for t in range(nth):
            for t2 in range(nth):
                if inst[t2, lv] == inst[t, lv]:
                    group[lv, t] |= tmask[t2]
    for i in range(n):
        t = thread[i]
        if t < 0:
            rels[R_SIN, i] = allm
            rels[R_SINAV, i] = allm
            for lv in range(5):
                rels[R_SAME + lv, i] = allm
        else:
            rels[R_SIN, i] = special | group[attrs[i, C_RANK], t]
            lds = (masks[S_LDS] & bit(i)) != _ZERO
            rels[R_SINAV, i] = special | group[avail_rank(attrs[i, C_RANK], lds), t]
            for lv in range(5):
                rels[R_SAME + lv, i] = special | group[lv, t]
    for i in range(n):                  # incl = sin & sin^-1
        row = _ZERO
        for j in range(n):
            if rels[R_SIN, j] & bit(i):
                row |= bit(j)
        rels[R_INCL, i] = rels[R_SIN, i] & row
    # ini, fin
    iw, fr = masks[S_IW], masks[S_FR]
    for i in range(n):
        b = bit(i)
        if iw & b:
            rels[R_INI, i] = allm & ~iw
        if not (fr & b):
            rels[R_FIN, i] = fr
    _async_order(rels, attrs, masks, pom)
    _static_pruning(rels, loc, masks)
    _undef_ok(rels, loc, masks)
    for i in range(n):
        if rels[R_RMW, i] != _ZERO:
            masks[S_COHRMW] |= bit(i)
        rels[R_COHORD, i] = (rels[R_PO, i] | rels[R_POA, i] | rels[R_INI, i] | rels[R_FIN, i]
                             | rels[R_ASO, i])
    masks[S_COHA] = masks[S_A]
    masks[S_INDEP] = fr
    return masks, rels


@njit(cache=True)
def avail_rank(rank, lds):
    """The availability scope of an access: the scope at which its own store-available /
    load-visible acts. Every LDS access is store-available / load-visible at workgroup scope,
    whatever scope it names (notes llvm-amdgpu.md §1.3, LLVM's AMDGPUMemoryModel "addrspace(3)
    Accesses"); any other event's is its scope ``rank`` (its sync scope, which still decides
    atomicity, synchronization and the scope of its MakeAvailable / MakeVisible)."""
    return R_WG if lds else rank


@njit(cache=True)
def _async_order(rels, attrs, masks, pom):
    """The order of async ops (seeds/amdgpu-async-operations.txt), in two relations.

    ``poa``, program order *into* async ops: every event po-before the issuing instruction ->
    the op's read and write ("A memory operation X program ordered before an overlapping
    asynchronous operation A happens-before A"; the memory-model seed's program-order clauses
    apply to X and A, and the model file uses ``poa`` wherever the seed says program order).

    ``aso``, the edges *out of* an async op, which count only once it is completed: its read ->
    its write, and the op -> the first ``async.wait`` at which a mark po-after the issue is
    completed, and everything po-after that wait. Nothing else: an op never waited for is
    ordered only by thread end (``fin``)."""
    n = attrs.shape[0]
    aw = masks[S_ASYNC] & masks[S_W]
    waits = masks[S_AWAIT]
    for w in range(n):
        if not (aw & bit(w)):
            continue
        r = attrs[w, C_WSRC]
        k = attrs[w, C_INSTR]
        t = attrs[w, C_THREAD]
        rels[R_ASO, r] |= bit(w)
        after = -1
        for e in range(n):
            if attrs[e, C_THREAD] != t or not (pom & bit(e)):
                continue
            if attrs[e, C_INSTR] < k:
                rels[R_POA, e] |= bit(r) | bit(w)
            if after < 0 and (waits & bit(e)) and attrs[e, C_INSTR] > k and attrs[e, C_AUX] > k:
                after = attrs[e, C_INSTR]
        if after >= 0:
            for e in range(n):
                if attrs[e, C_THREAD] == t and (pom & bit(e)) and attrs[e, C_INSTR] >= after:
                    rels[R_ASO, r] |= bit(e)
                    rels[R_ASO, w] |= bit(e)


@njit(cache=True)
def _static_pruning(rels, loc, masks):
    """``nrf``: (W, R) pairs excluded by program order alone.

    R po W means R hb W, so R may not see W. W1 po W2 po R (same location) means W1 lo W2 lo R, so
    R may not see W1; and the initial write is lo-before every write, so a read po-after a write
    to its location never sees the initial write. The same holds for the read of an async op
    and the writes po-before its issue (``poa``: lo-before it too). Everything is lo-before a
    final-memory read."""
    n = loc.shape[0]
    wm, iw, fr = masks[S_W], masks[S_IW], masks[S_FR]
    for r in range(n):
        rb = bit(r)
        if not (masks[S_R] & rb):
            continue
        same = _ZERO
        for w in range(n):
            if (wm & bit(w)) and loc[w] == loc[r]:
                same |= bit(w)
        if fr & rb:
            em = same & ~iw
        else:
            em = _ZERO
            for w in range(n):
                if (same & bit(w)) and ((rels[R_PO, w] | rels[R_POA, w]) & rb):
                    em |= bit(w)
        por = rels[R_PO, r]
        for w in range(n):
            b = bit(w)
            if not (same & b):
                continue
            if (por & b) or (em != _ZERO and (iw & b)) or (rels[R_PO, w] & em):
                rels[R_NRF, w] |= rb


@njit(cache=True)
def _undef_ok(rels, loc, masks):
    """Reads that may read undef. A read cannot when it is atomic and every write it may ever see
    (the writes to its location not excluded by ``nrf``) is atomic, with pairwise inclusive scopes
    (the read included): rule 2 always applies then (rule 1 never does: the initial write is
    lo-before every access). Those reads are ``CohR``, the others ``UndefOK``."""
    n = loc.shape[0]
    am, wm = masks[S_A], masks[S_W]
    for r in range(n):
        rb = bit(r)
        if not (masks[S_R] & rb):
            continue
        gm = rb                         # the read and every write it may ever see
        for w in range(n):
            if (wm & bit(w)) and loc[w] == loc[r] and not (rels[R_NRF, w] & rb):
                gm |= bit(w)
        safe = (gm & ~am) == _ZERO
        if safe:
            for g in range(n):
                if (gm & bit(g)) and (rels[R_INCL, g] & gm) != gm:
                    safe = False
                    break
        if safe:
            masks[S_COHR] |= rb
        else:
            masks[S_UNDEFOK] |= rb

"""``oracle.check``: the allowed outcomes of a test under a model, and its verdict.

Pipeline: event graph builder (per dialect) -> pre-executions -> packed arrays -> the numba search
(:func:`oracle.engine.search`) evaluating the compiled model (:func:`oracle.lang.load_model`) on
every candidate -> union of outcomes -> verdict by LITMUS.md's rules (undef = any value).
"""

from __future__ import annotations

import array
import dataclasses
import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from litmus.dialects import DEFAULT_MODEL
from litmus.ir import UNDEF, Test
from litmus.outcome import matches, verdict

from .errors import OracleError, TooManyEvents
from .events import UNDEF_VAL, PreExecution
from .lang import DYNAMIC, Program, load_model

#: dialect -> event graph builder module function; models name the builder they need
BUILDERS = {"amdgpu": "oracle.build_amdgpu:build"}
BUILDERS.update(rc11="oracle.models.rc11_events:build", vulkan="oracle.models.vulkan_events:build")  # conformance (issue 5)


@dataclass
class Result:
    """What the model allows for one test (see DESIGN.md, ``check --json``)."""

    model: str
    verdict: str
    states: list[dict]
    flags: list[str] = field(default_factory=list)
    ub: list[str] = field(default_factory=list)
    candidates: int = 0
    consistent: int = 0
    seconds: float = 0.0

    def allows(self, observed) -> bool:
        """Does some allowed state match the concrete observed outcome (undef matches anything)?"""
        return any(matches(s, observed) for s in self.states)


def _builder(model: str):
    import importlib
    target = BUILDERS.get(model)
    if target is None:
        raise OracleError(f"model {model!r} has no event graph builder (known: "
                          f"{', '.join(sorted(BUILDERS))})")
    mod, _, fn = target.partition(":")
    return getattr(importlib.import_module(mod), fn)


@dataclass
class Packed:
    """A pre-execution packed into the engine's arrays."""

    pe: PreExecution
    slots: np.ndarray
    reads: np.ndarray
    cand: np.ndarray
    ncand: np.ndarray
    co_perm: np.ndarray
    read_loc: np.ndarray
    loc_events: np.ndarray
    loc_nev: np.ndarray
    coh_mask: np.ndarray
    cohord: np.ndarray
    incl: np.ndarray
    coha: np.uint64
    cohrmw: np.uint64
    rmw_w: np.ndarray
    co_start: np.ndarray
    co_count: np.ndarray
    co_len: np.ndarray
    is_read: np.ndarray
    val_const: np.ndarray
    wsrc: np.ndarray
    wop: np.ndarray
    wopnd: np.ndarray
    req_mode: np.ndarray
    req_val: np.ndarray
    obs_kind: np.ndarray
    obs_arg: np.ndarray
    ind_reads: np.ndarray
    ind_cand: np.ndarray
    ind_ncand: np.ndarray


def rf_candidates(pe: PreExecution) -> dict[int, list[int]]:
    """Per read: the writes it may read from (-1 = undef), after static pruning."""
    nrf = pe.rel_rows("nrf")
    out = {}
    writes = sorted(pe.sets["W"])
    for r in sorted(pe.sets["R"]):
        er = pe.events[r]
        cs = []
        for w in writes:
            ew = pe.events[w]
            if ew.loc_id != er.loc_id or nrf[w] >> r & 1:
                continue
            if ew.wsrc < 0 and er.req_mode and ((er.req_mode == 1) != (ew.value == er.req_val)):
                continue        # a constant write that breaks the read's required value
            cs.append(w)
        if r in pe.sets.get("UndefOK", ()):
            cs.append(-1)
        out[r] = cs
    return out


def co_groups(pe: PreExecution) -> list[tuple[int, list[int]]]:
    """Per location (every loc_id of a read or write, in order): (initial write or -1, the other
    co-ordered writes)."""
    groups: dict[int, list] = {e.loc_id: [] for e in pe.events if e.loc_id >= 0}
    for w in sorted(pe.sets.get("CO", ())):
        groups.setdefault(pe.events[w].loc_id, []).append(w)
    out = []
    for lid in sorted(groups):
        ws = groups[lid]
        init = [w for w in ws if w in pe.sets.get("IW", ())]
        rest = [w for w in ws if w not in init]
        out.append((init[0] if init else -1, rest))
    return out


#: bit i of event i, for building identity rows of sets in one numpy operation
_EYE = np.array([1 << i for i in range(64)], np.uint64)
#: k -> every permutation of range(k) (static data, shared by every pre-execution)
_PERMS: dict[int, list[tuple[int, ...]]] = {}
_EMPTY_I64 = np.zeros(0, np.int64)


def _perms(k: int) -> list[tuple[int, ...]]:
    p = _PERMS.get(k)
    if p is None:
        p = _PERMS[k] = list(itertools.permutations(range(k)))
    return p


def _mask(st) -> int:
    m = 0
    for i in st:
        m |= 1 << i
    return m


def pack(pe: PreExecution, prog: Program) -> Packed:
    """Pack a pre-execution into the engine's arrays (one numpy conversion per kind of data)."""
    n = pe.n
    nn = max(n, 1)
    slots = np.zeros((prog.nslots, nn), np.uint64)
    sets, rels, pslots = pe.sets, pe.rels, prog.slots
    set_idx, set_masks, rel_idx, rel_rows = [], [], [], []
    for name in prog.base[len(DYNAMIC):]:
        st = sets.get(name)
        if st is not None:
            if st:
                set_idx.append(pslots[name])
                set_masks.append(_mask(st))
            continue
        rows = rels.get(name)
        if rows is None:
            raise OracleError(f"model {prog.name} uses {name!r}, which the event builder does "
                              f"not provide")
        if len(rows) != n:
            rows = list(rows[:n])
            rows += [0] * (n - len(rows))
        rel_idx.append(pslots[name])
        rel_rows.append(rows)
    if n:
        if set_idx:
            slots[set_idx, :n] = _EYE[:n] & np.array(set_masks, np.uint64)[:, None]
        if rel_idx:             # array('Q') converts Python ints faster than np.array
            flat = array.array("Q", itertools.chain.from_iterable(rel_rows))
            slots[rel_idx, :n] = np.frombuffer(flat, np.uint64).reshape(len(rel_idx), n)
    events = pe.events
    rc = rf_candidates(pe)
    indep = sets.get("Indep", ())
    ind_l = [r for r in rc if r in indep]        # rc is in event order
    reads_l = [r for r in rc if r not in indep]
    if ind_l:
        imax = max(len(rc[r]) for r in ind_l)
        ind_cand = np.array([rc[r] + [-1] * (imax - len(rc[r])) for r in ind_l], np.int64)
        ind_ncand = np.array([len(rc[r]) for r in ind_l], np.int64)
        ind_reads = np.array(ind_l, np.int64)
    else:
        ind_cand, ind_ncand, ind_reads = np.full((1, 1), -1, np.int64), _EMPTY_I64, _EMPTY_I64
    if reads_l:
        maxc = max(max(len(v) for v in rc.values()), 1)
        cand = np.array([rc[r] + [-1] * (maxc - len(rc[r])) for r in reads_l], np.int64)
        ncand = np.array([len(rc[r]) for r in reads_l], np.int64)
        reads = np.array(reads_l, np.int64)
    else:
        cand, ncand, reads = np.zeros((0, 1), np.int64), _EMPTY_I64, _EMPTY_I64
    perms, starts, counts, lens = [], [], [], []
    for init, rest in co_groups(pe):
        starts.append(len(perms))
        ps = _perms(len(rest))
        if init >= 0:
            perms.extend([init] + [rest[i] for i in p] for p in ps)
            lens.append(len(rest) + 1)
        else:
            perms.extend([rest[i] for i in p] for p in ps)
            lens.append(len(rest))
        counts.append(len(ps))
    width = max(lens + [1])
    co_perm = np.array([p + [0] * (width - len(p)) for p in perms] or [[0] * width], np.int64)
    per: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        if e.loc_id >= 0:
            per.setdefault(e.loc_id, []).append(i)
    lids = sorted(per)
    lidx = {lid: i for i, lid in enumerate(lids)}
    per_l = [per[lid] for lid in lids]
    read_loc = np.array([lidx[events[r].loc_id] for r in reads_l], np.int64)
    wmax = max([len(p) for p in per_l] + [1])
    loc_events = np.array([p + [0] * (wmax - len(p)) for p in per_l] or [[0] * wmax], np.int64)
    loc_nev = np.array([len(p) for p in per_l], np.int64)
    cohm = _mask(sets.get("CO", ())) | _mask(sets.get("CohR", ()))
    coh_mask = np.array([cohm & _mask(p) for p in per_l] or [0], np.uint64)
    if n:
        cohord = np.array(pe.rel_rows("cohord"), np.uint64)
        if "incl" in rels:
            incl = np.array(pe.rel_rows("incl"), np.uint64)
        else:                   # a model without scopes: every pair is inclusive
            incl = np.full(n, (1 << n) - 1, np.uint64)
        rmw_w = np.array([row.bit_length() - 1 if row else -1 for row in pe.rel_rows("rmw")],
                         np.int64)
        is_read = np.zeros(n, np.bool_)
        rset = sets["R"]
        if rset:
            is_read[list(rset)] = True
    else:
        cohord = incl = np.zeros(1, np.uint64)
        rmw_w = np.full(1, -1, np.int64)
        is_read = np.zeros(1, np.bool_)
    coha = _mask(sets.get("CohA", ()))
    cohrmw = _mask(sets.get("CohRmw", ()))
    if events:
        flat = array.array("q", [x for e in events for x in (e.value, e.wsrc, e.wop, e.wopnd,
                                                             e.req_mode, e.req_val)])
        attrs = np.frombuffer(flat, np.int64).reshape(n, 6).T.copy()
    else:
        attrs = np.array([[0, -1, 0, 0, 0, 0]], np.int64).T.copy()
    obs = pe.observables
    obs_ka = np.array([(1 if k == "event" else 0, a) for _, (k, a) in obs] or [(0, 0)],
                      np.int64).T.copy()
    nobs = len(obs)
    return Packed(pe, slots, reads, cand, ncand, co_perm, read_loc, loc_events, loc_nev,
                  coh_mask, cohord, incl, np.uint64(coha), np.uint64(cohrmw), rmw_w,
                  np.array(starts, np.int64), np.array(counts, np.int64),
                  np.array(lens, np.int64), is_read,
                  attrs[0], attrs[1], attrs[2], attrs[3], attrs[4], attrs[5],
                  obs_ka[0, :nobs], obs_ka[1, :nobs], ind_reads, ind_cand, ind_ncand)


def run_packed(p: Packed, prog: Program, want_state: bool = True, max_steps: int = -1):
    from .engine import search
    return search(p.slots, prog.prelude, prog.ops, p.pe.n, p.reads, p.cand, p.ncand, p.co_perm, p.co_start,
                  p.co_count, p.co_len, p.read_loc, p.loc_events, p.loc_nev, p.coh_mask,
                  p.cohord, p.incl, p.coha, p.cohrmw, p.rmw_w, p.is_read, p.val_const, p.wsrc, p.wop, p.wopnd,
                  p.req_mode, p.req_val, p.obs_kind, p.obs_arg, p.ind_reads, p.ind_cand,
                  p.ind_ncand, len(prog.checks), want_state, max_steps)


class _Key:
    """A cache key that hashes its (deep) value once: the test's fields but its name and doc."""

    __slots__ = ("k", "h")

    def __init__(self, k):
        self.k = k
        self.h = hash(k)

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        return self.h == other.h and self.k == other.k


def _cache_key(test: Test, model: str):
    return _Key((model, test.locations, test.threads, test.condition, test.reg_init,
                 test.dialect, test.meta))


_CACHE: dict = {}
CACHE_LIMIT = 100_000


def check(test: Test, model: str | None = None, budget: int | None = None) -> Result:
    """Allowed outcomes, verdict and statistics of ``test`` under ``model`` (dialect default).

    ``budget`` bounds the search (loop steps plus model evaluations per pre-execution): past it the
    check raises :class:`OracleError` instead of running on. Campaigns use it so that one program
    with a huge candidate space is recorded as an error instead of stalling the run; ``None``
    means no limit (``scopefuzz check``)."""
    model = model or DEFAULT_MODEL.get(test.dialect, "amdgpu")
    key = _cache_key(test, model)
    hit = _CACHE.get(key)
    if hit is not None:
        res = dataclasses.replace(hit, states=list(hit.states), seconds=0.0)
        res.verdict = verdict(test.condition, res.states, bool(res.ub))
        return res
    t0 = time.perf_counter()
    prog = load_model(model)
    try:
        pes = _builder(model)(test)
    except TooManyEvents:
        if model not in REFERENCE_FALLBACK:
            raise
        res = _reference_result(test, model, t0)
        _CACHE[key] = dataclasses.replace(res, states=list(res.states))
        return res
    keys = test.observables()
    seen: set[tuple] = set()
    states: list[dict] = []
    candidates = consistent = 0
    flags = 0
    ub: list[str] = []
    for pe in pes:
        for reason in pe.ub:
            if reason not in ub:
                ub.append(reason)
        order = [k for k, _ in pe.observables]
        if sorted(order) != sorted(keys):
            raise OracleError(f"internal: builder observables {order} differ from {keys}")
        p = pack(pe, prog)
        st, ns, cands, cons, fl, _ = run_packed(p, prog, max_steps=-1 if budget is None else budget)
        if ns < 0:
            raise OracleError(f"{test.name}: search budget of {budget:,} steps and evaluations exhausted "
                              f"({int(cands):,} candidates evaluated); check it without a budget")
        candidates += int(cands)
        consistent += int(cons)
        flags |= int(fl)
        idx = [order.index(k) for k in keys]
        for row in st[:ns].tolist():
            tup = tuple([row[i] for i in idx])
            if tup not in seen:
                seen.add(tup)
                states.append({k: (UNDEF if v == UNDEF_VAL else v) for k, v in zip(keys, tup)})
    states.sort(key=lambda s: tuple((1, 0) if v == UNDEF else (0, v) for v in s.values()))
    res = Result(model, verdict(test.condition, states, bool(ub)), states,
                 [prog.flags[i] for i in range(len(prog.flags)) if flags >> i & 1], ub,
                 candidates, consistent, time.perf_counter() - t0)
    if len(_CACHE) >= CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = Result(res.model, res.verdict, list(res.states), res.flags, res.ub,
                         res.candidates, res.consistent, res.seconds)
    return res


#: models whose Python reference (``oracle/models/<m>.py``, same model, bit sets over Python
#: ints) decides programs above the engine's 64 events instead of refusing them
REFERENCE_FALLBACK = {"rc11": "oracle.models.rc11:check", "vulkan": "oracle.models.vulkan:check"}


def _reference_result(test: Test, model: str, t0: float) -> Result:
    """Decide a program too big for the engine with the model's Python reference.

    The reference stops early: once for the verdict and once for the data-race flag, so the result
    holds the verdict, the flags and the states that decided them, not every allowed state; the
    flag ``reference-partial`` says so.
    """
    import importlib
    mod, _, fn = REFERENCE_FALLBACK[model].partition(":")
    ref = getattr(importlib.import_module(mod), fn)
    by_verdict = ref(test, stop="verdict")
    by_race = ref(test, stop="race")
    flags = sorted(set(by_verdict.flags) | set(by_race.flags)) + ["reference-partial"]
    return Result(model, by_verdict.verdict, list(by_verdict.states), flags,
                  list(by_verdict.ub), by_verdict.candidates + by_race.candidates,
                  by_verdict.consistent + by_race.consistent, time.perf_counter() - t0)


def clear_cache() -> None:
    _CACHE.clear()

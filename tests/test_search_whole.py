"""oracle.search._search_whole (the first, whole search of a one-word pre-execution, its options
made as a plain tuple) against oracle.pack.search_pe with the same options made by
oracle.pack.options, on every corpus program."""

import numpy as np

import litmus
from conftest import CORPORA
from oracle import registry, search
from oracle.check import pre_executions
from oracle.events import WORD
from oracle.hints import COHERENCE_HINTS
from oracle.lang import load_model
from oracle.pack import options, search_pe


def _same(pe, prog, unit, cap, raisable, found):
    nobs = len(pe.observables)
    hints = not unit.hints.isdisjoint(COHERENCE_HINTS)
    st, ns, cands, cons, fl, hit = search._search_whole(pe, prog, unit.hints, hints, cap,
                                                        raisable, found, nobs)
    st2, ns2, cands2, cons2, fl2, _, hit2 = search_pe(
        pe, prog, unit.hints, options(pe.n, nobs, max_steps=cap, raisable=raisable, hints=hints,
                                      found=found))
    assert (ns, cands, cons, fl) == (ns2, cands2, cons2, fl2)
    assert hit.tolist() == hit2.tolist()
    if ns >= 0:
        assert np.array_equal(st[:ns, :nobs], st2[:ns2, :nobs])
    return st[:max(ns, 0), :nobs].copy()


def test_whole_search_agrees_with_search_pe():
    n = 0
    for path in sorted(CORPORA.rglob("*.litmus")):
        t = litmus.parse_file(path)
        model = litmus.DEFAULT_MODEL.get(t.dialect)
        if model is None:
            continue
        unit = registry.get(model)
        prog = load_model(model)
        try:
            pes = pre_executions(unit, t)
        except Exception:           # (programs the oracle refuses: not this test's matter)
            continue
        nflags = (1 << len(prog.flags)) - 1
        for pe in pes:
            if pe.n > WORD:
                continue
            rows = _same(pe, prog, unit, search.QUERY_WHOLE_STEPS, nflags, None)
            # known outcomes and raised flags (what a later pre-execution of a check gets), and
            # a cap too small to finish
            if rows.shape[0]:
                _same(pe, prog, unit, search.QUERY_WHOLE_STEPS, nflags & ~1, rows[:1].copy())
            _same(pe, prog, unit, 3, nflags, None)
            n += 1
    assert n >= 300

"""Metamorphic and differential properties of the oracle on Hypothesis-generated programs.

- strengthening an order, widening a scope, removing ``.noav``, turning ``st``/``ld`` into
  ``st.av.sys``/``ld.vis.sys``, or adding a fence never adds an allowed outcome;
- programs of sys-scope seq_cst atomics allow exactly the SC interleavings;
- the numba engine and the pure-Python reference evaluation of the model agree.

The program strategy is local to these tests (small programs, so the reference stays fast).
"""

from __future__ import annotations

import itertools

from hypothesis import assume, given, settings, strategies as st

import litmus
import oracle
from litmus.ir import UNDEF
from reference import reference_check
from visits import exhaustive_consistent

SCOPES = ("wave", "wg", "agent", "sys")
LOCS = ("x", "y")


@st.composite
def instr(draw, tid: int, reg: list[int]):
    kind = draw(st.sampled_from(("ld", "st", "rmw", "cas", "fence")))
    loc = draw(st.sampled_from(LOCS))
    scope = draw(st.sampled_from(SCOPES))
    noav = ".noav" if draw(st.booleans()) and draw(st.booleans()) else ""
    if kind == "fence":
        return f"fence.{draw(st.sampled_from(('acq', 'rel', 'acq_rel', 'sc')))}.{scope}{noav}"
    r = f"r{reg[0]}"
    if kind in ("ld", "rmw", "cas"):
        reg[0] += 1
    v = draw(st.integers(1, 2))
    if kind == "ld":
        acc = draw(st.sampled_from(("", ".atom", ".atom", ".vis", ".vol")))
        if acc == ".atom":
            return f"ld.atom.{draw(st.sampled_from(('rlx', 'acq', 'sc')))}.{scope}{noav} {r}, {loc}"
        if acc == ".vis":
            return f"ld.vis.{scope} {r}, {loc}"
        return f"ld{acc} {r}, {loc}"
    if kind == "st":
        acc = draw(st.sampled_from(("", ".atom", ".atom", ".av", ".vol")))
        if acc == ".atom":
            return f"st.atom.{draw(st.sampled_from(('rlx', 'rel', 'sc')))}.{scope}{noav} {loc}, {v}"
        if acc == ".av":
            return f"st.av.{scope} {loc}, {v}"
        return f"st{acc} {loc}, {v}"
    order = draw(st.sampled_from(("rlx", "acq", "rel", "acq_rel", "sc")))
    if kind == "rmw":
        op = draw(st.sampled_from(("add", "xchg", "max")))
        return f"rmw.{op}.{order}.{scope}{noav} {r}, {loc}, {v}"
    return f"cas.{order}.{scope}{noav} {r}, {loc}, 0, {v}"


@st.composite
def programs(draw, max_instrs: int = 5, threads=(2, 3)):
    nth = draw(st.integers(*threads))
    wgs = [draw(st.integers(0, 1)) for _ in range(nth)]
    waves = [draw(st.integers(0, 1)) for _ in range(nth)]
    total = draw(st.integers(nth, max_instrs))
    counts = [1] * nth
    for _ in range(total - nth):
        counts[draw(st.integers(0, nth - 1))] += 1
    cols = []
    for tid in range(nth):
        reg = [0]
        cols.append([draw(instr(tid, reg)) for _ in range(counts[tid])])
    return render(cols, wgs, waves)


def render(cols, wgs, waves, cond="exists (x == 0)") -> str:
    nth = len(cols)
    rows = [" | ".join(f"P{t}@wave {waves[t]}, wg {wgs[t]}" for t in range(nth)) + " ;"]
    for k in range(max(len(c) for c in cols)):
        rows.append(" | ".join(c[k] if k < len(c) else "" for c in cols) + " ;")
    return "AMDGPU gen\n{ x = 0; y = 0; }\n" + "\n".join(rows) + f"\n{cond}\n"


def parse_cols(text: str):
    lines = text.split("\n")
    head = lines[2]
    body = [ln for ln in lines[3:-2]]
    nth = head.count("|") + 1
    wgs = [int(p.split("wg ")[1].split()[0].strip(" ;")) for p in head.split("|")]
    waves = [int(p.split("wave ")[1].split(",")[0]) for p in head.split("|")]
    cols = [[] for _ in range(nth)]
    for ln in body:
        for t, cell in enumerate(ln.rstrip(" ;").split("|")):
            if cell.strip():
                cols[t].append(cell.strip())
    return cols, wgs, waves


def covers(weak_states, s) -> bool:
    """Is outcome ``s`` (undef = any value) included in some state of ``weak_states``?"""
    return any(all(w[k] == UNDEF or (s[k] != UNDEF and w[k] == s[k]) for k in s)
               for w in weak_states)


def assert_no_new_outcomes(weak_text: str, strong_text: str):
    weak = oracle.check(litmus.parse(weak_text)).states
    strong = oracle.check(litmus.parse(strong_text)).states
    for s in strong:
        assert covers(weak, s), f"{s} allowed after strengthening\nweak:\n{weak_text}\nstrong:\n" \
                                f"{strong_text}\nweak states: {weak}"


STRONGER_ORDER = {"rlx": ("acq", "rel", "acq_rel", "sc"), "acq": ("acq_rel", "sc"),
                  "rel": ("acq_rel", "sc"), "acq_rel": ("sc",)}


def strengthen(ins: str, how: str, draw) -> str | None:
    head, _, ops = ins.partition(" ")
    parts = head.split(".")
    base = parts[0]
    if how == "order":
        for i, p in enumerate(parts):
            if p in STRONGER_ORDER:
                allowed = {"ld": ("acq", "sc"), "st": ("rel", "sc")}.get(base)
                cands = [o for o in STRONGER_ORDER[p] if allowed is None or o in allowed]
                if base == "fence":
                    cands = [o for o in cands if o != "rlx"]
                if not cands:
                    return None
                parts[i] = draw(st.sampled_from(cands))
                return ".".join(parts) + (" " + ops if ops else "")
        return None
    if how == "scope":
        for i, p in enumerate(parts):
            if p in SCOPES and p != "sys":
                parts[i] = draw(st.sampled_from(SCOPES[SCOPES.index(p) + 1:]))
                return ".".join(parts) + (" " + ops if ops else "")
        return None
    if how == "noav":
        return ins.replace(".noav", "") if ".noav" in ins else None
    if how == "avvis":
        if head == "st":
            return "st.av.sys " + ops
        if head == "ld":
            return "ld.vis.sys " + ops
        return None
    raise AssertionError(how)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_strengthening_never_adds_outcomes(data):
    text = data.draw(programs())
    cols, wgs, waves = parse_cols(text)
    how = data.draw(st.sampled_from(("order", "scope", "noav", "avvis", "fence")))
    t = data.draw(st.integers(0, len(cols) - 1))
    if how == "fence":
        k = data.draw(st.integers(0, len(cols[t])))
        f = data.draw(st.sampled_from(("acq", "rel", "acq_rel", "sc")))
        sc = data.draw(st.sampled_from(SCOPES))
        cols2 = [list(c) for c in cols]
        cols2[t].insert(k, f"fence.{f}.{sc}")
    else:
        k = data.draw(st.integers(0, len(cols[t]) - 1))
        new = strengthen(cols[t][k], how, data.draw)
        assume(new is not None)     # nothing stronger of that kind (e.g. already seq_cst)
        cols2 = [list(c) for c in cols]
        cols2[t][k] = new
    assert_no_new_outcomes(text, render(cols2, wgs, waves))


# --- SC programs vs. interleavings ------------------------------------------------------------------
@st.composite
def sc_programs(draw):
    nth = draw(st.integers(2, 3))
    cols = []
    for tid in range(nth):
        code, reg = [], 0
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(("ld", "st", "rmw")))
            loc = draw(st.sampled_from(LOCS))
            v = draw(st.integers(1, 3))
            if kind == "ld":
                code.append(f"ld.atom.sc r{reg}, {loc}")
                reg += 1
            elif kind == "st":
                code.append(f"st.atom.sc {loc}, {v}")
            else:
                code.append(f"rmw.add.sc r{reg}, {loc}, {v}")
                reg += 1
        cols.append(code)
    wgs = [draw(st.integers(0, 1)) for _ in range(nth)]
    return render(cols, wgs, [0] * nth)


def interleavings(test) -> set[tuple]:
    """Outcomes of every interleaving of the threads (plain Python, sequential consistency)."""
    keys = test.observables()
    outs = set()
    codes = [th.code for th in test.threads]

    def go(pcs, mem, regs):
        done = True
        for t, code in enumerate(codes):
            if pcs[t] < len(code):
                done = False
                ins = code[pcs[t]]
                m, r = dict(mem), dict(regs)
                if ins.base == "ld":
                    r[f"P{t}:{ins.reg}"] = m[ins.loc]
                elif ins.base == "st":
                    m[ins.loc] = ins.args[0]
                else:
                    r[f"P{t}:{ins.reg}"] = m[ins.loc]
                    m[ins.loc] = m[ins.loc] + ins.args[0]
                go(pcs[:t] + (pcs[t] + 1,) + pcs[t + 1:], m, r)
        if done:
            full = dict(regs)
            full.update(mem)
            outs.add(tuple(full.get(k, 0) for k in keys))

    go(tuple(0 for _ in codes), {"x": 0, "y": 0}, {})
    return outs


@settings(max_examples=40, deadline=None)
@given(sc_programs())
def test_sc_atomics_allow_exactly_the_interleavings(text):
    test = litmus.parse(text)
    res = oracle.check(test)
    got = {tuple(s[k] for k in test.observables()) for s in res.states}
    assert got == interleavings(test), text


# --- engine vs. reference ---------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(programs(max_instrs=4))
def test_engine_agrees_with_reference(text):
    test = litmus.parse(text)
    res = oracle.check(test)
    ref_states, ncand, ncons = reference_check(test)
    got = {tuple(s[k] for k in test.observables()) for s in res.states}
    assert got == ref_states, text
    # bounding skips subtrees that can add no outcome, so the engine visits at most the
    # reference's consistent executions, and some exactly when the reference has some
    assert res.consistent <= ncons and (res.consistent > 0) == (ncons > 0)
    # without bounding it visits each consistent execution once (pruning partial executions and
    # choosing final-memory reads alone lose none)
    assert exhaustive_consistent(test) == ncons

"""Packed pre-executions of branching C/Vulkan programs: one :class:`~oracle.events.Table` per
combination of thread paths, built straight from the paths.

The rc11 and vulkan builders share the layout and the relations that come from the program alone;
each adds the sets and relations of its own vocabulary. A combination's events are, in order:
one initial write per location (thread -1, in declaration order), then each thread's path
(an rmw gives a read and its write), then one final-memory read per global location
(thread -1), the layout of :func:`oracle.models.path_executions.build_combination` (the Python reference,
which stays independent of this module) plus the final reads.

Each thread path is turned into a :class:`Block` once per build (several combinations share a
path): its events numbered from 0, their program order, rmw pairs and the reads before each write,
as bit rows relative to the block; a combination shifts the rows to where the block lies.
Everything stays in Python ints until the one conversion into the table's arrays (building
``Event`` objects and Python sets per event cost more than the whole search of such a test).
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from litmus.cfg import Path, unsequenced
from litmus.ir import Test

from oracle.errors import TooManyEvents
from oracle.events import (C_WSRC, MAX_EVENTS, NCOLS, REQ_EQ, REQ_NE, RMW_CODES, WORD,
                           PreExecution, Table, split_words, words)

#: the read's and the write's order of an rmw, from the instruction's order (C11 7.17.3)
RMW_READ_ORDER = {"rel": "rlx", "acq_rel": "acq"}
RMW_WRITE_ORDER = {"acq": "rlx", "acq_rel": "rel"}

#: the attribute rows below are spelled out to NCOLS columns (no tuple concatenation per row)
assert NCOLS == 12, "path_tables spells its attribute rows out to 12 columns"


class Block:
    """One thread path's events, numbered from 0 (its first event).

    ``events[j]`` = ``(kind, loc, value, order, atomic, is_rmw, index, instr)``: kind ``R W F B
    AV VIS``; value the value a read returned (None for a free read) or a write wrote (None for
    a free rmw's write: the search computes it from its read, ``free_rmw`` says the block has
    one, :func:`litmus.cfg.free_rmw_code`); order the
    access's or fence's order (None for plain accesses); index the instruction's row.
    ``op_event[k]`` is the event of the path's k-th operation (an rmw's read). ``po`` (without the
    pairs of unsequenced C operands, :func:`litmus.cfg.unsequenced`), ``rmw``,
    ``nrf`` (rows of writes: the reads po-before them) are relative bit rows; ``reads`` and
    ``writes`` relative masks; ``attrs`` the events' rows of the table (``loc_ids``: location
    name -> index); ``locs`` each event's location (None for a fence ...) and ``loc_bits`` the
    events at each location accessed, as (location, relative mask) pairs. ``memo`` holds what a
    unit derives from the block once.
    """

    __slots__ = ("tid", "k", "events", "op_event", "po", "rmw", "nrf", "reads", "writes",
                 "regs", "attrs", "locs", "loc_bits", "free_rmw",
                 "memo")

    def __init__(self, tid: int, path: Path, loc_ids: dict):
        # one pass over the operations makes the events, their table rows, the rmw pairs and
        # the reads before each write (a block per thread path, per check: kept lean)
        self.tid = tid
        events = []
        op_event = []
        rows = []
        rmw = []
        nrf = []
        locs = []
        bits: dict = {}
        reads = writes = 0
        unseq = False
        free_rmw = False
        j = 0
        for kind, index, ins, loc, rval, wval, _, _, _ in path.ops:
            bit = 1 << j
            op_event.append(j)
            if ins.attrs and not unseq:
                unseq = any(a.startswith("unseq=") for a in ins.attrs)
            if loc is not None:
                lid = loc_ids[loc]
                bits[loc] = bits.get(loc, 0) | (3 * bit if kind == "U" or kind == "UF"
                                                else bit)
            else:
                lid = -1
            if kind in ("U", "UF"):
                # an rmw: a read, then a write. "U": both values fixed by the path (the read's a
                # required value); "UF": a free rmw (litmus.cfg.free_rmw_code), a read of no fixed
                # value and a write whose value the search computes from it (wsrc: the read,
                # relative to the block until Layout.attrs shifts it; wop, wopnd: the operation
                # and its operand)
                order = ins.order
                free = kind == "UF"
                events.append(("R", loc, None if free else rval,
                               RMW_READ_ORDER.get(order, order), True, True, index, ins))
                events.append(("W", loc, None if free else wval,
                               RMW_WRITE_ORDER.get(order, order), True, True, index, ins))
                rows.append((tid, lid, 0, -1, 0, 0, REQ_EQ, rval, index, 0, 0, 0)
                            if not free and rval is not None
                            else (tid, lid, 0, -1, 0, 0, 0, 0, index, 0, 0, 0))
                rows.append((tid, lid, 0, j, RMW_CODES[ins.op], wval, 0, 0, index, 0, 0, 0)
                            if free else (tid, lid, wval, -1, 0, 0, 0, 0, index, 0, 0, 0))
                free_rmw = free_rmw or free
                locs.append(loc)
                locs.append(loc)
                reads |= bit
                writes |= bit << 1
                rmw.append(bit << 1)
                rmw.append(0)
                nrf.append(0)
                nrf.append(reads)       # a read po-before a write never reads from it
                j += 2
                continue
            locs.append(loc)
            atomic = ins.access == "atom" or ins.base in ("rmw", "cas")
            if kind == "R":
                value = rval
                reads |= bit
                nrf.append(0)
                rows.append((tid, lid, 0, -1, 0, 0, REQ_EQ, value, index, 0, 0, 0)
                            if value is not None     # the path's value: required
                            else (tid, lid, 0, -1, 0, 0, 0, 0, index, 0, 0, 0))
                order = ins.order if atomic else None
            elif kind == "W":
                value = wval
                writes |= bit
                nrf.append(reads)
                rows.append((tid, lid, value, -1, 0, 0, 0, 0, index, 0, 0, 0))
                order = ins.order if atomic else None
            else:
                value = wval
                nrf.append(0)
                rows.append((tid, lid, 0, -1, 0, 0, 0, 0, index, 0, 0, 0))
                order = ins.order if (atomic or kind in ("F", "B")) else None
            rmw.append(0)
            events.append((kind, loc, value, order, atomic, False, index, ins))
            j += 1
        k = self.k = len(events)
        self.events = events
        self.op_event = op_event
        full = (1 << k) - 1
        po = [full & ~((2 << j) - 1) for j in range(k)]
        if unseq:
            # the accesses of two operands of one C operator are unsequenced (C11 6.5p3)
            for i in range(k):
                for j in range(i + 1, k):
                    if unsequenced(events[i][7], events[j][7]):
                        po[i] &= ~(1 << j)
            # ... and a read po-before a write never reads from it only where po orders them
            for j in range(k):
                if nrf[j]:
                    nrf[j] = sum(1 << i for i in range(j) if nrf[j] >> i & 1 and po[i] >> j & 1)
        self.po = po
        self.rmw = rmw
        self.reads, self.writes, self.nrf = reads, writes, nrf
        self.regs = dict(path.regs)
        self.attrs = rows
        self.locs = locs
        self.loc_bits = list(bits.items())
        self.free_rmw = free_rmw
        self.memo = {}


class Program:
    """What every combination of one test shares: location ids, global locations, each
    thread's registers (name, outcome key, initial value), location names and initial values
    (and ``init_masks``: name -> its initial write's bit, the start of each location mask),
    the attribute rows of the initial writes and of the final reads (``final_req``: location ->
    (mode, value) required of its final read, a filter on final memory)."""

    __slots__ = ("test", "loc_ids", "globals", "registers", "loc_names", "inits", "init_attrs",
                 "final_attrs", "init_masks")

    def __init__(self, test: Test, final_req: dict | None = None):
        self.test = test
        locs = test.locations
        self.loc_ids = {loc.name: i for i, loc in enumerate(locs)}
        self.globals = [loc.name for loc in locs if not loc.lds]
        inits: list[dict] = [{} for _ in test.threads]
        for t, r, v in test.reg_init:
            inits[t].setdefault(r, v)           # (the first, as test.register_init reads it)
        self.registers = [[(r, f"P{tid}:{r}", init.get(r, 0)) for r in test.registers(tid)]
                          for tid, init in enumerate(inits)]
        self.loc_names = [loc.name for loc in locs]
        # location name -> its initial write's bit (the events are numbered from them)
        self.init_masks = {loc.name: 1 << i for i, loc in enumerate(locs)}
        self.inits = [loc.init for loc in locs]
        self.init_attrs = [(-1, i, loc.init, -1, 0, 0, 0, 0, -1, 0, 0, 0)
                           for i, loc in enumerate(locs)]
        final_req = final_req or {}
        self.final_attrs = []
        for name in self.globals:
            mode, val = final_req.get(name, (0, 0))
            self.final_attrs.append((-1, self.loc_ids[name], 0, -1, 0, 0, mode, val, -1, 0, 0, 0))

    def blocks(self, combos):
        """The combinations as blocks (one :class:`Block` per distinct thread path), lazily."""
        made: dict = {}
        loc_ids = self.loc_ids
        for combo in combos:
            row = []
            for tid, path in enumerate(combo):
                b = made.get((tid, id(path)))
                if b is None:
                    b = made[(tid, id(path))] = Block(tid, path, loc_ids)
                row.append(b)
            yield tuple(row)


class Layout:
    """Where everything of one combination lies: ``offsets[t]`` the first event of thread t's
    block, ``n0`` the events before the final reads, ``n`` all of them; ``iw`` the initial
    writes' mask, ``thread_masks[t]`` thread t's events, ``final`` global location name -> its
    final read."""

    __slots__ = ("prog", "blocks", "offsets", "nlocs", "n0", "n", "iw", "thread_masks", "final")

    def __init__(self, prog: Program, blocks: tuple[Block, ...]):
        self.prog = prog
        self.blocks = blocks
        nl = self.nlocs = len(prog.loc_names)
        offsets = []
        off = nl
        masks = []
        for b in blocks:
            offsets.append(off)
            masks.append(((1 << b.k) - 1) << off)
            off += b.k
        self.offsets = offsets
        self.thread_masks = masks
        self.n0 = off
        self.n = off + len(prog.globals)
        if self.n > MAX_EVENTS:
            raise TooManyEvents(f"program has more than {MAX_EVENTS} events (the engine's limit)")
        self.iw = (1 << nl) - 1
        self.final = {name: off + i for i, name in enumerate(prog.globals)}

    # -- rows over all events (initial writes, thread events, final reads) -----------------------
    def shifted(self, attr: str) -> list[int]:
        """A block relation (``po``, ``rmw``, ``nrf``) over the whole combination."""
        rows = [0] * self.nlocs
        for b, off in zip(self.blocks, self.offsets):
            rows.extend([r << off for r in getattr(b, attr)])
        rows.extend([0] * (self.n - self.n0))
        return rows

    def rows(self, block_sets=None, set_masks=None) -> tuple[list[int], list[int], list[int],
                                                         list[int], list[int]]:
        """``po``, ``rmw``, ``nrf`` (:meth:`shifted`), :meth:`ext` and ``loc`` (:meth:`loc_rows`)
        in one pass over the blocks (what the C builders take of the layout). With
        ``block_sets`` (a block -> its (set, relative mask) pairs) the same pass ors each
        block's sets, shifted into place, into ``set_masks`` (a list of set masks)."""
        nl = self.nlocs
        po = [0] * nl
        rmw = [0] * nl
        nrf = [0] * nl
        ext = [0] * nl
        every = ((1 << self.n0) - 1) & ~self.iw
        names = self.prog.loc_names
        masks = self.prog.init_masks.copy()
        for b, off, m in zip(self.blocks, self.offsets, self.thread_masks):
            if block_sets is not None:
                for s, rel in block_sets(b):
                    set_masks[s] |= rel << off
            k = b.k
            po += [r << off for r in b.po]
            rmw += [r << off for r in b.rmw] if b.writes & b.reads << 1 else [0] * k
            nrf += [r << off for r in b.nrf] if b.reads else [0] * k
            ext += [every & ~m] * k
            for loc, bits in b.loc_bits:
                masks[loc] |= bits << off
        final = self.final
        for name, i in final.items():
            masks[name] |= 1 << i
        loc = [masks[name] for name in names]
        for b in self.blocks:
            loc += [masks[x] if x is not None else 0 for x in b.locs]
        loc += [masks[name] for name in final]
        tail = [0] * len(final)
        po += tail
        rmw += tail
        nrf += tail
        ext += tail
        return po, rmw, nrf, ext, loc

    def ext(self) -> list[int]:
        """Pairs of events of different threads (initial writes and final reads in none)."""
        rows = [0] * self.nlocs
        every = ((1 << self.n0) - 1) & ~self.iw
        for b, m in zip(self.blocks, self.thread_masks):
            rows.extend([every & ~m] * b.k)
        rows.extend([0] * (self.n - self.n0))
        return rows

    def loc_masks(self) -> dict[str, int]:
        """Location name -> the events accessing it (its initial write and final read too)."""
        masks = self.prog.init_masks.copy()
        for b, off in zip(self.blocks, self.offsets):
            for j, ev in enumerate(b.events):
                if ev[1] is not None:
                    masks[ev[1]] |= 1 << (off + j)
        for name, i in self.final.items():
            masks[name] |= 1 << i
        return masks

    def loc_rows(self, masks: dict[str, int]) -> list[int]:
        """``loc``: pairs of events at one location (``masks`` from :meth:`loc_masks`)."""
        rows = [masks[name] for name in self.prog.loc_names]
        for b in self.blocks:
            rows.extend([masks[ev[1]] if ev[1] is not None else 0 for ev in b.events])
        rows.extend([masks[name] for name in self.final])
        return rows

    def attrs(self) -> np.ndarray:
        """The table's attribute rows (:data:`oracle.events.NCOLS` columns): a read with a value
        requires it (``REQ_EQ``)."""
        prog = self.prog
        rows = list(prog.init_attrs)
        for b in self.blocks:
            rows.extend(b.attrs)
        rows.extend(prog.final_attrs)
        # one flat pass over the values (np.array of a list of tuples walks them twice)
        out = np.fromiter(chain.from_iterable(rows), np.int64,
                          self.n * NCOLS).reshape(self.n, NCOLS)
        for b, off in zip(self.blocks, self.offsets):
            if b.free_rmw:          # a free rmw write's read, relative to its block: shift it
                col = out[off:off + b.k, C_WSRC]
                col[col >= 0] += off
        return out

    def observables(self) -> list:
        """Outcome keys: each register is the value an event read (or a constant the path
        assigned), each global the value its final read sees."""
        out = []
        for b, off, regs in zip(self.blocks, self.offsets, self.prog.registers):
            have = b.regs
            for r, key, init in regs:
                v = have.get(r, init)
                out.append((key, ("event", off + b.op_event[v[1]]) if isinstance(v, tuple)
                            else ("const", v)))
        for name, i in self.final.items():
            out.append((name, ("event", i)))
        return out

    def labels(self, other):
        """``i -> label`` for explanations, made on first use: ``W x=1``, ``R x=0`` (a read
        with its path's value), ``R x (final)``; ``other(kind, order, instr)`` labels the
        other events (fences, barriers ...)."""
        made: list = []

        def label(i: int) -> str:
            if not made:
                prog = self.prog
                made.extend(f"W {name}={init}" for name, init in zip(prog.loc_names, prog.inits))
                for b in self.blocks:
                    for kind, loc, val, order, _, _, _, ins in b.events:
                        if kind in ("R", "W"):
                            made.append(f"{kind} {loc}" + ("" if val is None else f"={val}"))
                        else:
                            made.append(other(kind, order, ins))
                made.extend(f"R {name} (final)" for name in self.final)
            return made[i]

        return label

    def pre_execution(self, attrs: np.ndarray, set_index: dict, masks: list[int],
                      rel_index: dict, rels: list[list[int]], other_label) -> PreExecution:
        """The pre-execution: the table from ``attrs``, set ``masks`` and relation rows (in the
        order of ``set_index`` / ``rel_index``), the observables and the labels."""
        n = self.n
        if n <= WORD:
            # one conversion: the masks, then the relations' rows (two contiguous views of it)
            k = len(masks)
            a = np.fromiter(chain(masks, *rels), np.uint64, k + len(rels) * n)
            m = a[:k]
            r = a[k:].reshape(len(rels), n)
        else:                   # several words per row (oracle.events: split_words)
            w = words(n)
            m = np.array([split_words(x, w) for x in masks], np.uint64)
            r = np.array([[split_words(x, w) for x in row] for row in rels],
                         np.uint64).reshape(len(rels), n, w)
        table = Table(attrs, set_index, m, rel_index, r, self.labels(other_label))
        return PreExecution(table=table, observables=self.observables(),
                            loc_names=self.prog.loc_names)


def final_requirements(atoms) -> dict:
    """Location -> (REQ_EQ | REQ_NE, value) of filter atoms on final memory."""
    return {a.name: (REQ_EQ if a.op == "==" else REQ_NE, a.value) for a in atoms}

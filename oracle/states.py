"""``Result.states``: the allowed outcomes of a test as a read-only sequence of dicts, kept as
arrays.

An allowed set can be huge: the 21-event AMDGPU shape of ``benchmarks/scaling.py`` allows
8,017,920 outcomes, the product of two independent blocks of a few thousand rows each
(:class:`oracle.search.Found`). Eight million dicts cost a minute of Python; the same set packed
into one uint64 per outcome is 64 MB and sorts in a fraction of a second. :class:`States` keeps
the set that way and builds a dict only when one is read, while behaving as the list of dicts it
replaces: the same length, items, order, equality and JSON text.

**Order** (the output contract of ``check``): column after column in the test's observables
order, each column's values ascending with undef after every value.

**Representations** (one per set, chosen when it is built):

- up to :data:`SMALL_SET` outcomes: the list of dicts itself (numpy's per-call cost would
  dominate: most litmus tests allow a handful of outcomes), made from the distinct rows (tuples)
  when first read: a verdict reads the rows (:meth:`States.concrete_rows`), and a check that
  only wants the verdict never builds the dicts;
- larger sets whose columns fit one 64-bit word: *packed keys*. Each column's value ``v`` is
  coded ``v - lo`` (``lo`` its least value; undef gets the code after its greatest), in as many
  bits as its codes need, the first observable in the most significant bits, so the keys' integer
  order is the contract's order. The product of independent blocks is the OR of their partial
  keys (disjoint bit fields): an outer product of small arrays, never the expanded rows;
- larger sets that do not fit one word: the distinct rows, an int64 array sorted with
  ``np.lexsort``.

What the harness asks of an allowed set has a path on the arrays: the verdict
(:func:`litmus.outcome.verdict` reads :meth:`States.outcome_columns`), whether an observed outcome
is allowed (:meth:`States.allows`), whether every state is undef (:attr:`States.all_undef`), and
the JSON text (:meth:`States.json`, byte-identical to ``json.dumps`` of the list).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Iterator

import numpy as np

from litmus.ir import UNDEF
from litmus.outcome import matches

from .ceiling import guard
from .events import UNDEF_VAL
from .explore import DEFINED
from .search import product_rows

#: up to this many outcomes a set is kept as its list of dicts (see the module docstring)
SMALL_SET = 2048

#: rows turned into dicts at a time when iterating a large set
CHUNK = 1 << 16

_U64 = (1 << 64) - 1

#: the largest block of states a lazy set expands at a time when streamed (:meth:`States.stream`)
STREAM_ROWS = 1 << 20

#: the slots holding a set's representations (unset in a lazy set until one is read)
_ARRAY_SLOTS = ("_dl", "_tups", "_packed", "_layout", "_rows")


class Layout:
    """Where each column's code lies in a packed key: ``shift``, ``bits``, the least value ``lo``
    (code 0) and the undef code (-1: the column has no undef)."""

    __slots__ = ("shift", "bits", "lo", "span", "undef")

    def __init__(self, shift: list[int], bits: list[int], lo: list[int], span: list[int],
                 undef: list[int]):
        self.shift, self.bits, self.lo, self.span, self.undef = shift, bits, lo, span, undef

    def __reduce__(self):
        return (Layout, (self.shift, self.bits, self.lo, self.span, self.undef))

    @classmethod
    def fit(cls, ncols: int, columns: list[list[np.ndarray]]) -> "Layout | None":
        """The layout for columns whose values are the arrays ``columns[c]`` (undef as
        ``UNDEF_VAL``), or None when their codes need more than 64 bits."""
        bits, lo, spans, undef = [], [], [], []
        for c in range(ncols):
            arrays = [a for a in columns[c] if a.size]
            has_undef = any(bool((a == UNDEF_VAL).any()) for a in arrays)
            vals = [a[a != UNDEF_VAL] for a in arrays] if has_undef else arrays
            vals = [a for a in vals if a.size]
            if vals:
                low = min(int(a.min()) for a in vals)
                high = max(int(a.max()) for a in vals)
            else:
                low = high = 0
            span = high - low + 1 if vals else 0          # codes of values
            codes = span + (1 if has_undef else 0)
            bits.append(max(codes - 1, 0).bit_length())
            lo.append(low)
            spans.append(span)
            undef.append(span if has_undef else -1)
        if sum(bits) > 64:
            return None
        shift, acc = [0] * ncols, 0
        for c in range(ncols - 1, -1, -1):
            shift[c] = acc
            acc += bits[c]
        return cls(shift, bits, lo, spans, undef)

    def encode(self, c: int, values: np.ndarray) -> np.ndarray:
        """Column ``c``'s values as uint64 codes already shifted into place."""
        code = values.astype(np.uint64) - np.uint64(self.lo[c] & _U64)    # modulo 2**64
        if self.undef[c] >= 0:
            code = np.where(values == UNDEF_VAL, np.uint64(self.undef[c]), code)
        return code << np.uint64(self.shift[c])

    def code_of(self, c: int, value) -> int | None:
        """The (unshifted) code of one value (``UNDEF`` or an int) in column ``c``, or None when
        it is outside the column's codes (so no state has it there)."""
        if value == UNDEF:
            return self.undef[c] if self.undef[c] >= 0 else None
        code = int(value) - self.lo[c]
        return code if 0 <= code < self.span[c] else None

    def decode(self, c: int, keys: np.ndarray) -> np.ndarray:
        """Column ``c`` of packed ``keys``: int64 values, undef as ``UNDEF_VAL``."""
        code = np.right_shift(keys, np.uint64(self.shift[c]))
        if self.bits[c] < 64:
            np.bitwise_and(code, np.uint64((1 << self.bits[c]) - 1), out=code)
        undef = code == np.uint64(self.undef[c]) if self.undef[c] >= 0 else None
        if self.lo[c]:
            np.add(code, np.uint64(self.lo[c] & _U64), out=code)      # modulo 2**64
        vals = code.view(np.int64)
        if undef is not None:
            vals[undef] = UNDEF_VAL
        return vals


class States(Sequence):
    """The allowed outcomes of a test, in the contract's order (see the module docstring): a
    read-only sequence of dicts (observable -> int or :data:`litmus.UNDEF`). Immutable: the result
    cache keeps it and every result of the same program shares it."""

    __slots__ = ("keys", "_dl", "_tups", "_packed", "_layout", "_rows", "_src", "_count")

    def __init__(self, keys: list[str], dicts: list[dict] | None = None, packed=None,
                 layout: Layout | None = None, rows: np.ndarray | None = None,
                 tups: set | None = None):
        self.keys = list(keys)
        self._dl = dicts
        # a small set may come as its distinct rows (tuples, undef as UNDEF_VAL, in no order):
        # the sorted dicts are made when first read (most checks only want the verdict,
        # :meth:`concrete_rows`)
        self._tups = tups
        self._packed = packed
        self._layout = layout
        self._rows = rows
        self._src = None             # a lazy set's searches (see :meth:`lazy`), else None
        self._count = None

    # -- a large set kept as the searches' products (lazy) -----------------------------------------
    @classmethod
    def lazy(cls, keys: list[str], searches: list, count: int | None = None) -> "States":
        """A large set kept as the products its searches found (``searches``: per search, its
        factors as (columns, distinct rows) pairs over disjoint columns, every column covered),
        never expanded unless an array is asked for: its size (:meth:`__len__`), the verdict's
        columns (:meth:`projection`) and its states in order (:meth:`stream`) are read from the
        factors, in memory bounded by :data:`STREAM_ROWS` rows, not by the size of the set. The
        array representations (random access, :meth:`allows`) are built on first use, within the
        memory ceiling (:func:`guard`)."""
        self = cls.__new__(cls)
        self.keys = list(keys)
        self._src = searches
        self._count = count
        return self

    def __getattr__(self, name):
        # a lazy set leaves its array slots unset: the first read of one builds them
        if name in _ARRAY_SLOTS and object.__getattribute__(self, "_src") is not None:
            self._materialize()
            return object.__getattribute__(self, name)
        raise AttributeError(name)

    @property
    def is_lazy(self) -> bool:
        """Whether the set is still kept as its searches' products (nothing expanded)."""
        try:
            object.__getattribute__(self, "_packed")
            return False
        except AttributeError:
            return self._src is not None

    def _materialize(self) -> None:
        """Build the packed keys (or sorted rows) of a lazy set, within the memory ceiling."""
        n = len(self)
        guard(n * 8 * 3, n, "expanding the allowed states into an array")
        built = States._build(self.keys, self._src)
        for name in _ARRAY_SLOTS:
            object.__setattr__(self, name, object.__getattribute__(built, name))

    def projection(self, names: list[str], limit: int = 1 << 16) -> list[dict] | None:
        """The distinct states restricted to the observables ``names`` (dicts, undef as
        :data:`litmus.UNDEF`, in no particular order), from the factors alone (the product of
        each factor's distinct restricted rows), or None when that product exceeds ``limit``.
        A condition's truth in a state depends only on the observables it names, so its verdict
        over these is its verdict over the set."""
        src = self._src
        if src is None:
            return None
        idx = [self.keys.index(k) for k in names]
        out: set = set()
        for factors in src:
            combos = [()]
            cols_in_order: list[int] = []
            for cols, rows in factors:
                sel = [j for j, c in enumerate(cols) if c in idx]
                if not sel:
                    continue
                part = np.unique(rows[:, sel], axis=0)
                if len(combos) * part.shape[0] > limit:
                    return None
                cols_in_order += [cols[j] for j in sel]
                combos = [a + tuple(b) for a in combos for b in part.tolist()]
            pos = [cols_in_order.index(c) for c in idx]
            out.update(tuple(t[p] for p in pos) for t in combos)
        return [{k: (UNDEF if v == UNDEF_VAL else v) for k, v in zip(names, t)} for t in out]

    def stream(self, rows: int | None = None) -> Iterator[np.ndarray]:
        """The states in the contract's order as int64 row blocks (undef as ``UNDEF_VAL``), at
        most about ``rows`` (:data:`STREAM_ROWS`) at a time for a lazy set: the set is split on
        its first column's values (ascending, undef last), each part on the next column while
        its product is larger, and each small part is expanded, sorted and deduplicated alone,
        so memory is bounded by the part, not the set."""
        if self._src is None or not self.is_lazy:
            for start in range(0, len(self), CHUNK):
                yield self.rows(start, start + CHUNK)
            return
        limit = STREAM_ROWS if rows is None else rows
        yield from _stream(self._src, len(self.keys), 0, limit)

    @property
    def _dicts(self) -> list[dict] | None:
        """A small set's list of dicts (made from its rows on first use), else None."""
        if self._dl is None and self._tups is not None:
            # (the rows stay: a second thread reading this meanwhile makes the same list)
            self._dl = _dicts_of(self._tups, self.keys)
        return self._dl

    def concrete_rows(self) -> tuple[dict, set] | None:
        """For :func:`litmus.outcome.verdict`: a small set kept as rows, with no undef anywhere,
        as (observable -> its index in a row, the distinct rows as tuples); else None."""
        tups = self._tups
        if tups is None or UNDEF_VAL in set().union(*tups):
            return None
        return {k: c for c, k in enumerate(self.keys)}, tups

    # -- building --------------------------------------------------------------------------------
    @classmethod
    def from_parts(cls, keys: list[str], found: list[tuple[list | None, int]]) -> "States":
        """The distinct outcomes of several searches, each ``(parts, nobs)`` as
        :class:`oracle.search.Found` gives them (columns already in ``keys`` order): the union of
        the products of their parts."""
        ncols = len(keys)
        # the common case: each search one part with every column, a few rows in all
        every = list(range(ncols))
        tups: set = set()
        total = 0                  # rows, duplicates counted
        for parts, _ in found:
            if parts is None:
                continue
            if len(parts) != 1 or parts[0][0] != every:
                break
            total += parts[0][1].shape[0]
            if total > SMALL_SET:
                break
            tups.update(map(tuple, parts[0][1].tolist()))
        else:
            return cls(keys, tups=tups)
        total = 0                  # rows of the products, duplicates counted
        for parts, _ in found:
            if parts is not None:
                total += parts[0][1].shape[0] if len(parts) == 1 else \
                    math.prod(rows.shape[0] for _, rows in parts)
        if total <= SMALL_SET or ncols == 0:
            rows = [product_rows(parts, ncols) for parts, _ in found if parts is not None]
            all_rows = rows[0] if len(rows) == 1 else np.concatenate(rows) if rows else \
                np.zeros((0, ncols), np.int64)
            return cls(keys, tups=set(map(tuple, all_rows.tolist())))
        searches = _factors(found, ncols)
        return cls.lazy(keys, searches, _size(searches) if len(searches) == 1 else None)

    @staticmethod
    def _build(keys: list[str], searches: list) -> "States":
        """The packed keys (or sorted rows) of the union of the searches' products (each a list
        of (columns, rows) factors covering every column: :func:`_factors`)."""
        ncols = len(keys)
        cls = States
        found = [(factors, ncols) for factors in searches]
        columns: list[list[np.ndarray]] = [[] for _ in range(ncols)]
        for factors in searches:
            for cols, rows in factors:
                for j, c in enumerate(cols):
                    columns[c].append(rows[:, j])
        layout = Layout.fit(ncols, columns)
        if layout is None:
            rows = np.concatenate([product_rows(parts, ncols) for parts, _ in found])
            return cls(keys, rows=_sorted_rows(rows))
        chunks = []
        for factors in searches:
            # each factor's partial keys, sorted: the outer product is then a run of sorted
            # stretches, which numpy's stable sort (a merge sort) finds and merges
            partial = []
            for cols, rows in factors:
                k = np.zeros(rows.shape[0], np.uint64)
                for j, c in enumerate(cols):
                    k |= layout.encode(c, rows[:, j])
                partial.append(np.sort(k))
            partial.sort(key=len)
            acc = partial[0]
            for p in partial[1:]:
                acc = np.bitwise_or.outer(acc, p).ravel()
            chunks.append(acc)
        packed = np.sort(np.concatenate(chunks) if len(chunks) > 1 else chunks[0], kind="stable")
        if packed.size > 1:
            keep = np.empty(packed.size, np.bool_)
            keep[0] = True
            np.not_equal(packed[1:], packed[:-1], out=keep[1:])
            if not keep.all():
                packed = packed[keep]
        return cls(keys, packed=packed, layout=layout)

    @classmethod
    def from_rows(cls, rows: np.ndarray, keys: list[str]) -> "States":
        """The distinct outcomes among int64 ``rows`` (columns in ``keys`` order)."""
        return cls.from_parts(keys, [([(list(range(len(keys))), rows)], len(keys))])

    # -- the array view ----------------------------------------------------------------------------
    @property
    def small(self) -> bool:
        """Whether the set is kept as its list of dicts or the rows it is made from (no array
        paths)."""
        return self._dl is not None or self._tups is not None

    def column(self, c: int, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Values of column ``c`` (int64, undef as ``UNDEF_VAL``) of states ``start:stop``."""
        if self._packed is not None:
            return self._layout.decode(c, self._packed[start:stop])
        if self._rows is not None:
            return self._rows[start:stop, c]
        return np.array([_int(s[self.keys[c]]) for s in self._dicts[start:stop]], np.int64)

    def rows(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """States ``start:stop`` as an int64 array (undef as ``UNDEF_VAL``)."""
        if self._rows is not None:
            return self._rows[start:stop]
        n = len(range(*slice(start, stop).indices(len(self))))
        out = np.empty((n, len(self.keys)), np.int64)
        for c in range(len(self.keys)):
            out[:, c] = self.column(c, start, stop)
        return out

    @property
    def outcome_columns(self):
        """For :func:`litmus.outcome.verdict`: None for a small set (the dicts are there: iterate
        them), else a function of observable names giving (observable -> its column, the undef
        value), or None when a name is not an observable."""
        return None if self.small else self._outcome_columns

    def _outcome_columns(self, names) -> tuple[dict, int] | None:
        if any(k not in self.keys for k in names):
            return None
        return {k: self.column(self.keys.index(k)) for k in names}, UNDEF_VAL

    # -- the sequence -------------------------------------------------------------------------------
    def __len__(self) -> int:
        if self._src is not None:
            if self._count is None:
                self._count = _count(self._src, len(self.keys))
            return self._count
        if self._dl is not None:
            return len(self._dl)
        if self._tups is not None:
            return len(self._tups)
        return (self._packed if self._packed is not None else self._rows).shape[0]

    def _dict(self, row: list) -> dict:
        return {k: (UNDEF if v == UNDEF_VAL else v) for k, v in zip(self.keys, row)}

    def __getitem__(self, i):
        if self._dicts is not None:
            return self._dicts[i]
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step == 1:
                return [self._dict(r) for r in self.rows(start, max(start, stop)).tolist()]
            return [self[j] for j in range(start, stop, step)]
        i = int(i.__index__())
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("States index out of range")
        return self._dict(self.rows(i, i + 1).tolist()[0])

    def __iter__(self) -> Iterator[dict]:
        return iter(self._dicts) if self._dicts is not None else self._chunks()

    def _chunks(self) -> Iterator[dict]:
        for block in self.stream():
            for r in block.tolist():
                yield self._dict(r)

    def __contains__(self, item) -> bool:
        if self._dicts is not None:
            return item in self._dicts
        if not isinstance(item, dict) or len(item) != len(self.keys) or \
                any(k not in item for k in self.keys):
            return False
        vals = [item[k] for k in self.keys]
        if any(v != UNDEF and not isinstance(v, (int, np.integer)) for v in vals):
            return any(s == item for s in self)
        if self._packed is not None:
            return self._has_key(vals)
        if any(v != UNDEF and not -(1 << 63) <= int(v) < (1 << 63) for v in vals):
            return False
        row = np.array([_int(v) for v in vals], np.int64)
        return bool((self._rows == row).all(axis=1).any())

    def __eq__(self, other) -> bool:
        if isinstance(other, States):
            if len(self) != len(other):
                return False
            if self.keys == other.keys and self._dicts is None and other._dicts is None:
                for start in range(0, len(self), CHUNK):
                    if not np.array_equal(self.rows(start, start + CHUNK),
                                          other.rows(start, start + CHUNK)):
                        return False
                return True
        elif isinstance(other, list):
            if len(self) != len(other):
                return False
        else:
            return NotImplemented
        return all(a == b for a, b in zip(self, other))

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None     # a list of dicts is not hashable either

    def __repr__(self) -> str:
        n = len(self)
        if n <= 8:
            return f"States({list(self)!r})"
        head = ", ".join(repr(s) for s in self[:3])
        return f"States([{head}, ... {n - 4:,} more ..., {self[-1]!r}] ({n:,} states))"

    def __reduce__(self):
        if self._src is not None and self.is_lazy:
            return (States.lazy, (self.keys, self._src, self._count))
        return (States, (self.keys, self._dicts, self._packed, self._layout, self._rows))

    # -- what the harness asks ---------------------------------------------------------------------
    @property
    def all_undef(self) -> bool:
        """Every value of every state undef (true of no state at all)."""
        if self._src is not None and self.is_lazy and len(self) > 1:
            return False                # two distinct states: some value is not undef
        if self._dicts is not None:
            return all(v == UNDEF for s in self._dicts for v in s.values())
        # the states are distinct: a large set has two, so some value is not undef
        return len(self) == 0 or (len(self) == 1 and all(
            v == UNDEF for v in self[0].values()))

    def allows(self, outcome: dict, absent: str = "free") -> bool:
        """Does some state match ``outcome`` (observable -> int; undef in a state matches any
        value)? An observable ``outcome`` leaves out is any value (``absent="free"``, as an outcome
        query reads it: :func:`matches_free`) or matches only undef (``absent="undef"``:
        :func:`litmus.outcome.matches`, what ``Result.allows`` has always used)."""
        if self._src is not None and self.is_lazy:
            if absent == "free" and any(k not in self.keys for k in outcome):
                raise KeyError(next(k for k in outcome if k not in self.keys))
            got = _lazy_allows(self._src, self.keys, outcome, absent)
            if got is not None:
                return got
        if self._dicts is not None:
            return any(self._dict_match(s, outcome, absent) for s in self._dicts)
        if absent == "free" and len(self) and any(k not in self.keys for k in outcome):
            raise KeyError(next(k for k in outcome if k not in self.keys))
        if self._packed is not None and all(u < 0 for u in self._layout.undef) and \
                all(isinstance(outcome.get(k), (int, np.integer)) and outcome[k] != DEFINED
                    for k in self.keys):
            # no undef anywhere and every observable given: one key, a binary search
            return self._has_key([outcome[k] for k in self.keys])
        mask = self._where(outcome, absent)
        return mask is not None and bool(mask.any())

    def _has_key(self, vals: list) -> bool:
        """Whether the packed keys hold the state with these values (ints or UNDEF) in keys
        order."""
        key = 0
        for c, v in enumerate(vals):
            code = self._layout.code_of(c, v)
            if code is None:
                return False
            key |= code << self._layout.shift[c]
        i = int(np.searchsorted(self._packed, np.uint64(key)))
        return i < len(self._packed) and int(self._packed[i]) == key

    def allows_many(self, outcomes: list, absent: str = "free") -> list[bool]:
        return [self.allows(o, absent) for o in outcomes]

    def count_matched(self, outcomes: list, absent: str = "undef") -> int:
        """How many states some outcome of ``outcomes`` matches (as :meth:`allows` matches)."""
        if self._dicts is not None:
            return sum(1 for s in self._dicts if any(self._dict_match(s, o, absent)
                                                    for o in outcomes))
        hit = np.zeros(len(self), np.bool_)
        for o in outcomes:
            mask = self._where(o, absent)
            if mask is not None:
                hit |= mask
        return int(hit.sum())

    @staticmethod
    def _dict_match(state: dict, outcome: dict, absent: str) -> bool:
        """One state against ``outcome`` (see :meth:`allows`)."""
        return matches(state, outcome) if absent == "undef" else matches_free(state, outcome)

    def _where(self, outcome: dict, absent: str):
        """Per state, whether it matches ``outcome`` (see :meth:`allows`); None: none does."""
        mask = None
        for c, k in enumerate(self.keys):
            if k in outcome:
                v = outcome[k]
                if not isinstance(v, (int, np.integer)):
                    return self._where_slow(outcome, absent)
            elif absent == "free":
                continue
            else:
                v = None                          # only undef matches an absent observable
            if v is not None and v == DEFINED:    # any value but undef
                if self._packed is not None:
                    if self._layout.undef[c] < 0:     # no state is undef there
                        continue
                    ok = self._field(c) != np.uint64(self._layout.undef[c])
                else:
                    ok = self._rows[:, c] != UNDEF_VAL
                mask = ok if mask is None else mask & ok
                if not mask.any():
                    return None
                continue
            if self._packed is not None:
                lay = self._layout
                code = None if v is None else lay.code_of(c, v)
                if code is None and lay.undef[c] < 0:
                    return None                   # no state has the value (nor undef) there
                if lay.bits[c] == 0:              # one code, every state has it: undef or code
                    continue
                field = self._field(c)
                ok = None if lay.undef[c] < 0 else field == np.uint64(lay.undef[c])
                if code is not None:
                    eq = field == np.uint64(code)
                    ok = eq if ok is None else ok | eq
            else:
                col = self._rows[:, c]
                ok = col == UNDEF_VAL
                if v is not None and -(1 << 63) <= int(v) < (1 << 63):
                    ok |= col == int(v)
            mask = ok if mask is None else mask & ok
            if not mask.any():
                return None
        return np.ones(len(self), np.bool_) if mask is None else mask

    def _field(self, c: int) -> np.ndarray:
        """Column ``c``'s codes (unshifted) in every packed key."""
        lay = self._layout
        return (self._packed >> np.uint64(lay.shift[c])) & np.uint64((1 << lay.bits[c]) - 1)

    def _where_slow(self, outcome: dict, absent: str):
        hits = [self._dict_match(s, outcome, absent) for s in self]
        return np.array(hits, np.bool_)

    def json(self) -> str:
        """``json.dumps(list(self))``, byte for byte, without building the dicts."""
        return "".join(self.json_pieces())

    def json_pieces(self) -> Iterator[str]:
        """:meth:`json`'s text in pieces (one per block of states: :meth:`stream`), so that a
        caller can write a large set out without holding its text."""
        if self._src is None and (self._dicts is not None or len(self) == 0):
            yield json.dumps(list(self))
            return
        # one %-template per state (the keys' JSON text fixed), an undef value as its JSON text
        template = "{" + ", ".join(json.dumps(k) + ": %s" for k in self.keys) + "}"
        yield "["
        first = True
        for big in self.stream():
            for start in range(0, big.shape[0], CHUNK):
                block = big[start:start + CHUNK]
                values = block.astype(object)
                values[block == UNDEF_VAL] = json.dumps(UNDEF)
                yield ("" if first else ", ") + ", ".join([template % tuple(r)
                                                           for r in values.tolist()])
                first = False
        yield "]"


def _factors(found: list, ncols: int) -> list:
    """Each search's factors (``(columns, rows)`` pairs, columns in keys order), a column in no
    part being the constant 0; searches with no outcome left out."""
    searches = []
    for parts, _ in found:
        if parts is None or any(rows.shape[0] == 0 for _, rows in parts):
            continue
        # (each factor's rows made distinct: the product's size is then its count)
        factors = [(list(cols), _distinct(rows)) for cols, rows in parts if cols]
        covered = {c for cols, _ in factors for c in cols}
        rest = [c for c in range(ncols) if c not in covered]
        if rest:
            factors.append((rest, np.zeros((1, len(rest)), np.int64)))
        searches.append(factors)
    return searches


#: :func:`_lazy_allows`: an observable only undef matches
_ONLY_UNDEF = object()


def _lazy_allows(searches: list, keys: list[str], outcome: dict, absent: str) -> bool | None:
    """:meth:`States.allows` of a lazy set from its factors: a state of a product matches when
    each factor has a row matching on its columns (matching is column by column), so some search
    must have every factor matching; None when a value is not an int (the general path)."""
    want = []
    for k in keys:
        if k in outcome:
            v = outcome[k]
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                return None
            want.append(int(v))
        else:
            want.append(None if absent == "free" else _ONLY_UNDEF)      # None: any value
    for factors in searches:
        for cols, rows in factors:
            ok = np.ones(rows.shape[0], np.bool_)
            for j, c in enumerate(cols):
                v = want[c]
                if v is None:
                    continue
                col = rows[:, j]
                if v == DEFINED:
                    ok &= col != UNDEF_VAL
                elif v is _ONLY_UNDEF:        # an absent observable: only undef matches
                    ok &= col == UNDEF_VAL
                elif -(1 << 63) <= v < (1 << 63):
                    ok &= (col == UNDEF_VAL) | (col == v)
                else:
                    ok &= col == UNDEF_VAL
            if not ok.any():
                break
        else:
            return True
    return False


def _distinct(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of ``rows`` (the array itself when they are)."""
    if rows.shape[0] < 2:
        return rows
    d = np.unique(rows, axis=0)
    return rows if d.shape[0] == rows.shape[0] else d


def _size(searches: list) -> int:
    """Rows of the searches' products, duplicates across searches counted."""
    return sum(math.prod(rows.shape[0] for _, rows in f) for f in searches)


def _count(searches: list, ncols: int) -> int:
    """The distinct states of the searches' products: their product size for one search (each
    factor's rows are distinct, over disjoint columns), else counted block by block."""
    if len(searches) <= 1:
        return _size(searches)
    return sum(block.shape[0] for block in _stream(searches, ncols, 0, STREAM_ROWS))


def _stream(searches: list, ncols: int, c: int, limit: int) -> Iterator[np.ndarray]:
    """:meth:`States.stream` of the searches' products from column ``c`` on (every state of
    ``searches`` has the same values before ``c``)."""
    total = _size(searches)
    if total == 0:
        return
    if total <= limit or c >= ncols:
        guard(total * (8 * 3 + 8 * ncols), total, "a block of the states")
        yield States._build([str(i) for i in range(ncols)], searches).rows()
        return
    where = []              # per search: its factor holding column c, and the column there
    values: set = set()
    for f in searches:
        i = next(i for i, (cols, _) in enumerate(f) if c in cols)
        j = f[i][0].index(c)
        where.append((i, j))
        values.update(np.unique(f[i][1][:, j]).tolist())
    for v in sorted(values, key=lambda v: (v == UNDEF_VAL, v)):
        sub = []
        for f, (i, j) in zip(searches, where):
            cols, rows = f[i]
            keep = rows[rows[:, j] == v]
            if keep.shape[0]:
                sub.append(f[:i] + [(cols, keep)] + f[i + 1:])
        yield from _stream(sub, ncols, c + 1, limit)


def matches_free(state: dict, outcome: dict) -> bool:
    """Whether an allowed state matches an asked outcome (an outcome query's reading: an
    observable the outcome leaves out is free): undef in the state matches any value, but not
    ``DEFINED`` (any value but undef, :data:`oracle.explore.DEFINED`)."""
    return all(state[k] != UNDEF if v == DEFINED else state[k] == UNDEF or state[k] == v
               for k, v in outcome.items())


def _int(v) -> int:
    return UNDEF_VAL if v == UNDEF else int(v)


def _dicts_of(tups: set, keys: list[str]) -> list[dict]:
    """Distinct rows (tuples) in the contract's order as dicts, sorted as Python tuples."""
    if UNDEF_VAL not in set().union(*tups):
        return [dict(zip(keys, t)) for t in sorted(tups)]
    return [{k: (UNDEF if v == UNDEF_VAL else v) for k, v in zip(keys, t)}
            for t in sorted(tups, key=lambda t: [(v == UNDEF_VAL, v) for v in t])]


def _sorted_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct ``rows`` in the contract's order (columns that do not pack into one word)."""
    undef = rows == UNDEF_VAL
    # np.lexsort's last key is the primary one: per column, undef or not, then the value
    sort_keys = []
    for c in range(rows.shape[1] - 1, -1, -1):
        sort_keys += [rows[:, c], undef[:, c]]
    rows = rows[np.lexsort(sort_keys)] if sort_keys else rows
    if rows.shape[0] > 1:
        keep = np.ones(rows.shape[0], np.bool_)
        keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        rows = rows[keep]
    return np.ascontiguousarray(rows)


def dumps(obj) -> str:
    """``json.dumps(obj)`` where a :class:`States` anywhere in dicts and lists is written as the
    list it stands for (:meth:`States.json`)."""
    return "".join(dump_pieces(obj))


def dump_pieces(obj) -> Iterator[str]:
    """:func:`dumps`'s text in pieces, a large :class:`States` block by block
    (:meth:`States.json_pieces`): ``check --json`` writes them as they come, so the text of a
    set of millions of states is never held whole."""
    if isinstance(obj, States):
        yield from obj.json_pieces()
    elif isinstance(obj, dict) and any(_holds_states(v) for v in obj.values()):
        yield "{"
        for i, (k, v) in enumerate(obj.items()):
            yield (", " if i else "") + json.dumps(str(k)) + ": "
            yield from dump_pieces(v)
        yield "}"
    elif isinstance(obj, list) and any(_holds_states(v) for v in obj):
        yield "["
        for i, v in enumerate(obj):
            if i:
                yield ", "
            yield from dump_pieces(v)
        yield "]"
    else:
        yield json.dumps(obj)


def _holds_states(obj) -> bool:
    if isinstance(obj, States):
        return True
    if isinstance(obj, dict):
        return any(_holds_states(v) for v in obj.values())
    if isinstance(obj, list):
        return any(_holds_states(v) for v in obj)
    return False

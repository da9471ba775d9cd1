"""What a campaign exercised: instruction kinds and scope pairs.

*Kinds* are :attr:`litmus.Instr.kind` labels (``ld.atom``, ``st.av``, ``fence``, ``bar.wait`` ...).
A *scope pair* is the unordered pair of scopes of two scoped operations (atomics, fences, ``ld.vis``,
``st.av``) in two different threads: the combinations whose inclusion rules a memory model and its
lowering can get wrong. The denominators are :data:`fuzz.strategies.ALL_KINDS` and
:data:`fuzz.strategies.ALL_SCOPE_PAIRS`.
"""

from __future__ import annotations

from litmus import Test

from .strategies import ALL_KINDS, ALL_SCOPE_PAIRS
from litmus.scopes import SCOPE_RANK


def kinds(test: Test) -> list[str]:
    return sorted({ins.kind for _, _, ins in test.instructions()})


def scope_pairs(test: Test) -> list[str]:
    per_thread: list[set[str]] = []
    for th in test.threads:
        per_thread.append({ins.scope for ins in th.code if ins.scope is not None})
    pairs = set()
    for a in range(len(per_thread)):
        for b in range(a + 1, len(per_thread)):
            for sa in per_thread[a]:
                for sb in per_thread[b]:
                    lo, hi = sorted((sa, sb), key=SCOPE_RANK.__getitem__)
                    pairs.add(f"{lo}/{hi}")
    return sorted(pairs)


class Coverage:
    """Counts of kinds and scope pairs seen so far."""

    def __init__(self):
        self.kinds: dict[str, int] = {}
        self.pairs: dict[str, int] = {}

    def add(self, kind_list, pair_list) -> None:
        for k in kind_list:
            self.kinds[k] = self.kinds.get(k, 0) + 1
        for p in pair_list:
            self.pairs[p] = self.pairs.get(p, 0) + 1

    def summary(self) -> str:
        return (f"kinds {len(self.kinds)}/{len(ALL_KINDS)} "
                f"scope pairs {len(self.pairs)}/{len(ALL_SCOPE_PAIRS)}")


class ComboTally:
    """Counts of kinds and scope pairs gathered a program's whole lists at a time (reading a
    journal: ``report`` and ``--resume``).

    A campaign draws the same combinations of kinds (and of pairs) over and over, so counting each
    combination (one dictionary update per program) and spreading the combinations over the single
    kinds and pairs at :meth:`flush` costs a fraction of one update per kind. At most
    :data:`COMBOS` combinations are held before they are spread, so memory stays bounded whatever
    the journal holds. ``kinds`` and ``pairs`` are the dictionaries (or Counters) the counts go to;
    lists that are not lists (no journal writes them) go to ``fallback(kind_list, pair_list)``, the
    caller's own per-item counting, so the totals are the same as without the tally.
    """

    COMBOS = 4096

    def __init__(self, kinds: dict, pairs: dict, fallback):
        self.kinds, self.pairs, self.fallback = kinds, pairs, fallback
        self.combos: dict[tuple, int] = {}

    def add(self, kind_list, pair_list) -> None:
        if type(kind_list) is not list or type(pair_list) is not list:
            try:
                self.fallback(kind_list, pair_list)
            except TypeError:       # not lists of names (a hand-edited line): not counted
                pass
            return
        key = (tuple(kind_list), tuple(pair_list))
        c = self.combos
        try:
            c[key] = c.get(key, 0) + 1
        except TypeError:           # unhashable items (a hand-edited line): not counted
            return
        if len(c) > self.COMBOS:
            self.flush()

    def flush(self) -> None:
        """Spread the combinations counted so far over ``kinds`` and ``pairs``."""
        kinds, pairs = self.kinds, self.pairs
        for (ks, ps), n in self.combos.items():
            for k in ks:
                kinds[k] = kinds.get(k, 0) + n
            for x in ps:
                pairs[x] = pairs.get(x, 0) + n
        self.combos = {}

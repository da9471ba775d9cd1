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

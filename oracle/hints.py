"""The search hints: sets and relations a builder may give the engine besides the model's
vocabulary, telling the candidate search (:mod:`oracle.pack`, :func:`oracle.engine.search`) what
holds in every consistent execution so that it can skip candidates without running the model.

A model unit declares the hints its builder gives (:class:`oracle.registry.ModelUnit`
``hints``); the engine reads those and no others, so a builder providing a set of the same name
for the model's own use changes nothing unless the unit declares it. Every hint must be sound
for the unit's model: a hint that is not true of every consistent execution drops allowed
outcomes. The search itself always reads the sets ``R`` (the reads: each gets a source write)
and ``W`` (the writes), and the relation ``rmw`` (read -> write of one rmw) where present.

Each entry: name -> (kind, meaning).
"""

HINTS: dict[str, tuple[str, str]] = {
    "CO": ("set", "the writes co orders, one total order per location; writes outside CO are in "
                  "no co pair"),
    "IW": ("set", "the initial write of each location: first in co"),
    "UndefOK": ("set", "reads that may read undef (no write): undef is one of their candidates; "
                       "other reads always read a write"),
    "Indep": ("set", "reads that are sinks of every relation in a consistent execution (e.g. "
                     "final-memory reads): the search chooses each one's source alone"),
    "CoLast": ("set", "final-memory reads that read the co-last write of their location in every "
                      "consistent execution: the search gives them that write once the "
                      "location's co order is complete instead of trying every write (only "
                      "where every write of the location is in CO)"),
    "nrf": ("relation", "(W, R) pairs that no consistent execution uses as rf: never candidates"),
    "CohR": ("set", "coherent reads: the rf edge into such a read and the fr edges out of it "
                    "(to the writes co-after its source) join co in eco = (rf | co | fr)+, over "
                    "the pairs in incl; a cycle cohord ; eco+ makes a candidate inconsistent, and "
                    "so does, for an rmw read, a write co-between its source and its own write"),
    "CohA": ("set", "accesses whose rf edges among themselves are coherent (as CohR) when the "
                    "two events are related by incl"),
    "CohRmw": ("set", "rmw reads whose own write may not be co-before the write they read"),
    "cohord": ("relation", "a static order that every coherence order respects: a cycle "
                           "cohord ; eco+ makes a candidate inconsistent (e.g. program order)"),
    "incl": ("relation", "the pairs coherence relates (e.g. scope-inclusive pairs); without "
                         "it, every pair"),
}

#: the hints the search's per-location coherence pruning reads
COHERENCE_HINTS = frozenset({"CohR", "CohA", "CohRmw"})

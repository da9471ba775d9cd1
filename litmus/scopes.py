"""The AMDGPU scope hierarchy and scope instances (LITMUS.md "Placement").

Scopes, narrowest first: thread (LLVM singlethread) < wave < wg < cluster < agent < sys.
A thread's *placement* names its agent, cluster, workgroup and wave; its scope instance at scope S
is the tuple of ids down to S. Two operations have *inclusive scopes* when each one's thread lies in
the other's scope instance (seed amdgpu-memory-model, "Inclusive Scopes").
"""

from __future__ import annotations

from dataclasses import dataclass

#: Scope keywords of the AMDGPU dialect, narrowest first.
SCOPES: tuple[str, ...] = ("thread", "wave", "wg", "cluster", "agent", "sys")

#: Rank of each scope keyword (0 = narrowest).
SCOPE_RANK: dict[str, int] = {s: i for i, s in enumerate(SCOPES)}

#: Placement levels in the order they are printed.
LEVELS: tuple[str, ...] = ("wave", "wg", "cluster", "agent")


@dataclass(frozen=True)
class Placement:
    """Where a thread sits in the scope tree.

    ``wg``/``wave`` are ``None`` when left out of the file: the thread then has a workgroup (or a
    wave) of its own. ``cluster`` and ``agent`` default to 0. Ids are hierarchical: ``wave`` is an id
    inside the workgroup, ``wg`` inside the cluster, ``cluster`` inside the agent.
    """

    wave: int | None = None
    wg: int | None = None
    cluster: int = 0
    agent: int = 0

    def is_default(self) -> bool:
        return self == Placement()


def instance(placement: Placement, tid: int, scope: str) -> tuple:
    """The scope instance of thread ``tid`` (placed at ``placement``) at ``scope``.

    Instances are hashable tuples; two threads are in the same instance iff the tuples are equal.
    A left-out workgroup or wave becomes a private id ``("own", tid)``.
    """
    rank = SCOPE_RANK[scope]
    if rank == SCOPE_RANK["sys"]:
        return ()
    agent = (placement.agent,)
    if rank == SCOPE_RANK["agent"]:
        return agent
    cluster = agent + (placement.cluster,)
    if rank == SCOPE_RANK["cluster"]:
        return cluster
    wg = cluster + ((("own", tid) if placement.wg is None else placement.wg),)
    if rank == SCOPE_RANK["wg"]:
        return wg
    wave = wg + ((("own", tid) if placement.wave is None or placement.wg is None
                  else placement.wave),)
    if rank == SCOPE_RANK["wave"]:
        return wave
    return wave + (("thread", tid),)


def contains(placement_x: Placement, tid_x: int, scope_x: str,
             placement_t: Placement, tid_t: int) -> bool:
    """Does X's instance of ``scope_x`` contain thread ``tid_t``?"""
    return instance(placement_x, tid_x, scope_x) == instance(placement_t, tid_t, scope_x)


def inclusive(placement_a: Placement, tid_a: int, scope_a: str,
              placement_b: Placement, tid_b: int, scope_b: str) -> bool:
    """Inclusive scopes: A's instance contains B's thread and B's instance contains A's thread."""
    return (contains(placement_a, tid_a, scope_a, placement_b, tid_b)
            and contains(placement_b, tid_b, scope_b, placement_a, tid_a))


def narrower(a: str, b: str) -> str:
    """The narrower of two scope keywords."""
    return a if SCOPE_RANK[a] <= SCOPE_RANK[b] else b


def wider(a: str, b: str) -> str:
    """The wider of two scope keywords."""
    return a if SCOPE_RANK[a] >= SCOPE_RANK[b] else b

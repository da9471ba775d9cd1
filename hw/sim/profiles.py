"""Target profiles of the simulator (notes llvm-amdgpu.md §4, §4.5) and the backend-name syntax.

A profile fixes what the lowering emits (which counters exist, which cache operations a
scope needs, whether ``s_barrier`` needs the memory waits) and how the machine is laid out
(one L1 per workgroup's CU, or one per wave in tgsplit mode). Options:

- ``tgsplit``: the waves of a workgroup may run on different CUs (GFX90A/GFX942 only; no LDS);
- ``mtype=RW|NC|UC|CC``: the memory type of every global location (default RW);
- ``wavecnt``: vector-memory waits count the wave's own operations only (the hardware counters
  are per wave); without it a ``vmcnt(0)``-style wait also waits for the CU's other waves.

Backend names: ``sim`` (default profile gfx942), ``sim:PROFILE``, ``sim:MUTANT``,
``sim:MUTANT@PROFILE``, and comma-separated options after either: ``sim:gfx90a,tgsplit``,
``sim:nc-rel-no-wbl2@gfx90a,mtype=NC``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .uops import CNT_ASYNC, CNT_LOAD, CNT_STORE, CNT_VM, MTYPES


@dataclass(frozen=True)
class Profile:
    """A target profile: family ``gfx9`` (vmcnt covers loads and stores; L1 invalidate
    ``buffer_wbinvl1_vol``/``buffer_inv sc0``; L2 ``buffer_wbl2``/``buffer_invl2``) or ``gfx12``
    (separate loadcnt/storecnt/dscnt, ``global_inv``/``global_wb``)."""

    name: str
    family: str
    backoff_barrier: bool = True
    async_counter: int = CNT_VM
    tgsplit: bool = False
    mtype: str = "RW"
    wavecnt: bool = False
    doc: str = ""

    @property
    def load_counter(self) -> int:
        return CNT_VM if self.family == "gfx9" else CNT_LOAD

    @property
    def store_counter(self) -> int:
        return CNT_VM if self.family == "gfx9" else CNT_STORE

    def label(self) -> str:
        opts = [self.name] + (["tgsplit"] if self.tgsplit else [])
        if self.mtype != "RW":
            opts.append(f"mtype={self.mtype}")
        if self.wavecnt:
            opts.append("wavecnt")
        return ",".join(opts)


PROFILES: dict[str, Profile] = {
    "gfx908": Profile("gfx908", "gfx9", backoff_barrier=False,
                      doc="GFX9 without BackOffBarrier: s_barrier needs vmcnt(0) lgkmcnt(0) "
                          "before it; a workgroup release fence right before it is merged "
                          "into those waits"),
    "gfx90a": Profile("gfx90a", "gfx9",
                      doc="GFX90A: per-CU L1 (buffer_wbinvl1_vol), glc for agent/system, "
                          "buffer_wbl2/buffer_invl2 at system scope"),
    "gfx942": Profile("gfx942", "gfx9",
                      doc="GFX942: sc0/sc1 scope bits, buffer_inv sc0/sc1, buffer_wbl2 sc0 sc1 "
                          "(the default profile)"),
    "gfx12": Profile("gfx12", "gfx12", async_counter=CNT_LOAD,
                     doc="GFX12 (CU mode): SCOPE_* fields, s_wait_loadcnt/storecnt/dscnt, "
                         "global_inv, global_wb at system scope"),
    "gfx1250": Profile("gfx1250", "gfx12", async_counter=CNT_ASYNC,
                       doc="GFX1250: as GFX12 plus s_wait_asynccnt for async LDS DMA, "
                           "cluster scope SCOPE_SE, named and cluster barriers"),
}

DEFAULT_PROFILE = "gfx942"


def with_options(profile: Profile, options: list[str]) -> Profile:
    """Apply ``tgsplit`` / ``mtype=X`` options; raises ValueError on anything else."""
    for opt in options:
        if opt == "tgsplit":
            if profile.family != "gfx9":
                raise ValueError(f"tgsplit mode exists on gfx90a/gfx942-like profiles, "
                                 f"not {profile.name}")
            profile = replace(profile, tgsplit=True)
        elif opt.startswith("mtype="):
            mt = opt.split("=", 1)[1].upper()
            if mt not in MTYPES:
                raise ValueError(f"unknown memory type {mt!r} (RW, NC, UC, CC)")
            profile = replace(profile, mtype=mt)
        elif opt == "wavecnt":
            profile = replace(profile, wavecnt=True)
        elif opt:
            raise ValueError(f"unknown simulator option {opt!r} "
                             f"(tgsplit, mtype=RW|NC|UC|CC, wavecnt)")
    return profile

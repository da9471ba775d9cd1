"""The gfx targets of the ``isa`` backend and the backend-name syntax (DESIGN.md "Backends").

A :class:`Target` says how clang-22 is asked to compile for it and how its machine code maps
onto the simulator: the instruction family (which counters and cache bits exist), the wave
size, whether a workgroup may span several vector L0/L1 caches (WGP mode on GFX10+, tgsplit on
GFX90A/GFX942), and which simulator profile provides the machine layout and the hand lowering
the cross-check compares with.

Backend names: ``isa:TARGET``, ``isa:TARGET,OPTION...``, ``isa:TARGET:MUTANT`` and options after
either part (``isa:gfx942:drop-wbl2,mtype=NC``). Options:

- ``tgsplit`` (gfx90a, gfx942, gfx950): compile with ``-mtgsplit``; every wave has its own L1;
- ``cumode`` (gfx1100, gfx1200): compile with ``-mcumode`` (a workgroup on one CU; the default
  is clang's WGP mode, where the waves of a workgroup may use the two CUs' L0 caches);
- ``wave64`` (gfx1100, gfx1200, gfx1250): compile with ``-mwavefrontsize64``;
- ``mtype=RW|NC|UC|CC``: the memory type of the test's global locations in the simulator;
- ``noscalar``: compile with ``-mllvm -amdgpu-scalarize-global-loads=false`` (no ``s_load``
  of test memory: the workaround for the noclobber bug of docs/isa.md, used by the mutants so
  that the planted bug is not masked by the real one);
- ``O0``: compile with ``-O0`` instead of ``-O2``;
- ``cuwait``: every ``s_waitcnt`` on a vector-memory counter with count 0 also waits for the
  earlier operations of the other waves of the CU (the simulator's default for the hand lowering,
  ``sim:``). Without it (the default here) the counters are per wave, as AMDGPUUsage describes the
  hardware ("completion is reported to a wavefront in execution order"; docs/sim.md
  "Per-wave counters"): compiled code is judged on the machine it will run on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..backend import BackendError
from ..sim.uops import MTYPES


@dataclass(frozen=True)
class Target:
    """One gfx target and the options of a backend name."""

    name: str
    family: str            # "gfx9" | "gfx11" | "gfx12" (instruction set generation)
    profile: str           # simulator profile for the layout and the hand lowering
    wave_size: int
    wgp_default: bool      # clang's default: a workgroup may use two CUs' L0s (GFX10+ WGP mode)
    doc: str = ""
    tgsplit: bool = False
    cumode: bool = False
    wave64: bool = False
    mtype: str = "RW"
    noscalar: bool = False
    opt: str = "-O2"
    cuwait: bool = False   # CU-wide vector-memory waits (the simulator option wavecnt off)
    options: tuple[str, ...] = field(default=())

    @property
    def wgp(self) -> bool:
        """Whether the waves of one workgroup may sit on different vector caches."""
        return self.wgp_default and not self.cumode

    @property
    def split_wg(self) -> bool:
        """Each wave of a workgroup gets its own vector L0/L1 in the simulator (tgsplit, WGP)."""
        return self.tgsplit or self.wgp

    @property
    def waves(self) -> int:
        return 64 if self.wave64 else self.wave_size

    def clang_flags(self) -> list[str]:
        flags = [self.opt]
        if self.tgsplit:
            flags.append("-mtgsplit")
        if self.cumode:
            flags.append("-mcumode")
        if self.wave64:
            flags.append("-mwavefrontsize64")
        if self.noscalar:
            flags += ["-mllvm", "-amdgpu-scalarize-global-loads=false"]
        return flags

    def capabilities(self) -> frozenset[str]:
        """What clang-22 can express for this target (hw.backend.CAPABILITIES; the refusals of
        :func:`hw.isa.source.refusal`, declared per target). Never: ``av`` (no
        __builtin_amdgcn_av_load/store in LLVM 22), ``noav`` (no way to attach the amdgcn-av
        MMRA from OpenCL C), ``asyncmark`` (no __builtin_amdgcn_asyncmark), ``named-barriers``
        (OpenCL C cannot declare barrier objects)."""
        caps = set()
        if not self.tgsplit:
            caps.add("lds")
            if self.family == "gfx9" or self.name == "gfx1250":
                caps.add("lds-dma")
        if self.family == "gfx12":
            caps.add("split-barriers")
            if self.name == "gfx1250":
                caps.add("cluster-barrier")
        if self.opt != "-O0":
            caps.update(("cas", "lanes"))    # -O0: lanes of a wave share stack accesses
        if self.waves == 64:
            caps.add("wave64")
        if self.tgsplit:
            caps.add("tgsplit")
        return frozenset(caps)

    def label(self) -> str:
        return ",".join([self.name, *self.options])


TARGETS: dict[str, Target] = {t.name: t for t in [
    Target("gfx90a", "gfx9", "gfx90a", 64, False,
           "MI200: glc/slc bits, buffer_wbinvl1_vol, buffer_wbl2/buffer_invl2 at system scope"),
    Target("gfx942", "gfx9", "gfx942", 64, False,
           "MI300: sc0/sc1/nt bits, buffer_inv sc0/sc1, buffer_wbl2 sc1 / sc0 sc1"),
    Target("gfx950", "gfx9", "gfx942", 64, False,
           "MI350: the GFX942 memory model (sc0/sc1/nt)"),
    Target("gfx1100", "gfx11", "gfx12", 32, True,
           "RDNA3: glc/slc/dlc bits, buffer_gl0_inv/buffer_gl1_inv, vmcnt + vscnt counters"),
    Target("gfx1200", "gfx12", "gfx12", 32, True,
           "RDNA4: th:/scope: fields, global_inv/global_wb, s_wait_loadcnt/storecnt/dscnt"),
    Target("gfx1250", "gfx12", "gfx1250", 32, False,
           "GFX12.5: as GFX12 plus s_wait_asynccnt, xcnt, cluster scope SCOPE_SE, named/cluster "
           "barriers; a workgroup shares one WGP cache"),
]}

OPTIONS_HELP = "tgsplit, cumode, wave64, mtype=RW|NC|UC|CC, noscalar, O0, cuwait"


def with_options(target: Target, options: list[str]) -> Target:
    """Apply backend-name options; raises BackendError naming a bad one."""
    for opt in options:
        if opt == "tgsplit":
            if target.family != "gfx9":
                raise BackendError(f"tgsplit exists on gfx90a/gfx942/gfx950, not {target.name}")
            target = replace(target, tgsplit=True)
        elif opt == "cumode":
            if not target.wgp_default:
                raise BackendError(f"cumode applies to gfx1100/gfx1200 (WGP-mode targets), "
                                   f"not {target.name}")
            target = replace(target, cumode=True)
        elif opt == "wave64":
            if target.family == "gfx9":
                raise BackendError(f"{target.name} always runs wave64")
            target = replace(target, wave64=True)
        elif opt.startswith("mtype="):
            mt = opt.split("=", 1)[1].upper()
            if mt not in MTYPES:
                raise BackendError(f"unknown memory type {mt!r} (RW, NC, UC, CC)")
            target = replace(target, mtype=mt)
            opt = f"mtype={mt}"
        elif opt == "noscalar":
            target = replace(target, noscalar=True)
        elif opt == "O0":
            target = replace(target, opt="-O0")
        elif opt == "cuwait":
            target = replace(target, cuwait=True)
        else:
            raise BackendError(f"unknown isa option {opt!r} ({OPTIONS_HELP})")
        if opt not in target.options:
            target = replace(target, options=target.options + (opt,))
    return target


def parse_spec(spec: str | None, mutants) -> tuple[Target, str | None]:
    """``TARGET[,OPT...][:MUTANT[,OPT...]]`` -> (target with options, mutant or None).

    ``mutants`` maps mutant names to objects with an ``options`` tuple (their default options,
    overridden by options of the same kind given in the name)."""
    if not spec:
        raise BackendError(f"isa needs a target: isa:TARGET ({', '.join(TARGETS)})")
    head, _, tail = spec.partition(":")
    tokens = head.split(",")
    name, options = tokens[0], [t for t in tokens[1:] if t]
    mutant = None
    if tail:
        mtokens = tail.split(",")
        mutant = mtokens[0]
        options += [t for t in mtokens[1:] if t]
        if mutant not in mutants:
            raise BackendError(f"unknown isa mutant {mutant!r} (known: {', '.join(mutants)})")
    if name not in TARGETS:
        raise BackendError(f"unknown isa target {name!r} (known: {', '.join(TARGETS)})")
    if mutant is not None:
        given = {o.split("=")[0] for o in options}
        options = [d for d in mutants[mutant].options if d.split("=")[0] not in given] + options
    return with_options(TARGETS[name], options), mutant

"""The ``opencl`` backend: run a litmus test as a parallel-testing kernel on an OpenCL device.

One launch runs ``testing_wgs * wg_size`` instances of the test (:mod:`hw.layout`), each
with its own copy of every location (location ``k`` of instance ``i`` lives at
``(k * NI + (i * perm) mod NI) * stride``, ``perm`` a fresh random multiplier coprime with NI per
launch), optional memory-stress workgroups and pre-stress, and optionally shuffled workgroup ids.
Registers come back through ``out``, final values from the location buffer; outcomes are counted
with numpy (a dense mixed-radix code and ``bincount``/``unique``), never per instance in Python.

Built programs are cached per (device, options, source) within the process. A launch that does
not finish within ``timeout_s`` is reported as a hang (:class:`~hw.backend.BackendError`) and the
device is marked unusable for this process (a stuck kernel cannot be cancelled through OpenCL).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from litmus import Test

from ..backend import Backend, BackendError, Histogram
from . import devices as _devices
from .codegen import EMITTERS, KERNEL_LANGUAGES, Kernel, barrier_problem, generate, languages_for
from .emit_ptx import PTX_SCOPE
from ..layout import check_shape, role_table

ENV_PARAMS = "SCOPEFUZZ_OPENCL_PARAMS"


@dataclass(frozen=True)
class Params:
    """Parallel-testing parameters (recorded in every Histogram.params)."""

    wg_size: int = 256          # work-items per workgroup (raised to fit the test's waves)
    testing_wgs: int = 256      # testing workgroups per launch (instances = testing_wgs * wg_size)
    stress_wgs: int = 0         # extra memory-stress workgroups per launch
    stress_iters: int = 256     # iterations of each stress work-item
    stress_lines: int = 64      # scratch lines (64 bytes each) hammered by stress
    pre_stress_iters: int = 0   # scratch accesses each testing work-item makes before the test
    shuffle: bool = False       # shuffle workgroup ids per launch
    sync_spins: int = 0         # bounded spin lining up each block's workgroups before the test
    rendezvous_spins: int = 0   # the first workgroup's longer spin (other device threads waking up)
    block_stride: int = 1       # workgroups between members of a block (64 matches PoCL's chunks)
    lane_shuffle: bool = False  # permute lanes inside each wave chunk (MC Mutants permute_id)
    stride: int = 1             # ints between consecutive instances' copies of a location
    wave_size: int = 0          # lanes per wave for placement; 0: the device's (AMD) or 32
    timeout_s: float = 60.0     # watchdog per launch
    in_flight: int = 3          # launches queued ahead while the host counts
    kernel_language: str = ""   # "" picks amdgcn on ROCm GPUs, ptx on NVIDIA GPUs, cl3 elsewhere


#: Defaults for CPU devices (PoCL): small workgroups, blocks matching PoCL's 64-workgroup chunks,
#: a short spin lining up the two threads' workgroups (measured with benchmarks/bench_opencl.py).
CPU_PARAMS = Params(wg_size=64, testing_wgs=512, block_stride=64, sync_spins=5000,
                    rendezvous_spins=2_000_000)
#: Defaults for GPUs: MC Mutants-like launches of neighbouring workgroups.
GPU_PARAMS = Params(wg_size=256, testing_wgs=256, block_stride=1, sync_spins=0)


def default_kernel_language(platform: str, gpu: bool) -> str:
    """The kernel language for a device: the one whose emitter declares the GPU's platform
    (``PLATFORM``): ``amdgcn`` on ROCm GPUs, ``ptx`` on NVIDIA GPUs (OpenCL C 1.2 there: inline
    PTX is the only way to scoped atomics, and the device runs PTX tests); ``cl3`` elsewhere."""
    if gpu:
        for name, em in EMITTERS.items():
            if em.PLATFORM and em.PLATFORM in platform:
                return name
    return "cl3"


#: parameter names of earlier releases, still read (``dialect=ptx`` is ``kernel_language=ptx``)
OLD_PARAM_NAMES = {"dialect": "kernel_language"}


def params_from_env(base: Params | None = None) -> Params:
    """Override parameters from ``SCOPEFUZZ_OPENCL_PARAMS="wg_size=128,shuffle=1"``."""
    p = base or Params()
    text = os.environ.get(ENV_PARAMS, "").strip()
    if not text:
        return p
    types = {f.name: f.type for f in fields(Params)}
    changes = {}
    for item in text.split(","):
        k, _, v = item.partition("=")
        k = OLD_PARAM_NAMES.get(k.strip(), k.strip())
        if k not in types:
            raise BackendError(f"{ENV_PARAMS}: unknown parameter {k!r} (known: {', '.join(types)})")
        t = types[k]
        try:
            if t in ("bool", bool):
                changes[k] = v.strip().lower() in ("1", "true", "yes", "on")
            elif t in ("int", int):
                changes[k] = int(v)
            elif t in ("float", float):
                changes[k] = float(v)
            else:
                changes[k] = v.strip()
        except ValueError:
            raise BackendError(f"{ENV_PARAMS}: bad value {v!r} for {k}") from None
    return replace(p, **changes)


# --- process-wide caches: contexts per device, programs per source -------------------------------
_CONTEXTS: dict = {}
_PROGRAMS: dict = {}
_ROLE_TABLES: dict = {}
_WEDGED: dict = {}


def _context(pi: int, di: int, device):
    import pyopencl as cl
    key = (pi, di)
    if key not in _CONTEXTS:
        ctx = cl.Context([device])
        _CONTEXTS[key] = (ctx, cl.CommandQueue(ctx))
    return _CONTEXTS[key]


def _first_line(text: str, limit: int = 200) -> str:
    for line in str(text).splitlines():
        if "error" in line.lower():
            return line.strip()[:limit]
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return (lines[0] if lines else "unknown error")[:limit]


def count_rows(rows: np.ndarray) -> dict[tuple[int, ...], int]:
    """Count identical rows of an (n, k) int array; returns {row tuple: count}.

    Fast path (litmus values are small): one min/max over the whole array, a mixed-radix code
    per row with a common base, ``np.bincount``. Otherwise per-column spans and ``np.unique``.
    """
    n, k = rows.shape
    if n == 0:
        return {}
    if k == 0:
        return {(): n}
    lo, hi = int(rows.min()), int(rows.max())
    base = hi - lo + 1
    if base ** k <= (1 << 22):
        code = np.zeros(n, dtype=np.int64)
        for j in range(k):
            code *= base
            code += rows[:, j]
        code -= lo * sum(base ** (k - 1 - j) for j in range(k))
        counts = np.bincount(code)
        codes = np.flatnonzero(counts)
        out = {}
        for c, m in zip(codes.tolist(), counts[codes].tolist()):
            digits = []
            for _ in range(k):
                c, d = divmod(c, base)
                digits.append(d + lo)
            out[tuple(reversed(digits))] = m
        return out
    rows = rows.astype(np.int64, copy=False)
    mins = rows.min(axis=0)
    spans = rows.max(axis=0) - mins + 1
    total = 1
    for s_ in spans.tolist():
        total *= int(s_)
    if total < (1 << 62):
        mult = np.ones(k, dtype=np.int64)
        for j in range(k - 2, -1, -1):
            mult[j] = mult[j + 1] * spans[j + 1]
        code = (rows - mins) @ mult
        codes, counts = np.unique(code, return_counts=True)
        digits = np.empty((len(codes), k), dtype=np.int64)
        rest = codes.copy()
        for j in range(k):
            digits[:, j] = rest // mult[j]
            rest = rest % mult[j]
        digits += mins
        return {tuple(d): int(c) for d, c in zip(digits.tolist(), counts.tolist())}
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    return {tuple(u): int(c) for u, c in zip(uniq.tolist(), counts.tolist())}


def _coprime(rng: np.random.Generator, n: int) -> int:
    if n <= 2:
        return 1
    while True:
        p = int(rng.integers(1, n))
        if math.gcd(p, n) == 1:
            return p


class OpenCLBackend(Backend):
    """Runs tests on one OpenCL device (``opencl`` / ``opencl:P:D``)."""

    def __init__(self, spec: str | None = None, params: Params | None = None,
                 weaken: str | None = None):
        import pyopencl as cl
        self.cl = cl
        self.spec = spec
        self.platform, self.device, self.pi, self.di = _devices.select(spec)
        self.name = "opencl" + (f":{spec}" if spec else "")
        if params is None:
            params = CPU_PARAMS if self.device.type & cl.device_type.CPU else GPU_PARAMS
        self.params = params_from_env(params)
        self.weaken = weaken
        self.ctx, self.queue = _context(self.pi, self.di, self.device)
        language = self.params.kernel_language
        if not language:
            language = default_kernel_language(self.platform.name,
                                               bool(self.device.type & cl.device_type.GPU))
        if language not in KERNEL_LANGUAGES:
            raise BackendError(f"unknown OpenCL kernel language {language!r} (known: "
                               f"{', '.join(KERNEL_LANGUAGES)})")
        #: the kernel language of its kernels (cl3, amdgcn, ptx: ``codegen --dialect``)
        self.kernel_language = language
        #: the test dialects its kernels lower (PTX tests on NVIDIA GPUs, AMDGPU tests elsewhere);
        #: ``run`` checks PTX tests against their default model, ``ptx``
        self.dialects = EMITTERS[language].READS
        self.wave_size = self.params.wave_size or self._device_wave_size()
        self.options = self._build_options()

    # -- device facts ---------------------------------------------------------------------------
    def _device_wave_size(self) -> int:
        try:
            w = int(self.device.wavefront_width_amd)
            if w > 0:
                return w
        except Exception:
            pass
        return 32

    def why_not(self, dialect: str) -> str:
        langs = languages_for(dialect)
        if not langs:
            return (f"the {self.kernel_language} kernels lower {'/'.join(self.dialects)} tests, "
                    f"not {dialect}")
        where = [f"an {EMITTERS[n].PLATFORM} GPU platform" for n in langs if EMITTERS[n].PLATFORM]
        return (f"{dialect} tests need the {' or '.join(langs)} kernel language "
                f"({', '.join(where + [f'or {ENV_PARAMS}=kernel_language={langs[0]}'])}); "
                f"this device uses {self.kernel_language}")

    def _build_options(self) -> list[str]:
        if self.kernel_language == "amdgcn":
            return ["-cl-std=CL2.0"]
        if self.kernel_language == "ptx":
            return ["-cl-std=CL1.2"]          # NVIDIA's OpenCL C; the kernel's atomics are PTX
        versions = []
        try:
            versions = [v.version for v in self.device.opencl_c_all_versions]
        except Exception:
            pass
        v3 = (3 << 22)
        if any(v >= v3 for v in versions) or "OpenCL 3." in self.device.version:
            return ["-cl-std=CL3.0"]
        return ["-cl-std=CL2.0"]

    def scope_map(self) -> dict[str, str]:
        """What the cl3 kernel's scopes become on this device (from its OpenCL C features)."""
        feats = set()
        try:
            feats = {f.name for f in self.device.opencl_c_features}
        except Exception:
            pass
        sys_scope = ("all_svm_devices" if "__opencl_c_atomic_scope_all_devices" in feats
                     else "device")
        if self.kernel_language == "amdgcn":
            return {s: s for s in ("thread", "wave", "wg", "cluster", "agent", "sys")}
        if self.kernel_language == "ptx":
            return dict(PTX_SCOPE)
        return {"thread": "work_group", "wave": "work_group", "wg": "work_group",
                "cluster": "device", "agent": "device", "sys": sys_scope}

    def describe(self) -> str:
        return (f"{self.name}: {self.device.name.strip()} on {self.platform.name.strip()} "
                f"({self.kernel_language})")

    # -- build ----------------------------------------------------------------------------------
    def kernel_for(self, test: Test) -> Kernel:
        return generate(test, self.kernel_language, self.weaken)

    def program(self, source: str):
        cl = self.cl
        key = (self.pi, self.di, tuple(self.options), source)
        prog = _PROGRAMS.get(key)
        if prog is None:
            try:
                built = cl.Program(self.ctx, source).build(options=self.options)
            except cl.RuntimeError as e:
                raise BackendError(f"kernel build failed: {_first_line(str(e))}") from None
            except cl.Error as e:
                raise BackendError(f"kernel build failed: {_first_line(str(e))}") from None
            prog = (built, cl.Kernel(built, "litmus"))
            _PROGRAMS[key] = prog
        return prog

    def prepare(self, tests) -> int:
        """Build the kernels of many tests as one program: one compiler start-up (seconds on
        PoCL) instead of one per test. Tests that cannot be lowered are left to :meth:`run`,
        which reports them; a failing batch falls back to per-test builds. Returns the number of
        kernels built."""
        cl = self.cl
        sources = []
        for t in tests:
            try:
                src = self.kernel_for(t).source
            except BackendError:
                continue
            key = (self.pi, self.di, tuple(self.options), src)
            if key not in _PROGRAMS and src not in sources:
                sources.append(src)
        if not sources:
            return 0
        sig = "__kernel void litmus("
        renamed = [src.replace(sig, f"__kernel void litmus_b{i}(", 1) for i, src in enumerate(sources)]
        try:
            built = cl.Program(self.ctx, "\n".join(renamed)).build(options=self.options)
        except (cl.RuntimeError, cl.Error):
            return 0
        for i, src in enumerate(sources):
            _PROGRAMS[(self.pi, self.di, tuple(self.options), src)] = (built, cl.Kernel(built, f"litmus_b{i}"))
        return len(sources)

    # -- run ------------------------------------------------------------------------------------
    def run(self, test: Test, iterations: int, seed: int = 0) -> Histogram:
        if (self.pi, self.di) in _WEDGED:
            raise BackendError(f"device unusable after an earlier hang ({_WEDGED[(self.pi, self.di)]})")
        if iterations <= 0:
            raise BackendError(f"iterations must be positive, got {iterations}")
        problem = barrier_problem(test)
        if problem:
            raise BackendError(f"cannot honour barriers: {problem}")
        kernel = self.kernel_for(test)          # CodegenError is a BackendError
        _, knl = self.program(kernel.source)
        try:
            return self._run(test, kernel, knl, iterations, seed)
        except self.cl.Error as e:
            raise BackendError(f"device error: {_first_line(str(e))}") from None

    def _shape(self, kernel: Kernel, iterations: int) -> tuple[int, int, int, int]:
        """(workgroup size, testing workgroups, wave size, block stride) for this run."""
        p, lay = self.params, kernel.layout
        W = self.wave_size
        L = max(p.wg_size, lay.max_waves * W)
        L = -(-L // W) * W
        if L > self.device.max_work_group_size:
            raise BackendError(f"test needs a workgroup of {L} work-items; device allows "
                               f"{self.device.max_work_group_size}")
        G = lay.n_wg_roles
        n_wgs = max(1, min(p.testing_wgs, -(-iterations // L)))
        S = max(1, min(p.block_stride, -(-n_wgs // G)))
        n_wgs = -(-n_wgs // (G * S)) * G * S
        problem = check_shape(lay, n_wgs, L, W)
        if problem:
            raise BackendError(problem)
        lds_bytes = 4 * len(kernel.lds) * G * L
        if lds_bytes > self.device.local_mem_size:
            raise BackendError(f"test needs {lds_bytes} bytes of local memory per workgroup; "
                               f"device has {self.device.local_mem_size}")
        return L, n_wgs, W, S

    def _run(self, test: Test, kernel: Kernel, knl, iterations: int, seed: int) -> Histogram:
        cl, p, q = self.cl, self.params, self.queue
        start = time.perf_counter()
        L, n_wgs, W, S = self._shape(kernel, iterations)
        NI = n_wgs * L
        T = kernel.layout.n_threads
        NG, NR, NL = len(kernel.globals), len(kernel.registers), len(kernel.lds)
        stride = max(1, p.stride)
        rng = np.random.default_rng(seed)
        mf = cl.mem_flags

        lane_mult = 1
        tables = {}
        def table(mult):
            key = (kernel.layout, n_wgs, L, W, mult, S)
            if key not in _ROLE_TABLES:
                if len(_ROLE_TABLES) > 64:
                    _ROLE_TABLES.clear()
                _ROLE_TABLES[key] = role_table(kernel.layout, n_wgs, L, W, mult, S)
            if mult not in tables:
                tables[mult] = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                         hostbuf=_ROLE_TABLES[key])
            return tables[mult]

        mem_words = max(1, NG * NI * stride)
        template = np.zeros(mem_words, dtype=np.int32)
        for k, name in enumerate(kernel.globals):
            template[k * NI * stride:(k + 1) * NI * stride] = test.location(name).init
        mem_init = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=template)
        launches = -(-iterations // NI)
        depth = max(1, min(p.in_flight, launches))
        # one set of buffers per launch in flight: the device works on the next launches while
        # the host counts this one (and PoCL's threads stay awake between launches)
        slots = []
        for _ in range(depth):
            out_host = np.empty(max(1, NI * NR), dtype=np.int32)
            mem_host = np.empty(mem_words, dtype=np.int32)
            slots.append({"mem": cl.Buffer(self.ctx, mf.READ_WRITE, template.nbytes),
                          "out": cl.Buffer(self.ctx, mf.READ_WRITE, out_host.nbytes),
                          "out_host": out_host, "mem_host": mem_host})
        total_wgs = n_wgs + max(0, p.stress_wgs)
        stress_lines = max(1, p.stress_lines)
        scratch = cl.Buffer(self.ctx, mf.READ_WRITE, stress_lines * 16 * 4)
        cl.enqueue_fill_buffer(q, scratch, np.int32(0), 0, stress_lines * 16 * 4)
        G = kernel.layout.n_wg_roles
        n_blocks = n_wgs // G
        sync = cl.Buffer(self.ctx, mf.READ_WRITE, 4 * n_blocks)
        ids = np.arange(total_wgs, dtype=np.uint32)
        wg_ids = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ids)
        lds = cl.LocalMemory(max(4, 4 * NL * kernel.layout.n_wg_roles * L))
        inst = np.arange(NI, dtype=np.int64)
        # a few location permutations per run; their gather indices are computed once each
        perms = [_coprime(rng, NI) for _ in range(8)]
        gathers: dict = {}

        hist = Histogram(test.observables())
        remaining = iterations
        pending: list = []          # launches in flight, oldest first

        def enqueue(launch: int) -> None:
            nonlocal lane_mult
            slot = slots[launch % depth]
            perm = perms[int(rng.integers(0, len(perms)))]
            if p.lane_shuffle and W > 1:
                lane_mult = int(rng.integers(0, W // 2)) * 2 + 1
            if p.shuffle:
                rng.shuffle(ids)
                slot["ids"] = ids.copy()           # kept alive until the copy has run
                cl.enqueue_copy(q, wg_ids, slot["ids"], is_blocking=False)
            cl.enqueue_copy(q, slot["mem"], mem_init)
            if p.sync_spins:
                cl.enqueue_fill_buffer(q, sync, np.int32(0), 0, 4 * n_blocks)
            knl.set_args(slot["mem"], slot["out"], table(lane_mult), wg_ids, scratch, sync, lds,
                         np.uint32(L), np.uint32(NI), np.uint32(n_wgs), np.uint32(perm),
                         np.uint32(stride), np.uint32(p.stress_iters), np.uint32(stress_lines),
                         np.uint32(p.pre_stress_iters), np.uint32(p.sync_spins),
                         np.uint32(S), np.uint32(min(G, self.device.max_compute_units)),
                         np.uint32(max(p.rendezvous_spins, p.sync_spins)))
            ev = cl.enqueue_nd_range_kernel(q, knl, (total_wgs * L,), (L,))
            reads = []
            if NR:
                reads.append(cl.enqueue_copy(q, slot["out_host"], slot["out"], is_blocking=False))
            if NG:
                reads.append(cl.enqueue_copy(q, slot["mem_host"], slot["mem"], is_blocking=False))
            q.flush()
            pending.append((slot, perm, ev, reads))

        next_launch = 0
        while next_launch < min(depth, launches):
            enqueue(next_launch)
            next_launch += 1
        while pending:
            slot, perm, ev, reads = pending.pop(0)
            self._watch(ev, test)
            for r in reads:
                r.wait()
            take = min(NI, remaining)
            remaining -= take
            cols = []
            if NR:
                cols.append(slot["out_host"][:NI * NR].reshape(NI, NR)[:take])
            if NG:
                if perm not in gathers:
                    order = (inst * perm) % NI
                    gathers[perm] = (np.arange(NG, dtype=np.int64)[None, :] * NI
                                     + order[:, None]) * stride
                cols.append(slot["mem_host"][gathers[perm][:take]])
            rows = np.concatenate(cols, axis=1) if cols else np.zeros((take, 0), np.int32)
            counts = count_rows(rows)
            if next_launch < launches:        # the slot's data is copied out: reuse it
                enqueue(next_launch)
                next_launch += 1
            for outcome, n in counts.items():
                hist.add(outcome, n)
        hist.seconds = time.perf_counter() - start
        hist.params = {
            "backend": self.name, "device": self.device.name.strip(),
            "platform": self.platform.name.strip(), "kernel_language": self.kernel_language,
            "build_options": " ".join(self.options), "weaken": self.weaken,
            "seed": seed, "launches": launches, "instances_per_launch": NI,
            "wg_size": L, "testing_wgs": n_wgs, "wave_size": W, "block_stride": S, "phases": kernel.phases,
            "scope_map": self.scope_map(),
            **{k: v for k, v in asdict(p).items() if k not in ("wg_size", "testing_wgs", "wave_size",
                                                              "kernel_language",
                                                              "block_stride")},
        }
        return hist

    def _watch(self, ev, test: Test) -> None:
        """Wait for a launch, polling its status; a launch past the timeout is a hang."""
        cl = self.cl
        deadline = time.monotonic() + self.params.timeout_s
        delay = 2e-5
        while True:
            status = ev.command_execution_status
            if status == cl.command_execution_status.COMPLETE:
                return
            if status < 0:
                raise BackendError(f"kernel of {test.name} failed on the device (status {status})")
            if time.monotonic() > deadline:
                reason = f"kernel of {test.name} hung for more than {self.params.timeout_s:g} s"
                _WEDGED[(self.pi, self.di)] = reason
                raise BackendError(reason)
            time.sleep(delay)
            delay = min(delay * 2, 5e-3)

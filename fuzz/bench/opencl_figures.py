"""``scopefuzz bench`` section ``opencl``: instances per second of the parallel testing runner.

Measures ``Backend.run`` end to end (launches, read-back, numpy counting; kernel build excluded by a
warm-up run) on the default device for a 2-thread test (SB with relaxed atomics across
workgroups) and a 4-thread test (IRIW with relaxed atomics, four workgroups). The target from the
brief is about 5 million instances/s (the MC Mutants GPU median) on this 2-core CPU.
"""

from __future__ import annotations

import time

import litmus
import oracle
from hw import BackendError

from ..compare import compare

SB = """AMDGPU bench-SB
{ x = 0; y = 0; }
 P0@wg 0              | P1@wg 1              ;
 st.atom.agent x, 1   | st.atom.agent y, 1   ;
 ld.atom.agent r0, y  | ld.atom.agent r0, x  ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""

IRIW = """AMDGPU bench-IRIW
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             | P2@wg 2             | P3@wg 3             ;
 st.atom.agent x, 1  | ld.atom.agent r0, x | st.atom.agent y, 1  | ld.atom.agent r0, y ;
                     | ld.atom.agent r1, y |                     | ld.atom.agent r1, x ;
exists (P1:r0 == 1 /\\ P1:r1 == 0 /\\ P3:r0 == 1 /\\ P3:r1 == 0)
"""


def measure(backend, text: str, instances: int, seed: int = 1) -> tuple[float, int, object, int]:
    """(instances/s, instances run, histogram, instances showing the test's condition) for one
    test after a warm-up run."""
    test = litmus.parse(text)
    backend.run(test, 1000, seed)                 # build + first launch outside the timing
    t0 = time.perf_counter()
    hist = backend.run(test, instances, seed)
    dt = time.perf_counter() - t0
    weak = compare(oracle.check(test), hist, test.condition).witnesses
    return hist.total / dt, hist.total, hist, weak


def run(args) -> list[tuple[str, object, str]]:
    from hw.opencl.runner import OpenCLBackend
    quick = args.quick
    n = 2_000_000 if quick else 10_000_000
    try:
        backend = OpenCLBackend(None)
    except BackendError as e:
        return [(f"no OpenCL device: {e}", 0, "")]
    out = [(f"device: {backend.device.name.strip()} ({backend.kernel_language})", "", "")]
    for label, text in (("2 threads (SB, 2 workgroups)", SB), ("4 threads (IRIW, 4 workgroups)", IRIW)):
        rate, total, hist, weak = measure(backend, text, n)
        p = hist.params
        out.append((f"{label}: instances/s", rate, f"({total:,} instances, "
                    f"{p['instances_per_launch']:,}/launch, wg {p['wg_size']})"))
        out.append((f"{label}: weak outcome (condition) seen", weak, "instances"))
    # the CPU layout choice: the same SB run with neighbouring workgroups and no alignment spin
    if backend.params.block_stride > 1:
        from dataclasses import replace
        plain = OpenCLBackend(None, replace(backend.params, block_stride=1, sync_spins=0))
        rate, total, _, weak = measure(plain, SB, n)
        out.append(("SB with neighbouring workgroups, no spin: instances/s", rate, ""))
        out.append(("SB with neighbouring workgroups, no spin: weak outcome seen", weak,
                    f"of {total:,} instances"))
    return out

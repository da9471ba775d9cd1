"""How the simulator's numba threads wait: passively (``OMP_WAIT_POLICY=PASSIVE``).

:func:`hw.sim.kernel.run_random` runs its chunks in a numba ``prange`` on the OpenMP threading layer
(libgomp). By default libgomp's idle threads spin after each parallel region, and the region's end
spins waiting for a thread the OS has descheduled. A campaign has one short parallel region per
program (1,000 iterations) and does the rest (oracle, generation, journal) in Python on the main
thread, so the spare thread spun on the second core most of the time, taking it from whatever else
wanted it (another worker, an xdist worker, other processes). On the shared 2-core machine (load
about 7) one campaign process with two threads did 63 programs/s (113 per CPU-second) by default
and 177 (473 per CPU-second) with passive waiting (threads sleep on a futex and are woken once per
region, a few microseconds).

libgomp reads the policy once, when numba's threading layer starts: at the first parallel kernel,
or at the first ``numba.get_num_threads``/``set_num_threads``. :func:`wait_passively` must run
before either: importing :mod:`hw.sim` calls it, and so does anything that sets numba's thread
count (``fuzz.workers.numba_thread_limit``). A value the user set is kept.
"""

from __future__ import annotations

import os


def wait_passively() -> None:
    """Make libgomp's idle threads sleep instead of spin, unless ``OMP_WAIT_POLICY`` is set."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

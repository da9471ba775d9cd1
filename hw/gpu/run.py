"""Running a harness on an NVIDIA GPU through CuPy and counting the outcomes (an optional extra).

CuPy is imported lazily, inside :func:`unavailable` and :class:`GpuRunner`, so nothing of
scopefuzz imports it and a machine without a GPU never needs it. The harness PTX
(:mod:`hw.gpu.harness`) is loaded with ``cupy.RawModule(path=...)`` (``cuModuleLoad``: the
driver assembles the PTX for the device it runs on) and launched ``launches`` times, each with a
fresh placement (:mod:`hw.gpu.place`): location words set to the test's initial values,
``out`` poisoned, the kernel launched, both buffers read back, every instance's outcome counted.
The result is a :class:`hw.Histogram` over the keys of :func:`hw.gpu.place.keys`.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

from ..backend import BackendError, Histogram
from . import place as gpu_place
from .harness import ENTRY


def unavailable() -> str | None:
    """None when CuPy can launch on a CUDA GPU here, else one line saying why not."""
    try:
        import cupy  # noqa: PLC0415 (optional, lazy)
    except Exception as e:             # noqa: BLE001 (ImportError or a broken CUDA install)
        return f"CuPy is not importable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:             # noqa: BLE001 (no driver, no device)
        return f"no CUDA device ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    if n < 1:
        return "no CUDA device"
    return None


def device_name() -> str:
    import cupy  # noqa: PLC0415
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def multiprocessors() -> int:
    """The device's SM count (``cudaDeviceProp.multiProcessorCount``)."""
    import cupy  # noqa: PLC0415
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return int(props["multiProcessorCount"])


class GpuRunner:
    """One harness loaded on the current device; :meth:`run` launches it and counts outcomes."""

    def __init__(self, harness_ptx: str):
        import cupy  # noqa: PLC0415
        self.cp = cupy
        fd, path = tempfile.mkstemp(prefix="scopefuzz-gpu-", suffix=".ptx")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(harness_ptx)
            try:
                self.module = cupy.RawModule(path=path)
                self.kernel = self.module.get_function(ENTRY)
            except Exception as e:     # noqa: BLE001 (the driver's JIT refused the PTX)
                raise BackendError(f"the driver did not load the harness: "
                                   f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") \
                    from None
        finally:
            os.unlink(path)

    def run(self, layout, inits: list[int], loc_idx: list[int], keys: list[str],
            launches: int, blocks: int, threads: int, seed: int, stress_iters: int = 64,
            testing: float = 0.5, stride: int = 16,
            seconds: float | None = None) -> tuple[Histogram, int]:
        """(histogram over ``keys``, instances with an unwritten out word) over ``launches``
        launches, or fewer when ``seconds`` runs out (at least one launch). ``inits``: each
        location's initial value; ``loc_idx``: the locations whose final values are observed."""
        cp = self.cp
        hist = Histogram(list(keys), params={"blocks": blocks, "threads": threads, "seed": seed,
                                             "stress_iters": stress_iters, "testing": testing,
                                             "stride": stride})
        rng = np.random.default_rng(seed)
        nlocs = len(inits)
        init = np.array(inits, dtype=np.int32)
        scratch = cp.zeros(8 * 32 + 64, dtype=cp.int32)
        bad = 0
        t0 = time.monotonic()
        for n in range(launches):
            pl = gpu_place.place(layout, nlocs, blocks, threads, rng, testing=testing,
                                 stride=stride, iters=stress_iters)
            locs_h = np.zeros(pl.loc_words, dtype=np.int32)
            if nlocs:
                locs_h[pl.loc_word] = init[None, :]
            locs = cp.asarray(locs_h)
            out = cp.full(pl.out_words, gpu_place.POISON, dtype=cp.int32)
            rec = cp.asarray(pl.records.ravel())
            args = tuple([locs] * nlocs + [out, rec, scratch])
            try:
                self.kernel((blocks,), (threads,), args)
                cp.cuda.runtime.deviceSynchronize()
            except Exception as e:     # noqa: BLE001 (a launch failure: one line)
                raise BackendError(f"launch failed: "
                                   f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") \
                    from None
            rows, unwritten = gpu_place.outcomes(layout, pl, cp.asnumpy(out), cp.asnumpy(locs),
                                                 list(loc_idx))
            bad += unwritten
            for key, cnt in _count(rows).items():
                hist.add(key, cnt)
            if seconds is not None and time.monotonic() - t0 >= seconds:
                break
        hist.seconds = time.monotonic() - t0
        hist.params["launches"] = n + 1
        return hist, bad


def _count(rows: np.ndarray) -> dict[tuple[int, ...], int]:
    if rows.shape[1] == 0:
        return {(): rows.shape[0]} if rows.shape[0] else {}
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    return {tuple(int(v) for v in u): int(c) for u, c in zip(uniq, counts)}


__all__ = ["GpuRunner", "device_name", "multiprocessors", "unavailable"]

"""hw.gpu — compiled litmus programs run on an NVIDIA GPU (issue 29's ``make gpu-check``).

:mod:`.harness` rewrites the PTX a compiler emitted (hw/ptxc's switch layout) into a kernel
that runs many instances per launch; :mod:`.place` draws each launch's placement of roles,
stress threads and locations (numpy); :mod:`.run` loads and launches the harness through CuPy
(imported lazily) and counts outcomes. This package imports no numba, no compiler and no model:
on a lent GPU machine it needs numpy and CuPy only (fuzz/gpu_check.py ``run``).
"""

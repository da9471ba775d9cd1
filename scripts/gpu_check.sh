#!/usr/bin/env bash
# make gpu-check: the compiled kernels of the GPU plan run on an NVIDIA GPU and judged by the PTX
# model and the source model (fuzz/gpu_check.py; docs/compilers.md "On a GPU").
#
# Needs a CUDA GPU and a Python with numpy and CuPy: the lent machine's python3 has both (its image
# has no clang-22, so the plan, out/gpu-plan.json, is made here first with `make gpu-plan` and
# carried along). Where no GPU or no CuPy is found it says why in one line and exits 2, before
# anything is compiled. Exit 1: the GPU showed an outcome the PTX model forbids (or an instance
# left its output unwritten); 0: nothing forbidden seen. Extra arguments go to `gpu_check check`
# (e.g. --seconds 120). PY=... chooses the Python.
set -u
cd "$(dirname "$0")/.."
if [ -z "${PY:-}" ]; then
  PY=python3
  if [ -x .venv/bin/python ] && .venv/bin/python -c "import cupy" >/dev/null 2>&1; then
    PY=.venv/bin/python
  fi
fi
mkdir -p out
exec timeout 470 env PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m fuzz.gpu_check check \
  --plan out/gpu-plan.json --json out/gpu-check.json "$@"

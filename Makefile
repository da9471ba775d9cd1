# scopefuzz set-up and everyday commands. `make setup` is idempotent.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
APT_PKGS := pocl-opencl-icd ocl-icd-libopencl1 clang-22 llvm-22

.PHONY: setup install test fuzz bench clean system-packages gpu-plan gpu-check

# install: the venv, the packages, byte-compiled (imports read .pyc files even where the
# environment forbids writing them). Commands then compile the numba code they use on first use,
# only that (one model's, the simulator only for sim/isa backends), showing what compiles and how
# far along on stderr.
install: $(STAMP)
	@$(BIN)/python -m compileall -q litmus oracle hw fuzz >/dev/null

# setup: install, then compile every numba function of the oracle (all models) and the simulator
# once into the on-disk cache (`scopefuzz warm`: its parts in parallel, one process per core;
# seconds when the cache is up to date), so that no later run compiles.
setup: install
	@$(BIN)/scopefuzz warm

# Debian packages the project uses (OpenCL on the CPU via PoCL; clang-22 for AMDGPU and NVPTX code;
# llvm-22 for llvm-objdump-22, llc-22 and llvm-reduce-22: disassembly and upstream reproducers).
# Installed only when running as root and only when missing.
system-packages:
	@if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "apt-get install$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  fi; \
	else echo "not root: skipping apt packages ($(APT_PKGS))"; fi

$(STAMP): pyproject.toml
	$(MAKE) system-packages
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# the suite, then what a user of the wheel does (build, install into a fresh venv, use it from outside
# the repository: .ci/wheel-check)
test: setup
	$(BIN)/python -m pytest -n auto -q
	PY=$(BIN)/python .ci/wheel-check

# The main job: a campaign on the simulator with one seeded bug (a mutant), checked against the
# correct simulator as baseline, then the report. Each run gets its own directory: nothing is lost.
# It needs `install` only: a first run compiles the AMDGPU model and the simulator (in parallel),
# not the other models.
MUTANT  ?= acq-no-inv
TIME    ?= 60
SEED    ?= 0
OUT     ?= campaign/sim-$(MUTANT)-$(shell date +%Y%m%d-%H%M%S)

fuzz: install
	@$(BIN)/scopefuzz fuzz --backend sim:$(MUTANT) --baseline sim --time $(TIME) --seed $(SEED) \
	    --out $(OUT); status=$$?; \
	$(BIN)/scopefuzz report $(OUT) || exit 2; \
	echo "report: $(OUT)/report.html and $(OUT)/report.md"; \
	if [ $$status -eq 1 ]; then echo "findings: $(OUT)/findings/"; exit 0; \
	elif [ $$status -eq 0 ]; then echo "no finding in $(TIME) s"; exit 1; else exit $$status; fi

bench: setup
	$(BIN)/scopefuzz bench

# The GPU check's plan (no GPU needed; clang-22 and nvcc): corpora/cuda + corpora/opencl and 40
# campaign programs of seed 29, compiled by the four front ends at sm_90 -O2, each with its GPU
# harness (assembled by ptxas for sm_90) and both models' allowed outcomes -> out/gpu-plan.json
# (docs/compilers.md "On a GPU").
gpu-plan: install
	@mkdir -p out && $(BIN)/python -m fuzz.gpu_check prepare --ptxas --plan out/gpu-plan.json

# On a lent NVIDIA GPU (CuPy, nothing to install): run the plan (made first if missing), print the
# table, write out/gpu-check.json; under 8 minutes. No GPU/CuPy: one line, exit 2.
gpu-check:
	@bash scripts/gpu_check.sh

clean:
	rm -rf $(VENV) build *.egg-info

# scopefuzz set-up and everyday commands. `make setup` is idempotent.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
APT_PKGS := pocl-opencl-icd ocl-icd-libopencl1 clang-22

.PHONY: setup test fuzz bench clean system-packages

setup: $(STAMP)

# Debian packages the project uses (OpenCL on the CPU via PoCL; clang-22 to compile-check AMD kernels).
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

test: setup
	$(BIN)/python -m pytest -n auto -q

fuzz: setup
	$(BIN)/scopefuzz fmt corpora

bench: setup
	$(BIN)/scopefuzz bench

clean:
	rm -rf $(VENV) build *.egg-info

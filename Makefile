# Two commands do all the set-up on a fresh machine with Python 3.11:
#   make demo   installs the core package and retrieves context on the bundled example
#   make test   installs everything (torch CPU first, then the dense extra) and runs the tests

PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PIP     = $(VENV)/bin/pip
STAMP_CORE = $(VENV)/.stamp-core
STAMP_FULL = $(VENV)/.stamp-full

.PHONY: demo test lint bench bench-latency clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMP_CORE): pyproject.toml | $(PY)
	$(PIP) install -q -e .
	touch $@

# torch goes first, pinned, from PyTorch's CPU index: PyPI's Linux torch is the CUDA build
# (~2.5 GB with its CUDA wheels). Where that index cannot be reached, the pin is taken from
# the configured indexes (a mirror or a local wheel folder holding the CPU build).
TORCH_VERSION ?= 2.13.0
TORCH_INDEX   ?= https://download.pytorch.org/whl/cpu
$(STAMP_FULL): pyproject.toml | $(PY)
	$(PIP) install -q --retries 1 torch==$(TORCH_VERSION) --index-url $(TORCH_INDEX) \
		|| { echo "make: $(TORCH_INDEX) unreachable: torch from the configured indexes" >&2; \
		     $(PIP) install -q torch==$(TORCH_VERSION); }
	$(PIP) install -q -e '.[dense,serve,docs,ray,bench,dev]'
	touch $@ $(STAMP_CORE)

demo: $(STAMP_CORE)
	$(VENV)/bin/greprag retrieve --repo tests/fixtures/py_pipeline \
		--file pipeline/processor.py --line 17 --column 27 --explain

test: $(STAMP_FULL)
	$(VENV)/bin/ruff check greprag docs_mode bench tests
	$(VENV)/bin/pytest -q

lint: $(STAMP_FULL)
	$(VENV)/bin/ruff check greprag docs_mode bench tests

bench: $(STAMP_FULL)
	$(PY) -m bench run --lang python --lang java

bench-latency: $(STAMP_FULL)
	$(PY) -m bench.latency

clean:
	rm -rf $(VENV) build dist *.egg-info

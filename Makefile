# Every target sets up what it needs from nothing: a virtual environment with editable
# installs of every distribution in this repository and the development tools.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DISTS := core backend-python backend-c backend-cuda backend-dask backend-jax plugins/opweave-double
STAMP := $(VENV)/.installed
PYPROJECTS := pyproject.toml $(addsuffix /pyproject.toml,$(DISTS))

.PHONY: setup demo test test-long test-cuda-orders lint format clean docs

setup: $(STAMP)

$(STAMP): $(PYPROJECTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet $(addprefix -e ,$(DISTS)) --group dev
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m opweave demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The cuda-marked tests again on the emulated device (no GPU here) with its threads resumed in
# reverse and in a seeded random order: results must not depend on the order threads run in
# (a real GPU, when present, runs them instead, and the orders do not apply).
test-cuda-orders: $(STAMP)
	OPWEAVE_CUDA_EMULATOR_ORDER=reverse $(BIN)/python -m pytest -q -m cuda tests/backend_cuda
	OPWEAVE_CUDA_EMULATOR_ORDER=random:1 $(BIN)/python -m pytest -q -m cuda tests/backend_cuda

# The documentation site (Sphinx, MyST pages, furo theme) into docs/_build/html; every
# warning is an error. The API reference, the capability matrix and the flags page are
# generated from the installed distributions at build time (docs/_ext/).
docs: $(STAMP)
	$(BIN)/python -m sphinx -j auto -W --keep-going -q -b html docs docs/_build/html

# The reliability suite's long run: many more generated inputs, graphs and seeds.
test-long: $(STAMP)
	OPWEAVE_RELIABILITY_LONG=1 $(BIN)/python -m pytest tests/reliability $(PYTEST_ARGS)

# mypy checks the public surface of the core (the modules [tool.mypy] in pyproject.toml lists).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) build .pytest_cache

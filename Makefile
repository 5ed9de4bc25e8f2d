# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench clean dist mutation lock

$(STAMP): pyproject.toml shoe_controller/display/package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m shoe_controller.display.build --quiet
	touch $(STAMP)

## run: a whole simulated table (virtual shoe, synthetic camera, mock pins)
run: $(STAMP)
	$(VENV)/bin/shoe-controller simulate --shoes 1 --pace 0.05

## test: lint and the whole test suite (needs mosquitto and chromium: see .ci/run)
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

## mutation: the mutation campaign (docs/testing.md); not in CI: tens of minutes.
## One module: make mutation MODULES=settlement; options: MUTATION_FLAGS="--nice 0"
mutation: $(STAMP)
	$(PY) mutation/run.py $(MUTATION_FLAGS) $(MODULES)

## lock: regenerate requirements.lock (the hashed deployment lock, docs/deploy.md) from
## pyproject.toml's dependencies; run it after changing them (tests/test_lock.py checks).
LOCK_FLAGS := --quiet --generate-hashes --strip-extras --allow-unsafe \
	--no-emit-index-url --no-emit-find-links --no-emit-trusted-host
lock: $(STAMP)
	$(VENV)/bin/pip-compile $(LOCK_FLAGS) --output-file=requirements.lock pyproject.toml

bench: $(STAMP)
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

## dist: the sdist and the wheel (with the page's MQTT bundle: npm at build time only)
dist: $(STAMP)
	$(PY) -m build --outdir dist .

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache

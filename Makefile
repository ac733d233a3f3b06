# msgbench: `make run` measures, `make test` checks. Both install what is missing first.
PY := .venv/bin/python
TARGET_DIRS := $(wildcard targets/*)
# Code the targets share (the Go kit): linted and tested as the targets are.
KIT_DIRS := $(wildcard kits/*)

.PHONY: run test install install-test build lint test-harness test-targets clean

run: install
	$(PY) -m msgbench build
	$(PY) -m msgbench run --suite quick
	$(PY) -m msgbench report latest -o results/report.html

test: install-test
	$(PY) -m msgbench build
	$(MAKE) lint
	$(MAKE) test-targets
	$(MAKE) test-harness

install:
	bash scripts/install-deps.sh

install-test:
	bash scripts/install-deps.sh --test

build: install
	$(PY) -m msgbench build

lint:
	$(PY) -m ruff check msgbench tests scripts
	@for d in $(KIT_DIRS) $(TARGET_DIRS); do echo "== lint $$d"; $(MAKE) -s -C $$d lint || exit 1; done

test-targets:
	@for d in $(KIT_DIRS) $(TARGET_DIRS); do echo "== test $$d"; $(MAKE) -s -C $$d test || exit 1; done

test-harness:
	$(PY) -m pytest -q

clean:
	@for d in $(TARGET_DIRS); do $(MAKE) -s -C $$d clean; done
	rm -rf .venv results .pytest_cache

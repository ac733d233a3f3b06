# msgbench: `make run` measures, `make test` checks. Both install what is missing first.
PY := .venv/bin/python
TARGET_DIRS := $(wildcard targets/*)
# Code the targets share (the Go kit): linted and tested as the targets are.
KIT_DIRS := $(wildcard kits/*)

# Each phase's time, printed as one line at the end (scripts/timed.sh).
TIMES := results/.phase-times
TIMED = scripts/timed.sh $(TIMES)

.PHONY: run test install install-test build lint test-harness test-targets lint-then-test-targets clean

# The quick suite builds its targets beside it, two at a time (yielding the CPU to each
# measurement), and measures each scenario as soon as its targets are built
# (docs/decisions.md, "First figures fast"); it adds the builds' span and the first
# table row to the timing line.
# A point that failed (a build that failed among them) still gets its report: make run
# ends with the suite's exit status after the report and the timing line.
run:
	@rm -f $(TIMES)
	@$(TIMED) install bash scripts/install-deps.sh
	@status=0; \
	MSGBENCH_PHASES=$(abspath $(TIMES)) $(TIMED) "builds and quick suite" $(PY) -m msgbench run --suite quick \
	  || status=$$?; \
	$(TIMED) report $(PY) -m msgbench report latest -o results/report.html || status=$$?; \
	scripts/timed.sh --summary $(TIMES) "make run"; \
	exit $$status

# After the install and the builds, the harness tests run beside lint and the targets' tests
# (scripts/side-by-side.sh: each line prefixed with its phase, the whole failing if any
# fails; each phase timed on its own). Lint and the targets' tests stay one after the other:
# a folder's lint and its tests build the same test binary (targets/caf, kits/caf, erlang).
# The harness tests run in HARNESS_WORKERS processes (pytest -n): most of their time is
# waiting on brokers, sshd, Chromium and fixed-length runs, not CPU. The tests that share
# something machine-wide run one after another on one worker (xdist_group marks), and those
# that time real work run alone after them (docs/decisions.md, "make test in parallel").
HARNESS_WORKERS ?= 4

test:
	@rm -f $(TIMES)
	@$(TIMED) install bash scripts/install-deps.sh --test
	@$(TIMED) build $(PY) -m msgbench build
	@status=0; scripts/side-by-side.sh "lint, target tests" "$(MAKE) -s lint-then-test-targets" \
	  "harness tests" "$(TIMED) 'harness tests' $(MAKE) -s test-harness" || status=$$?; \
	scripts/timed.sh --summary $(TIMES) "make test"; exit $$status

lint-then-test-targets:
	@status=0; $(TIMED) lint $(MAKE) -s lint || status=$$?; \
	$(TIMED) "target tests" $(MAKE) -s test-targets || status=$$?; exit $$status

install:
	bash scripts/install-deps.sh

install-test:
	bash scripts/install-deps.sh --test

build: install
	$(PY) -m msgbench build

# Each folder's line comes after its output, with its time ("== lint kits/caf: 41 s"),
# so that a CI log shows which folder the phase's time went to. A folder that fails does
# not stop the others: every folder runs, and the phase fails at the end, naming each
# failed folder (one failure no longer hides the next).
IN_EACH_FOLDER = failed=""; for d in $(KIT_DIRS) $(TARGET_DIRS); do start=$$(date +%s); \
	  if $(MAKE) -s -C $$d $(1); then echo "== $(1) $$d: $$(( $$(date +%s) - start )) s"; \
	  else echo "== $(1) $$d: failed after $$(( $$(date +%s) - start )) s"; failed="$$failed $$d"; fi; done; \
	  if [ -n "$$failed" ]; then echo "== $(1) failed in:$$failed"; exit 1; fi

lint:
	$(PY) -m ruff check msgbench tests scripts
	$(dir $(PY))lint-imports
	@$(call IN_EACH_FOLDER,lint)

# One folder after another: two at a time (make -j2) took the phase from 354 s to 204 s
# alone, but beside the harness tests a broker's stall test (targets/rabbitmq) then failed
# its timing, so it is not done yet (docs/decisions.md, "Where make test's time goes").
test-targets:
	@$(call IN_EACH_FOLDER,test)

# The tests marked alone (they time real work or hold the machine) run after the others,
# one at a time, with no other test beside them; both passes run, either failing fails.
test-harness:
	@status=0; $(PY) -m pytest -q -n $(HARNESS_WORKERS) --dist loadgroup -m "not alone" || status=$$?; \
	$(PY) -m pytest -q -m alone || status=$$?; exit $$status

clean:
	@for d in $(TARGET_DIRS); do $(MAKE) -s -C $$d clean; done
	rm -rf .venv results .pytest_cache

# msgbench: `make run` measures, `make test` checks. Both install what is missing first.
PY := .venv/bin/python
TARGET_DIRS := $(wildcard targets/*)
# Code the targets share (the Go kit): linted and tested as the targets are.
KIT_DIRS := $(wildcard kits/*)

# Each phase's time, printed as one line at the end (scripts/timed.sh).
TIMES := results/.phase-times
TIMED = scripts/timed.sh $(TIMES)

.PHONY: run test install install-test build lint test-harness test-targets lint-then-test-targets \
	harness-then-test-targets clean

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

# The folders' tests are a queue (CLAIMS: a folder's claim is a directory made there):
# the lint lane takes them after lint, and the harness lane, once its own tests have
# ended and lint has too, takes what is left, so that the last minutes are not one
# folder after another on one core while the other is idle.
CLAIMS := results/.test-claims
# The folders' tests in one lane of that queue, timed as phase $(1) (a comma in it as
# $(comma): call splits its arguments at commas).
comma := ,
CLAIMED_TEST_TARGETS = MSGBENCH_CLAIMS=$(CLAIMS) $(TIMED) $(1) $(MAKE) -s test-targets

test:
	@rm -f $(TIMES)
	@$(TIMED) install bash scripts/install-deps.sh --test
	@$(TIMED) build $(PY) -m msgbench build
	@rm -rf $(CLAIMS); mkdir -p $(CLAIMS); status=0; \
	scripts/side-by-side.sh "lint, target tests" "$(MAKE) -s lint-then-test-targets" \
	  "harness tests, target tests" "$(MAKE) -s harness-then-test-targets" || status=$$?; \
	rm -rf $(CLAIMS); scripts/timed.sh --summary $(TIMES) "make test"; exit $$status

lint-then-test-targets:
	@status=0; $(TIMED) lint $(MAKE) -s lint || status=$$?; touch $(CLAIMS)/.lint-done; \
	$(call CLAIMED_TEST_TARGETS,"target tests") || status=$$?; exit $$status

# A folder's lint and its tests build the same test binary (targets/caf, kits/caf,
# erlang): this lane takes no folder before lint has ended. Run on its own (no CLAIMS
# folder: no queue) it waits for nothing and takes no folder.
harness-then-test-targets:
	@status=0; $(TIMED) "harness tests" $(MAKE) -s test-harness || status=$$?; \
	while [ -d $(CLAIMS) ] && [ ! -e $(CLAIMS)/.lint-done ]; do sleep 1; done; \
	$(call CLAIMED_TEST_TARGETS,"target tests$(comma) second lane") || status=$$?; exit $$status

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
	  if [ -n "$${MSGBENCH_CLAIMS:-}" ] && ! mkdir "$$MSGBENCH_CLAIMS/$$(echo $$d | tr / _)" 2>/dev/null; then continue; fi; \
	  if $(MAKE) -s -C $$d $(1); then echo "== $(1) $$d: $$(( $$(date +%s) - start )) s"; \
	  else echo "== $(1) $$d: failed after $$(( $$(date +%s) - start )) s"; failed="$$failed $$d"; fi; done; \
	  if [ -n "$$failed" ]; then echo "== $(1) failed in:$$failed"; exit 1; fi

lint:
	$(PY) -m ruff check msgbench tests scripts
	$(dir $(PY))lint-imports
	@$(call IN_EACH_FOLDER,lint)

# One folder after another. In make test the lint lane runs them beside the harness
# tests, and the harness lane joins in once those have ended (CLAIMS above): two folders
# at a time, whose load failed rabbitmq's stalled-broker test until its sources' Flush
# waited for the broker (docs/decisions.md, "make test in parallel").
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

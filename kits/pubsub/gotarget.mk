# gotarget.mk: the make targets every Go pubsub target shares with the kit
# (docs/targets.md): build, test, race, lint, clean. A target's Makefile sets
# what differs and includes this file by its path relative to the Makefile:
#
#   CMD := msgbench-tcp        # builds ./cmd/$(CMD) into $(BIN) (bin/$(CMD)); clean removes bin
#   include $(dir $(lastword $(MAKEFILE_LIST)))../../kits/pubsub/gotarget.mk
#
# Without CMD (the kit: a library) build is a compile check and clean has
# nothing to remove. Extra environment (e.g. CGO_ENABLED) is exported before.

GO ?= go
GOFMT ?= gofmt
# Never fetch a toolchain; modules are pinned in go.mod/go.sum.
export GOTOOLCHAIN := local

BIN ?= $(if $(CMD),bin/$(CMD))

.PHONY: build test race lint clean

ifdef CMD
build:
	$(GO) build -buildvcs=false -o $(BIN) ./cmd/$(CMD)
clean:
	rm -rf bin
else
build:
	$(GO) build ./...
clean:
	@true
endif

test:
	$(GO) test ./...

# Under the race detector (cgo and a C compiler); no 1 s sleep at each exit.
race:
	GORACE=atexit_sleep_ms=0 $(GO) test -race ./...

lint:
	@bad="$$($(GOFMT) -l .)"; test -z "$$bad" || { echo "gofmt: not formatted:"; echo "$$bad"; exit 1; }
	$(GO) vet ./...

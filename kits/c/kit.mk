# kits/c for a C target's Makefile: `include ../../kits/c/kit.mk`, then compile
# $(KIT_C_SOURCES) into the binary with $(KIT_C_CFLAGS). Sources, not a library: the
# target's binary is the one thing a host runs, and the kit has one user today.
KIT_C_DIR     := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
KIT_C_SOURCES := $(addprefix $(KIT_C_DIR)/src/,json.c protocol.c measure.c params.c options.c request.c worker.c histogram.c)
KIT_C_HEADERS := $(wildcard $(KIT_C_DIR)/src/*.h)
KIT_C_CFLAGS  := -I$(KIT_C_DIR)/src

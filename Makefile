# Driven by build.sh, which sets the variant. By hand:
#   make BUILD=build/asan SAN=1 [STATIC_PREFIX=...]   ASan+UBSan, with unit tests
#   make BUILD=build/vg VG=1 units  no sanitizers, -O1: unit tests for valgrind
#   make BUILD=build/static STATIC_PREFIX=...   the shipped static binary
#   ... TEST_BUILD=1   a static one with the crash points (the version matrix)
BUILD ?= build/dev
VERSION ?= 0.1.0
CC ?= cc
# build.sh sets CCACHE=ccache (its cache in /var/cache/xloop/ccache)
CCACHE ?=

WARN := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-missing-field-initializers
CFLAGS_BASE := -std=gnu11 -g $(WARN) -Isrc
SYSLIBS := -lgit2 -lcurl -lsqlite3 -ljansson -lcrypto -lm

ifdef SAN
CFLAGS_BASE += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -DXLOOP_TEST_BUILD
LDFLAGS_BASE := -fsanitize=address,undefined
ifdef STATIC_PREFIX
# the shipped binary's libgit2 and libcurl (HTTP over OpenSSL only), linked
# in: Debian's pull in 46 shared libraries, and every start of the ASan
# xloop mapped them (48 against 37 ms a start without the leak check)
CFLAGS_BASE += -I$(STATIC_PREFIX)/include
LIBS := -L$(STATIC_PREFIX)/lib -Wl,-Bstatic -lgit2 -lcurl -Wl,-Bdynamic -lsqlite3 -ljansson \
	-lhttp_parser -lpcre2-8 -lssl -lcrypto -lz -lm -lpthread
else
LIBS := $(SYSLIBS)
endif
else ifdef VG
CFLAGS_BASE += -O1 -DXLOOP_TEST_BUILD
LIBS := $(SYSLIBS)
else ifdef STATIC_PREFIX
CFLAGS_BASE += -O2 -I$(STATIC_PREFIX)/include $(if $(TEST_BUILD),-DXLOOP_TEST_BUILD)
LDFLAGS_BASE := -static -L$(STATIC_PREFIX)/lib
LIBS := $(shell cat $(STATIC_PREFIX)/link-flags.txt)
else
CFLAGS_BASE += -O2
LIBS := $(SYSLIBS)
endif

SRCS := $(wildcard src/*.c src/*/*.c)
OBJS := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
DEPS := $(OBJS:.o=.d)
LIB_OBJS := $(filter-out $(BUILD)/obj/xloop.o,$(OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/%)

.PHONY: all units clean FORCE
.SECONDARY:
all: $(BUILD)/xloop

units: $(UNIT_BINS)

# -MMD: each object depends on the headers it includes (the .d files)
$(BUILD)/obj/%.o: src/%.c Makefile
	@mkdir -p $(dir $@)
	$(CCACHE) $(CC) $(CFLAGS_BASE) -MMD -MP -c $< -o $@

# rebuild what prints the version when it changes
$(BUILD)/version.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@
# every object that prints XLOOP_VERSION (help, man, the MCP server, the
# webhook User-Agent), and only those: the others stay the same from one
# commit to the next (a compiler cache keeps them)
VERSION_OBJS := $(addprefix $(BUILD)/obj/,cmd/help.o cmd/man.o mcp/server.o notify.o)
$(VERSION_OBJS): $(BUILD)/version.txt
$(VERSION_OBJS): CFLAGS_BASE += -DXLOOP_VERSION='"$(VERSION)"'
FORCE:
# the MCP tools' output schemas are built into this object (.incbin)
$(BUILD)/obj/mcp/schemas.o: $(wildcard schemas/*.schema.json)

$(BUILD)/xloop: $(OBJS)
	$(CC) $(LDFLAGS_BASE) $(OBJS) $(LIBS) -o $@

# a unit test compiles apart from its link, so a compiler cache keeps it
$(BUILD)/obj/test_%.o: tests/unit/test_%.c Makefile
	@mkdir -p $(dir $@)
	$(CCACHE) $(CC) $(CFLAGS_BASE) -Wno-missing-prototypes -MMD -MP -c $< -o $@

$(BUILD)/test_%: $(BUILD)/obj/test_%.o $(LIB_OBJS)
	$(CC) $(LDFLAGS_BASE) $< $(LIB_OBJS) $(LIBS) -lcmocka -o $@

clean:
	rm -rf build xloop

-include $(DEPS) $(wildcard $(BUILD)/obj/test_*.d)

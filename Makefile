# SPDX-License-Identifier: GPL-2.0-or-later
# railbind: userspace build (library, CLI, tests). The kernel module is built
# by Kbuild through the kmod targets (kmod/kmod.mk).
#   make                build everything userspace into build/
#   make check          unit, corpus and CLI tests
#   make SANITIZE=1 ... the same with ASan+UBSan, into build-asan/
VERSION := 0.1.0
TOP := $(CURDIR)
ifeq ($(SANITIZE),1)
BUILD ?= $(TOP)/build-asan
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= $(TOP)/build
SAN_FLAGS :=
endif

CC ?= cc
PKG_CONFIG ?= pkg-config
HWLOC_CFLAGS := $(shell $(PKG_CONFIG) --cflags hwloc)
HWLOC_LIBS := $(shell $(PKG_CONFIG) --libs hwloc)
JSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags json-c)
JSON_LIBS := $(shell $(PKG_CONFIG) --libs json-c)
XML_CFLAGS := $(shell $(PKG_CONFIG) --cflags libxml-2.0)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CFLAGS ?= -O2 -g
# The programs (broker/, slurm/, bench/) see the library's public headers
# only: affinity.h, and client.h (the broker's protocol) for railbindd and
# railbind status, copied into $(BUILD)/include. The library's own files
# find its private headers beside them; its tests (tests/unit, fuzz/, the
# test tools that look inside) add AFF_PRIVATE_CFLAGS.
PUBLIC_INCLUDE = $(BUILD)/include
PUBLIC_HEADERS = $(PUBLIC_INCLUDE)/affinity.h $(PUBLIC_INCLUDE)/client.h
AFF_PRIVATE_CFLAGS = -I$(TOP)/libaffinity
CFLAGS += -std=c11 -D_GNU_SOURCE $(WARN) $(SAN_FLAGS) -fPIC -fvisibility=hidden \
	-DRAILBIND_VERSION='"$(VERSION)"' -I$(PUBLIC_INCLUDE) \
	$(HWLOC_CFLAGS) $(JSON_CFLAGS) $(XML_CFLAGS)
LDFLAGS += $(SAN_FLAGS)
# libxml2 and libhwloc are loaded on first use (libaffinity/xml_lazy.h,
# hwloc_lazy.c), not linked: a rank the broker plans for loads neither.
DEP_LIBS := $(JSON_LIBS)
# The tests, fuzz targets and benchmarks call hwloc themselves, beyond what
# the library's programs use: they link it.
TEST_LIBS := $(DEP_LIBS) $(HWLOC_LIBS)

# libaffinity by stage (README, "Layout"): the sources, the model and its
# facts, the plan's decisions, the outputs; the rank's side (the broker's
# client, the binding); what they all use.
LIBAFF_SRCS := source.c source_hwloc.c source_nccl.c source_kmod.c source_kmod_generation.c \
	model.c model_classify.c model_switches.c model_paths.c model_bandwidth.c model_rank.c \
	plan.c plan_assign.c plan_cpusplit.c plan_judge.c plan_env.c plan_gid.c plan_uverbs.c out_json.c \
	client.c client_binding.c apply.c ctx.c err.c config.c xml_lazy.c hwloc_lazy.c
# Reading a file (every input), hwloc's import contained in a child process.
LIBAFF_SRCS += fileio.c source_hwloc_import.c child_limits.c
# The GPU nodes a rank passes the broker as proof it may use them.
LIBAFF_SRCS += client_proof.c
# CPU sets as text (cpulist, cpumask); the one XML encoding read.
LIBAFF_SRCS += cpulist.c xml_encoding.c
CLI_SRCS := railbind.c options.c emit.c utils.c topo.c plan.c snapshot.c run.c status.c
# The audit (libaffinity/audit*.c, broker/railbind/audit.c) and its tests.
LIBAFF_SRCS += audit.c audit_findings.c audit_pcie.c audit_numa.c audit_nic.c audit_host.c audit_health.c
# ACS per complex kind and GPUDirect RDMA readiness (issue #31).
LIBAFF_SRCS += acs_table.c model_complex.c audit_acs.c audit_gdr.c
CLI_SRCS += audit.c
# railbind fleet (broker/railbind/fleet*.c, libaffinity/out_facts.c) and its tests (tests/fleet).
LIBAFF_SRCS += out_facts.c
CLI_SRCS += fleet.c fleet_node.c fleet_jobs.c fleet_compare.c fleet_print.c
# NCCL topology export (libaffinity/out_nccl.c, broker/railbind/nccl_topo.c).
LIBAFF_SRCS += out_nccl.c out_nccl_source.c
CLI_SRCS += nccl_topo.c
# railbind verify (libaffinity/verify*.c, broker/railbind/verify.c) and its tests (tests/verify).
LIBAFF_SRCS += verify.c verify_dev.c verify_proc.c verify_lease.c verify_judge.c verify_checks.c \
	verify_findings.c
LIBAFF_SRCS += verify_hca.c verify_roce.c
# Health over time: link, AER and RDMA port counters (libaffinity/health.c).
LIBAFF_SRCS += health.c
CLI_SRCS += verify.c
# Slurm's gres.conf from the hardware (libaffinity/out_gres.c, broker/railbind/slurm_gres.c).
LIBAFF_SRCS += out_gres.c audit_slurm.c
# Kubernetes DRA attributes (libaffinity/out_dra.c; railbind topo --json, --dra).
LIBAFF_SRCS += out_dra.c
CLI_SRCS += slurm_gres.c

.DEFAULT_GOAL := all

# kbuild's output: one "  CC      libaffinity/plan.o" line per step; make V=1
# prints the commands instead. $(call quiet,TAG,TARGET) starts a recipe line.
# make -s prints nothing but errors.
V ?= 0
ifeq ($(V),1)
Q :=
quiet =
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q := @
quiet = @
else
Q := @
quiet = @printf '  %-7s %s\n' '$(1)' '$(call shown,$(2))';
endif
ifneq ($(V),1)
MAKEFLAGS += --no-print-directory
endif
# A target as shown: relative to build/ (obj/ left out); another tree
# (build-asan/, build-fuzz/, BUILD=DIR) by its last name.
shown_tree = $(if $(filter $(TOP)/build,$(BUILD)),,$(notdir $(BUILD))/)
shown = $(patsubst $(TOP)/%,%,$(patsubst $(BUILD)/%,$(shown_tree)%,$(patsubst \
	$(BUILD)/obj/%,$(shown_tree)%,$(1))))

# What the parts build and test against, defined before any fragment is
# included: a fragment's prerequisites are expanded as make reads them.
LIBAFF_OBJS = $(addprefix $(BUILD)/obj/libaffinity/,$(LIBAFF_SRCS:.c=.o))
CLI_OBJS = $(addprefix $(BUILD)/obj/broker/railbind/,$(CLI_SRCS:.c=.o))
LIBAFF_A := $(BUILD)/libaffinity.a
LIBAFF_SO := $(BUILD)/libaffinity.so.1
RAILBIND := $(BUILD)/railbind
RAILBINDD := $(BUILD)/railbindd
RBGEN := $(BUILD)/rbgen
# The CLI under valgrind: no leak, no invalid access.
VALGRIND := valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

# Fragments of the other parts add to LIBAFF_SRCS, CLI_SRCS, CHECKS.
CHECKS :=
-include $(TOP)/libaffinity/source_live.mk
-include $(TOP)/libaffinity/gpu.mk
-include $(TOP)/tests/gen/gen.mk
-include $(TOP)/kmod/kmod.mk
-include $(TOP)/bench/bench.mk
-include $(TOP)/broker/railbindd/railbindd.mk
-include $(TOP)/udev/install.mk
-include $(TOP)/tests/packages/packages.mk
-include $(TOP)/slurm/slurm.mk
-include $(TOP)/tests/slurm/gres.mk
-include $(TOP)/tests/dra/dra.mk
-include $(TOP)/tests/audit/audit.mk
-include $(TOP)/fuzz/fuzz.mk
-include $(TOP)/tests/static/static.mk
-include $(TOP)/tests/ncclexport/ncclexport.mk
-include $(TOP)/tests/input/input.mk
-include $(TOP)/tests/fleet/fleet.mk
-include $(TOP)/bench/fleet.mk
-include $(TOP)/tests/gpu/gpu.mk
-include $(TOP)/tests/verify/verify.mk
-include $(TOP)/tests/health/health.mk
-include $(TOP)/tests/optics/optics.mk
-include $(TOP)/tests/dcb/dcb.mk
-include $(TOP)/tests/nccllog/nccllog.mk
-include $(TOP)/tests/fabric/fabric.mk
-include $(TOP)/tests/complex/complex.mk

# The module: built against Debian's 6.1 and 6.12 headers, checkpatch and
# sparse clean (kmod/kmod.mk; ./scripts/setup --all installs the headers).
CHECKS += kmod kmod-6.12 check-kmod-style
# The module in real 6.1 and 6.12 kernels under QEMU, railbind audit in the guest
# as nobody included (tests/vm; about a minute per kernel).
CHECKS += check-vm
# The guests run build/railbind and build/railbindd: with -j, build them first.
check-vm-6.1 check-vm-6.12: all

.PHONY: all check check-unit check-cli check-corpus check-asan check-valgrind audit clean \
	check-hwloc-minimal
all: $(LIBAFF_A) $(LIBAFF_SO) $(RAILBIND) $(BUILD)/libaffinity.pc

$(PUBLIC_HEADERS): $(PUBLIC_INCLUDE)/%.h: $(TOP)/libaffinity/%.h
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@)cp $< $@

$(BUILD)/obj/%.o: $(TOP)/%.c | $(PUBLIC_HEADERS)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBAFF_A): $(LIBAFF_OBJS)
	@rm -f $@
	$(call quiet,AR,$@)$(AR) rcs $@ $^

$(LIBAFF_SO): $(LIBAFF_OBJS) $(TOP)/libaffinity/libaffinity.sym
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -shared -Wl,-soname,libaffinity.so.1 \
		-Wl,--version-script=$(TOP)/libaffinity/libaffinity.sym -Wl,--no-undefined \
		-o $@ $(LIBAFF_OBJS) $(DEP_LIBS)
	$(Q)ln -sf libaffinity.so.1 $(BUILD)/libaffinity.so

$(RAILBIND): $(CLI_OBJS) $(LIBAFF_A)
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBAFF_A) $(DEP_LIBS)

# railbind linked against libaffinity.so, as users link the library: the
# CLI's tests run against it (check-cli-shared), so every symbol it uses
# must be exported by the version script, in a released section.
RAILBIND_SHARED := $(BUILD)/shared/railbind
$(RAILBIND_SHARED): $(CLI_OBJS) $(LIBAFF_SO)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBAFF_SO) \
		-Wl,-rpath,'$$ORIGIN/..' -Wl,--no-undefined $(JSON_LIBS) $(HWLOC_LIBS)

$(BUILD)/libaffinity.pc: $(TOP)/libaffinity/libaffinity.pc.in
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< > $@

# Unit tests: tests/unit/test_<name>.c, linked against the static library.
UNIT_SRCS := $(wildcard $(TOP)/tests/unit/test_*.c)
UNIT_BINS := $(patsubst $(TOP)/tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
$(BUILD)/tests/%: $(TOP)/tests/unit/%.c $(LIBAFF_A) $(wildcard $(TOP)/tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(AFF_PRIVATE_CFLAGS) $(CMOCKA_CFLAGS) -I$(TOP)/tests/unit \
		-DTOP='"$(TOP)"' -DBUILD='"$(BUILD)"' -o $@ $< $(LDFLAGS) $(LIBAFF_A) $(TEST_LIBS) $(CMOCKA_LIBS)

check-unit: $(UNIT_BINS) $(RBGEN_FIXTURES)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

check-cli: $(RAILBIND) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) BUILD=$(BUILD) sh $(TOP)/tests/cli/run.sh

# The same tests, railbind linked against libaffinity.so (and nothing of
# the library linked into it).
.PHONY: check-cli-shared
CHECKS += check-cli-shared
check-cli-shared: $(RAILBIND_SHARED) $(LIBAFF_SO) $(RBGEN_FIXTURES)
	$(Q)readelf -d $(RAILBIND_SHARED) | grep -q 'NEEDED.*\[libaffinity\.so\.1\]' || \
		{ echo "check-cli-shared: $(RAILBIND_SHARED) does not link libaffinity.so.1"; exit 1; }
	$(Q)! nm $(RAILBIND_SHARED) | grep -q ' [Tt] aff_' || \
		{ echo "check-cli-shared: library code linked into $(RAILBIND_SHARED)"; exit 1; }
	$(Q)! readelf -d $(LIBAFF_SO) | grep -q 'NEEDED.*\[libhwloc' || \
		{ echo "check-cli-shared: $(LIBAFF_SO) links libhwloc: every rank would load it"; exit 1; }
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND_SHARED) BUILD=$(BUILD) sh $(TOP)/tests/cli/run.sh

check-corpus: $(RAILBIND) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)RAILBIND=$(RAILBIND) sh $(TOP)/tests/corpus/run.sh

check: all check-unit check-cli check-corpus check-gen $(CHECKS) check-asan check-valgrind

# The unit and CLI tests again, built with ASan+UBSan (a separate tree),
# and every test the included .mk files add to ASAN_CHECKS. One sub-make for
# all of them: two building build-asan/ at once (make -j2) race, and a test
# once exec'd a binary the other was still linking (EACCES).
ASAN_CHECKS += check-unit check-cli
check-asan:
	$(Q)$(MAKE) SANITIZE=1 $(ASAN_CHECKS)

# The tests that read hwloc XML, again with hwloc's built-in minimal XML
# importer (HWLOC_LIBXML=0): what a node without libhwloc-plugins uses, and
# the one that takes in text that is not XML. The default run uses the
# libxml2 importer ./scripts/setup installs. Everything built first, so the
# sub-make only runs tests beside the other checks at -j.
CHECKS += check-hwloc-minimal
check-hwloc-minimal: $(UNIT_BINS) $(RAILBIND) $(RBGEN_FIXTURES) $(AUDIT_KMODFEED)
	$(Q)HWLOC_LIBXML=0 $(MAKE) check-unit check-cli check-corpus check-audit

# The CLI under valgrind on every fixture.
check-valgrind: $(RAILBIND) $(RBGEN_FIXTURES)
	@set -e; for f in $(RBGEN_FIXTURES); do for c in topo plan; do \
		$(VALGRIND) $(RAILBIND) $$c --json --input $$f > /dev/null || \
		{ echo "check-valgrind: $$c $$f"; exit 1; }; done; done; \
	echo "check-valgrind: $(words $(RBGEN_FIXTURES)) fixtures clean"

# The main job: railbind on this machine (or an example node if it has no GPU).
audit: all $(BUILD)/fixtures/dgx-h100.xml
	$(Q)RAILBIND=$(RAILBIND) EXAMPLE=$(BUILD)/fixtures/dgx-h100.xml sh $(TOP)/scripts/run-here.sh

clean:
	$(call quiet,CLEAN,build)rm -rf $(TOP)/build $(TOP)/build-asan $(TOP)/build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# SPDX-License-Identifier: GPL-2.0-or-later
# GPU identity without GPUs: stand-in libnvidia-ml.so.1 (whole, and one lacking
# the newer calls) and librocm_smi64.so.7 answering from files, and the tests
# that load them into railbind (tests/gpu/). Included by the top-level Makefile
# after the products (RAILBIND, RBGEN, VALGRIND) and RBGEN_FIXTURES are defined.
GPU_STUBS := $(BUILD)/tests/gpu
NVML_STUB := $(GPU_STUBS)/nvml/libnvidia-ml.so.1
NVML_STUB_OLD := $(GPU_STUBS)/nvml-old/libnvidia-ml.so.1
RSMI_STUB := $(GPU_STUBS)/rsmi/librocm_smi64.so.7
# Plain C, no sanitizer: they are dlopen()ed by the ASan build as by the other.
STUB_CFLAGS := -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -shared

$(NVML_STUB): $(TOP)/tests/gpu/nvml_stub.c $(TOP)/tests/gpu/answers.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(STUB_CFLAGS) -Wl,-soname,libnvidia-ml.so.1 -o $@ $<
$(NVML_STUB_OLD): $(TOP)/tests/gpu/nvml_stub.c $(TOP)/tests/gpu/answers.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(STUB_CFLAGS) -DRB_NVML_OLD -Wl,-soname,libnvidia-ml.so.1 -o $@ $<
$(RSMI_STUB): $(TOP)/tests/gpu/rsmi_stub.c $(TOP)/tests/gpu/answers.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(STUB_CFLAGS) -Wl,-soname,librocm_smi64.so.7 -o $@ $<

GPU_TEST_DEPS := $(RAILBIND) $(RBGEN) $(NVML_STUB) $(NVML_STUB_OLD) $(RSMI_STUB)
GPU_TEST_ENV = RAILBIND=$(RAILBIND) RBGEN=$(RBGEN) STUBS=$(GPU_STUBS) \
	TOPOLOGIES=$(TOP)/../shared/topologies

.PHONY: check-gpu check-gpu-smi check-gpu-svg check-gpu-compare
# NVML/ROCm SMI stand-ins: NVLink meshes, MIG, UUID visibility, failing and old libraries.
check-gpu: $(GPU_TEST_DEPS)
	$(call quiet,TEST,$@)$(GPU_TEST_ENV) sh $(TOP)/tests/gpu/run.sh
# railbind topo against published nvidia-smi topo -m matrices (../shared/topologies/smi).
check-gpu-smi: $(GPU_TEST_DEPS)
	$(call quiet,TEST,$@)$(GPU_TEST_ENV) sh $(TOP)/tests/gpu/smi.sh
# railbind topo --svg: well-formed, the right boxes and colours, rendered to PNG.
check-gpu-svg: $(GPU_TEST_DEPS) $(RBGEN_FIXTURES)
	$(call quiet,TEST,$@)$(GPU_TEST_ENV) FIXTURES=$(BUILD)/fixtures OUT=$(BUILD)/svg \
		sh $(TOP)/tests/gpu/svg.sh
# tests/gpu/compare.sh (the real-GPU comparison) run against the stand-ins.
check-gpu-compare: $(GPU_TEST_DEPS)
	$(call quiet,TEST,$@)$(GPU_TEST_ENV) sh $(TOP)/tests/gpu/compare-standin.sh
CHECKS += check-gpu check-gpu-smi check-gpu-svg check-gpu-compare
ASAN_CHECKS += check-gpu check-gpu-smi

# The NVML and ROCm SMI paths, the matrix and the picture under valgrind.
.PHONY: check-gpu-valgrind
check-gpu-valgrind: $(GPU_TEST_DEPS)
	$(call quiet,TEST,$@)$(GPU_TEST_ENV) VALGRIND="$(VALGRIND)" sh $(TOP)/tests/gpu/valgrind.sh
CHECKS += check-gpu-valgrind

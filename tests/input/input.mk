# SPDX-License-Identifier: GPL-2.0-or-later
# check-inputs (tests/input/check_inputs.py): no file crashes or hangs a
# railbind command: crashing hwloc XML, a FIFO, /dev/zero, a directory, an
# empty and an oversized file, as --input and --config, with both of hwloc's
# XML importers; railbind fleet over a directory mixing them with good
# nodes. Needs TOP, BUILD, RAILBIND, RBGEN (beside RAILBIND), quiet. Under
# ASan+UBSan (check-asan's sub-make) the CPU bound per run is 10 s, not 2.
ifeq ($(SANITIZE),1)
INPUTS_ENV := CPU_SECONDS=10 ASAN_OPTIONS=detect_leaks=1
endif
CHECKS += check-inputs
ASAN_CHECKS += check-inputs
.PHONY: check-inputs
check-inputs: $(RAILBIND) $(RBGEN) $(BUILD)/fixtures/dgx-h100.xml
	$(call quiet,TEST,$@)$(INPUTS_ENV) RAILBIND=$(RAILBIND) BUILD=$(BUILD) \
		python3 $(TOP)/tests/input/check_inputs.py

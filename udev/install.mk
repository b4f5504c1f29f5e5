# SPDX-License-Identifier: GPL-2.0-or-later
# Installing railbind on a node (included by the top-level Makefile).
#   make install [DESTDIR=DIR] [PREFIX=/usr/local]   files only, no service started
#   make uninstall [DESTDIR=DIR] [PREFIX=...]        the same files removed
#   make dkms-install [DESTDIR=DIR]                  module sources for DKMS; without
#                                                    DESTDIR also dkms add/build/install
#   make dkms-uninstall                              dkms remove, sources removed
# Programs, library, header, man pages and completions go under PREFIX. The
# system's integration files go where udev, systemd, modules-load, DKMS and
# NHC read them, whatever PREFIX is; the units name $(SBINDIR)/railbindd.

BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSCONFDIR ?= /etc
UDEVRULESDIR ?= /usr/lib/udev/rules.d
SYSTEMDUNITDIR ?= /usr/lib/systemd/system
MODULESLOADDIR ?= /usr/lib/modules-load.d
NHCDIR ?= $(SYSCONFDIR)/nhc/scripts
DKMSSRCDIR ?= /usr/src/railbind-$(VERSION)

INSTALL ?= install
MAN_PAGES := man1/railbind.1 man8/railbindd.8 man5/railbind.conf.5

# Every file "make install" writes, relative to DESTDIR: uninstall removes
# exactly these (and check-install compares the two).
INSTALLED_FILES = $(BINDIR)/railbind $(SBINDIR)/railbindd \
	$(LIBDIR)/libaffinity.so.1 $(LIBDIR)/libaffinity.so $(LIBDIR)/libaffinity.a \
	$(LIBDIR)/pkgconfig/libaffinity.pc $(INCLUDEDIR)/railbind/affinity.h \
	$(addprefix $(MANDIR)/,$(MAN_PAGES)) $(BASHCOMPDIR)/railbind \
	$(UDEVRULESDIR)/60-railbind.rules $(SYSTEMDUNITDIR)/railbindd.service \
	$(SYSTEMDUNITDIR)/railbindd.socket $(MODULESLOADDIR)/railbind.conf \
	$(NHCDIR)/railbind.nhc

.PHONY: install uninstall dkms-install dkms-uninstall

install: all
	$(call quiet,INSTALL,$(DESTDIR)$(PREFIX))$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/railbind $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(MODULESLOADDIR) $(DESTDIR)$(NHCDIR)
	$(Q)$(INSTALL) -m 0755 $(RAILBIND) $(DESTDIR)$(BINDIR)/railbind
	@# The broker is built by the broker's part of the tree; until then the
	@# unit is installed and fails to start, saying the binary is missing.
	$(Q)if [ -x $(RAILBINDD) ]; then $(INSTALL) -m 0755 $(RAILBINDD) $(DESTDIR)$(SBINDIR)/railbindd; \
	else echo "install: $(RAILBINDD) not built, railbindd not installed" >&2; fi
	$(Q)$(INSTALL) -m 0755 $(LIBAFF_SO) $(DESTDIR)$(LIBDIR)/libaffinity.so.1
	$(Q)ln -sf libaffinity.so.1 $(DESTDIR)$(LIBDIR)/libaffinity.so
	$(Q)$(INSTALL) -m 0644 $(LIBAFF_A) $(DESTDIR)$(LIBDIR)/libaffinity.a
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		$(TOP)/libaffinity/libaffinity.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libaffinity.pc
	$(Q)$(INSTALL) -m 0644 $(TOP)/libaffinity/affinity.h $(DESTDIR)$(INCLUDEDIR)/railbind/affinity.h
	$(Q)$(INSTALL) -m 0644 $(TOP)/man/railbind.1 $(DESTDIR)$(MANDIR)/man1/railbind.1
	$(Q)$(INSTALL) -m 0644 $(TOP)/man/railbindd.8 $(DESTDIR)$(MANDIR)/man8/railbindd.8
	$(Q)$(INSTALL) -m 0644 $(TOP)/man/railbind.conf.5 $(DESTDIR)$(MANDIR)/man5/railbind.conf.5
	$(Q)$(INSTALL) -m 0644 $(TOP)/completions/railbind $(DESTDIR)$(BASHCOMPDIR)/railbind
	$(Q)$(INSTALL) -m 0644 $(TOP)/udev/60-railbind.rules $(DESTDIR)$(UDEVRULESDIR)/60-railbind.rules
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' $(TOP)/udev/railbindd.service.in \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/railbindd.service
	$(Q)$(INSTALL) -m 0644 $(TOP)/udev/railbindd.socket $(DESTDIR)$(SYSTEMDUNITDIR)/railbindd.socket
	$(Q)$(INSTALL) -m 0644 $(TOP)/udev/modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/railbind.conf
	$(Q)$(INSTALL) -m 0644 $(TOP)/contrib/nhc/railbind.nhc $(DESTDIR)$(NHCDIR)/railbind.nhc
	@echo "install: done; enable with: systemctl daemon-reload && udevadm control --reload &&" \
		"systemctl enable --now railbindd.socket railbindd.service (see README)"

uninstall:
	$(Q)rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	$(Q)-rmdir $(DESTDIR)$(INCLUDEDIR)/railbind 2>/dev/null

# DKMS: the module's sources and dkms.conf in /usr/src/railbind-VERSION;
# DKMS rebuilds the module for every kernel installed later (AUTOINSTALL).
dkms-install:
	$(Q)$(INSTALL) -d $(DESTDIR)$(DKMSSRCDIR)/kmod
	$(Q)$(INSTALL) -m 0644 $(TOP)/Kbuild $(DESTDIR)$(DKMSSRCDIR)/Kbuild
	$(Q)$(INSTALL) -m 0644 $(TOP)/kmod/Kbuild $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(DESTDIR)$(DKMSSRCDIR)/kmod/
	$(Q)sed -e 's|@VERSION@|$(VERSION)|g' $(TOP)/udev/dkms.conf.in > $(DESTDIR)$(DKMSSRCDIR)/dkms.conf
	@if [ -z "$(DESTDIR)" ]; then \
		command -v dkms >/dev/null || { echo "dkms-install: dkms not installed" >&2; exit 1; }; \
		dkms status -m railbind -v $(VERSION) | grep -q . || dkms add -m railbind -v $(VERSION); \
		dkms install -m railbind -v $(VERSION); \
	fi

dkms-uninstall:
	$(Q)-[ -n "$(DESTDIR)" ] || dkms remove -m railbind -v $(VERSION) --all
	$(Q)rm -rf $(DESTDIR)$(DKMSSRCDIR)

# What install, uninstall, dkms-install, the man pages, units, rules,
# completion and NHC module do, without root (tests/boot/install-test.sh).
.PHONY: check-install
check-install: all
	$(call quiet,TEST,$@)BUILD=$(BUILD) KDIR=$(KDIR) $(TOP)/tests/boot/install-test.sh
CHECKS += check-install

# The boot test (tests/boot/run.sh): a Debian 12 guest with railbind's
# .debs installed as on a node (make deb, tests/packages/packages.mk; one
# build shared with check-packages), booted under QEMU TCG, the packages
# purged at the end. Needs root (skips without); about 1.5-2 minutes on two
# cores with the rootfs cached, plus about 1.5 minutes the first time, to
# debootstrap it into tests/boot/cache/.
.PHONY: check-boot
check-boot: all deb
	$(call quiet,TEST,$@)$(TOP)/tests/boot/run.sh $(KDIR) $(PKG_OUT)/deb
CHECKS += check-boot

# SPDX-License-Identifier: GPL-2.0-or-later
# The .deb and .rpm packages (debian/, railbind.spec), each built from a
# clean copy of the tree in a temporary directory (tests/packages/build.sh):
# nothing built here is used and nothing is left in the tree.
#   make deb              $(BUILD)/packages/deb: dpkg-buildpackage -us -uc -b
#   make rpm              $(BUILD)/packages/rpm: rpmbuild -bb (EL9's spec)
#   make check-packages   both, then lintian, rpmlint, versions, file lists
PKG_OUT = $(BUILD)/packages
.PHONY: deb rpm check-packages
deb:
	$(call quiet,DEB,$(PKG_OUT)/deb)$(TOP)/tests/packages/build.sh deb $(PKG_OUT)/deb
rpm:
	$(call quiet,RPM,$(PKG_OUT)/rpm)$(TOP)/tests/packages/build.sh rpm $(PKG_OUT)/rpm
check-packages: deb rpm
	$(call quiet,TEST,$@)$(TOP)/tests/packages/check.sh $(PKG_OUT)
CHECKS += check-packages

# SPDX-License-Identifier: GPL-2.0-or-later
# What a .topo description asks for, read straight from its text per the
# format in README.md (not through rbgen's code), in the form rbgen-hwcheck
# prints what hwloc loaded:
#   count pus|numa|cpuless|pcidev|osdev|bridges|acs N
#   machine peer-memory=X kmod=Y
#   pci BUSID CLASS VVVV:DDDD local=L raw=R osdevs=O   (GPU OSDevs as @VENDOR,
#       numbered by the caller in bus order)
function opt(key, dflt,    i) {
	for (i = 2; i <= NF; i++)
		if ($i ~ ("^" key "="))
			return substr($i, length(key) + 2)
	return dflt
}
function flag(key,    i) {
	for (i = 2; i <= NF; i++)
		if ($i == key)
			return 1
	return 0
}
BEGIN { npus = 0; ncpunuma = 0; cpuless = 0; pcidev = 0; osdev = 0; bridges = 0;
	acs = 0; nvidia = 0; peer = ""; kmod = "absent"; sp = 0 }
{ sub(/#.*/, "") }
/^[ \t]*$/ { next }
{
	match($0, /^[ ]*/)
	ind = RLENGTH
	kind = $1
}
kind == "machine" { peer = opt("peer-memory", ""); kmod = opt("kmod", "absent"); next }
kind == "cpus" {
	ncpunuma = opt("packages") * opt("numa-per-package")
	npus = ncpunuma * opt("cores-per-numa") * opt("smt")
	cpuless = opt("cpuless-numa", 0)
	next
}
{
	while (sp > 0 && sind[sp] >= ind)
		sp--
	pkind = sp ? skind[sp] : ""
	pacs = sp ? sacs[sp] : ""
	sp++
	sind[sp] = ind
	skind[sp] = kind
	sacs[sp] = opt("acs", "")
}
kind == "hostbridge" {
	hbnuma = opt("numa")
	hbdom = tolower(opt("domain", "0000"))
	next
}
kind == "bridge" || kind == "switch" {
	bridges++
	if (kind == "bridge" && (opt("acs", "") != "" || pkind == "switch" && pacs != ""))
		acs++
	if (kind == "switch" && pkind == "switch") {
		bridges++	# the downstream port above it
		if (pacs != "")
			acs++
	}
	next
}
{
	# an endpoint: gpu, nic or dev
	pcidev++
	if (pkind == "switch") {
		bridges++
		if (pacs != "")
			acs++
	}
	id = tolower($2)
	if (split(id, parts, ":") == 2)
		id = hbdom ":" id
	raw = opt("numa-raw", hbnuma)
	local = (hbnuma >= 0 && hbnuma < ncpunuma) ? hbnuma : "machine"
	if (kind == "gpu") {
		vendor = opt("vendor", "10de")
		class = opt("class", "0302")
		device = opt("device", vendor == "10de" ? "2330" : "0001")
		os = (vendor == "10de" || vendor == "1002") ? "@" vendor : "-"
		if (vendor == "10de")
			nvidia = 1
	} else if (kind == "nic") {
		eth = flag("eth")
		vendor = opt("vendor", "15b3")
		class = opt("class", eth ? "0200" : "0207")
		device = opt("device", vendor == "15b3" ? "1021" : "0001")
		os = opt("netdev", "")
		if (!eth)
			os = os (os == "" ? "" : ",") opt("name")
	} else {
		vendor = opt("vendor")
		class = opt("class")
		device = opt("device")
		os = "-"
	}
	if (os != "-")
		osdev += split(os, parts, ",")
	printf "pci %s %s %s:%s local=%s raw=%s osdevs=%s\n", id, class, vendor, device,
		local, raw, os
}
END {
	printf "count pus %d\ncount numa %d\ncount cpuless %d\n", npus, ncpunuma + cpuless,
		cpuless
	printf "count pcidev %d\ncount osdev %d\ncount bridges %d\ncount acs %d\n", pcidev,
		osdev, bridges, acs
	if (peer == "")
		peer = nvidia ? "nvidia_peermem" : "none"
	printf "machine peer-memory=%s kmod=%s\n", peer, kmod
}

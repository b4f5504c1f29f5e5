#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mkroot.sh ROOT < DEVICES: a --root tree of stand-in devices for railbind
# verify (docs/VERIFY.md, "Which device a file is"). Each line of DEVICES:
#   gpu MINOR PCI [UUID]     ROOT/dev/nvidiaMINOR (a regular file) and
#                            ROOT/proc/driver/nvidia/gpus/PCI/information
#   render N PCI             ROOT/dev/dri/renderDN, sysfs class drm renderDN -> PCI
#   nic N NAME PCI [MAJ:MIN] ROOT/dev/infiniband/uverbsN, sysfs class
#                            infiniband_verbs uverbsN (ibdev NAME, device -> PCI;
#                            with MAJ:MIN a real device node of that number
#                            stands for uverbsN)
#   major NUMBER NAME        a "Character devices" line of ROOT/proc/devices
# The shared files (nvidiactl, nvidia-uvm, kfd) are always made.
set -eu
root=$1
mkdir -p "$root/dev/infiniband" "$root/dev/dri" "$root/proc/driver/nvidia/gpus" \
	"$root/sys/class/infiniband_verbs" "$root/sys/class/drm"
: >"$root/dev/nvidiactl"
: >"$root/dev/nvidia-uvm"
: >"$root/dev/kfd"
majors=
while read -r kind a b c d; do
	case $kind in
	'' | '#'*) ;;
	gpu)
		: >"$root/dev/nvidia$a"
		mkdir -p "$root/proc/driver/nvidia/gpus/$b"
		# The driver's layout: "Key: <tabs> value", the address in upper case.
		printf 'Model: \t\t NVIDIA Stand-in\nGPU UUID: \t %s\nBus Type: \t PCIe\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' \
			"${c:-GPU-00000000-0000-0000-0000-0000000000$a$a}" \
			"$(echo "$b" | tr a-f A-F)" "$a" \
			>"$root/proc/driver/nvidia/gpus/$b/information"
		;;
	render)
		: >"$root/dev/dri/renderD$a"
		mkdir -p "$root/sys/class/drm/renderD$a"
		ln -sfn "../../../devices/pci0000:00/$b" "$root/sys/class/drm/renderD$a/device"
		;;
	nic)
		: >"$root/dev/infiniband/uverbs$a"
		dir=$root/sys/class/infiniband_verbs/uverbs$a
		mkdir -p "$dir"
		echo "$b" >"$dir/ibdev"
		ln -sfn "../../../devices/pci0000:00/$c" "$dir/device"
		[ -z "$d" ] || echo "$d" >"$dir/dev"
		;;
	major)
		majors="$majors$a $b
"
		;;
	*)
		echo "mkroot.sh: unknown line: $kind $a $b $c $d" >&2
		exit 1
		;;
	esac
done
printf 'Character devices:\n%sBlock devices:\n' "$majors" >"$root/proc/devices"

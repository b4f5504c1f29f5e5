# SPDX-License-Identifier: GPL-2.0-or-later
# Names GPU OSDevs as NVML and ROCm SMI do: per vendor, in PCI bus order
# (input: expect.awk's pci lines, sorted by bus id).
/osdevs=@10de/ { sub(/osdevs=@10de/, "osdevs=nvml" nv++) }
/osdevs=@1002/ { sub(/osdevs=@1002/, "osdevs=rsmi" amd++) }
{ print }

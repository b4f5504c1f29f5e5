# SPDX-License-Identifier: GPL-2.0-or-later
# Compare two matrices in matrix.awk's form: the reference first (nvidia-smi's
# cells), then what railbind printed. Prints each difference and a summary;
# exits 1 on any difference or when either side lacks a cell of the other.
#   -v nodesys=1  the reference's NODE may be railbind's SYS where railbind puts
#                 the two devices on different NUMA nodes (a capture taken in a
#                 cgroup, whose NODE/SYS is not to be trusted: EXPECTED.md)
#   -v cpus=0     do not compare the CPU Affinity column (the same capture)
#   -v name=NAME  for the messages
FNR == 1 { side++ }
side == 1 && $1 == "cell" { ref[$2 " " $3] = $4; nref++ }
side == 1 && $1 == "numa" { refnuma[$2] = $3 }
side == 1 && $1 == "cpus" { refcpus[$2] = $3 }
side == 2 && $1 == "cell" { got[$2 " " $3] = $4; ngot++ }
side == 2 && $1 == "numa" { numa[$2] = $3 }
side == 2 && $1 == "cpus" { gotcpus[$2] = $3 }
END {
	for (k in ref) {
		split(k, rc, " ")
		if (!(k in got)) {
			printf "%s: %s x %s: nvidia-smi %s, railbind prints no such cell\n", name, rc[1], rc[2], ref[k]
			bad++
		} else if (ref[k] == got[k]) {
			same++
		} else if (nodesys && ref[k] == "NODE" && got[k] == "SYS" &&
			   (rc[1] in numa) && (rc[2] in numa) && numa[rc[1]] != numa[rc[2]]) {
			excused++
		} else {
			printf "%s: %s x %s: nvidia-smi %s, railbind %s\n", name, rc[1], rc[2], ref[k], got[k]
			bad++
		}
	}
	for (k in got)
		if (!(k in ref)) {
			split(k, rc, " ")
			printf "%s: %s x %s: railbind %s, nvidia-smi has no such cell\n", name, rc[1], rc[2], got[k]
			bad++
		}
	for (g in refnuma) {
		if (numa[g] != refnuma[g]) {
			printf "%s: %s NUMA Affinity: nvidia-smi %s, railbind %s\n", name, g, refnuma[g], numa[g]
			bad++
		} else {
			numas++
		}
	}
	for (g in refcpus) {
		if (!cpus)
			continue
		if (gotcpus[g] != refcpus[g]) {
			printf "%s: %s CPU Affinity: nvidia-smi %s, railbind %s\n", name, g, refcpus[g], gotcpus[g]
			bad++
		} else {
			cpusame++
		}
	}
	if (!nref) {
		printf "%s: no cell read from the reference\n", name
		bad++
	}
	printf "%s: %d of %d cells equal%s, NUMA affinity %d equal, CPU affinity %s, %d difference(s)\n",
	       name, same, nref, excused ? sprintf(" (%d more NODE there, SYS here: devices on different NUMA nodes)", excused) : "",
	       numas + 0, cpus ? (cpusame + 0) " equal" : "not compared", bad + 0
	exit bad ? 1 : 0
}

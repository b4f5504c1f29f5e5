# SPDX-License-Identifier: GPL-2.0-or-later
# The matrix of `nvidia-smi topo -m` or `railbind topo` text as lines
#   cell ROW COL VALUE      (ROW, COL: GPUn, or a NIC's name from the NIC legend)
#   numa ROW VALUE          (a GPU's NUMA Affinity column; railbind's NIC rows too)
#   cpus ROW VALUE          (a GPU's CPU Affinity column, when printed)
# so that two outputs compare line by line whatever their column widths, NIC
# order or extra columns. Blank CPU Affinity cells (nvidia-smi in a small
# cgroup prints none) are told apart by counting what follows the matrix.
function canon(label) { return (label in nicname) ? nicname[label] : label }
# The header: the column labels up to "CPU Affinity". Older drivers name NICs
# in it (mlx5_0) instead of NICn + a legend; newer ones add "GPU NUMA ID".
!header && $1 == "GPU0" {
	for (i = 1; i <= NF && $i != "CPU"; i++) {
		col[ncol = i] = $i
		islabel[$i] = 1
	}
	gpunuma = $0 ~ /GPU NUMA ID/
	header = 1
	next
}
header && !done && ($1 in islabel) {
	row[++nrow] = $1
	for (i = 1; i <= ncol; i++)
		val[nrow, i] = $(i + 1)
	rest = NF - 1 - ncol
	if ($1 !~ /^GPU/ && rest >= 1 && tool != "smi")
		numa[$1] = $NF
	if ($1 ~ /^GPU/ && rest >= 1) {
		# nvidia-smi: CPU, NUMA[, GPU NUMA ID] (CPU may be blank); railbind: CPU, NUMA
		skip = tool == "smi" && gpunuma ? 1 : 0
		numa[$1] = $(NF - skip)
		if (rest >= 2 + skip)
			cpus[$1] = $(NF - skip - 1)
	}
	next
}
header && nrow && NF == 0 { done = 1 }
/^ *NIC[0-9]+: / { sub(/:$/, "", $1); nicname[$1] = $2 }
END {
	for (r = 1; r <= nrow; r++)
		for (c = 1; c <= ncol; c++)
			print "cell", canon(row[r]), canon(col[c]), val[r, c]
	for (g in numa)
		print "numa", canon(g), numa[g]
	for (g in cpus)
		print "cpus", g, cpus[g]
}

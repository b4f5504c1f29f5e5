# SPDX-License-Identifier: GPL-2.0-or-later
# The matrix of `nvidia-smi topo -m` or `railbind topo` text as lines
#   cell ROW COL VALUE      (ROW, COL: GPUn, or a NIC's name from the NIC legend)
#   numa ROW VALUE          (a GPU's NUMA Affinity column; railbind's NIC rows too)
#   cpus ROW VALUE          (a GPU's CPU Affinity column, when printed)
# so that two outputs compare line by line whatever their column widths, NIC
# order or extra columns. Blank CPU Affinity cells (nvidia-smi in a small
# cgroup prints none) are told apart by counting what follows the matrix.
function canon(label) { return (label in nicname) ? nicname[label] : label }
!header && $1 == "GPU0" {
	for (i = 1; i <= NF && $i ~ /^(GPU|NIC)[0-9]+$/; i++)
		col[ncol = i] = $i
	header = 1
	next
}
header && !done && $1 ~ /^(GPU|NIC)[0-9]+$/ {
	row[++nrow] = $1
	for (i = 1; i <= ncol; i++)
		val[nrow, i] = $(i + 1)
	rest = NF - 1 - ncol
	if ($1 ~ /^NIC/ && rest >= 1 && tool != "smi")
		numa[$1] = $NF
	if ($1 ~ /^GPU/ && rest >= 2) {
		# nvidia-smi: CPU, NUMA, GPU NUMA ID; railbind: CPU, NUMA
		numa[$1] = tool == "smi" ? $(NF - 1) : $NF
		if ((tool == "smi" && rest >= 3) || (tool != "smi" && rest >= 2))
			cpus[$1] = tool == "smi" ? $(NF - 2) : $(NF - 1)
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

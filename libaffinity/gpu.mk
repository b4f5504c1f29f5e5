# SPDX-License-Identifier: LGPL-2.1-or-later
# GPU identity: the drivers' files, NVML and ROCm SMI (dlopen()ed: annotate_gpu*.c),
# the GPU x GPU matrix (gpu_ident.c, out_json_gpu.c) and visibility by UUID
# (plan_visible.c); the node as SVG (out_svg.c); railbind topo's matrix
# (broker/railbind/topo_matrix.c). Included by the top-level Makefile.
LIBAFF_SRCS += gpu_ident.c out_json_gpu.c plan_visible.c annotate_gpu.c annotate_gpu_nvml.c \
	annotate_gpu_rocm.c annotate_gpu_libs.c out_svg.c
CLI_SRCS += topo_matrix.c

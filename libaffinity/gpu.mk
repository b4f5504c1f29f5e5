# SPDX-License-Identifier: LGPL-2.1-or-later
# GPU identity: the drivers' files, NVML and ROCm SMI (dlopen()ed), the GPU x GPU
# matrix and visibility by UUID (libaffinity/gpu_*.c); the node as SVG (out_svg.c);
# railbind topo's matrix (broker/railbind/topo_matrix.c). Included by the top-level Makefile.
LIBAFF_SRCS += gpu_ident.c gpu_json.c gpu_visible.c gpu_discover.c gpu_nvml.c gpu_rocm.c \
	gpu_libs.c out_svg.c
CLI_SRCS += topo_matrix.c

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbgen: the machine model shared by the description parser, the parametric
 * builder, the PCI bus layout and the hwloc XML writer.
 */
#ifndef RBGEN_H
#define RBGEN_H

#include <stdbool.h>
#include <stdio.h>

/* Exit status for a description that cannot be read or laid out. */
#define RBGEN_EXIT_DESC 2

enum rb_kind {
	RB_HOSTBRIDGE,
	RB_BRIDGE,	/* a PCI-to-PCI port (root port, switch port) */
	RB_SWITCH,	/* sugar, expanded into RB_BRIDGE ports by rb_layout() */
	RB_GPU,
	RB_NIC,
	RB_DEV,
};

struct rb_node {
	enum rb_kind kind;
	int line;		/* description line, for messages */
	int indent;
	struct rb_node *parent, *child, *last, *next;

	/* PCI address: given for endpoints, derived for ports */
	unsigned int domain;
	int bus, dev, fn;
	bool has_domain;	/* endpoint address carried a domain */
	int secbus, subbus;	/* ports and host bridges */
	int depth;		/* hwloc bridge depth */
	int fixed_bus;		/* hostbridge bus=, -1 when derived */

	unsigned int vendor, device, class_id, subvendor, subdevice, rev;
	double speed, capspeed;	/* GT/s; 0 = unset */
	int width, capwidth;
	int acs;		/* ACS control, -1 = no ACS capability */
	/* GPUDirect readiness (RailbindMPS, MRRS, RelaxedOrdering, ATS, BAR1), -1 unset */
	int mps, mrrs, ro, ats;
	long long bar1;
	int numa;		/* hostbridge locality (NUMA os_index or -1) */
	int numa_raw;		/* RailbindNumaNode, INT32_MIN = inherit */
	const char *iommu;	/* RailbindIOMMUGroupType, NULL = inherit */
	const char *ptype;	/* RailbindPortType, NULL = derive from the tree */
	char *vpd;		/* RailbindVPDUUID, "unreadable", NULL unset */

	/* nic: ports port .. port + nports - 1, each with its state and rate */
#define RB_MAX_PORTS 8
	char *name, *netdev;
	int port, nports, state[RB_MAX_PORTS], rate[RB_MAX_PORTS];
	int nstate, nrate;	/* list lengths given (0: default) */
	bool eth;
	/* gpu */
	int gpu_index;		/* position in PCI order, for the OSDev name */
	/* gpu: what the stand-in NVML answers (rbgen --nvml, nvml.c) */
	char *uuid;		/* NULL = derived from host name and address */
	int minor;		/* -1 = the GPU index */
	char *nvlink;		/* "12@switch,4@0f:00.0", NULL = no NVLink */
	int mig;		/* -1 unsupported, 0 disabled, 1 enabled */
	int mig_devices;	/* instances when enabled */
	int c2c;		/* -1 unsupported, 0 disabled, 1 enabled */
	bool switch_up;		/* a switch's upstream port (layout.c) */
};

struct rb_machine {
	const char *file;	/* for messages */
	char *hostname;
	char *peer_memory;	/* NULL = derive */
	char *kmod;
	char *kernel;		/* RailbindKernel, NULL: not said */
	char *gpu_driver;	/* RailbindGPUDriver, NULL: not said */
	bool no_port_types;	/* port-types=no: plain hwloc, no RailbindPortType */
	char *cpu_vendor;	/* cpu=VENDOR:FAMILY:MODEL, NULL: not said */
	int cpu_family, cpu_model;
	int packages, numa_per_package, cores_per_numa, smt, l3_per_numa;
	int cpuless_numa;
	bool alternate;		/* numbering=alternate: OS CPUs dealt across packages */
	bool has_cpus;
	struct rb_node *roots, *roots_last;	/* host bridges in order */
	int nr_nodes;
};

struct rb_node *rb_node_new(struct rb_machine *m, enum rb_kind kind, int line);
void rb_node_append(struct rb_node *parent, struct rb_node *child);
void rb_root_append(struct rb_machine *m, struct rb_node *hb);
void rb_machine_free(struct rb_machine *m);
int rb_nr_numa(const struct rb_machine *m);
int rb_nr_cpu_numa(const struct rb_machine *m);

/* Each returns 0, or prints "FILE:LINE: ..." to stderr and returns -1. */
int rb_parse(struct rb_machine *m, FILE *in, const char *file);
int rb_layout(struct rb_machine *m);
int rb_write_xml(const struct rb_machine *m, FILE *out);
/* The stand-in NVML's answer file (tests/gpu/nvml_stub.c) for the machine. */
int rb_write_nvml(const struct rb_machine *m, FILE *out);

struct rb_param {
	int gpus, nics_per_gpu, gpus_per_nic, numa, cores_per_numa, smt;
};
int rb_build_param(struct rb_machine *m, const struct rb_param *p);

void rb_err(const struct rb_machine *m, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void *rb_xmalloc(size_t n);
char *rb_xstrdup(const char *s);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * railbind.ko internals shared between its source files.
 */
#ifndef RAILBIND_H
#define RAILBIND_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/types.h>

#include "railbind_api.h"

#define DRIVER_NAME "railbind"
#define RAILBIND_VERSION "0.1.0"
/* Bumped only when a record or key changes meaning; new keys do not bump it. */
#define RAILBIND_FORMAT 1

enum railbind_role {
	RAILBIND_GPU,
	RAILBIND_NIC,
};

/* A tracked GPU or NIC; holds a reference on its pci_dev. */
struct railbind_dev {
	struct list_head node;
	struct pci_dev *pdev;
	enum railbind_role role;
};

/* Protects railbind_devs and everything reached from it. */
extern struct mutex railbind_lock;
extern struct list_head railbind_devs;

/* generation.c-like helpers live in railbind_main.c */
unsigned long railbind_generation(void);
void railbind_changed(const char *event);

/* railbind_match.c */
int railbind_match_init(const char *spec);
bool railbind_match(struct pci_dev *pdev, enum railbind_role *role);
const char *railbind_role_name(enum railbind_role role);

/* railbind_topo.c */
int railbind_topo_init(void);
void railbind_topo_exit(void);
u32 railbind_pci_id(struct pci_dev *pdev);

/* railbind_p2p.c */
struct railbind_p2p {
	struct pci_dev *common;	/* common upstream bridge, NULL if none */
	int distance;
	bool redirected;
	const char *map;	/* "bus", "host" or "none" */
	struct pci_dev *acs_port; /* first port found redirecting, or NULL */
};

int railbind_p2p_init(const char *spec);
void railbind_p2p_calc(struct pci_dev *gpu, struct pci_dev *nic,
		       struct railbind_p2p *out);
bool railbind_acs_redirects(struct pci_dev *pdev);

/* railbind_render.c */
struct railbind_buf {
	char *data;
	size_t len;
	size_t size;
	int err;
};

int railbind_render(struct railbind_buf *buf, unsigned long *gen);
__printf(2, 3) void railbind_emit(struct railbind_buf *buf, const char *fmt, ...);

/* railbind_peer.c */
int railbind_peer_init(void);
void railbind_peer_exit(void);
int railbind_peer_render(struct railbind_buf *buf);
void railbind_peer_devs_changed(void);
const char *railbind_peer_state(void);
extern char *railbind_peer_provider;

#endif

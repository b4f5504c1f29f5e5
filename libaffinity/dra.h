/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dra - Kubernetes DRA device attributes of GPUs and NICs (out_dra.c says
 * which, and how each is computed), private to libaffinity: railbind topo's
 * --json carries them per device ("dra"), --dra in a ResourceSlice's shape.
 */
#ifndef AFF_DRA_H
#define AFF_DRA_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* resource.kubernetes.io/pcieRoot of device @dev into @buf; -ENOENT none. */
int aff_dra_pcie_root(const struct aff_topo *t, int dev, char *buf, size_t len);
/*
 * The attributes of device @dev, @rail its railbind.io/rail (-1 none):
 * values plain, or @typed as a ResourceSlice carries them ({"string": ...},
 * {"int": ...}). A new object.
 */
struct json_object *aff_dra_attrs(const struct aff_topo *t, int dev, int rail, bool typed);
/* Each GPU's first rail in the default plan (-1 none), malloc()ed; NULL without GPUs. */
int *aff_dra_gpu_rails(const struct aff_topo *t);
/* The --dra document: {"schema": "railbind.dra/1", "devices": [...]}. */
struct json_object *aff_dra_to_json(const struct aff_topo *t);

#endif /* AFF_DRA_H */

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in libibverbs.so.1 for tests/fabric: the IBVERBS_1.1 calls
 * railbind's loader makes (libaffinity/annotate_port_verbs.c), answering
 * for mlx5_0 .. mlx5_3, port 1: active MTU 4096 (IBV_MTU_4096 = 5) but
 * mlx5_3's 1024 (3), max MTU 4096; mlx5_2 cannot be opened. Its layouts
 * are rdma-core's own (the header); nothing else of the library is here.
 */
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define NDEV 4

static struct ibv_device devs[NDEV];
static struct ibv_context ctxs[NDEV];

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **l = calloc(NDEV + 1, sizeof(*l));
	int i;

	if (!l)
		return NULL;
	for (i = 0; i < NDEV; i++) {
		memcpy(devs[i].name, "mlx5_0", 7);
		devs[i].name[5] = (char)('0' + i);
		l[i] = &devs[i];
	}
	*num = NDEV;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	int i = (int)(device - devs);

	if (i == 2)
		return NULL;
	ctxs[i].device = device;
	return &ctxs[i];
}

int ibv_close_device(struct ibv_context *context)
{
	(void)context;
	return 0;
}

/* The exported call, by its name (the header's macro of the same name is inline). */
int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		     struct _compat_ibv_port_attr *compat)
{
	struct ibv_port_attr *attr = (struct ibv_port_attr *)compat;
	int i = (int)(context->device - devs);

	if (port_num != 1)
		return 22;
	attr->state = IBV_PORT_ACTIVE;
	attr->max_mtu = IBV_MTU_4096;
	attr->active_mtu = i == 3 ? IBV_MTU_1024 : IBV_MTU_4096;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A growing text buffer for the snapshot. Memory is charged to the task
 * that renders (GFP_KERNEL_ACCOUNT): the reader who asked for it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "railbind.h"

int railbind_buf_init(struct railbind_buf *buf, size_t hint)
{
	memset(buf, 0, sizeof(*buf));
	buf->size = max_t(size_t, hint, PAGE_SIZE);
	buf->data = kvmalloc(buf->size, GFP_KERNEL_ACCOUNT);
	if (!buf->data) {
		buf->size = 0;
		buf->err = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

void railbind_buf_free(struct railbind_buf *buf)
{
	kvfree(buf->data);
	memset(buf, 0, sizeof(*buf));
}

static int railbind_buf_grow(struct railbind_buf *buf, size_t need)
{
	size_t ns = max_t(size_t, buf->size * 2, buf->len + need + 1);
	char *nd;

	nd = kvmalloc(ns, GFP_KERNEL_ACCOUNT);
	if (!nd)
		return -ENOMEM;
	if (buf->data)
		memcpy(nd, buf->data, buf->len);
	kvfree(buf->data);
	buf->data = nd;
	buf->size = ns;
	return 0;
}

/*
 * Appends and counts the lines (records) written; after a failure the
 * buffer keeps its error and ignores the rest.
 */
void railbind_emit(struct railbind_buf *buf, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	if (buf->err)
		return;
	for (;;) {
		room = buf->size - buf->len;
		va_start(ap, fmt);
		n = vsnprintf(buf->data ? buf->data + buf->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			buf->err = -EINVAL;
			return;
		}
		if ((size_t)n < room)
			break;
		buf->err = railbind_buf_grow(buf, n);
		if (buf->err)
			return;
	}
	for (; n; n--)
		buf->lines += buf->data[buf->len++] == '\n';
}

/* "dddd:bb:dd.f" as pci_name() spells it (the domain may pass 16 bits), then sep. */
void railbind_emit_addr(struct railbind_buf *buf, u64 id, const char *sep)
{
	u32 devfn = id & 0xff;

	railbind_emit(buf, "%04x:%02x:%02x.%x%s", (u32)(id >> 16), (u32)(id >> 8) & 0xff,
		      PCI_SLOT(devfn), PCI_FUNC(devfn), sep);
}

/* " key=dddd:bb:dd.f", or " key=-" for RAILBIND_NO_DEV. */
void railbind_emit_id(struct railbind_buf *buf, const char *key, u64 id)
{
	railbind_emit(buf, " %s=", key);
	if (id == RAILBIND_NO_DEV)
		railbind_emit(buf, "-");
	else
		railbind_emit_addr(buf, id, "");
}

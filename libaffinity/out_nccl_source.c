// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What an NCCL source file says that the model does not hold, for
 * `railbind nccl-topo` (out_nccl.c) to write back as NCCL wrote it: the
 * GPUs' sm, rank and gdr and their <nvlink>/<c2c> children, and each net's
 * name (the `_dma` of a Data Direct path) and port (NCCL's form, the verbs
 * port plus the net's index on its PCI device). The file is read again, as
 * the source read it (a regular file, within max-input-size); when it cannot
 * be, or no longer holds the model's GPUs, the export goes without (what the
 * model holds is still written).
 */
#include <stdlib.h>
#include <string.h>

#include "out_nccl.h"

static bool is(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static bool prop_is(const struct aff_xml *x, const xmlNode *n, const char *name,
		    const char *value)
{
	xmlChar *v = x->get_prop(n, (const xmlChar *)name);
	bool same = v && value && !strcmp((const char *)v, value);

	x->free(v);
	return same;
}

/* The <pci busid=@busid> below @n, depth first; NULL if none. */
static const xmlNode *find_pci(const struct aff_xml *x, const xmlNode *n, const char *busid)
{
	const xmlNode *c, *hit;

	for (c = n->children; c; c = c->next) {
		if (!is(c, "pci"))
			continue;
		if (prop_is(x, c, "busid", busid))
			return c;
		if ((hit = find_pci(x, c, busid)))
			return hit;
	}
	return NULL;
}

const xmlNode *aff_nccl_src_pci(const struct aff_nccl_src *s, const char *busid)
{
	const xmlNode *root, *c, *hit;
	xmlChar *first = NULL;

	if (!s->doc || !busid[0])
		return NULL;
	root = s->x->root(s->doc);
	/* The first host's <cpu>s only, as the source planned for (host_hash). */
	for (c = root->children; c; c = c->next) {
		xmlChar *hash;
		bool other;

		if (!is(c, "cpu"))
			continue;
		hash = s->x->get_prop(c, (const xmlChar *)"host_hash");
		if (hash && !first) {
			first = hash;
			hash = NULL;
		}
		other = hash && first && strcmp((const char *)hash, (const char *)first);
		s->x->free(hash);
		if (!other && (hit = find_pci(s->x, c, busid))) {
			s->x->free(first);
			return hit;
		}
	}
	s->x->free(first);
	return NULL;
}

const xmlNode *aff_nccl_src_sub(const xmlNode *n, const char *name)
{
	const xmlNode *c;

	for (c = n ? n->children : NULL; c; c = c->next)
		if (is(c, name))
			return c;
	return NULL;
}

/* The <net> of rail @name on <pci> @pci: its name, or its name less "_dma". */
const xmlNode *aff_nccl_src_net(const struct aff_nccl_src *s, const xmlNode *pci,
				const char *name)
{
	const xmlNode *nic = aff_nccl_src_sub(pci, "nic"), *c;

	for (c = nic ? nic->children : NULL; c; c = c->next) {
		xmlChar *v;
		size_t n;
		bool hit;

		if (!is(c, "net"))
			continue;
		v = s->x->get_prop(c, (const xmlChar *)"name");
		n = v ? strlen((const char *)v) : 0;
		hit = v && (!strcmp((const char *)v, name) ||
			    (n == strlen(name) + 4 && !strncmp((const char *)v, name, n - 4) &&
			     !strcmp((const char *)v + n - 4, "_dma")));
		s->x->free(v);
		if (hit)
			return c;
	}
	return NULL;
}

void aff_nccl_src_open(const struct aff_topo *t, const struct aff_xml *x, struct aff_nccl_src *s)
{
	char err[256], *buf = NULL;
	size_t len, g;

	memset(s, 0, sizeof(*s));
	s->x = x;
	if (t->src != AFF_SRC_NCCL || !t->source)
		return;
	if (aff_read_file(t->source, aff_ctx_input_limit(t->ctx), &buf, &len, err, sizeof(err)) < 0)
		return;
	if (len <= 64u << 20)
		s->doc = x->read_memory(buf, (int)len, t->source, NULL,
					XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	free(buf);
	if (!s->doc)
		return;
	if (!x->root(s->doc) || !is(x->root(s->doc), "system")) {
		aff_nccl_src_close(s);
		return;
	}
	/* Not the file the model was read from any more: go without. */
	for (g = 0; g < t->ngpu; g++)
		if (!aff_nccl_src_pci(s, t->dev[t->gpus[g]].pci)) {
			aff_nccl_src_close(s);
			return;
		}
}

void aff_nccl_src_close(struct aff_nccl_src *s)
{
	if (s->doc)
		s->x->free_doc(s->doc);
	s->doc = NULL;
}
